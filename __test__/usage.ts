// Type check: uses every export the way a user would. `tsc -p __test__/tsconfig.json` must pass.
import {
  createToolRegistry, nativeVersion } from "../index.js";

const version: string = nativeVersion();
void version;

// Middleware, extensions, policies, policy errors
import {
  ContributionRegistry,
  createContributionRegistries,
  createExtensionEventBus,
  createExtensionKernel,
  createMiddlewareRegistry,
  createStaticPermissionPolicy,
  createStaticTrustPolicy,
  GuardrailError,
  PermissionDeniedError,
  TrustDeniedError,
  type ExtensionEvent,
  type Middleware,
  type PermissionDecision,
  type PermissionPolicy,
  type TrustDecision,
  type TrustPolicy,
} from "../index.js";

async function middlewareUsage(): Promise<void> {
  const events: ExtensionEvent[] = [];
  const middleware = createMiddlewareRegistry({ errorPolicy: "event", secrets: ["k"], onError: (e) => void events.push(e) });
  const addOne: Middleware<{ n: number }> = (value) => ({ n: value.n + 1 });
  const off: () => void = middleware.use("tool_call", addOne);
  middleware.use<{ n: number }>("tool_result", async (value, next) => next({ n: value.n * 2 }));
  const out: { n: number } = await middleware.run("tool_call", { n: 1 });
  const listed: readonly Middleware[] = middleware.list("tool_call");
  off();
  void out;
  void listed;
}

async function extensionUsage(): Promise<void> {
  const contributions = createContributionRegistries();
  contributions.tools.register("echo", { name: "echo", execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name: "echo", value: args }) });
  const activeTools = createToolRegistry([contributions.tools.resolve("echo")]);
  void activeTools;
  const echo = contributions.tools.resolve("echo");
  const maybe = contributions.tools.get("echo");
  const all = contributions.tools.list();
  const removed: boolean = contributions.tools.unregister("echo");
  const skills = new ContributionRegistry<{ id: string }>("skill");
  skills.register("s", { id: "s" });
  const bus = createExtensionEventBus();
  bus.on("extension_error", (event) => void event.error?.message);
  const kernel = createExtensionKernel({ onError: (e) => void e.extension, errorPolicy: "event" });
  const loaded = await kernel.load([
    {
      name: "tools",
      async setup(api) {
        api.registerTool({ name: "echo", execute: (_a, ctx) => ({ toolCallId: ctx.toolCallId, name: "echo" }) });
        api.use("tool_call", (value) => value);
      },
    },
  ]);
  loaded[0]?.dispose();
  kernel.contributions.tools.list();
  await kernel.middleware.run("tool_call", {});
  void [echo, maybe, all, removed];
}

async function policyUsage(): Promise<void> {
  const permission: PermissionPolicy = createStaticPermissionPolicy({ allow: ["echo"], deny: ["rm"], defaultDecision: "deny" });
  const trust: TrustPolicy = createStaticTrustPolicy({ trusted: ["echo"], untrusted: [], defaultDecision: "untrusted" });
  createStaticPermissionPolicy(true);
  createStaticTrustPolicy({ trusted: true });
  const allowed: PermissionDecision = await permission.check({ kind: "tool", action: "execute", target: "echo", metadata: {} });
  const trusted: TrustDecision = await trust.check({ kind: "tool", target: "echo", capability: "execute", metadata: {} });
  const errors: Error[] = [
    new PermissionDeniedError("Permission denied for tool:rm:execute"),
    new PermissionDeniedError({ kind: "tool", action: "execute", target: "rm" }, { allowed: false }),
    new TrustDeniedError("Untrusted tool: rm", { cause: new Error("root") }),
    new GuardrailError("Tool call blocked by guardrail", { record: { guardrail: "g" } }),
  ];
  const code: "ERR_PRISM_GUARDRAIL_BLOCKED" = new GuardrailError("x").code;
  void [allowed, trusted, errors, code];
}

