import { describe, expect, it } from "vitest";
import {
  AGENT_RUN_LIMITS,
  createAgent,
  createMockProvider,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
  AgentRunError,
  type AgentEvent,
  type ArtifactLoopOptions,
  type ProviderEvent,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.mjs";
import { failure } from "./helpers/agent.js";

const model = { provider: "mock", model: "demo" };

function tool(name: string, log: string[]): ToolDefinition {
  return {
    name,
    execute(args, ctx) {
      log.push(`${name}:${ctx.toolCallId}`);
      return { toolCallId: ctx.toolCallId, name, value: { from: name, args } };
    },
  };
}

const text = (t: string): ProviderEvent[] => [providerTextDelta(t), providerDone()];
const call = (id: string, name: string, args: Record<string, unknown> = {}) => providerToolCall(toolCallContent(id, name, args));

/** Parses JSON; accepts objects with a non-empty `title`. */
const jsonTitle: ArtifactLoopOptions<{ title?: string }> = {
  strategy: "generate-validate-revise",
  parser: (t) => JSON.parse(t),
  validator: (a) => (typeof a.title === "string" && a.title !== "" ? undefined : "title is missing"),
};

type Session = ReturnType<ReturnType<typeof createAgent>["createSession"]>;

/** Runs once; answers the events a subscriber saw and the run's result (also of a failed run). */
async function collect(session: Session, input: string, options?: object): Promise<{ events: AgentEvent[]; result: any }> {
  const events: AgentEvent[] = [];
  const reader = (async () => {
    for await (const e of session.subscribe()) events.push(e);
  })();
  let result: any;
  try {
    result = await session.run(input, options as any);
  } catch (e) {
    if (!(e instanceof AgentRunError)) throw e;
    result = e.result;
  }
  await reader;
  return { events, result };
}

describe("generate-validate-revise", () => {
  it("accepts the first valid candidate", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider(text('{"title":"Hello"}'), { onRequest: (r) => void requests.push(r) });
    const session = createAgent({ model, provider, loop: jsonTitle }).createSession();
    const { events, result } = await collect(session, "write it");
    expect(result).toMatchObject({ status: "succeeded", finishReason: "stop", artifact: { title: "Hello" }, revisions: 0, toolRounds: 0, text: '{"title":"Hello"}' });
    expect(events.map((e) => e.type).filter((t) => t.startsWith("artifact") || t.startsWith("agent"))).toEqual([
      "agent_started",
      "artifact_validation_started",
      "artifact_validation_finished",
      "artifact_finished",
      "agent_finished",
    ]);
    expect(events.find((e) => e.type === "artifact_finished")).toMatchObject({ turn: 1, attempt: 1, result: { ok: true } });
    expect(requests).toHaveLength(1);
  });

  it("asks for a revision naming the problem, then accepts", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider([text('{"body":"x"}'), text('{"title":"Fixed"}')], { onRequest: (r) => void requests.push(structuredClone({ ...r, signal: undefined, tools: [] })) });
    const session = createAgent({ model, provider, loop: jsonTitle }).createSession();
    const { events, result } = await collect(session, "write it");
    expect(result).toMatchObject({ status: "succeeded", artifact: { title: "Fixed" }, revisions: 1 });
    const revising = events.find((e) => e.type === "artifact_revision_started") as any;
    expect(revising).toMatchObject({ turn: 1, attempt: 1, failure: { ok: false, errors: [{ message: "title is missing" }], metadata: { reason: "validation_failed" } } });
    // The repair message is the rejection itself, as @arnilo/prism's default repairer writes it.
    const revision = requests[1].messages.at(-1)!;
    expect(revision.role).toBe("user");
    expect((revision.content[0] as any).text).toBe("title is missing");
    expect(session.messages().map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("accepts validator answers true / undefined and rejects false / { message }", async () => {
    const answers: unknown[] = [false, { message: "too long" }, true];
    const provider = createMockProvider(text("a"));
    const session = createAgent({ model, provider }).createSession();
    const { events, result } = await collect(session, "x", { loop: { strategy: "generate-validate-revise", validator: () => answers.shift(), maxRevisions: 3 } });
    const rejected = events.filter((e) => e.type === "artifact_revision_started").map((e: any) => e.failure.errors[0].message);
    expect(rejected).toEqual(["the artifact was rejected by the validator", "too long"]);
    expect(result).toMatchObject({ status: "succeeded", artifact: "a", revisions: 2 });
  });

  it("speaks @arnilo/prism's ArtifactValidation: { ok: true } accepts, { ok: false, errors } repairs with the errors", async () => {
    const requests: ProviderRequest[] = [];
    const provider = createMockProvider([text("x"), text("y")], { onRequest: (r) => void requests.push(r) });
    const session = createAgent({ model, provider }).createSession();
    const validator = (v: unknown) => (v === "y" ? { ok: true } : { ok: false, errors: [{ message: "err1" }, { message: "err2" }] });
    const result = await session.run("x", { loop: { strategy: "generate-validate-revise", validator: validator as any, maxRevisions: 1 } });
    expect(result).toMatchObject({ status: "succeeded", artifact: "y", revisions: 1 });
    expect((requests[1].messages.at(-1)!.content[0] as any).text).toBe("err1\nerr2");
    // A ParseResult parser and a host repairer, as upstream takes them.
    const p2 = createMockProvider([text("bad"), text('{"a":1}')]);
    const s2 = createAgent({ model, provider: p2 }).createSession();
    const seen: unknown[] = [];
    const r2 = await s2.run("x", {
      loop: {
        strategy: "generate-validate-revise",
        parser: ((t: string) => (t.startsWith("{") ? { ok: true, value: JSON.parse(t) } : { ok: false, error: "invalid JSON" })) as any,
        validator: (() => ({ ok: true })) as any,
        repairer: ((value: unknown, failure: any) => (seen.push(value, failure.errors[0].message), { role: "user", content: [{ type: "text", text: "emit JSON" }] })) as any,
        maxRevisions: 1,
      } as any,
    });
    expect(r2).toMatchObject({ status: "succeeded", artifact: { a: 1 } });
    expect(seen).toEqual([undefined, "invalid JSON"]);
    expect((s2.messages()[2].content[0] as any).text).toBe("emit JSON");
    // Empty text is a parse failure before the parser runs.
    const r3 = await failure(createAgent({ model, provider: createMockProvider(text("  ")) }).createSession().run("x", { loop: { strategy: "generate-validate-revise", maxRevisions: 0 } }));
    expect(r3.error).toMatchObject({ code: "parse_error", message: "no artifact text in model output" });
  });

  it("fails with artifact_failed / max_revisions after maxRevisions revisions", async () => {
    let turns = 0;
    const provider = createMockProvider(text("{}"), { onRequest: () => void turns++ });
    const session = createAgent({ model, provider, loop: { ...jsonTitle, maxRevisions: 3 } }).createSession();
    const { events, result } = await collect(session, "x");
    expect(events.at(-1)!.type).toBe("error");
    expect(turns).toBe(4);
    expect(result).toMatchObject({
      status: "failed",
      finishReason: "artifact_failed",
      revisions: 3,
      error: { name: "ArtifactFailed", code: "validation_failed", message: "title is missing" },
    });
    expect(result.artifact).toBeUndefined();
    const failed = events.find((e) => e.type === "artifact_failed") as any;
    expect(failed).toMatchObject({ attempt: 4, result: { ok: false, errors: [{ message: "title is missing" }], metadata: { reason: "validation_failed" } } });
    expect(events.filter((e) => e.type === "artifact_revision_started")).toHaveLength(3);
    expect(events.some((e) => e.type === "agent_finished")).toBe(false);
  });

  it("default maxRevisions is 2 and values above the cap clamp to 16", async () => {
    expect([AGENT_RUN_LIMITS.defaultMaxRevisions, AGENT_RUN_LIMITS.maxRevisions]).toEqual([2, 16]);
    for (const [maxRevisions, turns] of [[undefined, 3], [1000, 17]] as const) {
      let n = 0;
      const provider = createMockProvider(text("nope"), { onRequest: () => void n++ });
      // 17 turns: past the default turn budget (16), so the run raises it.
      const result = await failure(createAgent({ model, provider }).createSession().run("x", { loop: { strategy: "generate-validate-revise", validator: () => false, maxRevisions }, limits: { maxTurns: 20 } }));
      expect(result.status).toBe("failed");
      expect(n).toBe(turns);
    }
  });

  it("a throwing parser makes an invalid candidate that is revised", async () => {
    const provider = createMockProvider([text("not json"), text('{"title":"ok"}')]);
    const validated: unknown[] = [];
    const session = createAgent({ model, provider }).createSession();
    const { events, result } = await collect(session, "x", { loop: { ...jsonTitle, validator: (a: unknown) => void validated.push(a) } });
    const rejected = events.find((e) => e.type === "artifact_revision_started") as any;
    expect(rejected.failure.metadata.reason).toBe("parse_error");
    expect(rejected.failure.errors[0]).toMatchObject({ path: "$", message: expect.stringMatching(/JSON/) });
    expect(validated).toEqual([{ title: "ok" }]);
    expect(result).toMatchObject({ status: "succeeded", revisions: 1 });
    const revision = session.messages()[2];
    expect((revision.content[0] as any).text).toMatch(/JSON/);
  });

  it("a throwing validator fails the run (a host failure, not a rejection)", async () => {
    const provider = createMockProvider(text("a"));
    const session = createAgent({ model, provider, secrets: ["s3cret"] }).createSession();
    const { events, result } = await collect(session, "x", {
      loop: { strategy: "generate-validate-revise", validator: () => { throw new Error("broken s3cret"); } },
    });
    expect(result).toMatchObject({ status: "failed", finishReason: "error" });
    expect(result.error.message).not.toContain("s3cret");
    expect(JSON.stringify(events)).not.toContain("s3cret");
    expect((events.find((e) => e.type === "artifact_failed") as any).result.metadata.reason).toBe("validator_error");
  });

  it("refuses bad loop options before any provider turn", async () => {
    let turns = 0;
    const provider = createMockProvider(text("a"), { onRequest: () => void turns++ });
    const session = createAgent({ model, provider }).createSession();
    await expect(session.run("x", { loop: { strategy: "generate-validate-revise", toolCalls: "all" } as any })).rejects.toMatchObject({ code: "invalid_loop_options" });
    await expect(session.run("x", { loop: { strategy: "generate-validate-revise", validator: "yes" } as any })).rejects.toMatchObject({ code: "invalid_loop_options" });
    await expect(session.run("x", { loop: { strategy: "generate-validate-revise", maxRevisions: -1 } })).rejects.toMatchObject({ code: "invalid_run_limits" });
    expect(turns).toBe(0);
  });
});

describe("generate-validate-revise tool calls", () => {
  it("inert by default: calls never execute, get not-dispatched rows, the response is the candidate", async () => {
    const log: string[] = [];
    const provider = createMockProvider([providerTextDelta('{"title":"T"}'), call("c1", "lookup"), providerDone()]);
    const session = createAgent({ model, provider, tools: [tool("lookup", log)], loop: jsonTitle }).createSession();
    const { events, result } = await collect(session, "x");
    expect(log).toEqual([]);
    expect(events.some((e) => e.type.startsWith("tool_execution"))).toBe(false);
    expect(result).toMatchObject({ status: "succeeded", artifact: { title: "T" }, toolRounds: 0 });
    const rows = session.messages().filter((m) => m.role === "tool").map((m) => m.content[0]);
    expect(rows).toEqual([
      {
        type: "tool_result",
        toolCallId: "c1",
        name: "lookup",
        result: undefined,
        error: { name: "ToolCallNotDispatchedError", code: "tool_call_not_dispatched", message: "Tool call lookup was not dispatched: tools are inert in the generate-validate-revise loop" },
      },
    ]);
    // toolCalls: "inert" spelled out behaves the same.
    const again = await session.run("x", { loop: { ...jsonTitle, toolCalls: "inert" } });
    expect(again.status).toBe("succeeded");
    expect(log).toEqual([]);
  });

  it("bounded: calls dispatch in order, assistant-call then result rows persist, no parsing for that response", async () => {
    const log: string[] = [];
    const parsed: string[] = [];
    const provider = createMockProvider([
      [providerTextDelta("not an artifact"), call("c1", "a"), call("c2", "b"), providerDone()],
      [call("c3", "b"), providerDone()],
      text('{"title":"done"}'),
    ]);
    const session = createAgent({ model, provider, tools: [tool("a", log), tool("b", log)] }).createSession();
    const { events, result } = await collect(session, "x", {
      loop: { ...jsonTitle, toolCalls: "bounded", parser: (t: string) => (parsed.push(t), JSON.parse(t)) },
      limits: { maxToolRounds: 2 },
    });
    expect(log).toEqual(["a:c1", "b:c2", "b:c3"]);
    expect(parsed).toEqual(['{"title":"done"}']);
    expect(result).toMatchObject({ status: "succeeded", artifact: { title: "done" }, revisions: 0, toolRounds: 2 });
    const shape = session.messages().map((m) => (m.role === "tool" ? `tool:${(m.content[0] as any).toolCallId}` : m.role === "assistant" ? `assistant:${m.content.filter((c) => c.type === "tool_call").map((c: any) => c.id).join(",")}` : m.role));
    expect(shape).toEqual(["user", "assistant:c1,c2", "tool:c1", "tool:c2", "assistant:c3", "tool:c3", "assistant:"]);
    const starts = events.filter((e) => e.type === "tool_execution_started").map((e: any) => e.call.id);
    expect(starts).toEqual(["c1", "c2", "c3"]);
  });

  it("bounded: a response with calls past maxToolRounds executes nothing and ends tool_round_limit", async () => {
    const log: string[] = [];
    const provider = createMockProvider([[call("c1", "a"), providerDone()], [call("c2", "a"), call("c3", "a"), providerDone()]]);
    const session = createAgent({ model, provider, tools: [tool("a", log)] }).createSession();
    const { events, result } = await collect(session, "x", { loop: { ...jsonTitle, toolCalls: "bounded" }, limits: { maxToolRounds: 1 } });
    expect(log).toEqual(["a:c1"]);
    expect(result).toMatchObject({ status: "failed", finishReason: "artifact_failed", toolRounds: 1, error: { code: "tool_round_limit", message: "maximum tool rounds exceeded" } });
    expect((events.find((e) => e.type === "artifact_failed") as any).result).toMatchObject({ ok: false, metadata: { reason: "tool_round_limit", revisions: 0, toolRounds: 1 } });
    const rows = session.messages().filter((m) => m.role === "tool").map((m) => m.content[0]);
    expect(rows.map((r) => [r.toolCallId, r.error?.code])).toEqual([["c1", undefined], ["c2", "tool_call_not_dispatched"], ["c3", "tool_call_not_dispatched"]]);
  });

  it("bounded: maxToolRounds 1 lets one round run, the next call is the tool round limit", async () => {
    const log: string[] = [];
    const provider = createMockProvider([[call("c1", "a"), providerDone()], [call("c2", "a"), providerDone()]]);
    const result = await failure(createAgent({ model, provider, tools: [tool("a", log)] }).createSession().run("x", { loop: { ...jsonTitle, toolCalls: "bounded" }, limits: { maxToolRounds: 1 } }));
    expect(result.error?.code).toBe("tool_round_limit");
    expect(log).toEqual(["a:c1"]);
    // 0 is not a limit upstream accepts.
    await expect(createAgent({ model, provider, tools: [tool("a", log)] }).createSession().run("x", { limits: { maxToolRounds: 0 } })).rejects.toMatchObject({ name: "TypeError", code: "invalid_run_limits" });
  });

  it("tool rounds never consume revisions", async () => {
    const log: string[] = [];
    // revision budget 1; three tool rounds interleaved with one rejection, then acceptance.
    const provider = createMockProvider([
      [call("c1", "a"), providerDone()],
      text("{}"),
      [call("c2", "a"), providerDone()],
      [call("c3", "a"), providerDone()],
      text('{"title":"ok"}'),
    ]);
    const session = createAgent({ model, provider, tools: [tool("a", log)] }).createSession();
    const result = await session.run("x", { loop: { ...jsonTitle, toolCalls: "bounded", maxRevisions: 1 }, limits: { maxToolRounds: 3 } });
    expect(result).toMatchObject({ status: "succeeded", artifact: { title: "ok" }, revisions: 1, toolRounds: 3 });
    expect(log).toEqual(["a:c1", "a:c2", "a:c3"]);
  });

  it("abort during a bounded tool round stops the loop with no call left without a row", async () => {
    const controller = new AbortController();
    const log: string[] = [];
    const slow: ToolDefinition = {
      name: "slow",
      async execute(_a, ctx) {
        log.push("slow");
        controller.abort("stop now");
        expect(ctx.signal?.aborted).toBe(true);
        return { toolCallId: ctx.toolCallId, name: "slow", value: 1 };
      },
    };
    let turns = 0;
    const provider = createMockProvider([[call("c1", "slow"), call("c2", "a"), providerDone()], text('{"title":"x"}')], { onRequest: () => void turns++ });
    const session = createAgent({ model, provider, tools: [slow, tool("a", log)] }).createSession();
    const result = await failure(session.run("x", { loop: { ...jsonTitle, toolCalls: "bounded" }, signal: controller.signal }));
    expect(result).toMatchObject({ status: "aborted", finishReason: "aborted" });
    expect(turns).toBe(1);
    expect(log).toEqual(["slow"]);
    const rows = session.messages().filter((m) => m.role === "tool").map((m) => m.content[0]);
    expect(rows.map((r) => r.toolCallId)).toEqual(["c1", "c2"]);
    expect(rows[1].error?.code).toBe("tool_call_not_dispatched");
  });

  it("session.abort() while the validator runs ends aborted without a revision", async () => {
    let turns = 0;
    const provider = createMockProvider(text("a"), { onRequest: () => void turns++ });
    const session = createAgent({ model, provider }).createSession();
    const result = await failure(session.run("x", {
      loop: {
        strategy: "generate-validate-revise",
        validator: async () => {
          session.abort("user left");
          return "rejected";
        },
      },
    }));
    expect(result).toMatchObject({ status: "aborted", finishReason: "aborted" });
    expect(turns).toBe(1);
    expect(session.messages().map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});
