// ES module entry of the CheckpointStore conformance kit.
import cjs from './checkpoint-store-conformance.js'

export const { assertCheckpointStoreConforms, runCheckpointStoreConformance } = cjs
export default cjs