void middlewareUsage;
void extensionUsage;
void policyUsage;

// Validation and provider argument text.
import {
  createJsonSchemaArgumentValidator,
  createJsonSchemaToolArgumentValidator,
  createToolParameterValidator,
  reconstructToolCallDeltas,
  toolCallFromArgumentsText,
  type JsonSchemaToolArgumentValidatorOptions,
  type ToolArgumentValidationResult,
  type ToolArgumentValidator,
  type ToolArgumentsValidator,
  type ToolCallDelta,
  type ToolCallFromText,
} from "../index.js";
import * as jsonSchemaSubpath from "prism-tools-native/validation/json-schema";

const validationOptions: JsonSchemaToolArgumentValidatorOptions = { maxErrors: 4, maxCompiledSchemas: 512, missingSchema: "reject" };
const toolValidator: ToolArgumentsValidator = createJsonSchemaToolArgumentValidator(validationOptions);
const schemaAdapter: ToolArgumentValidator = createJsonSchemaArgumentValidator({ maxSchemaBytes: 64 * 1024 });
const viaSubpath: ToolArgumentValidator = jsonSchemaSubpath.createJsonSchemaArgumentValidator();
const wrapped: ToolArgumentsValidator = createToolParameterValidator(schemaAdapter, { missingSchema: "allow" });
const result: ToolArgumentValidationResult = viaSubpath.validate({ type: "object" }, {});
const firstIssue: string | undefined = result.errors?.[0]?.path;
const parsed: ToolCallFromText = toolCallFromArgumentsText("call_1", "search", '{"q":"x"}', { maxBytes: 1024 });
const deltas: ToolCallDelta[] = [{ type: "tool_call_delta", index: 0, id: "call_1", name: "search", argumentsText: "{}" }];
const rebuilt: ToolCallFromText[] = reconstructToolCallDeltas(deltas);
const refusal: string | undefined =
  toolValidator({ name: "search", parameters: { type: "object" } }, parsed.arguments) ??
  wrapped({ name: "search" }, rebuilt[0]!.arguments) ??
  parsed.argumentsError?.message;
void firstIssue;
void refusal;

// Recoverable tool effects and run ledgers.
import {
  ToolEffectError,
  IdentityError,
  canonicalToolEffectJson,
  toolEffectArgumentsHash,
  deriveToolEffectKey,
  resolveToolEffectDeclaration,
  isAgentIdentityActive,
  identityMatchesOwnership,
  assertIdentityActive,
  assertIdentityMatchesOwnership,
  createMemoryToolEffectStore,
  createSqliteToolEffectStore,
  createMemoryRunLedger,
  createSqliteRunLedger,
  type AgentIdentity,
  type ToolEffectDeclaration,
  type ToolEffectClassifier,
  type ToolEffectKey,
  type ToolEffectStore,
  type ToolEffectRecord,
  type RunLedger,
  type ToolCallRecord,
} from "../index.js";
import { assertToolEffectStoreConforms } from "../testing/tool-effect-store-conformance.js";

