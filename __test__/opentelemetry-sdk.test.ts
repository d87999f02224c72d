// prism-tools-native/opentelemetry through the real OpenTelemetry SDK: an agent run with a tool, its
// spans exported by sdk-trace-base's InMemorySpanExporter and its metrics read by sdk-metrics.
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { createAgent, createMockProvider, providerDone, providerTextDelta, providerToolCall, toolCallContent, type AgentEvent } from "../index.mjs";
import { createOpenTelemetryInstrumentation, wrapOpenTelemetryApi } from "../opentelemetry/index.mjs";

const SECRET = "sk-otel-secret-7731";

function sdk() {
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return { spans, tracerProvider, meterProvider, reader, metricExporter };
}

async function untilDone(session: { subscribe(): AsyncIterable<AgentEvent> }, run: () => Promise<unknown>) {
  const reading = (async () => {
    for await (const _ of session.subscribe());
  })();
  await run().catch(() => undefined);
  await reading;
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

describe("opentelemetry through the OpenTelemetry SDK", () => {
  it("exports a run's span tree (invoke_agent > chat, execute_tool, chat) and the GenAI metrics, without content", async () => {
    const otel = sdk();
    const { tracer, meter } = wrapOpenTelemetryApi(otel.tracerProvider.getTracer("prism-test"), otel.meterProvider.getMeter("prism-test"), {
      context,
      trace,
    });
    const telemetry = createOpenTelemetryInstrumentation({ tracer, meter, secrets: [SECRET] });
    const provider = createMockProvider([
      [providerTextDelta(`prompt echo ${SECRET}`), providerToolCall(toolCallContent("call_1", "lookup", { query: `find ${SECRET}` })), providerDone({ inputTokens: 11, outputTokens: 5 })],
      [providerTextDelta("the answer"), providerDone({ inputTokens: 20, outputTokens: 3 })],
    ]);
    const session = createAgent({
      model: { provider: "mock", model: "demo-model" },
      provider,
      tools: [
        {
          name: "lookup",
          parameters: { type: "object", properties: { query: { type: "string" } } },
          execute: (args: any, ctx: any) => ({ toolCallId: ctx.toolCallId, name: "lookup", value: `result for ${args.query}` }),
        },
      ],
    }).createSession();
    const detach = telemetry.attachSession(session);
    await untilDone(session, () => session.run(`user prompt ${SECRET}`));
    detach();

    const finished = otel.spans.getFinishedSpans();
    expect(finished.map((s) => s.name).sort()).toEqual(["chat demo-model", "chat demo-model", "execute_tool lookup", "invoke_agent prism"]);
    const root = finished.find((s) => s.name === "invoke_agent prism")!;
    expect(root.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(root)).toBeUndefined();
    expect(root.attributes).toMatchObject({ "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "prism", "prism.session_id": session.id });
    expect(root.status.code).toBe(SpanStatusCode.OK);
    for (const child of finished.filter((s) => s !== root)) {
      expect(parentOf(child)).toBe(root.spanContext().spanId);
      expect(child.spanContext().traceId).toBe(root.spanContext().traceId);
      expect(child.status.code).toBe(SpanStatusCode.OK);
    }
    const chats = finished.filter((s) => s.name === "chat demo-model");
    expect(chats.every((s) => s.kind === SpanKind.CLIENT)).toBe(true);
    expect(chats.map((s) => s.attributes["prism.turn"]).sort()).toEqual([1, 2]);
    expect(chats[0]!.attributes).toMatchObject({ "gen_ai.operation.name": "chat", "gen_ai.provider.name": "mock", "gen_ai.request.model": "demo-model" });
    const tool = finished.find((s) => s.name === "execute_tool lookup")!;
    expect(tool.attributes).toEqual({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "call_1" });
    expect(telemetry.traceId(String(root.attributes["prism.run_id"]))).toBe(root.spanContext().traceId);

    // No prompt, text, argument or result anywhere in what was exported.
    const exported = JSON.stringify(finished.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events })));
    expect(exported).not.toMatch(/prompt|the answer|find |result for|sk-otel/);

    await otel.reader.forceFlush();
    const metrics = otel.metricExporter
      .getMetrics()
      .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
      .filter((m) => m.dataPoints.length > 0);
    const byName = new Map(metrics.map((m) => [m.descriptor.name, m]));
    expect([...byName.keys()].sort()).toEqual([
      "gen_ai.client.operation.duration",
      "gen_ai.client.token.usage",
      "gen_ai.execute_tool.duration",
      "gen_ai.invoke_agent.duration",
    ]);
    expect(byName.get("gen_ai.client.operation.duration")!.descriptor.unit).toBe("s");
    expect(byName.get("gen_ai.client.token.usage")!.descriptor.unit).toBe("token");
    const tokens = byName.get("gen_ai.client.token.usage")!.dataPoints as any[];
    const sum = (type: string) => tokens.filter((p) => p.attributes["gen_ai.token.type"] === type).reduce((n, p) => n + p.value.sum, 0);
    expect([sum("input"), sum("output")]).toEqual([31, 8]);
    // Metric labels never carry ids.
    expect(JSON.stringify(metrics.map((m) => m.dataPoints.map((p) => p.attributes)))).not.toMatch(/session_|run_|call_1/);
    await otel.meterProvider.shutdown();
    await otel.tracerProvider.shutdown();
  });

  it("a failed provider turn: the chat and run spans end with ERROR, the message redacted", async () => {
    const otel = sdk();
    const { tracer } = wrapOpenTelemetryApi(otel.tracerProvider.getTracer("prism-test"), undefined, { context, trace });
    const telemetry = createOpenTelemetryInstrumentation({ tracer, secrets: [SECRET] });
    const session = createAgent({
      model: { provider: "mock", model: "demo-model" },
      provider: {
        id: "mock",
        async *generate() {
          yield { type: "error", error: { message: `upstream refused key ${SECRET}`, code: 503 } } as any;
        },
      },
    }).createSession();
    const detach = telemetry.attachSession(session);
    await untilDone(session, () => session.run("go"));
    detach();
    const finished = otel.spans.getFinishedSpans();
    expect(finished.map((s) => s.name).sort()).toEqual(["chat demo-model", "invoke_agent prism"]);
    for (const s of finished) {
      expect(s.status.code).toBe(SpanStatusCode.ERROR);
      expect(s.status.message).toContain("upstream refused key");
      expect(s.status.message).not.toContain(SECRET);
    }
    expect(finished.find((s) => s.name === "chat demo-model")!.attributes["http.response.status_code"]).toBe(503);
    await otel.tracerProvider.shutdown();
  });

  it("without api, the installed @opentelemetry/api parents child spans; a host parentContext parents the run", async () => {
    const otel = sdk();
    const tracerApi = otel.tracerProvider.getTracer("prism-test");
    const host = tracerApi.startSpan("host request");
    const { tracer } = wrapOpenTelemetryApi(tracerApi);
    const telemetry = createOpenTelemetryInstrumentation({ tracer, parentContext: trace.setSpan(context.active(), host) });
    const session = createAgent({ model: { provider: "mock", model: "m" }, provider: createMockProvider([providerTextDelta("hi"), providerDone()]) }).createSession();
    const detach = telemetry.attachSession(session);
    await untilDone(session, () => session.run("go"));
    detach();
    host.end();
    const finished = otel.spans.getFinishedSpans();
    const root = finished.find((s) => s.name === "invoke_agent prism")!;
    const chat = finished.find((s) => s.name === "chat m")!;
    expect(parentOf(root)).toBe(host.spanContext().spanId);
    expect(parentOf(chat)).toBe(root.spanContext().spanId);
    expect(new Set(finished.map((s) => s.spanContext().traceId)).size).toBe(1);
    await otel.tracerProvider.shutdown();
  });
});
