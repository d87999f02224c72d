// prism-tools-native/opentelemetry with its in-memory tracer and meter: the span tree and metric
// names of a native agent run, redaction, the field policy, bounds, and bad input.
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMockProvider,
  createSecretRedactor,
  createToolRegistry,
  dispatchToolCall,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
  type AgentEvent,
} from "../index.mjs";
import { createInMemoryTelemetry, createOpenTelemetryInstrumentation, wrapOpenTelemetryApi } from "../opentelemetry/index.mjs";
import * as cjs from "../opentelemetry/index.js";
import { codeOf } from "./helpers/thrown.js";

const model = { provider: "mock", model: "demo" };

async function untilDone(session: { subscribe(): AsyncIterable<AgentEvent> }, run: () => Promise<unknown>) {
  const reading = (async () => {
    for await (const _ of session.subscribe());
  })();
  await run().catch(() => undefined);
  await reading;
}

describe("prism-tools-native/opentelemetry: a native agent run", () => {
  it("one run span parents every provider attempt and tool call; failed and blocked calls end with error", async () => {
    const memory = createInMemoryTelemetry();
    const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer, meter: memory.meter });
    const provider = createMockProvider([
      [
        providerToolCall(toolCallContent("c1", "ok_tool", {})),
        providerToolCall(toolCallContent("c2", "bad_tool", {})),
        providerToolCall(toolCallContent("c3", "no_such_tool", {})),
        providerDone({ inputTokens: 4, outputTokens: 2 }),
      ],
      [providerTextDelta("done"), providerDone({ inputTokens: 9, outputTokens: 1 })],
    ]);
    const session = createAgent({
      model,
      provider,
      tools: [
        { name: "ok_tool", execute: (_a: unknown, ctx: any) => ({ toolCallId: ctx.toolCallId, name: "ok_tool", value: 1 }) },
        {
          name: "bad_tool",
          execute: () => {
            throw new Error("tool failed");
          },
        },
      ],
    }).createSession();
    const detach = telemetry.attachSession(session);
    await untilDone(session, () => session.run("go"));
    detach();

    const root = memory.spans.find((s) => s.name === "invoke_agent prism")!;
    expect(root.status).toEqual({ code: "ok", message: undefined });
    const children = memory.spans.filter((s) => s !== root);
    expect(children.map((s) => s.name)).toEqual(["chat demo", "execute_tool ok_tool", "execute_tool bad_tool", "chat demo"]);
    for (const s of children) {
      expect(s.parentSpanId).toBe(root.spanId);
      expect(s.traceId).toBe(root.traceId);
    }
    expect(memory.spans.every((s) => s.ended)).toBe(true);
    expect(children.find((s) => s.name === "execute_tool bad_tool")!.status).toEqual({ code: "error", message: "tool failed" });
    // The blocked call (unknown tool) never started a span; its duration is still measured.
    const toolOutcomes = memory.metrics.filter((m) => m.name === "gen_ai.execute_tool.duration").map((m) => m.attributes.outcome);
    expect(toolOutcomes.sort()).toEqual(["blocked", "error", "finished"]);
    expect(new Set(memory.metrics.map((m) => m.name))).toEqual(
      new Set(["gen_ai.client.operation.duration", "gen_ai.client.token.usage", "gen_ai.execute_tool.duration", "gen_ai.invoke_agent.duration"]),
    );
    const tokens = memory.metrics.filter((m) => m.name === "gen_ai.client.token.usage").map((m) => [m.attributes["gen_ai.token.type"], m.value]);
    expect(tokens).toEqual([
      ["input", 4],
      ["output", 2],
      ["input", 9],
      ["output", 1],
    ]);
    const durations = memory.metrics.filter((m) => m.name === "gen_ai.client.operation.duration");
    expect(durations.every((m) => m.value >= 0 && m.attributes.outcome === "success" && m.attributes["gen_ai.provider.name"] === "mock")).toBe(true);
  });

  it("a retried provider turn gets one chat span per attempt, the failed one with its HTTP status", async () => {
    const memory = createInMemoryTelemetry();
    const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer, meter: memory.meter });
    let calls = 0;
    const session = createAgent({
      model,
      provider: {
        id: "flaky",
        async *generate() {
          if (++calls === 1) {
            yield { type: "error", error: { message: "busy", code: 429 } } as any;
            return;
          }
          yield providerTextDelta("ok");
          yield providerDone();
        },
      },
    }).createSession();
    const detach = telemetry.attachSession(session);
    await untilDone(session, () => session.run("go", { retry: { maxAttempts: 2, initialDelayMs: 0, maxDelayMs: 0 } } as any));
    detach();
    const chats = memory.spans.filter((s) => s.name === "chat demo");
    expect(chats.map((s) => [s.attributes["prism.attempt"], s.status?.code, s.attributes["http.response.status_code"]])).toEqual([
      [1, "error", 429],
      [2, "ok", undefined],
    ]);
  });

  it("a run that throws or is aborted leaves no span open", async () => {
    const memory = createInMemoryTelemetry();
    const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer });
    const controller = new AbortController();
    const session = createAgent({
      model,
      provider: {
        id: "mock",
        async *generate() {
          yield providerTextDelta("...");
          controller.abort(new Error("cancelled"));
          await new Promise(() => {});
        },
      },
    }).createSession();
    const detach = telemetry.attachSession(session);
    await untilDone(session, () => session.run("go", { signal: controller.signal }));
    detach();
    expect(memory.spans.length).toBeGreaterThan(1);
    expect(memory.spans.every((s) => s.ended && s.status?.code === "error")).toBe(true);
  });
});