const identity: AgentIdentity = {
  tenantId: "t",
  principal: { kind: "service", id: "svc" },
  scopes: ["tools:execute"],
  issuedAt: "2026-01-01T00:00:00.000Z",
  verified: true,
};
const declaration: ToolEffectDeclaration = { kind: "external_mutation", idempotency: "required" };
const classify: ToolEffectClassifier = (args) => (args.dryRun ? { kind: "none", idempotency: "none" } : declaration);
const resolved: ToolEffectDeclaration | undefined = resolveToolEffectDeclaration({ effect: classify }, { dryRun: false }, { sessionId: "s" });
const canonical: string = canonicalToolEffectJson({ b: 1, a: 2 });
const argumentsHash: string = toolEffectArgumentsHash({ amount: 5 });
const base = { identity, ownership: { tenantId: "t" }, sessionId: "s", runId: "r", toolCallId: "c", toolName: "pay", argumentsHash };
const effectKey: ToolEffectKey = { ...base, key: deriveToolEffectKey(base) };
const active: boolean = isAgentIdentityActive(identity, { now: Date.now() }) && identityMatchesOwnership(identity, { tenantId: "t" });
assertIdentityActive(identity);
assertIdentityMatchesOwnership(identity, { tenantId: "t" });
const memoryStore = createMemoryToolEffectStore({ now: () => Date.now() });
const sqliteStore = createSqliteToolEffectStore("/tmp/effects.db", { busyTimeoutMs: 5000, synchronous: "full" });
const asContract: ToolEffectStore = sqliteStore;
async function storeUsage(): Promise<number> {
  const begun = await memoryStore.begin({ ...effectKey, claimTtlMs: 60_000, maxAttempts: 3 });
  if (begun.outcome === "acquired" && begun.record.claimToken) {
    const t = { ...effectKey, claimToken: begun.record.claimToken, expectedVersion: begun.record.version };
    const dispatched: ToolEffectRecord = await memoryStore.markDispatched(t);
    await memoryStore.complete({ ...t, expectedVersion: dispatched.version, result: { toolCallId: "c", name: "pay", value: 1 } });
    await memoryStore.fail({ ...t, status: "failed_terminal", failure: { code: "x" } });
    await memoryStore.markUnknown({ ...t, failure: { code: "x" } });
    await memoryStore.resolveUnknown({ ...effectKey, expectedVersion: 4, status: "completed" });
  }
  const seen: ToolEffectRecord | undefined = await memoryStore.get(effectKey);
  // A host's wrapper: spread the store, override one method.
  const wrapped: ToolEffectStore = { ...memoryStore, begin: (input) => memoryStore.begin(input) };
  void wrapped;
  const { deleted }: { deleted: number } = await memoryStore.cleanup({ ownership: { tenantId: "t" }, before: new Date().toISOString(), limit: 100 });
  return deleted + (seen?.version ?? 0);
}
void storeUsage;
void assertToolEffectStoreConforms(() => memoryStore, { identity });
sqliteStore.close();
const err = new ToolEffectError("ERR_PRISM_TOOL_EFFECT_UNKNOWN", "tool effect outcome requires reconciliation");
const code: "ERR_PRISM_TOOL_EFFECT_UNKNOWN" | string = err.code;
const idErr: string = new IdentityError("Identity has expired", "expired").reason;
const ledger: RunLedger = createMemoryRunLedger();
const sqliteLedger = createSqliteRunLedger("/tmp/ledger.db", { batchSize: 512, flushIntervalMs: 10, maxPendingRows: 8192, synchronous: "normal" });
const toolRow: ToolCallRecord = {
  id: "1", sessionId: "s", runId: "r", toolCallId: "c", name: "pay", arguments: {}, status: "started",
  startedAt: new Date().toISOString(), redacted: false,
};
void ledger.appendToolCall(toolRow);
sqliteLedger.appendToolCall(toolRow);
sqliteLedger.appendRun({ id: "r" });
sqliteLedger.flush();
const rows: ToolCallRecord[] = sqliteLedger.list();
sqliteLedger.close();
void [resolved, canonical, active, asContract, code, idErr, rows];

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

// Agent tool loop
import {
  AGENT_RUN_LIMITS,
  AgentRunError,
  createAgent,
  createAgentSession,
  createMockProvider,
  providerContentDelta,
  providerThinkingDelta,
  redactAgentEvent,
  redactMessage,
  redactProviderRequest,
  redactSessionEntry,
  providerDone,
  providerError,
  providerTextDelta,
  providerToolCall,
  providerToolCallDelta,
  providerUsage,
  toolCallContent,
  type AgentRunResult,
  type AgentSessionState,
  type ArtifactLoopEvent,
  type ArtifactLoopOptions,
  type ArtifactValidation,
  type LoopOptions,
  type AIProvider,
  type ProviderEvent,
  type RunOptions,
} from "../index.js";

