// The package entry (ES modules): the same objects as the CommonJS entry, as named exports.
import cjs from './index.js'

export const {
  nativeVersion,

  // Tool search: BM25-lite index, the generated search_tools tool, fail-closed disclosure.
  createToolSearchIndex,
  ToolSearchIndex,
  createSearchToolsTool,
  selectDisclosedTools,
  activateToolNames,
  SEARCH_TOOLS_NAME,
  TOOL_SEARCH_LIMITS,
  // End of tool search.
} = cjs
export default cjs
