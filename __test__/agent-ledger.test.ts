// The agent loop's run-level ledger rows (lib/agent-ledger.js, docs/agent.md "Run ledger rows").
import { describe, expect, it } from "vitest";
import {
  AgentRunError,
  createAgent,
  createBatchedRunLedger,
  createMockProvider,
  createSecretRedactor,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
  type ProviderEvent,
  type RunLedger,
  type ToolDefinition,
} from "../index.mjs";

const model = { provider: "mock", model: "demo" };

const echo: ToolDefinition = {
  name: "echo",
  parameters: { type: "object", properties: {} },
  execute: (args: any, ctx) => ({ toolCallId: ctx.toolCallId, name: "echo", value: args.text }),
};

type Row = { kind: "run" | "event" | "tool" | "usage"; record: any };

/** A ledger that keeps every row in one list, in append order. */
function recorder(wrap: (kind: Row["kind"], record: any) => unknown = () => undefined) {
  const rows: Row[] = [];
  const append = (kind: Row["kind"]) => (record: any) => {
    const out = wrap(kind, record);
    const keep = () => void rows.push({ kind, record });
    if (out instanceof Promise) return out.then(keep);
    keep();
    return undefined;
  };
  const ledger = {
    appendRun: append("run"),
    appendEvent: append("event"),
    appendToolCall: append("tool"),
    appendUsage: append("usage"),
  } as RunLedger;
  const short = () =>
    rows.map(({ kind, record }) =>
      kind === "run" ? `run:${record.status}` : kind === "event" ? `event:${record.type}` : kind === "tool" ? `tool:${record.status}` : `usage:${record.scope}`,
    );
  return { ledger, rows, short, runs: () => rows.filter((r) => r.kind === "run").map((r) => r.record) };
}

async function rejection(run: Promise<unknown>): Promise<unknown> {
  try {
    await run;
  } catch (e) {
    return e;
  }
  throw new Error("the run did not reject");
}