async function agentUsage(): Promise<void> {
  const script: ProviderEvent[][] = [
    [providerTextDelta("hi"), providerToolCall(toolCallContent("c1", "echo", { a: 1 })), providerToolCallDelta({ index: 1, id: "c2", name: "echo", argumentsText: "{}" }), providerUsage({ inputTokens: 1 }), providerDone()],
    [providerError(new Error("x"))],
  ];
  const provider: AIProvider = createMockProvider(script, { id: "m", onRequest: (request, turn) => void [request.metadata.tools.idsHash, turn] });
  const agent = createAgent({
    model: { provider: "mock", model: "demo" },
    provider,
    tools: createToolRegistry([{ name: "echo", execute: (args, ctx) => ({ toolCallId: ctx.toolCallId, name: "echo", value: args }) }]),
    toolsDisclosure: "search",
    toolsSearch: { topK: 4 },
    toolNarrowing: ({ toolIds }) => toolIds.slice(0, 2),
    loop: { strategy: "single-shot", toolConcurrency: 4 },
    limits: { maxToolRounds: 3 },
  });
  const session = agent.createSession({ id: "s1" });
  const options: RunOptions = { toolNames: ["echo"], signal: new AbortController().signal, validate: () => undefined };
  const result: AgentRunResult = await session.run("hello", options);
  const state: AgentSessionState = session.state();
  for await (const event of session.stream("again")) void event.type;
  session.abort("stop");
  session.clearActivatedTools();
  void [result.status, result.finishReason, state.activatedToolNames, session.messages().length, AGENT_RUN_LIMITS.maxToolRounds];

  const artifactLoop: ArtifactLoopOptions<{ title: string }> = {
    strategy: "generate-validate-revise",
    parser: (text) => JSON.parse(text) as { title: string },
    validator: async (a): Promise<ArtifactValidation> => (a.title ? undefined : { message: "title is missing" }),
    maxRevisions: AGENT_RUN_LIMITS.defaultMaxRevisions,
    toolCalls: "bounded",
  };
  const loop: LoopOptions = artifactLoop;
  const artifactResult: AgentRunResult = await session.run("draft", { loop, limits: { maxToolRounds: 2 } });
  if (artifactResult.finishReason === "artifact_failed") void artifactResult.error?.code;
  const maybeEvent: ArtifactLoopEvent = { type: "artifact_finished", sessionId: "s", runId: "r", turn: 1, attempt: 1, result: { ok: true } };
  const sub = session.subscribe({ maxQueuedEvents: 64, overflow: "drop_oldest" });
  for await (const event of sub) void event.type;
  try {
    await createAgentSession({ agent, id: "s2" }).run("x", { providerSource: () => provider });
  } catch (err) {
    if (err instanceof AgentRunError) void (err.result as AgentRunResult).status;
  }
  void [providerThinkingDelta("t"), providerContentDelta({ type: "text", text: "x" }), redactAgentEvent({ type: "x" }), redactProviderRequest({ signal: undefined }), redactMessage({}), redactSessionEntry({})];
  void [artifactResult.artifact, artifactResult.revisions, artifactResult.toolRounds, maybeEvent.type, AGENT_RUN_LIMITS.maxRevisions];
}
void agentUsage;

// Registry, filters, dispatch and redaction, as a host migrating from @arnilo/prism writes them.
import {
  createSecretRedactor as makeRedactor,
  createToolDispatcher,
  createToolRegistry as makeRegistry,
  dispatchToolCall,
  errorToErrorInfo,
  filterTools,
  redactRunLedgerRecord,
  redactSecrets,
  type AgentEvent,
  type DispatchToolCallOptions,
  type ErrorInfo,
  type ToolCallContent,
  type ToolDefinition,
  type ToolFilterInput,
  type ToolResult,
  type ToolValidator,
} from "../index.js";

