// The MCP bridge against a server that breaks the MCP shapes (helpers/mcp-hostile-server.mjs, mode
// `malformed`): tools the bridge cannot take are left out with a reason while the rest connect, a flood
// of progress notifications reaches dispatch a bounded number of times with the newest value last, and
// a result of the wrong shape is a short error with a code, never a validator's dump.
import { afterAll, describe, expect, it } from "vitest";
import { createMemoryRunLedger, createToolRegistry, dispatchToolCall } from "../index.mjs";
import { attachMcpToolBridge, connectMcpTools, listAllMcpTools } from "../mcp/index.mjs";
import { hostileStdio, stopAll, track } from "./helpers/mcp-servers";

afterAll(async () => {
  expect(await stopAll()).toEqual([]);
});

const ctx = { sessionId: "s1", runId: "r1" };
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ type: "tool_call" as const, id, name, arguments: args as any });

async function open(options: Record<string, unknown> = {}) {
  const bridge: any = await connectMcpTools({ serverId: "bad", transport: hostileStdio("malformed"), ...options });
  track(bridge.pid);
  return bridge;
}

describe("listed tools the bridge cannot take", () => {
  it("go to rejectedTools with a reason; the rest connect", async () => {
    const bridge = await open();
    try {
      expect(bridge.state).toBe("connected");
      expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:bad:echo", "mcp:bad:flood", "mcp:bad:bad_result", "mcp:bad:throws"]);
      expect(bridge.rejectedTools).toEqual([
        { remoteName: "no_schema", reason: "MCP tool no_schema has no inputSchema" },
        { remoteName: "objekt", reason: 'MCP tool objekt inputSchema must have type "object"' },
        { remoteName: "42", reason: "MCP tools/list entry 3 has a name that is a number, not a string" },
        { remoteName: "array_schema", reason: "MCP tool array_schema inputSchema is an array, not an object" },
        { remoteName: "bad_output", reason: 'MCP tool bad_output outputSchema must have type "object"' },
        { remoteName: "bad_description", reason: "MCP tool bad_description description is an object, not a string" },
        { remoteName: "#7", reason: "MCP tools/list entry 7 is a string, not an object" },
        { remoteName: "#8", reason: "MCP tools/list entry 8 is null, not an object" },
      ]);
      const echoed: any = await bridge.tools[0].execute({ text: "still works" }, { ...ctx, toolCallId: "c1" });
      expect(echoed.content).toEqual([{ type: "text", text: "still works" }]);
    } finally {
      await bridge.close();
    }
  });

  it("listAllMcpTools without onRejected throws a clear McpBridgeError with a code", async () => {
    const bridge = await open();
    try {
      const error: any = await listAllMcpTools(bridge.client).catch((e: unknown) => e);
      expect(error.name).toBe("McpBridgeError");
      expect(error.code).toBe("ERR_PRISM_MCP_INVALID_TOOL");
      expect(error.message).toBe("MCP tool no_schema has no inputSchema");
    } finally {
      await bridge.close();
    }
  });

  it("a page of the wrong shape fails the listing with one line and a code", async () => {
    // A client whose raw `tools/list` answers with the page as sent; the bridge's page schema checks it.
    const pages: unknown[] = [{ tools: "nope" }, { tools: [], nextCursor: 5 }, ["x"]];
    const messages: string[] = [];
    for (const page of pages) {
      const client = {
        request: async (_request: unknown, schema: any) => {
          const parsed = schema.safeParse(page);
          if (!parsed.success) throw parsed.error;
          return parsed.data;
        },
        setNotificationHandler: () => undefined,
        close: async () => undefined,
      };
      const error: any = await attachMcpToolBridge(client as any, { close: async () => undefined } as any, { serverId: "pages" }).catch((e: unknown) => e);
      expect(error.code).toBe("ERR_PRISM_MCP_PROTOCOL");
      messages.push(error.message);
    }
    expect(messages).toEqual([
      "MCP tools/list result has no tools array",
      "MCP tools/list nextCursor is not a string",
      "MCP tools/list result is an array, not an object",
    ]);
  });
});

describe("a flood of progress notifications", () => {
  it("reaches dispatch at most maxProgressUpdates times per call, the last value kept, messages bounded", async () => {
    const bridge = await open();
    try {
      const ledger = createMemoryRunLedger();
      const events: any[] = [];
      const registry = createToolRegistry(bridge.tools);
      const count = 100_000;
      const result: any = await dispatchToolCall({
        call: call("c1", "mcp:bad:flood", { count }),
        registry,
        context: ctx,
        ledger,
        emit: (e: any) => events.push(e),
      });
      expect(result.content).toEqual([{ type: "text", text: `sent ${count}` }]);
      const progress = events.filter((e) => e.type === "tool_execution_progress");
      const rows = ledger.list("tool_call").filter((r: any) => r.progress !== undefined);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress.length).toBeLessThanOrEqual(100);
      expect(rows.length).toBe(progress.length);
      expect(progress.at(-1).progress.progress).toBe(count);
      expect(progress.at(-1).progress.total).toBe(count);
      for (const e of progress) expect(Buffer.byteLength(e.progress.message)).toBeLessThanOrEqual(1024);
      // Later calls are not held up by the earlier one's leftovers.
      const second: any = await dispatchToolCall({ call: call("c2", "mcp:bad:echo", { text: "after" }), registry, context: ctx, ledger });
      expect(second.content).toEqual([{ type: "text", text: "after" }]);
    } finally {
      await bridge.close();
    }
  });

  it("maxProgressUpdates: 3 holds three forwards, the last one the final value; a bad value is refused", async () => {
    const bridge = await open({ maxProgressUpdates: 3 });
    try {
      const seen: any[] = [];
      const result: any = await bridge.tools
        .find((t: any) => t.name === "mcp:bad:flood")
        .execute({ count: 5000 }, { ...ctx, toolCallId: "c1", progress: (p: any) => seen.push(p) });
      expect(result.content).toEqual([{ type: "text", text: "sent 5000" }]);
      expect(seen.length).toBeLessThanOrEqual(3);
      expect(seen.at(-1).progress).toBe(5000);
    } finally {
      await bridge.close();
    }
    await expect(open({ maxProgressUpdates: 0 })).rejects.toThrow("maxProgressUpdates must be a positive safe integer <= 10000");
  });
});

describe("a result of the wrong shape", () => {
  it("is an error result with a code and one short line", async () => {
    const bridge = await open();
    try {
      const registry = createToolRegistry(bridge.tools);
      const notArray: any = await dispatchToolCall({ call: call("c1", "mcp:bad:bad_result", { kind: "notArray" }), registry, context: ctx });
      expect(notArray.error).toEqual({
        name: "McpToolError",
        code: "ERR_PRISM_MCP_INVALID_RESULT",
        message: "MCP tool bad_result returned an invalid result at content: expected array, received string",
      });
      const badBlock: any = await dispatchToolCall({ call: call("c2", "mcp:bad:bad_result", { kind: "badBlock" }), registry, context: ctx });
      expect(badBlock.error.code).toBe("ERR_PRISM_MCP_INVALID_RESULT");
      expect(badBlock.error.message).toMatch(/^MCP tool bad_result returned an invalid result at content\.0/);
      expect(badBlock.error.message).not.toMatch(/\n/);
      expect(bridge.state).toBe("connected");
    } finally {
      await bridge.close();
    }
  });
});