describe("run ledger rows of the agent loop", () => {
  it("a succeeded run: run rows, per-turn and total usage, events and tool rows, in run order", async () => {
    const { ledger, rows, short, runs } = recorder();
    const provider = createMockProvider([
      [providerToolCall(toolCallContent("c1", "echo", { text: "hi" })), providerDone({ inputTokens: 10, outputTokens: 1, totalTokens: 11 })],
      [providerTextDelta("done"), providerDone({ inputTokens: 20, outputTokens: 2, totalTokens: 22 })],
    ]);
    const agent = createAgent({ model, provider, tools: [echo], runLedger: ledger, ownership: { tenantId: "t1", accountId: "a1" } });
    const result = await agent.createSession({ id: "s1" }).run("go");
    expect(result.status).toBe("succeeded");

    expect(short()).toEqual([
      "run:running",
      "event:agent_started",
      "event:turn_started",
      "event:provider_turn_started",
      "event:message_started",
      "event:message_delta",
      "usage:provider_turn",
      "event:provider_turn_finished",
      "event:message_finished",
      "event:turn_finished",
      "event:tool_execution_started",
      "tool:started",
      "event:tool_execution_finished",
      "tool:finished",
      "event:turn_started",
      "event:provider_turn_started",
      "event:message_started",
      "event:message_delta",
      "usage:provider_turn",
      "event:provider_turn_finished",
      "event:message_finished",
      "event:turn_finished",
      "usage:run_total",
      "event:agent_finished",
      "run:succeeded",
    ]);

    const [start, end] = runs();
    expect(start).toMatchObject({ id: result.runId, sessionId: "s1", model, provider: "mock", status: "running", tenantId: "t1", accountId: "a1" });
    expect(end).toMatchObject({ id: result.runId, sessionId: "s1", status: "succeeded", startedAt: start.startedAt, tenantId: "t1" });
    expect(typeof end.finishedAt).toBe("string");
    expect(end).not.toHaveProperty("error");
    expect(end).not.toHaveProperty("abortReason");

    const usage = rows.filter((r) => r.kind === "usage").map((r) => r.record);
    expect(usage.map(({ scope, turn, attempt, usage }) => ({ scope, turn, attempt, total: usage.totalTokens }))).toEqual([
      { scope: "provider_turn", turn: 1, attempt: 1, total: 11 },
      { scope: "provider_turn", turn: 2, attempt: 1, total: 22 },
      { scope: "run_total", turn: undefined, attempt: undefined, total: 33 },
    ]);
    expect(usage.every((u) => u.runId === result.runId && u.sessionId === "s1" && u.tenantId === "t1")).toBe(true);

    const events = rows.filter((r) => r.kind === "event").map((r) => r.record);
    expect(events.every((e) => e.runId === result.runId && e.sessionId === "s1" && e.type === e.event.type && e.redacted === false)).toBe(true);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it("a run without usage writes no usage rows; the run's identity gives the ownership", async () => {
    const { ledger, rows, runs } = recorder();
    const provider = createMockProvider([providerTextDelta("ok"), providerDone()]);
    const identity = { tenantId: "t9", userId: "u9", subject: "svc", issuedAt: new Date().toISOString() } as any;
    await createAgent({ model, provider, runLedger: ledger }).createSession().run("hi", { identity });
    expect(rows.some((r) => r.kind === "usage")).toBe(false);
    expect(runs().map((r) => [r.status, r.tenantId, r.userId])).toEqual([
      ["running", "t9", "u9"],
      ["succeeded", "t9", "u9"],
    ]);
  });

  it("a failed run: a failed terminal row with the error, no total usage row", async () => {
    const { ledger, short, runs } = recorder();
    const provider = {
      id: "mock",
      async *generate(): AsyncIterable<ProviderEvent> {
        throw new Error("provider blew up");
      },
    };
    const error = await rejection(createAgent({ model, provider, runLedger: ledger }).createSession().run("x"));
    expect(error).toBeInstanceOf(AgentRunError);
    const end = runs().at(-1);
    expect(end).toMatchObject({ status: "failed", error: { message: "provider blew up" } });
    expect(end).not.toHaveProperty("abortReason");
    expect(short().slice(-2)).toEqual(["event:error", "run:failed"]);
    expect(short()).not.toContain("usage:run_total");
  });

  it("an unknown provider fails before the start row: only the terminal row", async () => {
    const { ledger, short, runs } = recorder();
    await rejection(createAgent({ model: { provider: "nowhere", model: "x" }, runLedger: ledger }).createSession().run("x"));
    expect(short()).toEqual(["event:error", "run:failed"]);
    expect(runs()[0].error.message).toBe("Unknown provider: nowhere");
  });

  it("an aborted run: an aborted terminal row with the abort reason", async () => {
    const { ledger, runs, short } = recorder();
    const controller = new AbortController();
    const provider = {
      id: "mock",
      async *generate(): AsyncIterable<ProviderEvent> {
        controller.abort("user-cancelled");
        yield providerTextDelta("never");
        yield providerDone();
      },
    };
    const error = (await rejection(createAgent({ model, provider, runLedger: ledger }).createSession().run("x", { signal: controller.signal }))) as AgentRunError;
    expect(error.result.status).toBe("aborted");
    expect(runs().map((r) => r.status)).toEqual(["running", "aborted"]);
    expect(runs()[1]).toMatchObject({ abortReason: "user-cancelled", error: { message: "user-cancelled" } });
    expect(short().slice(-2)).toEqual(["event:error", "run:aborted"]);
  });

  it("an aborted run still waits for a ledger that answers: the terminal row is written when run() rejects", async () => {
    const { ledger, runs } = recorder(() => new Promise((r) => setTimeout(r, 5)));
    const controller = new AbortController();
    const provider = {
      id: "mock",
      async *generate(): AsyncIterable<ProviderEvent> {
        controller.abort("user-cancelled");
        yield providerTextDelta("never");
        yield providerDone();
      },
    };
    await rejection(createAgent({ model, provider, runLedger: ledger }).createSession().run("x", { signal: controller.signal }));
    expect(runs().map((r) => r.status)).toEqual(["running", "aborted"]);
    expect(runs()[1].abortReason).toBe("user-cancelled");
  });

  for (const stuck of ["appendRun", "appendEvent", "appendUsage", "flush"] as const) {
    it(`a ledger whose ${stuck} never settles holds the run only until it is aborted`, async () => {
      const never = () => new Promise<void>(() => {});
      const ledger: any = { appendRun: () => {}, appendEvent: () => {}, appendToolCall: () => {}, appendUsage: () => {}, durability: "flush_on_terminal", flush: async () => {} };
      ledger[stuck] = never;
      const provider = createMockProvider([[providerTextDelta("hi"), { type: "usage", usage: { inputTokens: 1, outputTokens: 1 } } as ProviderEvent, providerDone()]]);
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort("operator stop"), 50);
      const started = Date.now();
      const outcome = await createAgent({ model, provider, runLedger: ledger })
        .createSession()
        .run("x", { signal: controller.signal })
        .then((r) => r.status, (e: AgentRunError) => e.result?.status ?? String(e));
      clearTimeout(timer);
      // Nothing ends the run but the abort: it ends as aborted (or, when only the terminal row's
      // flush waited, as it had already ended), and promptly.
      expect(stuck === "flush" ? ["succeeded", "aborted"] : ["aborted"]).toContain(outcome);
      expect(Date.now() - started).toBeLessThan(5_000);
    });
  }

  it("redacts secrets in run, event and usage rows", async () => {
    const secret = "sk-ledger-secret";
    const { ledger, rows } = recorder();
    const provider = createMockProvider([
      [providerToolCall(toolCallContent("c1", "echo", { text: secret })), providerDone({ inputTokens: 1, cost: 0.5, currency: secret } as any)],
      [providerTextDelta(`echoed ${secret}`), providerDone({ inputTokens: 2, cost: 0.25, currency: secret } as any)],
    ]);
    const agent = createAgent({ model: { ...model, note: secret }, provider, tools: [echo], runLedger: ledger, redactor: createSecretRedactor([secret]) });
    await agent.createSession().run("go");
    const kinds = new Set(rows.map((r) => r.kind));
    expect(kinds).toEqual(new Set(["run", "event", "tool", "usage"]));
    expect(JSON.stringify(rows)).not.toContain(secret);
    const events = rows.filter((r) => r.kind === "event").map((r) => r.record);
    expect(events.every((e) => e.redacted === true)).toBe(true);
    const delta = events.find((e) => e.type === "message_delta" && e.event.content.type === "text");
    expect(delta.event.content.text).toBe("echoed [REDACTED]");
    const usage = rows.filter((r) => r.kind === "usage").map((r) => r.record);
    expect(usage.map((u) => u.usage.currency)).toEqual(["[REDACTED]", "[REDACTED]", "[REDACTED]"]);
    expect(rows.find((r) => r.kind === "run")!.record.model.note).toBe("[REDACTED]");
  });

  it("config.secrets redact the rows too", async () => {
    const { ledger, rows } = recorder();
    const provider = createMockProvider([providerTextDelta("the key is sk-cfg-1"), providerDone()]);
    await createAgent({ model, provider, runLedger: ledger, secrets: ["sk-cfg-1"] }).createSession().run("x");
    expect(rows.length).toBeGreaterThan(4);
    expect(JSON.stringify(rows)).not.toContain("sk-cfg-1");
  });

  it("serializes every append: one at a time, in order, tool rows included", async () => {
    let active = 0;
    let maxActive = 0;
    const { ledger, short } = recorder(async () => {
      active += 1;
      maxActive = Math.max(maxActive, active);
      await new Promise((resolve) => setTimeout(resolve, 1));
      active -= 1;
    });
    const deltas = Array.from({ length: 20 }, (_, i) => providerTextDelta(`chunk-${i}`));
    const provider = createMockProvider([
      [providerToolCall(toolCallContent("c1", "echo", { text: "a" })), providerToolCall(toolCallContent("c2", "echo", { text: "b" })), providerDone({ inputTokens: 1 })],
      [...deltas, providerDone({ inputTokens: 1 })],
    ]);
    const agent = createAgent({ model, provider, tools: [echo], runLedger: ledger, loop: { strategy: "single-shot", toolConcurrency: 2 } });
    await agent.createSession().run("go");
    expect(maxActive).toBe(1);
    const rows = short();
    expect(rows[0]).toBe("run:running");
    expect(rows.at(-1)).toBe("run:succeeded");
    expect(rows.filter((r) => r === "event:message_delta")).toHaveLength(22);
    expect(rows.filter((r) => r.startsWith("tool:"))).toHaveLength(4);
  });

  it("a rejected event append fails the run with the ledger's error; the terminal row is still written", async () => {
    const { ledger, runs, short } = recorder((kind, record) =>
      kind === "event" && record.type === "message_delta" ? Promise.reject(new Error("ledger write failed")) : undefined,
    );
    const provider = createMockProvider([providerTextDelta("a"), providerTextDelta("b"), providerDone()]);
    const error = (await rejection(createAgent({ model, provider, runLedger: ledger }).createSession().run("x"))) as AgentRunError;
    expect(error).toBeInstanceOf(AgentRunError);
    expect(error.message).toBe("ledger write failed");
    expect(error.result).toMatchObject({ status: "failed", error: { message: "ledger write failed" } });
    expect(runs().map((r) => r.status)).toEqual(["running", "failed"]);
    expect(runs()[1].error.message).toBe("ledger write failed");
    // After the first failure the run's later event rows are skipped until the run drains.
    expect(short()).not.toContain("event:message_finished");
    expect(short().slice(-2)).toEqual(["event:error", "run:failed"]);
  });

  it("a rejected start row fails the run before any provider turn", async () => {
    let turns = 0;
    const { ledger, runs } = recorder((kind, record) => (kind === "run" && record.status === "running" ? Promise.reject(new Error("no runs table")) : undefined));
    const provider = {
      id: "mock",
      async *generate(): AsyncIterable<ProviderEvent> {
        turns += 1;
        yield providerDone();
      },
    };
    const error = (await rejection(createAgent({ model, provider, runLedger: ledger }).createSession().run("x"))) as AgentRunError;
    expect(error.result).toMatchObject({ status: "failed", error: { message: "no runs table" } });
    expect(turns).toBe(0);
    expect(runs().map((r) => r.status)).toEqual(["failed"]);
  });

  it("a throwing usage append fails the run", async () => {
    const { ledger, runs } = recorder((kind) => {
      if (kind === "usage") throw new Error("usage table full");
    });
    const provider = createMockProvider([providerTextDelta("a"), providerDone({ inputTokens: 3 })]);
    const error = (await rejection(createAgent({ model, provider, runLedger: ledger }).createSession().run("x"))) as AgentRunError;
    expect(error.result).toMatchObject({ status: "failed", error: { message: "usage table full" } });
    expect(runs().at(-1)).toMatchObject({ status: "failed", error: { message: "usage table full" } });
  });

  it("a rejected terminal row rejects the run with the ledger's own error", async () => {
    const { ledger } = recorder((kind, record) => (kind === "run" && record.status === "succeeded" ? Promise.reject(new Error("terminal write failed")) : undefined));
    const provider = createMockProvider([providerTextDelta("a"), providerDone()]);
    const error = await rejection(createAgent({ model, provider, runLedger: ledger }).createSession().run("x"));
    expect(error).not.toBeInstanceOf(AgentRunError);
    expect((error as Error).message).toBe("terminal write failed");
  });

  it("flushes a flush-on-terminal ledger once, after the terminal row; not a buffered one", async () => {
    const run = async (durability: string) => {
      const { ledger, short } = recorder();
      const log: string[] = [];
      const flushable = {
        ...ledger,
        durability,
        flush: async () => {
          log.push(`flush after ${short().at(-1)}`);
          return { accepted: 0, flushed: 0, buffered: 0 };
        },
        status: () => ({ accepted: 0, flushed: 0, buffered: 0 }),
        dispose: async () => undefined,
      };
      await createAgent({ model, provider: createMockProvider([providerTextDelta("ok"), providerDone()]), runLedger: flushable as RunLedger })
        .createSession()
        .run("hi");
      return log;
    };
    expect(await run("flush_on_terminal")).toEqual(["flush after run:succeeded"]);
    expect(await run("buffered")).toEqual([]);
  });

  it("a batched ledger with a long delay has every row at its target when the run resolves", async () => {
    const target = recorder();
    const batched = createBatchedRunLedger(target.ledger, { maxDelayMs: 60_000 });
    await createAgent({ model, provider: createMockProvider([providerTextDelta("ok"), providerDone({ inputTokens: 1 })]), runLedger: batched })
      .createSession()
      .run("hi");
    expect(target.short()[0]).toBe("run:running");
    expect(target.short().at(-1)).toBe("run:succeeded");
    expect(target.short()).toContain("usage:run_total");
    expect(batched.status().buffered).toBe(0);
    await batched.dispose();
  });

  it("a ledger with only appendToolCall still gets its tool rows and the run succeeds", async () => {
    const tools: any[] = [];
    const provider = createMockProvider([[providerToolCall(toolCallContent("c1", "echo", { text: "x" })), providerDone()], [providerTextDelta("ok"), providerDone()]]);
    const result = await createAgent({ model, provider, tools: [echo], runLedger: { appendToolCall: (r: any) => void tools.push(r.status) } })
      .createSession()
      .run("go");
    expect(result.status).toBe("succeeded");
    expect(tools).toEqual(["started", "finished"]);
  });

  it("run rows go to the run's own ledger (RunOptions.runLedger wins)", async () => {
    const configured = recorder();
    const perRun = recorder();
    const agent = createAgent({ model, provider: createMockProvider([[providerTextDelta("a"), providerDone()], [providerTextDelta("b"), providerDone()]]), runLedger: configured.ledger });
    const session = agent.createSession();
    await session.run("one", { runLedger: perRun.ledger });
    await session.run("two");
    expect(perRun.runs().map((r) => r.status)).toEqual(["running", "succeeded"]);
    expect(configured.runs().map((r) => r.status)).toEqual(["running", "succeeded"]);
    expect(perRun.runs()[0].id).not.toBe(configured.runs()[0].id);
  });
});