async function harnessUsage(): Promise<void> {
  const echo: ToolDefinition = {
    name: "echo",
    parameters: { type: "object", properties: { text: { type: "string" } } },
    execute(args, context) {
      context.progress?.(0.5, { step: "echo" });
      return { toolCallId: context.toolCallId, name: "echo", value: args };
    },
  };
  const registry = makeRegistry([echo], { duplicate: "error" });
  const filter: ToolFilterInput = [{ allow: ["echo"] }, { deny: ["admin"] }];
  const active: readonly ToolDefinition[] = filterTools(registry.list(), filter);
  const validate: ToolValidator = (_tool, args) => (typeof args.text === "string" ? undefined : "text is required");
  const rows: ToolCallRecord[] = [];
  const events: AgentEvent[] = [];
  const call: ToolCallContent = { type: "tool_call", id: "call_1", name: "echo", arguments: { text: "hi" } };
  const options: DispatchToolCallOptions = {
    call,
    registry,
    context: { sessionId: "s1", runId: "r1", toolCallId: "call_1", signal: new AbortController().signal },
    filter: { allow: active.map((t) => t.name) },
    validate,
    emit: (e) => void events.push(e),
    ledger: { appendToolCall: (r) => void rows.push(r) },
    secrets: ["sk-live"],
    redactor: makeRedactor(["sk-live"]),
    ownership: { tenantId: "t1" },
    guardrails: { toolInput: [{ name: "ok", evaluate: () => ({ action: "allow" }) }], maxConcurrency: 2 },
  };
  const result: ToolResult = await dispatchToolCall(options);
  const dispatcher = createToolDispatcher({ registry, emit: options.emit });
  const again: ToolResult = await dispatcher.dispatch(call, { sessionId: "s1", runId: "r1" });
  const info: ErrorInfo = errorToErrorInfo(new Error("boom sk-live"), ["sk-live"]);
  const clean: { key: string } = redactSecrets({ key: "sk-live" }, ["sk-live"]);
  const row: ToolCallRecord | undefined = rows[0] && redactRunLedgerRecord(rows[0], makeRedactor(["sk-live"]));
  void [result, again, info, clean, row];
}
void harnessUsage;

// The generated search tool registers like any other tool.
import { createSearchToolsTool as makeSearchTool, createToolSearchIndex as makeIndex } from "../index.js";
function searchToolRegisters(tools: ToolDefinition[]): void {
  const index = makeIndex(tools);
  const registry = makeRegistry([...tools, makeSearchTool(index)]);
  registry.register(makeSearchTool(index));
}
void searchToolRegisters;

// The package's own pieces plug into dispatch without casts.
import {
  createJsonSchemaToolArgumentValidator as makeValidator,
  createMemoryRunLedger as makeLedger,
  createMemoryToolEffectStore as makeStore,
  createMiddlewareRegistry as makeMiddleware,
  createStaticPermissionPolicy as makePermission,
  createStaticTrustPolicy as makeTrust,
} from "../index.js";
async function piecesPlugIn(registry: ReturnType<typeof makeRegistry>, call: ToolCallContent): Promise<ToolResult> {
  return dispatchToolCall({
    call,
    registry,
    context: { sessionId: "s", runId: "r" },
    middleware: makeMiddleware(),
    permission: makePermission({ allow: ["echo"] }),
    trust: makeTrust({ trusted: ["echo"] }),
    validate: makeValidator(),
    effectStore: makeStore(),
    ledger: makeLedger(),
  });
}
void piecesPlugIn;

