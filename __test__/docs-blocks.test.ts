// Every ```js, ```mjs and ```ts block of README.md and docs/*.md runs here as its own ES module, the way
// a user pastes it: `import ... from "prism-tools-native"` resolves to this checkout (each module is
// written under target/, inside this package, where Node resolves the package's own name to itself
// through package.json "exports"), TypeScript has its types stripped, and a block must exit 0.
// Conventions (`not-run`, `continues`, CommonJS blocks): helpers/docs-blocks.ts.
//
// The stand-ins a block may use, set in its environment:
//   - OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL: a local OpenAI-compatible server
//     (helpers/openai-stand-in.ts), so no network and no key;
//   - DATABASE_URL: the suite's PostgreSQL server (helpers/postgres.ts);
//   - PORT: a free port on 127.0.0.1, for a block that serves;
//   - the working directory: an empty folder of the block's own (files it writes stay there);
//   - standard input: empty (a stdio MCP server sees its client leave and ends).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docFiles, extractBlocks, moduleSource, runsWithNext, type DocBlock } from "./helpers/docs-blocks";
import { startOpenAIStandIn, type StandIn } from "./helpers/openai-stand-in";
import { postgresUrl } from "./helpers/postgres";

const root = fileURLToPath(new URL("..", import.meta.url));

/** At most this many blocks may be `not-run`; each says why in its info string. */
const MAX_NOT_RUN = 6;

const all = docFiles(root).map((file) => ({ file, blocks: extractBlocks(root, file) }));
let work: string;
let standIn: StandIn;

beforeAll(async () => {
  mkdirSync(join(root, "target"), { recursive: true });
  work = mkdtempSync(join(root, "target", "docs-blocks-"));
  standIn = await startOpenAIStandIn();
});
afterAll(async () => {
  await standIn?.close();
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
    PORT: String(await freePort()),
  };
  if (source.includes("DATABASE_URL")) env.DATABASE_URL = postgresUrl();
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

  it("blocks marked not-run are few, and each says why", () => {
    const notRun = all.flatMap(({ blocks }) => blocks.filter((b) => b.flags.includes("not-run")));
    console.log(`docs blocks not run (${notRun.length}):\n${notRun.map((b) => `  ${b.where}: ${b.reason}`).join("\n")}`);
    expect(notRun.filter((b) => b.reason.length < 10).map((b) => b.where)).toEqual([]);
    expect(notRun.length).toBeLessThanOrEqual(MAX_NOT_RUN);
  });
});
