// ES module entry of the ToolEffectStore conformance kit.
import cjs from './tool-effect-store-conformance.js'

export const { assertToolEffectStoreConforms, runToolEffectStoreConformance } = cjs
export default cjs
