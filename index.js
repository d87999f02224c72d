'use strict'
// The package entry (CommonJS). It re-exports the napi-generated loader (`binding.js`) and the few
// small JS pieces the language requires (Error subclasses, the await driver). No decisions live here.
const native = require('./binding.js')

module.exports = {
  nativeVersion: native.nativeVersion,

  // Tool search: BM25-lite index, the generated search_tools tool, fail-closed disclosure.
  createToolSearchIndex: native.createToolSearchIndex,
  ToolSearchIndex: native.ToolSearchIndex,
  createSearchToolsTool: native.createSearchToolsTool,
  selectDisclosedTools: native.selectDisclosedTools,
  activateToolNames: native.activateToolNames,
  SEARCH_TOOLS_NAME: native.SEARCH_TOOLS_NAME,
  TOOL_SEARCH_LIMITS: native.toolSearchLimits(),
  // End of tool search.
}
