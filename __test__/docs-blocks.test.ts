// Every ```js, ```mjs and ```ts block of README.md and docs/*.md runs here as its own ES module, the way
// a user pastes it: `import ... from "prism-tools-native"` resolves to this checkout (each module is
// written under target/, inside this package, where Node resolves the package's own name to itself
// through package.json "exports"), TypeScript has its types stripped, and a block must exit 0.
// Conventions (`not-run`, `continues`, CommonJS blocks): helpers/docs-blocks.ts.
//
// The stand-ins a block may use, set in its environment:
//   - OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL: a local OpenAI-compatible server
//     (helpers/openai-stand-in.ts), so no network and no key;
//   - ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY: a local Anthropic Messages API (helpers/anthropic-stand-in.ts);
//   - DATABASE_URL: the suite's PostgreSQL server (helpers/postgres.ts);
//   - MCP_URL, MCP_TOKEN: a Streamable HTTP MCP server on 127.0.0.1 and a bearer token it accepts
//     (helpers/mcp-server-http.mjs), started for the blocks that name MCP_URL;
//   - MCP_OAUTH_URL: an MCP server on 127.0.0.1 that wants an OAuth token, with its authorization server
//     (helpers/mcp-oauth-server.ts: dynamic registration, PKCE; it approves at once, as a person would);
//   - WEATHER_APP_SERVER: a stdio MCP server script that offers MCP Apps (helpers/mcp-weather-app.mjs);
//   - PORT: a free port on 127.0.0.1, for a block that serves;
//   - the working directory: an empty folder of the block's own (files it writes stay there);
//   - standard input: empty (a stdio MCP server sees its client leave and ends).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docFiles, extractBlocks, moduleSource, otherFences, runsWithNext, type DocBlock } from "./helpers/docs-blocks";
import { startAnthropicStandIn, type AnthropicStandIn } from "./helpers/anthropic-stand-in";
import { startOpenAIStandIn, type StandIn } from "./helpers/openai-stand-in";
import { startOAuthServers } from "./helpers/mcp-oauth-server";
import { startServedRegistry } from "./helpers/mcp-server-http.mjs";
import { postgresUrl } from "./helpers/postgres";

const root = fileURLToPath(new URL("..", import.meta.url));

const all = docFiles(root).map((file) => ({ file, blocks: extractBlocks(root, file) }));
let work: string;
let standIn: StandIn;
let anthropic: AnthropicStandIn;
let mcpServer: Promise<{ url: string; close(): Promise<void> }> | undefined;
const mcpServerUrl = () => (mcpServer ??= startServedRegistry()).then((served) => served.url);
let oauthServers: ReturnType<typeof startOAuthServers> | undefined;
const oauthServerUrl = () => (oauthServers ??= startOAuthServers()).then((servers) => servers.mcpUrl);

beforeAll(async () => {
  mkdirSync(join(root, "target"), { recursive: true });
  work = mkdtempSync(join(root, "target", "docs-blocks-"));
  standIn = await startOpenAIStandIn();
  anthropic = await startAnthropicStandIn();
});
afterAll(async () => {
  await standIn?.close();
  await anthropic?.close();
  await (await mcpServer)?.close();
  await (await oauthServers)?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Runs `node block.mjs` in `dir` with no input; resolves with its exit code (or signal) and output. */
function runNode(dir: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  return new Promise<{ status: string; stdout: string; stderr: string; timedOut: boolean }>((resolve) => {
    const child = spawn(process.execPath, ["block.mjs"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c) => (stderr += c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ status: signal ?? String(code), stdout, stderr, timedOut });
    });
  });
}

async function runBlock(blocks: DocBlock[], index: number) {
  const block = blocks[index];
  const dir = join(work, block.where.replace(/[^\w]+/g, "_"));
  mkdirSync(dir, { recursive: true });
  const source = moduleSource(blocks, index);
  writeFileSync(join(dir, "block.mjs"), source);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    OPENAI_BASE_URL: standIn.baseUrl,
    OPENAI_API_KEY: "sk-local-stand-in",
    OPENAI_MODEL: "stand-in",
    ANTHROPIC_BASE_URL: anthropic.baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-local-stand-in",
    PORT: String(await freePort()),
  };
  if (source.includes("DATABASE_URL")) env.DATABASE_URL = postgresUrl();
  if (source.includes("MCP_OAUTH_URL")) env.MCP_OAUTH_URL = await oauthServerUrl();
  if (source.includes("MCP_URL")) Object.assign(env, { MCP_URL: await mcpServerUrl(), MCP_TOKEN: "alice" });
  env.WEATHER_APP_SERVER = fileURLToPath(new URL("./helpers/mcp-weather-app.mjs", import.meta.url));
  const out = await runNode(dir, env, 30_000);
  if (out.status !== "0") {
    const why = out.timedOut ? "did not finish within 30 s" : `exited with ${out.status}`;
    throw new Error(`${block.where} ${why}\n--- stderr\n${out.stderr}\n--- stdout\n${out.stdout}\n--- module\n${source}`);
  }
  // DOCS_BLOCKS_PRINT=1 shows what each block printed, to compare with the comments beside its code.
  if (process.env.DOCS_BLOCKS_PRINT) console.log(`--- ${block.where}\n${out.stdout}`);
}

describe("every code block of README.md and docs/ runs", () => {
  for (const { file, blocks } of all) {
    // A page without a runnable block gets no suite (vitest refuses an empty one).
    if (!blocks.some((b, i) => !b.flags.includes("not-run") && !runsWithNext(blocks, i))) continue;
    describe(file, () => {
      blocks.forEach((block, index) => {
        if (block.flags.includes("not-run") || runsWithNext(blocks, index)) return;
        it(`${block.where}${block.flags.length > 0 ? ` (${block.flags.join(" ")})` : ""}`, () => runBlock(blocks, index), 40_000);
      });
    });
  }

  it("finds the blocks: README.md and most pages have some, and none is in an unknown mode", () => {
    const counted = all.flatMap(({ blocks }) => blocks);
    expect(counted.length).toBeGreaterThan(40);
    expect(all.find((f) => f.file === "README.md")!.blocks.length).toBeGreaterThan(0);
    const unknown = counted.filter((b) => b.flags.some((f) => f !== "not-run" && f !== "continues"));
    expect(unknown.map((b) => `${b.where} ${b.flags.join(" ")}`)).toEqual([]);
  });

  it("every block runs: none is marked not-run, and no code hides in a text fence", () => {
    const notRun = all.flatMap(({ blocks }) => blocks.filter((b) => b.flags.includes("not-run")));
    expect(notRun.map((b) => `${b.where}: ${b.reason}`)).toEqual([]);
    // Shell commands and diffs are not programs; any other fence (```text, a bare one) is refused, so
    // an example cannot leave the suite by changing its language.
    expect(docFiles(root).flatMap((file) => otherFences(root, file))).toEqual([]);
  });
});
