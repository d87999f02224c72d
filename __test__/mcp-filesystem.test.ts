// The MCP bridge over the published @modelcontextprotocol/server-filesystem, confined to a temporary
// directory: read, write, list, a path outside the directory, and a write the host denies.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJsonSchemaToolArgumentValidator, createMemoryRunLedger, createToolRegistry, dispatchToolCall, filterTools } from "../index.mjs";
import { connectMcpTools, formatProviderSafeMcpToolName } from "../mcp/index.mjs";
import { filesystemStdio, isAlive, stopAll, track, waitFor } from "./helpers/mcp-servers";

let dir: string;
let outside: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "prism-mcp-fs-")));
  outside = realpathSync(mkdtempSync(join(tmpdir(), "prism-mcp-outside-")));
  writeFileSync(join(dir, "notes.txt"), "first line\nsecond line\n");
  writeFileSync(join(outside, "secret.txt"), "do not read");
});
afterAll(async () => {
  expect(await stopAll()).toEqual([]);
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

const ctx = { sessionId: "s1", runId: "r1" };
const call = (id: string, name: string, args: Record<string, unknown>) => ({ type: "tool_call" as const, id, name, arguments: args as any });

describe("server-filesystem over stdio", () => {
  it("reads, writes and lists inside its directory and refuses a path outside it", async () => {
    const bridge: any = await connectMcpTools({ serverId: "fs", transport: filesystemStdio(dir), formatName: formatProviderSafeMcpToolName });
    track(bridge.pid);
    try {
      const names = bridge.tools.map((t: any) => t.name);
      expect(names).toEqual(expect.arrayContaining(["mcp_fs_read_text_file", "mcp_fs_write_file", "mcp_fs_list_directory"]));
      const write = bridge.tools.find((t: any) => t.name === "mcp_fs_write_file");
      // destructiveHint: an external effect that runs alone in a parallel turn. idempotentHint is kept on
      // `mcp.annotations` for a host policy; on its own it never makes the call claimable.
      expect(write.effect).toEqual({ kind: "external_mutation", idempotency: "unsupported" });
      expect(write.exclusive).toBe(true);
      expect(write.mcp).toMatchObject({ serverId: "fs", remoteName: "write_file", annotations: { idempotentHint: true, destructiveHint: true } });
      const read = bridge.tools.find((t: any) => t.name === "mcp_fs_read_text_file");
      expect([read.effect, read.exclusive]).toEqual([{ kind: "none", idempotency: "none" }, false]);

      const registry = createToolRegistry(bridge.tools);
      const ledger = createMemoryRunLedger();
      const validate = createJsonSchemaToolArgumentValidator();
      const run = (c: any) => dispatchToolCall({ call: c, registry, context: ctx, ledger, validate });

      const readResult: any = await run(call("c1", "mcp_fs_read_text_file", { path: join(dir, "notes.txt") }));
      expect(readResult.error).toBeUndefined();
      expect(readResult.content[0].text).toBe("first line\nsecond line\n");

      const head: any = await run(call("c2", "mcp_fs_read_text_file", { path: join(dir, "notes.txt"), head: 1 }));
      expect(head.content[0].text).toBe("first line");

      const written: any = await run(call("c3", "mcp_fs_write_file", { path: join(dir, "out.md"), content: "# written over MCP\n" }));
      expect(written.error).toBeUndefined();
      expect(readFileSync(join(dir, "out.md"), "utf8")).toBe("# written over MCP\n");

      const listed: any = await run(call("c4", "mcp_fs_list_directory", { path: dir }));
      expect(listed.content[0].text.split("\n").sort()).toEqual(["[FILE] notes.txt", "[FILE] out.md"]);

      const denied: any = await run(call("c5", "mcp_fs_read_text_file", { path: join(outside, "secret.txt") }));
      expect(denied.error.code).toBe("ERR_PRISM_MCP_TOOL");
      expect(denied.error.message).toMatch(/Access denied - path outside allowed directories/);
      expect(JSON.stringify(denied)).not.toContain("do not read");

      const rows = (ledger as any).list().filter((row: any) => row.status !== "started");
      expect(rows.map((row: any) => row.status)).toEqual(["finished", "finished", "finished", "finished", "finished"]);
    } finally {
      const pid = bridge.pid;
      await bridge.close();
      expect(await waitFor(() => !isAlive(pid))).toBe(true);
    }
  });

  it("a host deny keeps write tools out of the bridge; a dispatch filter blocks a write", async () => {
    const readOnly: any = await connectMcpTools({
      serverId: "fs",
      transport: filesystemStdio(dir),
      deny: ["write_file", "edit_file", "move_file", "create_directory"],
    });
    track(readOnly.pid);
    try {
      const names = readOnly.tools.map((t: any) => t.name);
      expect(names).not.toContain("mcp:fs:write_file");
      expect(names).toContain("mcp:fs:read_text_file");
    } finally {
      await readOnly.close();
    }

    const bridge: any = await connectMcpTools({ serverId: "fs", transport: filesystemStdio(dir) });
    track(bridge.pid);
    try {
      const registry = createToolRegistry(bridge.tools);
      const filter = { deny: ["mcp:fs:write_file"] };
      expect(filterTools(bridge.tools, filter).some((t: any) => t.name === "mcp:fs:write_file")).toBe(false);
      const blocked: any = await dispatchToolCall({
        call: call("c1", "mcp:fs:write_file", { path: join(dir, "blocked.txt"), content: "no" }),
        registry,
        context: ctx,
        filter,
      });
      expect(blocked.error.message).toBe("Tool denied: mcp:fs:write_file");
      expect(() => readFileSync(join(dir, "blocked.txt"))).toThrow();
    } finally {
      await bridge.close();
    }
  });
});
