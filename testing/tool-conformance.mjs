// ES module entry of the tool-dispatch conformance kit.
import cjs from './tool-conformance.js'

export const { assertToolDispatchConforms, assertToolBlocked, dispatchAndCollect } = cjs
export default cjs
