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
const deltas: ToolCallDelta[] = [{ type: "tool_call_delta", index: 0, id: "call_1", name: "search", argumentsDelta: "{}" }];
const rebuilt: ToolCallFromText[] = reconstructToolCallDeltas(deltas);
const refusal: string | undefined =
  toolValidator({ name: "search", parameters: { type: "object" } }, parsed.arguments) ??
  wrapped({ name: "search" }, rebuilt[0]!.arguments) ??
  parsed.argumentsError?.message;
void firstIssue;
void refusal;
