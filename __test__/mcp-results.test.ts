// The bridge's call path against a real server (helpers/mcp-hostile-server.mjs, mode `shapes`):
// results of every shape come out as the full path maps them (content, bytes, truncation, errors),
// bounds hold at their edges, a 50 MB result is refused, the caller's signal still cancels and
// keeps no listener per call, the timeout still fires, and progress is asked for only when observed.
import { getEventListeners } from "node:events";
import { createRequire } from "node:module";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createToolRegistry, dispatchToolCall } from "../index.mjs";
import { mapMcpContentToBlocks, measureBoundedJson, resolveMcpClientLimits, summarizeMcpContent } from "../mcp/index.mjs";
import { openHostile, hostileStdio, stopAll, track } from "./helpers/mcp-servers";

const require = createRequire(import.meta.url);
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { CompatibilityCallToolResultSchema } = require("@modelcontextprotocol/sdk/types.js");

afterAll(async () => {
  expect(await stopAll()).toEqual([]);
});

const ctx = { sessionId: "s1", runId: "r1" };
const call = (id: string, name: string, args: Record<string, unknown> = {}) => ({ type: "tool_call" as const, id, name, arguments: args as any });

const tool = (bridge: any, name: string) => bridge.tools.find((t: any) => t.name === `mcp:${bridge.serverId}:${name}`);

const KINDS = ["text", "blocks", "error", "notError", "empty", "keyOrder", "lone", "annotated", "structured", "extra", "meta", "image", "resource"];
const TEXTS = ["plain", "", 'quotes " and \\ backslash\n\ttabs \u0001 control', "héllo wörld ✓ 漢字 🙂", "x".repeat(5000)];

