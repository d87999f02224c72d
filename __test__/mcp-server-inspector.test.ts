// The MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, from the npm registry) as a client no
// one here wrote: it lists and calls the served registry over stdio and over Streamable HTTP, and each
// call leaves ledger rows and effect claims.
// The CLI checks for its own package.json relative to the working directory, then imports it relative
// to its module: it only starts with its build directory as the working directory.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startServedRegistry } from "./helpers/mcp-server-http.mjs";

const run = promisify(execFile);
const cli = createRequire(__filename).resolve("@modelcontextprotocol/inspector-cli/build/index.js");
const helper = join(__dirname, "helpers", "mcp-server-stdio.mjs");
const dir = mkdtempSync(join(tmpdir(), "mcp-inspector-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function inspector(args: string[]) {
  const { stdout } = await run(process.execPath, [cli, ...args], { cwd: dirname(cli), timeout: 30_000 });
  return JSON.parse(stdout);
}

describe("the MCP Inspector CLI against a served registry", () => {
  it("lists and calls tools over stdio; the call leaves ledger rows", async () => {
    const ledgerFile = join(dir, "stdio-ledger.json");
    const listed = await inspector([process.execPath, helper, ledgerFile, "--method", "tools/list"]);
    expect(listed.tools.map((tool: any) => tool.name)).toEqual(["echo", "charge", "leak", "slow"]);
    expect(listed.tools[1].inputSchema).toEqual({ type: "object", properties: { amount: { type: "number" } }, required: ["amount"], additionalProperties: false });

    const echoed = await inspector([process.execPath, helper, ledgerFile, "--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=from the inspector"]);
    expect(echoed).toMatchObject({ isError: false, structuredContent: { echo: "from the inspector" } });

    const charged = await inspector([
      process.execPath, helper, ledgerFile,
      "--method", "tools/call", "--tool-name", "charge", "--tool-arg", "amount=12", "--tool-metadata", "prism/toolCallId=inspector-1",
    ]);
    expect(charged.structuredContent).toMatchObject({ charged: 12, execution: 1 });
    const rows = JSON.parse(readFileSync(ledgerFile, "utf8")).rows;
    expect(rows.map((row: any) => [row.toolCallId, row.status, row.userId])).toEqual([
      ["inspector-1", "started", "local"],
      ["inspector-1", "finished", "local"],
    ]);

    const invalid = await inspector([process.execPath, helper, ledgerFile, "--method", "tools/call", "--tool-name", "charge", "--tool-arg", "amount=lots"]);
    expect(invalid.isError).toBe(true);
    expect(invalid._meta["prism/error"]).toEqual({ code: "ERR_PRISM_MCP_BLOCKED", reason: "validation_failed", tool: "charge" });
  });

  it("lists and calls tools over Streamable HTTP; a repeated call with the same id is claimed once", async () => {
    const served = await startServedRegistry();
    try {
      const http = [served.url, "--transport", "http", "--header", "Authorization: Bearer alice"];
      const listed = await inspector([...http, "--method", "tools/list"]);
      expect(listed.tools.map((tool: any) => tool.name)).toEqual(["echo", "charge", "leak", "slow"]);
      const call = [...http, "--method", "tools/call", "--tool-name", "charge", "--tool-arg", "amount=3", "--tool-metadata", "prism/toolCallId=inspector-http-1"];
      const first = await inspector(call);
      const second = await inspector(call);
      expect(first.structuredContent).toMatchObject({ charged: 3, execution: 1 });
      expect(second.structuredContent).toEqual(first.structuredContent);
      expect(served.state.charges).toBe(1);
      const rows = served.ledger.list("tool_call").filter((row: any) => row.toolCallId === "inspector-http-1");
      expect(rows.map((row: any) => [row.status, row.userId])).toEqual([
        ["started", "alice"],
        ["finished", "alice"],
        ["finished", "alice"],
      ]);
      await expect(run(process.execPath, [cli, served.url, "--transport", "http", "--method", "tools/list"], { cwd: dirname(cli), timeout: 30_000 })).rejects.toThrow(/401|Unauthorized/);
    } finally {
      await served.close();
    }
  });
});
