// Real MCP servers for the bridge's tests: the published `server-everything` and `server-filesystem`
// packages, and the hostile servers of mcp-hostile-server.mjs. Every process started here is recorded
// and killed by `stopAll()`.
import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { connectMcpTools } from "../../mcp/index.mjs";

const require = createRequire(import.meta.url);
const node = process.execPath;
export const everythingEntry = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
export const filesystemEntry = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
const hostileEntry = fileURLToPath(new URL("./mcp-hostile-server.mjs", import.meta.url));
const everythingHttpEntry = fileURLToPath(new URL("./mcp-everything-http.mjs", import.meta.url));

const children = new Set<ChildProcess>();
const pids = new Set<number>();

export function everythingStdio() {
  return { type: "stdio" as const, command: node, args: [everythingEntry, "stdio"], stderr: "ignore" as const };
}

export function filesystemStdio(dir: string) {
  return { type: "stdio" as const, command: node, args: [filesystemEntry, dir], stderr: "ignore" as const };
}

export function hostileStdio(mode: string, extra: Record<string, unknown> = {}) {
  return { type: "stdio" as const, command: node, args: [hostileEntry, mode], stderr: "ignore" as const, ...extra };
}

/** A bridge to the hostile test server in `mode`, its process tracked so the suite can check it is gone. */
export async function openHostile(mode: string, options: Record<string, unknown> = {}, transport: Record<string, unknown> = {}) {
  const bridge: any = await connectMcpTools({ serverId: mode, transport: hostileStdio(mode, transport), ...options });
  track(bridge.pid);
  return bridge;
}

/** Starts server-everything's Streamable HTTP transport on 127.0.0.1 and a free port. */
export async function startEverythingHttp(): Promise<{ url: string; origin: string; child: ChildProcess }> {
  const child = spawn(node, [everythingHttpEntry], { cwd: process.cwd(), stdio: ["pipe", "pipe", "ignore"] });
  children.add(child);
  const port = await new Promise<number>((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => reject(new Error("server-everything (HTTP) did not start in 20 s")), 20_000);
    child.stdout!.on("data", (chunk) => {
      text += chunk;
      const match = /MCP_TEST_PORT=(\d+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything (HTTP) exited with ${code}`));
    });
  });
  child.stdout!.resume();
  const origin = `http://127.0.0.1:${port}`;
  return { url: `${origin}/mcp`, origin, child };
}

/** Remember a bridge's server process so the suite can check it is gone. */
export function track(pid: number | undefined) {
  if (typeof pid === "number") pids.add(pid);
  return pid;
}

export function isAlive(pid: number | undefined): boolean {
  if (typeof pid !== "number") return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitFor(check: () => boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

/** Kills every process this suite started that still runs; returns the pids that were still alive. */
export async function stopAll(): Promise<number[]> {
  const survivors: number[] = [];
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }
  children.clear();
  for (const pid of pids) {
    if (isAlive(pid)) {
      survivors.push(pid);
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  }
  pids.clear();
  return survivors;
}