// MCP client bridge (subpath prism-tools-native/mcp)
import {
  connectMcpCapabilities,
  connectMcpTools,
  formatProviderSafeMcpToolName,
  McpToolNameCollisionError,
  type McpBridgedTool,
  type McpToolBridge,
} from "../mcp/index.js";
async function mcpUsage(): Promise<void> {
  const bridge: McpToolBridge = await connectMcpTools({
    serverId: "fs",
    transport: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] },
    formatName: formatProviderSafeMcpToolName,
    deny: ["write_file"],
    callTimeoutMs: 30_000,
    effect: ({ remoteName }) => (remoteName === "read_file" ? { kind: "none", idempotency: "none" } : undefined),
    onToolsChanged: (tools, change) => void [tools.length, change.added, change.removed],
  });
  const tools: readonly McpBridgedTool[] = bridge.tools;
  const registry = createToolRegistry([...tools]);
  void registry;
  const state: "connected" | "disconnected" | "closed" = bridge.state;
  void state;
  await bridge.close();
  const caps = await connectMcpCapabilities({
    serverId: "remote",
    transport: { type: "streamable-http", url: "https://mcp.example.com/mcp", allowedOrigins: ["https://mcp.example.com"] },
  });
  const resources = await caps.listResources();
  const text: string | undefined = (await caps.readResource(resources[0]!.uri)).contents[0]?.text;
  const prompt = await caps.getPrompt("review", { topic: "security" });
  void [text, prompt.messages.length];
  const error = new McpToolNameCollisionError("mcp:a:b", "b");
  void error.prefixedName;
}
void mcpUsage;

// The agent loop's run-level ledger rows (docs/agent.md "Run ledger rows").
import {
  createBatchedRunLedger as batchLedger,
  redactRunLedgerRecord as redactRow,
  type AgentEventRecord,
  type RunLedgerRecord,
  type RunRecord,
  type RunStatus,
  type UsageRecord,
} from "../index.js";

function runLedgerRowsUsage(): void {
  const runs: RunRecord[] = [];
  const usage: UsageRecord[] = [];
  const events: AgentEventRecord[] = [];
  const typed = {
    appendRun: (record: RunRecord) => void runs.push(record),
    appendEvent: (record: AgentEventRecord) => void events.push(record),
    appendUsage: (record: UsageRecord) => void usage.push(record),
    appendToolCall: (_record: ToolCallRecord) => undefined,
  };
  const flushable = batchLedger(typed, { durability: "flush_on_terminal" });
  void flushable;
  const status: RunStatus | undefined = runs[0]?.status;
  const scope: "provider_turn" | "run_total" | undefined = usage[0]?.scope;
  const row: RunLedgerRecord = redactRow({ id: "r", sessionId: "s", status: "running", startedAt: "2026-01-01T00:00:00Z" } as RunRecord);
  void [status, scope, row, events[0]?.event.type];
}
void runLedgerRowsUsage;

// OpenAPI operations as tools (prism-tools-native/openapi)
import { createOpenApiTools, OpenApiToolError, type OpenApiToolsOptions } from "../openapi/index.js";
async function openApiUsage(document: string) {
  const options: OpenApiToolsOptions = {
    document,
    operations: ["getCustomer"],
    server: "https://api.example.com/v1",
    credentials: async ({ operationId }) => ({ headers: { authorization: `Bearer ${operationId}` } }),
    pagination: { pageParam: "cursor", nextPath: "meta.next" },
    limits: { maxRetries: 1 },
  };
  const tools = createOpenApiTools(options);
  createToolRegistry(tools);
  try {
    await tools[0].execute({ id: "1" }, { sessionId: "s", runId: "r", toolCallId: "t" });
  } catch (error) {
    if (error instanceof OpenApiToolError && error.code === "ERR_PRISM_OPENAPI_ADDRESS") return undefined;
  }
  return tools.length;
}
void openApiUsage;

// A tool's contract: title, outputSchema and annotations (served over MCP)
const contractTool: import("../index.js").ToolDefinition<{ city: string }> = {
  name: "weather",
  title: "Current weather",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  outputSchema: { type: "object", properties: { temp: { type: "number" } }, required: ["temp"] },
  annotations: { readOnlyHint: true, openWorldHint: true },
  execute: () => ({ temp: 3 }),
};
void contractTool;
