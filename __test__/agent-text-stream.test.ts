// `session.stream()`'s `textStream`: the run's text as it arrives, read alone or beside the events.
import { describe, expect, it } from "vitest";
import {
  AgentRunError,
  createAgent,
  createMockProvider,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
  type AgentEvent,
  type AIProvider,
  type ToolDefinition,
} from "../index.mjs";

const model = { provider: "mock", model: "demo" };

const echo: ToolDefinition = {
  name: "echo",
  parameters: { type: "object", properties: { text: { type: "string" } } },
  execute(args: any, ctx) {
    return { toolCallId: ctx.toolCallId, name: "echo", value: `echo:${args.text}` };
  },
};

// Two turns: text, a call to echo; then text again.
function twoTurns(): AIProvider {
  return createMockProvider([
    [providerTextDelta("Let me "), providerTextDelta("check."), providerToolCall(toolCallContent("c1", "echo", { text: "hi" })), providerDone()],
    [providerTextDelta("It "), providerTextDelta("said "), providerTextDelta("hi."), providerDone()],
  ]);
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("session.stream().textStream", () => {
  it("yields the text of every turn as it arrives, read alone, and the run completes its tool round", async () => {
    const executed: string[] = [];
    const tool = { ...echo, execute: (args: any, ctx: any) => (executed.push(args.text), echo.execute!(args, ctx)) } as ToolDefinition;
    const session = createAgent({ model, provider: twoTurns(), tools: [tool] }).createSession();
    const chunks = await collect(session.stream("go").textStream);
    expect(chunks).toEqual(["Let me ", "check.", "It ", "said ", "hi."]);
    expect(executed).toEqual(["hi"]);
    const last = session.messages().at(-1) as any;
    expect(last.role).toBe("assistant");
    expect(last.content.filter((b: any) => b.type === "text").map((b: any) => b.text).join("")).toBe("It said hi.");
  });

  it("read beside the events: the events reader gets every event, textStream the text, in arrival order", async () => {
    const session = createAgent({ model, provider: twoTurns(), tools: [echo] }).createSession();
    const result = session.stream("go");
    const order: string[] = [];
    const text = (async () => {
      const out: string[] = [];
      for await (const t of result.textStream) {
        out.push(t);
        order.push(`text:${t}`);
      }
      return out;
    })();
    const events: AgentEvent[] = [];
    for await (const e of result) {
      events.push(e);
      if (e.type === "message_delta" && (e.content as any).type === "text") order.push(`delta:${(e.content as any).text}`);
    }
    expect(await text).toEqual(["Let me ", "check.", "It ", "said ", "hi."]);
    expect(events[0]!.type).toBe("agent_started");
    expect(events.at(-1)!.type).toBe("agent_finished");
    expect(events.filter((e) => e.type === "tool_execution_finished")).toHaveLength(1);
    const deltas = events.filter((e) => e.type === "message_delta" && (e.content as any).type === "text").map((e: any) => e.content.text);
    expect(deltas).toEqual(["Let me ", "check.", "It ", "said ", "hi."]);
    // Each text delta reached both readers (the order between the two readers of one event is free).
    for (const d of deltas) {
      expect(order).toContain(`text:${d}`);
      expect(order).toContain(`delta:${d}`);
    }
  });

  it("a failed run: textStream yields the text before the failure, then throws AgentRunError", async () => {
    const provider: AIProvider = {
      id: "mock",
      async *generate() {
        yield providerTextDelta("partial ");
        yield { type: "error", error: { message: "upstream broke" } } as any;
      },
    };
    const session = createAgent({ model, provider }).createSession();
    const seen: string[] = [];
    let error: unknown;
    try {
      for await (const t of session.stream("go").textStream) seen.push(t);
    } catch (e) {
      error = e;
    }
    expect(seen).toEqual(["partial "]);
    expect(error).toBeInstanceOf(AgentRunError);
    expect((error as AgentRunError).message).toMatch(/upstream broke/);
  });

  it("stopping textStream early, with no events reader, cancels the run", async () => {
    const provider: AIProvider = {
      id: "mock",
      async *generate(request: any) {
        yield providerTextDelta("first");
        // Waits until the run's signal aborts: only a cancelled run gets past this.
        await new Promise<void>((resolve) => {
          if (request.signal?.aborted) return resolve();
          request.signal?.addEventListener("abort", () => resolve(), { once: true });
        });
        yield providerTextDelta("never read");
        yield providerDone();
      },
    };
    const session = createAgent({ model, provider }).createSession();
    const watcher = session.subscribe();
    const watched = collect(watcher);
    for await (const t of session.stream("go").textStream) {
      expect(t).toBe("first");
      break;
    }
    const events = await watched;
    expect(events.some((e) => e.type === "agent_finished")).toBe(false);
    expect(events.at(-1)!.type).toBe("error");
    expect((events.at(-1) as any).error.message).toBe("stream consumer closed");
  });

  it("stopping textStream early does not cancel a run whose events are still read", async () => {
    const session = createAgent({ model, provider: twoTurns(), tools: [echo] }).createSession();
    const result = session.stream("go");
    const iterator = result[Symbol.asyncIterator]();
    const first = await iterator.next(); // the events reader has started
    expect(first.value!.type).toBe("agent_started");
    for await (const t of result.textStream) {
      expect(t).toBe("Let me ");
      break;
    }
    const rest: AgentEvent[] = [];
    for (let step = await iterator.next(); !step.done; step = await iterator.next()) rest.push(step.value);
    expect(rest.at(-1)!.type).toBe("agent_finished");
  });

  it("text redacted by the run's secrets is redacted in textStream", async () => {
    const provider = createMockProvider([providerTextDelta("the key is sk-live-12345"), providerDone()]);
    const session = createAgent({ model, provider, secrets: ["sk-live-12345"] }).createSession();
    const chunks = await collect(session.stream("go").textStream);
    expect(chunks.join("")).not.toContain("sk-live-12345");
    expect(chunks.join("")).toContain("the key is");
  });

  it("is still an async generator of events (yield* and return() work)", async () => {
    const session = createAgent({ model, provider: twoTurns(), tools: [echo] }).createSession();
    async function* relay() {
      yield* session.stream("go");
    }
    const types = (await collect(relay())).map((e) => e.type);
    expect(types[0]).toBe("agent_started");
    expect(types.at(-1)).toBe("agent_finished");
    const result = session.stream("again");
    expect(typeof result.next).toBe("function");
    expect(await result.return(undefined)).toEqual({ value: undefined, done: true });
  });
});
