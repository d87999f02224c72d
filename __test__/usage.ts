// Type check: uses every export the way a user would. `tsc -p __test__/tsconfig.json` must pass.
import { nativeVersion } from "../index.js";

const version: string = nativeVersion();
void version;

// Tool search.
import {
  activateToolNames,
  createSearchToolsTool,
  createToolSearchIndex,
  SEARCH_TOOLS_NAME,
  selectDisclosedTools,
  TOOL_SEARCH_LIMITS,
  ToolSearchIndex,
  type SearchToolsResult,
  type ToolSearchHit,
} from "../index.js";

const searchTools = [
  { name: "create_issue", description: "Create an issue", parameters: { type: "object", properties: { title: { type: "string" } } }, execute: () => ({ toolCallId: "1", name: "create_issue" }) },
  { name: "get_me", description: "The authenticated user", execute: () => ({ toolCallId: "2", name: "get_me" }) },
];
const searchIndex: ToolSearchIndex = createToolSearchIndex(searchTools, { queryBytes: 8192 });
const indexSize: number = searchIndex.size;
const hits: ToolSearchHit[] = searchIndex.search("open an issue", { k: 5 });
const firstHit: { name: string; score: number; matched: string[] } | undefined = hits[0];
const searchTool = createSearchToolsTool(searchIndex, { defaultK: 4 });
const toolName: "search_tools" = searchTool.name === SEARCH_TOOLS_NAME ? searchTool.name : "search_tools";
const searched: SearchToolsResult = searchTool.execute({ query: "issue", k: 2 }, { toolCallId: "call_1", sessionId: "s", runId: "r" });
let activatedNames: string[] = activateToolNames(undefined, searched.value.names);
activatedNames = activateToolNames(activatedNames, ["get_me"]);
const disclosed: (typeof searchTools[number] | typeof searchTool)[] = selectDisclosedTools({
  tools: [...searchTools, searchTool],
  input: "open an issue",
  topK: TOOL_SEARCH_LIMITS.defaultTopK,
  activated: activatedNames,
  index: searchIndex,
});
const maxTopK: number = TOOL_SEARCH_LIMITS.maxTopK;
void [indexSize, firstHit, toolName, disclosed, maxTopK];