describe("bridged results", () => {
  it("every result shape maps as the full path maps it: content, bytes, truncation, error, value", async () => {
    const bridge = await openHostile("shapes");
    // The same server through the SDK alone: the result as the SDK's own schema parses it.
    const transport = new StdioClientTransport(hostileStdio("shapes"));
    const client = new Client({ name: "oracle", version: "1.0.0" });
    await client.connect(transport);
    track(transport.pid);
    const limits = resolveMcpClientLimits({});
    try {
      let n = 0;
      for (const kind of KINDS) {
        for (const text of TEXTS) {
          const args = { kind, text };
          const got: any = await tool(bridge, "shape").execute(args, { ...ctx, toolCallId: `c${n++}` });
          const parsed: any = await client.request({ method: "tools/call", params: { name: "shape", arguments: args } }, CompatibilityCallToolResultSchema);
          const bytes = measureBoundedJson(parsed, { maxBytes: limits.maxResultBytes, maxDepth: limits.maxJsonDepth, maxProperties: limits.maxJsonProperties }).bytes;
          const mapped = mapMcpContentToBlocks(parsed.content, { maxResultBytes: limits.maxResultBytes });
          const label = `${kind} / ${JSON.stringify(text).slice(0, 40)}`;
          expect(got.content, label).toEqual(mapped.content);
          expect(got.metadata, label).toEqual({
            mcp: { serverId: "shapes", remoteName: "shape", truncated: mapped.truncated, bytesUsed: bytes },
            untrusted: true,
            trust: "untrusted_external",
          });
          expect(got.metadata.mcp.bytesUsed, label).toBe(Buffer.byteLength(JSON.stringify(parsed)));
          if (parsed.isError) {
            expect(got.error, label).toEqual({ name: "McpToolError", code: "ERR_PRISM_MCP_TOOL", message: summarizeMcpContent(parsed.content, 8 * 1024) });
          }
          else expect(got.error, label).toBeUndefined();
          if (parsed.structuredContent !== undefined) expect(got.value, label).toEqual(parsed.structuredContent);
          else expect("value" in got, label).toBe(false);
        }
      }
      // Empty text blocks are dropped, as the full mapping drops them.
      const blocks: any = await tool(bridge, "shape").execute({ kind: "blocks", text: "a" }, { ...ctx, toolCallId: "b" });
      expect(blocks.content).toEqual([
        { type: "text", text: "a" },
        { type: "text", text: "a!" },
      ]);
      const failed: any = await tool(bridge, "shape").execute({ kind: "error", text: "it broke" }, { ...ctx, toolCallId: "e" });
      expect(failed.error).toEqual({ name: "McpToolError", code: "ERR_PRISM_MCP_TOOL", message: "it broke" });
    } finally {
      await client.close();
      await bridge.close();
    }
  });

  it("maxResultBytes, maxJsonDepth and maxJsonProperties hold at their edges", async () => {
    const text = "edge ✓ \"quoted\"";
    const size = Buffer.byteLength(JSON.stringify({ content: [{ type: "text", text }] }));
    const run = async (options: Record<string, unknown>, name = "shape") => {
      const bridge = await openHostile("shapes", options);
      try {
        return await tool(bridge, name).execute({ kind: "text", text }, { ...ctx, toolCallId: "c" });
      } finally {
        await bridge.close();
      }
    };
    const exact: any = await run({ maxResultBytes: size });
    expect(exact.content).toEqual([{ type: "text", text }]);
    expect(exact.metadata.mcp).toMatchObject({ bytesUsed: size, truncated: false });
    const over: any = await run({ maxResultBytes: size - 1 });
    expect(over.error).toMatchObject({ code: "ERR_PRISM_MCP_RESULT_LIMIT", message: `MCP tool shape result exceeds ${size - 1} bytes` });
    expect(over.content).toBeUndefined();
    // `progress` (its schema fits the tight bounds) answers { content: [{ type: "text", text }] }:
    // depth 4 (result, content, block, its strings) and 4 properties (1 key, 1 element, 2 block keys).
    expect((await run({ maxJsonDepth: 4 }, "progress")).content).toEqual([{ type: "text", text: "no progress token" }]);
    expect((await run({ maxJsonDepth: 3 }, "progress")).error).toMatchObject({ code: "ERR_PRISM_MCP_RESULT_LIMIT", message: "MCP tool progress result exceeds depth 3" });
    expect((await run({ maxJsonProperties: 4 }, "progress")).content).toEqual([{ type: "text", text: "no progress token" }]);
    expect((await run({ maxJsonProperties: 3 }, "progress")).error).toMatchObject({
      code: "ERR_PRISM_MCP_RESULT_LIMIT",
      message: "MCP tool progress result exceeds 3 properties",
    });
  });

  it("a 50 MB text result that the transport lets through is refused by maxResultBytes; the bridge stays connected", async () => {
    // Moving 50 MB through a child process takes tens of seconds on a loaded 2-core machine: the
    // bounds here leave room for that (the assertion is on the refusal, not on time).
    const bridge = await openHostile("huge", { callTimeoutMs: 240_000, maxResultBytes: 16 * 1024 * 1024 }, { maxMessageBytes: 64 * 1024 * 1024 });
    try {
      const registry = createToolRegistry(bridge.tools);
      const result: any = await dispatchToolCall({ call: call("c1", "mcp:huge:huge"), registry, context: ctx });
      expect(result.error).toMatchObject({ code: "ERR_PRISM_MCP_RESULT_LIMIT", message: `MCP tool huge result exceeds ${16 * 1024 * 1024} bytes` });
      expect(result.content).toBeUndefined();
      expect(bridge.state).toBe("connected");
      const echoed: any = await dispatchToolCall({ call: call("c2", "mcp:huge:echo", { text: "after" }), registry, context: ctx });
      expect(echoed.content).toEqual([{ type: "text", text: "after" }]);
    } finally {
      await bridge.close();
    }
  }, 300_000);
});

