// The MCP bridge against servers written to misbehave (helpers/mcp-hostile-server.mjs, on the SDK's
// server classes): a hang, 50 MB results, a crash mid-call, 5 000 tools, hostile schemas, colliding
// names and a tool list that changes under the bridge. Every call ends with a result; no process stays.
import { afterAll, describe, expect, it } from "vitest";
import { createToolRegistry, createToolSearchIndex, dispatchToolCall, selectDisclosedTools } from "../index.mjs";
import { formatProviderSafeMcpToolName, McpToolNameCollisionError } from "../mcp/index.mjs";
import { openHostile, isAlive, stopAll, waitFor } from "./helpers/mcp-servers";

afterAll(async () => {
  expect(await stopAll()).toEqual([]);
});

const ctx = { sessionId: "s1", runId: "r1" };
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ type: "tool_call" as const, id, name, arguments: args as any });

describe("a server that hangs", () => {
  it("times the call out with an error result; the bridge stays usable", async () => {
    const bridge = await openHostile("hang", { callTimeoutMs: 300 });
    try {
      const registry = createToolRegistry(bridge.tools);
      const hung: any = await dispatchToolCall({ call: call("c1", "mcp:hang:hang"), registry, context: ctx });
      expect(hung.error).toMatchObject({ code: "ERR_PRISM_MCP_TIMEOUT", message: "MCP tool call timed out after 300ms" });
      expect(bridge.state).toBe("connected");
      const echoed: any = await dispatchToolCall({ call: call("c2", "mcp:hang:echo", { text: "still here" }), registry, context: ctx });
      expect(echoed.content).toEqual([{ type: "text", text: "still here" }]);
    } finally {
      await bridge.close();
    }
  });

  it("the dispatch signal cancels a pending call", async () => {
    const bridge = await openHostile("hang", { callTimeoutMs: 60_000 });
    try {
      const registry = createToolRegistry(bridge.tools);
      const controller = new AbortController();
      const pending = dispatchToolCall({ call: call("c1", "mcp:hang:hang"), registry, context: { ...ctx, signal: controller.signal } });
      setTimeout(() => controller.abort(new Error("user stopped")), 100);
      const result: any = await pending;
      expect(result.error.code).toBe("ERR_PRISM_ABORTED");
      expect(bridge.state).toBe("connected");
    } finally {
      await bridge.close();
    }
  });

  it("close() ends pending calls and kills the server", async () => {
    const bridge = await openHostile("hang", { callTimeoutMs: 60_000 });
    const pid = bridge.pid;
    const tool = bridge.tools.find((t: any) => t.name === "mcp:hang:hang");
    const settled = Promise.resolve(tool.execute({}, { ...ctx, toolCallId: "c1" })).then(
      () => "resolved",
      (error: Error) => error.message,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    await bridge.close();
    expect(await settled).toBe("MCP bridge is closed");
    expect(await waitFor(() => !isAlive(pid))).toBe(true);
    expect(bridge.state).toBe("closed");
  });
});

describe("a server that returns 50 MB", () => {
  it("a message over maxMessageBytes disconnects the bridge with a clear reason and kills the server", async () => {
    const bridge = await openHostile("huge", { callTimeoutMs: 30_000 });
    const pid = bridge.pid;
    try {
      const registry = createToolRegistry(bridge.tools);
      const result: any = await dispatchToolCall({ call: call("c1", "mcp:huge:huge"), registry, context: ctx });
      expect(result.error.code).toBe("ERR_PRISM_MCP_DISCONNECTED");
      expect(result.error.message).toMatch(/^MCP server huge disconnected: .*exceeded maximum size of 16777216 bytes/);
      expect(bridge.state).toBe("disconnected");
      expect(bridge.error).toMatch(/16777216/);
      expect(await waitFor(() => !isAlive(pid))).toBe(true);
      // Later calls end at once with the same state.
      const later: any = await dispatchToolCall({ call: call("c2", "mcp:huge:echo", { text: "x" }), registry, context: ctx });
      expect(later.error.code).toBe("ERR_PRISM_MCP_DISCONNECTED");
      await expect(bridge.refresh()).rejects.toMatchObject({ code: "ERR_PRISM_MCP_DISCONNECTED" });
    } finally {
      await bridge.close();
    }
  });

  it("a result over maxResultBytes is an error result and the bridge stays connected", async () => {
    const bridge = await openHostile("huge", { callTimeoutMs: 30_000 });
    try {
      const registry = createToolRegistry(bridge.tools);
      const result: any = await dispatchToolCall({ call: call("c1", "mcp:huge:big"), registry, context: ctx });
      expect(result.error).toMatchObject({ code: "ERR_PRISM_MCP_RESULT_LIMIT", message: "MCP tool big result exceeds 10000000 bytes" });
      expect(result.content).toBeUndefined();
      expect(bridge.state).toBe("connected");
      // With a larger budget the same result is kept, marked untrusted.
      const roomy = await openHostile("huge", { callTimeoutMs: 30_000, maxResultBytes: 16 * 1024 * 1024 });
      try {
        const kept: any = await roomy.tools.find((t: any) => t.name === "mcp:huge:big").execute({}, { ...ctx, toolCallId: "c2" });
        expect(kept.content[0].text.length).toBe(12 * 1024 * 1024);
        expect(kept.metadata.untrusted).toBe(true);
      } finally {
        await roomy.close();
      }
    } finally {
      await bridge.close();
    }
  });
});

describe("a server that exits mid-call", () => {
  it("gives every pending call an error result and the bridge the state disconnected", async () => {
    const bridge = await openHostile("exit", { callTimeoutMs: 60_000 });
    const registry = createToolRegistry(bridge.tools);
    const hang = dispatchToolCall({ call: call("c1", "mcp:exit:hang"), registry, context: ctx });
    const exit = dispatchToolCall({ call: call("c2", "mcp:exit:exit"), registry, context: ctx });
    const [a, b]: any[] = await Promise.all([hang, exit]);
    for (const result of [a, b]) {
      expect(result.error.code).toBe("ERR_PRISM_MCP_DISCONNECTED");
      expect(result.error.message).toMatch(/^MCP server exit disconnected: connection closed/);
    }
    expect(bridge.state).toBe("disconnected");
    await bridge.close();
    expect(bridge.state).toBe("closed");
  });
});

describe("a server that lists 5 000 tools", () => {
  it("the default limits stop the listing and close the server", async () => {
    await expect(openHostile("many")).rejects.toThrow("MCP tools/list exceeds 500 tools");
    await expect(openHostile("many", { maxTools: 5000 })).rejects.toThrow("MCP tools/list exceeds 20 pages");
  });

  it("raised limits list them all, and search disclosure picks the right few", async () => {
    const bridge = await openHostile("many", { maxListPages: 100, maxTools: 5000, formatName: formatProviderSafeMcpToolName });
    try {
      expect(bridge.tools.length).toBe(5000);
      // The search index holds up to 1 024 tools: a run grants a slice, here 1 001 of them.
      const granted = bridge.tools.filter((t: any, i: number) => i < 1000 || t.name === "mcp_many_tool_4321");
      const index = createToolSearchIndex(granted);
      const disclosed = selectDisclosedTools({ tools: granted, input: "convert celsius to fahrenheit", topK: 4, index });
      expect(disclosed.length).toBeLessThanOrEqual(5);
      expect(disclosed[0].name).toBe("mcp_many_tool_4321");
      const result: any = await dispatchToolCall({
        call: call("c1", "mcp_many_tool_4321", { id: 1 }),
        registry: createToolRegistry(bridge.tools),
        context: ctx,
      });
      expect(result.content).toEqual([{ type: "text", text: "called tool_4321" }]);
    } finally {
      await bridge.close();
    }
  });
});

describe("a server with malformed and hostile schemas", () => {
  it("leaves those tools out with a reason and bridges the rest", async () => {
    const bridge = await openHostile("schemas");
    try {
      // The SDK's parsing drops a `__proto__` key: the tool arrives with an empty, plain `properties`.
      expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:schemas:echo", "mcp:schemas:proto_key"]);
      const proto = bridge.tools[1].parameters.properties;
      expect(Object.keys(proto)).toEqual([]);
      expect(Object.getPrototypeOf(proto)).toBe(Object.prototype);
      expect(({} as any).type).toBeUndefined();
      const reasons = Object.fromEntries(bridge.rejectedTools.map((r: any) => [r.remoteName, r.reason]));
      expect(Object.keys(reasons).sort()).toEqual(["bad_dialect", "ref_cycle", "remote_ref", "too_big", "too_deep", "unknown_type"]);
      expect(reasons.unknown_type).toMatch(/unknown type "dict"/);
      expect(reasons.remote_ref).toMatch(/not a local reference/);
      expect(reasons.too_deep).toBe("MCP tool too_deep input schema exceeds depth 64");
      expect(reasons.too_big).toBe("MCP tool too_big input schema exceeds 262144 bytes");
      expect(reasons.bad_dialect).toMatch(/unsupported dialect/);
      // The bridge never fetched the remote reference (its host does not exist) and still works.
      const echoed: any = await bridge.tools[0].execute({ text: "ok" }, { ...ctx, toolCallId: "c1" });
      expect(echoed.content).toEqual([{ type: "text", text: "called echo" }]);
      // Arguments are checked before they leave the process.
      const bad: any = await bridge.tools[0].execute({ text: 5 }, { ...ctx, toolCallId: "c2" });
      expect(bad.error.code).toBe("ERR_PRISM_MCP_INVALID_ARGUMENTS");
    } finally {
      await bridge.close();
    }
  });
});

describe("a server whose tool names collide", () => {
  it("distinct remote names stay distinct under both formatters", async () => {
    const plain = await openHostile("collide");
    const safe = await openHostile("collide", { formatName: formatProviderSafeMcpToolName });
    try {
      expect(plain.tools.map((t: any) => t.name)).toEqual(["mcp:collide:read.file", "mcp:collide:read_file", "mcp:collide:read file", "mcp:collide:read:file", "mcp:collide:ä-read"]);
      const names = safe.tools.map((t: any) => t.name);
      expect(new Set(names).size).toBe(5);
      for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(names[1]).toBe("mcp_collide_read_file");
      const result: any = await safe.tools[0].execute({}, { ...ctx, toolCallId: "c1" });
      expect(result.content[0].text).toBe("called read.file");
    } finally {
      await plain.close();
      await safe.close();
    }
  });

  it("a lossy formatter or a duplicate listing fails with McpToolNameCollisionError and stops the server", async () => {
    const lossy = (prefix: string, name: string) => `${prefix}${name}`.replace(/[^a-zA-Z0-9_-]/g, "_");
    const error = await openHostile("collide", { formatName: lossy }).catch((e) => e);
    expect(error).toBeInstanceOf(McpToolNameCollisionError);
    expect(error.message).toBe("MCP tool name collision: mcp_collide_read_file (remote tool read_file)");
    await expect(openHostile("dup")).rejects.toThrow("MCP tool name collision: mcp:dup:echo (remote tool echo)");
  });
});

describe("a server whose tool list changes", () => {
  it("list_changed re-lists and updates the tools, never past the host's allow list", async () => {
    const changes: any[] = [];
    const bridge = await openHostile("changing", {
      allow: ["echo", "add-tools", "remove-echo", "extra"],
      onToolsChanged: (_tools: unknown, change: unknown) => changes.push(change),
    });
    try {
      expect(bridge.tools.map((t: any) => t.name)).toEqual(["mcp:changing:echo", "mcp:changing:add-tools", "mcp:changing:remove-echo"]);
      const oldEcho = bridge.tools[0];
      await bridge.tools[1].execute({}, { ...ctx, toolCallId: "c1" });
      expect(await waitFor(() => bridge.tools.length === 4)).toBe(true);
      expect(bridge.tools.map((t: any) => t.name)).toContain("mcp:changing:extra");
      expect(bridge.tools.map((t: any) => t.name)).not.toContain("mcp:changing:secret");
      expect(changes.at(-1)).toEqual({ added: ["mcp:changing:extra"], removed: [] });

      await bridge.tools.find((t: any) => t.name === "mcp:changing:remove-echo").execute({}, { ...ctx, toolCallId: "c2" });
      expect(await waitFor(() => !bridge.tools.some((t: any) => t.name === "mcp:changing:echo"))).toBe(true);
      expect(changes.at(-1)).toEqual({ added: [], removed: ["mcp:changing:echo"] });
      // A definition the host still holds no longer reaches the server.
      const stale: any = await oldEcho.execute({ text: "hi" }, { ...ctx, toolCallId: "c3" });
      expect(stale.error).toMatchObject({ code: "ERR_PRISM_MCP_TOOL_REMOVED", message: "MCP tool mcp:changing:echo is no longer offered by server changing" });
    } finally {
      await bridge.close();
    }
  });
});