describe("no content, secrets redacted", () => {
  it("string attributes and status messages go through secrets and a redactor; strings are cut at 1024", () => {
    const memory = createInMemoryTelemetry();
    const telemetry = createOpenTelemetryInstrumentation({
      tracer: memory.tracer,
      secrets: ["hunter2"],
      redactor: createSecretRedactor(["tok-abc-999"]),
    });
    telemetry.handleAgentEvent({ type: "agent_started", sessionId: "s-hunter2", runId: "r1" });
    telemetry.handleAgentEvent({ type: "tool_execution_started", sessionId: "s-hunter2", runId: "r1", call: { type: "tool_call", id: "c1", name: "x".repeat(5000), arguments: { q: "hunter2" } } });
    telemetry.handleAgentEvent({
      type: "tool_execution_error",
      sessionId: "s-hunter2",
      runId: "r1",
      call: { type: "tool_call", id: "c1", name: "x", arguments: {} },
      error: { message: "denied for hunter2 with tok-abc-999" },
      metadata: { durationMs: 1, status: "error" },
    });
    telemetry.handleAgentEvent({ type: "error", sessionId: "s-hunter2", runId: "r1", error: { message: "boom tok-abc-999" } });
    const text = JSON.stringify(memory.spans);
    expect(text).not.toMatch(/hunter2|tok-abc-999/);
    expect(memory.spans[0]!.attributes["prism.session_id"]).toBe("s-[REDACTED]");
    expect(memory.spans[1]!.status).toEqual({ code: "error", message: "denied for [REDACTED] with [REDACTED]" });
    expect(String(memory.spans[1]!.attributes["gen_ai.tool.name"]).length).toBe(1024);
    // The span name says what the attribute says: the tool's name, redacted and cut as it is.
    expect(memory.spans[1]!.name).toBe(`execute_tool ${"x".repeat(1024)}`);
  });

  it("a status message is cut between characters: no surrogate pair is split", () => {
    const memory = createInMemoryTelemetry();
    const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer });
    telemetry.handleAgentEvent({ type: "agent_started", sessionId: "s", runId: "r" });
    // 1 023 ASCII bytes, then emoji (4 bytes, two UTF-16 units): the cut falls inside the first one.
    for (const [i, message] of ["a".repeat(1023) + "😀".repeat(10), "b".repeat(1022) + "😀".repeat(10), "😀".repeat(700)].entries()) {
      telemetry.handleAgentEvent({ type: "tool_execution_started", sessionId: "s", runId: "r", call: { type: "tool_call", id: `c${i}`, name: "t", arguments: {} } });
      telemetry.handleAgentEvent({
        type: "tool_execution_error",
        sessionId: "s",
        runId: "r",
        call: { type: "tool_call", id: `c${i}`, name: "t", arguments: {} },
        error: { message },
        metadata: { durationMs: 1, status: "error" },
      });
      const status = memory.spans[memory.spans.length - 1]!.status.message!;
      expect(status, `message ${i}`).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
      expect(message.startsWith(status)).toBe(true);
      expect(Buffer.byteLength(status)).toBeLessThanOrEqual(1024);
      expect(Buffer.byteLength(status)).toBeGreaterThan(1020); // no more than the split character goes
    }
  });

  it("the chat span's name carries the model as its exported attribute does: redacted, or as the field policy left it", () => {
    const turn = (telemetry: ReturnType<typeof createOpenTelemetryInstrumentation>, model: string) => {
      telemetry.handleAgentEvent({ type: "agent_started", sessionId: "s", runId: "r" });
      telemetry.handleAgentEvent({ type: "provider_turn_started", sessionId: "s", runId: "r", turn: 1, metadata: { providerId: "p", model } } as any);
    };
    const chat = (memory: ReturnType<typeof createInMemoryTelemetry>) => memory.spans.find((s) => s.name.startsWith("chat"))!;
    const secretModel = "ft:gpt-4o:acme:key-sk-live-42";
    for (const [options, name, attribute] of [
      [{ secrets: ["sk-live-42"] }, "chat ft:gpt-4o:acme:key-[REDACTED]", "ft:gpt-4o:acme:key-[REDACTED]"],
      [{ redactor: createSecretRedactor(["sk-live-42"]) }, "chat ft:gpt-4o:acme:key-[REDACTED]", "ft:gpt-4o:acme:key-[REDACTED]"],
      [{ fieldPolicy: ({ path }: { path: string }) => ({ action: path === "gen_ai.request.model" ? "redact" : "allow" }) }, "chat [REDACTED]", "[REDACTED]"],
      [{ fieldPolicy: ({ path }: { path: string }) => ({ action: path === "gen_ai.request.model" ? "deny" : "allow" }) }, "chat", undefined],
    ] as const) {
      const memory = createInMemoryTelemetry();
      const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer, ...(options as object) });
      turn(telemetry, secretModel);
      telemetry.handleAgentEvent({ type: "agent_finished", sessionId: "s", runId: "r" } as any);
      expect(chat(memory).name).toBe(name);
      expect(chat(memory).attributes["gen_ai.request.model"]).toBe(attribute);
      expect(JSON.stringify(memory.spans)).not.toContain("sk-live-42");
    }
  });

  it("guardrail decisions export stage and action, never the guardrail's reason or metadata", () => {
    const memory = createInMemoryTelemetry();
    const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer });
    telemetry.handleAgentEvent({ type: "agent_started", sessionId: "s", runId: "r" });
    telemetry.handleAgentEvent({
      type: "guardrail_decision",
      sessionId: "s",
      runId: "r",
      toolCallId: "c",
      toolName: "t",
      record: { guardrail: "pii", stage: "tool_input", action: "block", reason: "contains ssn 123-45-6789", metadata: { ssn: "123-45-6789" } },
    });
    const g = memory.spans.find((s) => s.name === "prism.guardrail.evaluate")!;
    expect(g.attributes).toEqual({ "prism.guardrail.stage": "tool_input", "prism.guardrail.action": "block" });
    expect(g.status?.code).toBe("error");
    expect(JSON.stringify(memory.spans)).not.toContain("6789");
  });

  it("the field policy tokenizes a string without echoing it", () => {
    const memory = createInMemoryTelemetry();
    const telemetry = createOpenTelemetryInstrumentation({
      tracer: memory.tracer,
      fieldPolicy: (input) => (input.path === "prism.session_id" ? { action: "tokenize" } : { action: "allow" }),
    });
    telemetry.handleAgentEvent({ type: "agent_started", sessionId: "tenant-42-user-7", runId: "r" });
    const value = String(memory.spans[0]!.attributes["prism.session_id"]);
    expect(value).toMatch(/^tok_[0-9a-f]{8}/);
    expect(value).not.toContain("tenant");
  });
});