describe("the result schema handed to the SDK", () => {
  // SDK releases before its Zod 3/4 compatibility layer call `parse`; later ones `safeParse`.
  const { createCallToolResultSchema } = require("../lib/mcp/result-schema.js");
  const limits = resolveMcpClientLimits({});
  it("passes a plain text result through with its size, and gives anything else to the SDK's schema", () => {
    const sizes = new WeakMap();
    const schema = createCallToolResultSchema(CompatibilityCallToolResultSchema, limits, sizes);
    const plain = JSON.parse('{"content":[{"type":"text","text":"a\\"b"},{"type":"text","text":""}],"isError":false}');
    expect(schema.parse(plain)).toBe(plain);
    expect(schema.safeParse(plain)).toEqual({ success: true, data: plain });
    expect(sizes.get(plain)).toEqual({ bytes: Buffer.byteLength(JSON.stringify(plain)), texts: plain.content.map((b: any) => b.text), isError: false });
    expect(plain.content[0].text).toBe('a"b');

    const annotated = { content: [{ type: "text", text: "a", annotations: { priority: 0.5 } }] };
    const parsed = schema.parse(annotated);
    expect(parsed).toEqual(annotated);
    expect(parsed).not.toBe(annotated);
    expect(sizes.has(parsed)).toBe(false);
    // What the SDK's schema refuses is refused the same way.
    const bad = { content: [{ type: "text", text: 42 }] };
    expect(() => schema.parse(bad)).toThrow();
    expect(schema.safeParse(bad).success).toBe(false);
    expect(schema.safeParse({ content: [{ type: "text", text: "x" }], isError: "yes" }).success).toBe(false);
    // Each value is read once (a getter cannot show one text to the bound and another to the mapping),
    // and what was read is what the bridge keeps.
    let reads = 0;
    const sneaky = { content: [{ type: "text", get text() { return reads++ === 0 ? "x" : "y".repeat(100); } }] };
    expect(schema.safeParse(sneaky).success).toBe(true);
    expect(reads).toBe(1);
    expect(sizes.get(sneaky)).toEqual({ bytes: Buffer.byteLength(JSON.stringify({ content: [{ type: "text", text: "x" }] })), texts: ["x"], isError: false });
    // A class instance is never looked into: the SDK's schema decides.
    class Block {
      type = "text";
      text = "z";
    }
    const instance = { content: [new Block()] };
    schema.safeParse(instance);
    expect(sizes.has(instance)).toBe(false);
  });
});

