// Type check of `prism-tools-native/opentelemetry` as a user writes it (compiled, not run).
import { context, metrics, trace } from "@opentelemetry/api";
import { createAgent, createMockProvider, createSecretRedactor, providerDone, providerTextDelta } from "prism-tools-native";
import {
  createInMemoryTelemetry,
  createOpenTelemetryInstrumentation,
  wrapOpenTelemetryApi,
  type InMemoryTelemetry,
  type OpenTelemetryInstrumentation,
  type RecordedSpan,
  type TelemetryFieldPolicy,
} from "prism-tools-native/opentelemetry";

export async function otelUsage(): Promise<string[]> {
  const { tracer, meter } = wrapOpenTelemetryApi(trace.getTracer("app"), metrics.getMeter("app"), { context, trace });
  const policy: TelemetryFieldPolicy = (input) => (input.path === "prism.session_id" ? { action: "tokenize" } : { action: "allow" });
  const telemetry: OpenTelemetryInstrumentation = createOpenTelemetryInstrumentation({
    tracer,
    meter,
    fieldPolicy: policy,
    secrets: ["sk-1"],
    redactor: createSecretRedactor(["sk-2"]),
    onExporterError: (error) => console.error(error),
    parentContext: (event: { runId: string }) => (event.runId === "r" ? context.active() : undefined),
  });
  const session = createAgent({ model: { provider: "mock", model: "m" }, provider: createMockProvider([providerTextDelta("hi"), providerDone()]) }).createSession();
  const detach = telemetry.attachSession(session);
  const run = session.stream("hello");
  let text = "";
  for await (const chunk of run.textStream) text += chunk;
  detach();
  telemetry.handleRunFeedback({ runId: "r", rating: 1, hasComment: false, tagCount: 0, scorerCount: 0, evaluationCount: 0 });
  telemetry.handleEvaluation({ runId: "r", status: "scored", score: 0.5, hasReason: false });
  telemetry.handleDelegation({ type: "started", runId: "r", delegationId: "d", childId: "c" });
  const memory: InMemoryTelemetry = createInMemoryTelemetry();
  const spans: readonly RecordedSpan[] = memory.spans;
  const traceId: string | undefined = telemetry.traceId("r");
  return [text, String(spans.length), traceId ?? "", String(telemetry.enabled)];
}