describe("bounds and bad input", () => {
  it("traceId(runId) remembers the last maxTraceReferences runs", () => {
    const memory = createInMemoryTelemetry();
    const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer, maxTraceReferences: 2 });
    for (const runId of ["r1", "r2", "r3"]) telemetry.handleAgentEvent({ type: "agent_started", sessionId: "s", runId });
    expect(telemetry.traceId("r1")).toBeUndefined();
    expect(telemetry.traceId("r2")).toBe(memory.spans[1]!.traceId);
    expect(telemetry.traceId("r3")).toBe(memory.spans[2]!.traceId);
  });

  it("bad options throw with ERR_PRISM_INVALID_OPTION", () => {
    const memory = createInMemoryTelemetry();
    const create = createOpenTelemetryInstrumentation as (o?: unknown) => unknown;
    const cases: [string, () => unknown][] = [
      ["options not an object", () => create("yes")],
      ["a tracer without startSpan", () => create({ tracer: {} })],
      ["a meter without createHistogram", () => create({ meter: { createCounter() {} } })],
      ["secrets not strings", () => create({ tracer: memory.tracer, secrets: [1] })],
      ["a redactor without redact", () => create({ tracer: memory.tracer, redactor: {} })],
      ["fieldPolicy not a function", () => create({ tracer: memory.tracer, fieldPolicy: "deny" })],
      ["maxTraceReferences 0", () => create({ tracer: memory.tracer, maxTraceReferences: 0 })],
      ["maxTraceReferences 10001", () => create({ tracer: memory.tracer, maxTraceReferences: 10_001 })],
      ["maxTraceReferences 1.5", () => create({ tracer: memory.tracer, maxTraceReferences: 1.5 })],
      ["wrap: no tracer", () => (wrapOpenTelemetryApi as any)(null)],
      ["wrap: a bad meter", () => (wrapOpenTelemetryApi as any)({ startSpan() {} }, { createCounter() {} })],
      ["wrap: a bad api", () => (wrapOpenTelemetryApi as any)({ startSpan() {} }, undefined, { context: {} })],
      ["attachSession: no subscribe", () => (createOpenTelemetryInstrumentation({ tracer: memory.tracer }).attachSession as any)({ id: "s" })],
    ];
    for (const [what, fn] of cases) expect([what, codeOf(fn)]).toEqual([what, "ERR_PRISM_INVALID_OPTION"]);
    expect(() => create({ tracer: memory.tracer, maxTraceReferences: 0 })).toThrow(/maxTraceReferences must be an integer from 1 to 10000/);
  });

  it("malformed events neither throw nor leave a partial span; a failing exporter reaches onExporterError only", () => {
    const memory = createInMemoryTelemetry();
    const errors: unknown[] = [];
    const telemetry = createOpenTelemetryInstrumentation({ tracer: memory.tracer, meter: memory.meter, onExporterError: (e) => errors.push(e) });
    const hostile: unknown[] = [null, 42, "agent_started", {}, { type: "constructor" }, { type: "__proto__" }, { type: "provider_turn_finished", runId: "r" }, { type: "tool_execution_finished", runId: "r" }];
    for (const event of hostile) expect(() => telemetry.handleAgentEvent(event as AgentEvent)).not.toThrow();
    expect(() => telemetry.handleRunFeedback(null as any)).not.toThrow();
    expect(() => telemetry.handleEvaluation(undefined as any)).not.toThrow();
    expect(() => telemetry.handleDelegation(7 as any)).not.toThrow();
    expect(memory.spans.filter((s) => !s.ended)).toEqual([]);

    const failing = createOpenTelemetryInstrumentation({
      tracer: {
        startSpan() {
          throw new Error("exporter down");
        },
      },
      onExporterError: (e) => errors.push(e),
    });
    failing.handleAgentEvent({ type: "agent_started", sessionId: "s", runId: "r" });
    expect(errors.map(String)).toContain("Error: exporter down");
  });

  it("disabled, or with neither tracer nor meter, is a no-op", async () => {
    const memory = createInMemoryTelemetry();
    const off = createOpenTelemetryInstrumentation({ enabled: false, tracer: memory.tracer, meter: memory.meter });
    const none = createOpenTelemetryInstrumentation();
    expect([off.enabled, none.enabled]).toEqual([false, false]);
    await dispatchToolCall({
      call: { type: "tool_call", id: "c1", name: "missing", arguments: {} },
      registry: createToolRegistry(),
      context: { sessionId: "s", runId: "r", toolCallId: "c1" },
      emit: (e) => off.handleAgentEvent(e),
    });
    expect([memory.spans.length, memory.metrics.length]).toEqual([0, 0]);
  });

  it("the CommonJS and ES module entries are the same functions", () => {
    expect((cjs as any).createOpenTelemetryInstrumentation ?? (cjs as any).default.createOpenTelemetryInstrumentation).toBe(createOpenTelemetryInstrumentation);
  });
});