describe("the caller's signal, the timeout and progress", () => {
  it("many calls under one run signal leave at most one listener on it, then none, and no warning; aborting it still cancels a pending call", async () => {
    const bridge = await openHostile("shapes", { callTimeoutMs: 60_000 });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on("warning", onWarning);
    try {
      const registry = createToolRegistry(bridge.tools);
      const controller = new AbortController();
      const context = { ...ctx, signal: controller.signal };
      for (let i = 0; i < 30; i++) {
        const r: any = await dispatchToolCall({ call: call(`c${i}`, "mcp:shapes:echo", { text: `t${i}` }), registry, context });
        expect(r.content).toEqual([{ type: "text", text: `t${i}` }]);
        const direct: any = await tool(bridge, "echo").execute({ text: `d${i}` }, { ...context, toolCallId: `d${i}` });
        expect(direct.content).toEqual([{ type: "text", text: `d${i}` }]);
      }
      // Dispatch and the bridge wait on the signal through one shared listener, detached about a
      // second after the last wait ended.
      expect(getEventListeners(controller.signal, "abort").length).toBeLessThanOrEqual(1);
      await vi.waitFor(() => expect(getEventListeners(controller.signal, "abort")).toHaveLength(0), { timeout: 5_000, interval: 100 });
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain("MaxListenersExceededWarning");

      // The same signal, aborted while a call hangs: the call ends as aborted, not as a timeout.
      const pending = tool(bridge, "hang").execute({}, { ...context, toolCallId: "h" });
      setTimeout(() => controller.abort(new Error("user stopped")), 100);
      const aborted: any = await pending;
      expect(aborted.error).toMatchObject({ code: "ERR_PRISM_ABORTED", message: "MCP tool call aborted" });
      expect(bridge.state).toBe("connected");
      // The server heard of it: notifications/cancelled aborted its handler.
      const heard: any = await tool(bridge, "cancelled").execute({}, { ...ctx, toolCallId: "n" });
      expect(heard.content).toEqual([{ type: "text", text: "1" }]);
      // A signal aborted before the call: nothing is sent, the call ends as aborted.
      const early: any = await tool(bridge, "echo").execute({ text: "x" }, { ...context, toolCallId: "x" });
      expect(early.error).toMatchObject({ code: "ERR_PRISM_ABORTED" });
      const after: any = await tool(bridge, "echo").execute({ text: "still" }, { ...ctx, toolCallId: "s" });
      expect(after.content).toEqual([{ type: "text", text: "still" }]);
    } finally {
      process.off("warning", onWarning);
      await bridge.close();
    }
  });

  it("the timeout fires with and without a caller's signal, and the signal keeps no listener once idle", async () => {
    const bridge = await openHostile("shapes", { callTimeoutMs: 300 });
    try {
      const controller = new AbortController();
      const withSignal: any = await tool(bridge, "hang").execute({}, { ...ctx, toolCallId: "a", signal: controller.signal });
      expect(withSignal.error).toMatchObject({ code: "ERR_PRISM_MCP_TIMEOUT", message: "MCP tool call timed out after 300ms" });
      await vi.waitFor(() => expect(getEventListeners(controller.signal, "abort")).toHaveLength(0), { timeout: 5_000, interval: 100 });
      const registry = createToolRegistry(bridge.tools);
      const without: any = await dispatchToolCall({ call: call("b", "mcp:shapes:hang"), registry, context: ctx });
      expect(without.error).toMatchObject({ code: "ERR_PRISM_MCP_TIMEOUT", message: "MCP tool call timed out after 300ms" });
      expect(bridge.state).toBe("connected");
    } finally {
      await bridge.close();
    }
  });

  it("progress is asked for only when someone observes it, and then forwarded", async () => {
    const bridge = await openHostile("shapes");
    try {
      const registry = createToolRegistry(bridge.tools);
      const unobserved: any = await dispatchToolCall({ call: call("c1", "mcp:shapes:progress"), registry, context: ctx });
      expect(unobserved.content).toEqual([{ type: "text", text: "no progress token" }]);

      const seen: any[] = [];
      const observed: any = await dispatchToolCall({
        call: call("c2", "mcp:shapes:progress"),
        registry,
        context: { ...ctx, progress: (p: unknown, m: unknown) => seen.push([p, m]) },
      });
      expect(observed.content).toEqual([{ type: "text", text: "progress token" }]);
      expect(seen.map(([p]) => p)).toEqual([
        { progress: 1, total: 2, message: undefined },
        { progress: 2, total: 2, message: undefined },
      ]);
      expect(seen[0][1]).toEqual({ mcp: { serverId: "shapes", remoteName: "progress" }, untrusted: true, trust: "untrusted_external" });

      // An emit hook alone is an observer too.
      const events: any[] = [];
      const emitted: any = await dispatchToolCall({ call: call("c3", "mcp:shapes:progress"), registry, context: ctx, emit: (e: any) => events.push(e) });
      expect(emitted.content).toEqual([{ type: "text", text: "progress token" }]);
      expect(events.filter((e) => e.type === "tool_execution_progress")).toHaveLength(2);

      // Called directly with a progress function.
      const direct: any[] = [];
      const r: any = await tool(bridge, "progress").execute({}, { ...ctx, toolCallId: "d", progress: (p: unknown) => direct.push(p) });
      expect(r.content).toEqual([{ type: "text", text: "progress token" }]);
      expect(direct).toHaveLength(2);
    } finally {
      await bridge.close();
    }
  });
});
