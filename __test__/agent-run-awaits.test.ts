// Every await of a run ends with the run (issue: the run's signal reaches the provider, guardrails,
// approval predicates and stores): host code that never settles cannot hold a run past its
// `maxWallTimeMs` or `session.abort()`, each such callback is handed the run's signal, and the
// session can run again afterwards.
import { describe, expect, it } from "vitest";
import {
  createAgent,
  createMemoryCheckpointStore,
  providerDone,
  providerTextDelta,
  providerToolCall,
  toolCallContent,
  type ProviderEvent,
  type ProviderRequest,
  type ToolDefinition,
} from "../index.mjs";

const model = { provider: "mock", model: "demo" };
const never = () => new Promise<never>(() => {});
const tick = () => new Promise((r) => setTimeout(r, 5));

/** Asks for `pay` until a tool result is the last message, then answers "done". */
function provider() {
  let id = 0;
  return {
    id: "scripted",
    async *generate(request: ProviderRequest): AsyncIterable<ProviderEvent> {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === "tool") yield providerTextDelta("done");
      else yield providerToolCall(toolCallContent(`c${++id}`, "pay", { amount: 5 }));
      yield providerDone();
    },
  };
}

const pay = (ran: string[]): ToolDefinition => ({
  name: "pay",
  parameters: { type: "object", properties: { amount: { type: "number" } } },
  execute: (args, ctx) => (ran.push(ctx.toolCallId), { toolCallId: ctx.toolCallId, name: "pay", value: { ok: true } }),
});

/**
 * Runs a session whose host callback hangs while `state.hang`: the first run ends at its wall-time
 * deadline, the second on `session.abort()`, and with the callback settling again a third succeeds.
 * `seen` counts the callback's calls and `signals` keeps the signal each was handed.
 */
async function endsWithTheRun(
  make: (state: { hang: boolean; seen: number; signals: unknown[] }) => ReturnType<typeof createAgent>,
  runOptions: object = {},
  settled: object = { status: "succeeded", text: "done" },
) {
  const state = { hang: true, seen: 0, signals: [] as unknown[] };
  const session = make(state).createSession();
  const started = Date.now();
  const timed: any = await session.run("go", { ...runOptions, limits: { maxWallTimeMs: 200 } }).catch((e: any) => e.result ?? e);
  expect(Date.now() - started).toBeLessThan(1_200);
  expect(timed).toMatchObject({ status: "failed", limit: { limit: "maxWallTimeMs" } });
  const before = state.seen;
  expect(before).toBeGreaterThan(0);
  const running = session.run("go", runOptions).catch((e: any) => e.result ?? e);
  while (state.seen === before) await tick();
  session.abort("stop");
  const aborted: any = await running;
  expect(aborted, JSON.stringify(aborted)).toMatchObject({ status: "aborted" });
  state.hang = false;
  expect(await session.run("go", runOptions)).toMatchObject(settled);
  expect(state.signals.length).toBeGreaterThan(0);
  for (const s of state.signals) expect(s).toBeInstanceOf(AbortSignal);
  return state;
}

describe("every await of a run ends with the run", () => {
  it("a provider that never yields", async () => {
    await endsWithTheRun((state) =>
      createAgent({
        model,
        tools: [pay([])],
        provider: {
          id: "hanging",
          async *generate(request: ProviderRequest): AsyncIterable<ProviderEvent> {
            state.seen++;
            state.signals.push(request.signal);
            if (state.hang) await never();
            yield* provider().generate(request);
          },
        } as any,
      }),
    );
  });

  it("a toolInput guardrail that never decides", async () => {
    const ran: string[] = [];
    await endsWithTheRun((state) =>
      createAgent({
        model,
        provider: provider(),
        tools: [pay(ran)],
        guardrails: {
          toolInput: [
            {
              name: "slow-check",
              evaluate: async (input: any) => {
                state.seen++;
                state.signals.push(input.signal);
                if (state.hang) await never();
                return { action: "allow" };
              },
            },
          ],
        } as any,
      }),
    );
    expect(ran).toHaveLength(1); // only the run whose guardrail decided ran the tool
  });

  it("a needsApproval predicate that never answers", async () => {
    const ran: string[] = [];
    const runState = { checkpoints: createMemoryCheckpointStore(), definitionRevision: "r1" };
    await endsWithTheRun(
      (state) =>
        createAgent({
          id: "payments",
          model,
          provider: provider(),
          tools: [
            {
              ...pay(ran),
              needsApproval: async (_args: unknown, ctx: any) => {
                state.seen++;
                state.signals.push(ctx.signal);
                if (state.hang) await never();
                return false;
              },
            },
          ],
        }),
      { runState },
    );
    expect(ran).toHaveLength(1);
  });

  it("a checkpoint store whose save never settles", async () => {
    const ran: string[] = [];
    const memory = createMemoryCheckpointStore();
    let state = { hang: true, seen: 0, signals: [] as unknown[] };
    const checkpoints = {
      loadCheckpoint: (input: any) => memory.loadCheckpoint(input),
      listCheckpoints: (query: any) => memory.listCheckpoints(query),
      deleteCheckpoint: (input: any) => memory.deleteCheckpoint(input),
      async saveCheckpoint(input: any) {
        state.seen++;
        state.signals.push(input.signal);
        if (state.hang) await never();
        return memory.saveCheckpoint(input);
      },
    };
    await endsWithTheRun(
      (s) => {
        state = s;
        return createAgent({ id: "payments", model, provider: provider(), tools: [{ ...pay(ran), needsApproval: true }] });
      },
      { runState: { checkpoints, definitionRevision: "r1" } },
      { status: "suspended" },
    );
    expect(ran).toEqual([]);
  });
});
