// Races through dispatch (issue 6): concurrent dispatches of the same call, in one process and across two
// processes sharing a SQLite effect store file, execute the tool exactly once per key. The side effect is
// one appended line per execution; the test counts lines.
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serviceIdentity } from "./helpers/service-identity.mjs";
import {
  createMemoryToolEffectStore,
  createSqliteToolEffectStore,
  createToolRegistry,
  dispatchToolCall,
  type ToolDefinition,
  type ToolEffectStore,
} from "../index.js";

const child = join(__dirname, "helpers", "dispatch-child.mjs");
const dir = mkdtempSync(join(tmpdir(), "prism-dispatch-race-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const identity = serviceIdentity;
const context = { sessionId: "session", runId: "run", toolCallId: "ignored" };
const call = (id: string) => ({ type: "tool_call" as const, id, name: "charge", arguments: { amount: 5 } });

/** Lines per call id in a side-effect file. */
function linesPerCall(file: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, "utf8").split("\n").filter(Boolean)) counts.set(line, (counts.get(line) ?? 0) + 1);
  return counts;
}

/** The same store answering every method through a promise, as a remote store would. */
function asyncStore(store: ToolEffectStore): ToolEffectStore {
  const wrap = (m: keyof ToolEffectStore) => (input: never) => Promise.resolve().then(() => (store[m] as any)(input));
  const methods = ["get", "begin", "markDispatched", "complete", "fail", "markUnknown", "resolveUnknown", "cleanup"] as const;
  return Object.fromEntries(methods.map((m) => [m, wrap(m)])) as unknown as ToolEffectStore;
}

const TRIALS = 1000;
const CONCURRENT = 32;

describe("32 concurrent dispatches of the same call in one process", () => {
  const variants: [string, () => { stores: ToolEffectStore[]; close(): void }][] = [
    ["memory store", () => {
      const s = createMemoryToolEffectStore();
      return { stores: new Array(CONCURRENT).fill(s), close: () => s.close() };
    }],
    ["SQLite, 32 connections to one file", () => {
      const path = join(dir, "race-in-process.db");
      const all = Array.from({ length: CONCURRENT }, () => createSqliteToolEffectStore(path, { synchronous: "normal" }));
      return { stores: all, close: () => all.forEach((s) => s.close()) };
    }],
    ["asynchronous host store", () => {
      const s = createMemoryToolEffectStore();
      return { stores: new Array(CONCURRENT).fill(asyncStore(s)), close: () => s.close() };
    }],
  ];

  it.each(variants)("%s: exactly one execution per call over 1 000 trials", async (label, make) => {
    const file = join(dir, `side-effect-${label.replace(/\W+/g, "-")}.txt`);
    const tool: ToolDefinition = {
      name: "charge",
      effect: { kind: "external_mutation", idempotency: "required" },
      async execute(args, ctx) {
        appendFileSync(file, `${ctx.toolCallId}\n`);
        await new Promise((r) => setImmediate(r)); // the claim stays in flight while the others arrive
        return { toolCallId: ctx.toolCallId, name: "charge", value: { charged: (args as { amount: number }).amount } };
      },
    };
    const registry = createToolRegistry([tool]);
    const { stores, close } = make();
    const endings = new Map<string, number>();
    for (let trial = 0; trial < TRIALS; trial++) {
      const id = `race-${trial}`;
      const results = await Promise.all(stores.map((effectStore) => dispatchToolCall({ call: call(id), registry, context, identity, effectStore })));
      for (const r of results) {
        const ending = r.error ? String(r.error.code) : JSON.stringify(r.value);
        endings.set(ending, (endings.get(ending) ?? 0) + 1);
      }
    }
    close();
    const lines = linesPerCall(file);
    expect(lines.size).toBe(TRIALS);
    expect([...lines.values()].every((n) => n === 1)).toBe(true);
    // The winner returns the result; every other dispatch replayed it or was refused while the claim was
    // in flight (pending → CONFLICT, dispatched → UNKNOWN; a synchronous store is dispatched before the
    // tool's first await, an asynchronous one is still pending when the others' begin lands).
    expect(endings.get('{"charged":5}')).toBeGreaterThanOrEqual(TRIALS);
    expect([...endings.keys()].every((e) => ['{"charged":5}', "ERR_PRISM_TOOL_EFFECT_CONFLICT", "ERR_PRISM_TOOL_EFFECT_UNKNOWN"].includes(e))).toBe(true);
    expect([...endings.values()].reduce((a, b) => a + b, 0)).toBe(TRIALS * CONCURRENT);
  });
});

describe("two processes dispatching the same 1 000 calls against one SQLite file", () => {
  it("executes each call exactly once", async () => {
    const db = join(dir, "race-processes.db");
    const file = join(dir, "side-effect-processes.txt");
    createSqliteToolEffectStore(db).close(); // create the schema before the race
    const outs = [join(dir, "race-a.json"), join(dir, "race-b.json")];
    const children: ChildProcess[] = [];
    const exits = outs.map((out) => {
      const p = spawn(process.execPath, [child, "race", db, file, String(TRIALS), out], { stdio: ["pipe", "pipe", "inherit"] });
      children.push(p);
      return {
        ready: new Promise<void>((resolve) => p.stdout!.once("data", () => resolve())),
        done: new Promise<void>((resolve, reject) => p.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))))),
      };
    });
    await Promise.all(exits.map((e) => e.ready));
    for (const p of children) p.stdin!.write("go\n"); // both start together
    await Promise.all(exits.map((e) => e.done));

    const ended = outs.map((o) => JSON.parse(readFileSync(o, "utf8")) as { executed: string[]; replayed: number; refused: Record<string, number> });
    const executed = ended.flatMap((e) => e.executed);
    expect(executed.length).toBe(TRIALS);
    expect(new Set(executed).size).toBe(TRIALS);
    for (const e of ended) {
      const refused = Object.values(e.refused).reduce((a, b) => a + b, 0);
      expect(e.executed.length + e.replayed + refused).toBe(TRIALS);
      expect(Object.keys(e.refused).every((c) => c === "ERR_PRISM_TOOL_EFFECT_CONFLICT" || c === "ERR_PRISM_TOOL_EFFECT_UNKNOWN")).toBe(true);
    }
    const lines = linesPerCall(file);
    expect(lines.size).toBe(TRIALS);
    expect([...lines.values()].every((n) => n === 1)).toBe(true);
  });
});
