// Subpath `prism-tools-native/providers/zod` (ES modules).
import cjs from './zod.js'
export const { zodParameters, zodTool } = cjs
export default cjs
