// The runnable examples are documentation: each must run to the end and print what the README
// promises. (The MCP demo once broke silently when tool messages changed shape.)
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("..", import.meta.url));

describe("examples", () => {
  it("the agent demo runs and shows its tables", async () => {
    const { stdout } = await run(process.execPath, ["examples/agent-demo.mjs"], { cwd: root, timeout: 60_000 });
    expect(stdout).toContain("Tool calls, in transcript order");
    expect(stdout).toContain("tool_denied");
  }, 70_000);

  it("the MCP demo runs over the real filesystem server: reads, writes, and one denied edit", async () => {
    const { stdout } = await run(process.execPath, ["examples/mcp-demo.mjs"], { cwd: root, timeout: 60_000 });
    expect(stdout).toMatch(/call_1 +\| search_tools +\| ok +\| activated: mcp_fs_/);
    expect(stdout).toMatch(/mcp_fs_edit_file +\| tool_denied/);
    expect(stdout).toContain("summary.md now holds:");
    expect(stdout).toContain("Ship the MCP bridge.");
    expect(stdout).toMatch(/Result: agent_finished after \d+ turns/);
    expect(stdout).toContain("Bridge closed; server process ended");
  }, 70_000);
});
