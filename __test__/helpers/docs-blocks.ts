// The code blocks of README.md and docs/*.md, as programs (read by __test__/docs-blocks.test.ts).
//
// A block is a fence whose info string starts with js, mjs or ts. Words after the language say how it runs:
//   - `not-run: <why>`: shown, never run. The suite refuses it: what a block needs (a model, a remote
//     server, an OAuth server) the harness gives it as a local stand-in (docs-blocks.test.ts's header);
//   - `continues`: runs after the runnable blocks before it in the same file, as one module, so a page
//     can build one example across paragraphs (an import line already present is not repeated).
// A block that uses `require(` and has no `import` statement is CommonJS as written; it runs with
// `require` made by `createRequire`, so top-level `await` keeps working.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

export interface DocBlock {
  /** `docs/agent.md:13`: the file and the line of the opening fence. */
  where: string;
  lang: "js" | "mjs" | "ts";
  flags: string[];
  /** Why a `not-run` block is not run ("" otherwise). */
  reason: string;
  code: string;
}

/** README.md and every docs/*.md, in a stable order. */
export function docFiles(root: string): string[] {
  const docs = readdirSync(join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`);
  return ["README.md", ...docs];
}

interface Fence {
  line: number;
  lang: string;
  info: string;
  body: string[];
}

/** Every fenced block of a page: its opening line, language, the rest of its info string, its lines. */
function fences(root: string, file: string): Fence[] {
  const lines = readFileSync(join(root, file), "utf8").split("\n");
  const out: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (i >= lines.length) throw new Error(`${file}:${start + 1}: a code fence is never closed`);
    out.push({ line: start + 1, lang: open[1], info: open[2], body });
  }
  return out;
}

/** `docs/mcp.md:197 text`: the fences of a page that are neither run (js, mjs, ts) nor shell or a diff. */
export function otherFences(root: string, file: string): string[] {
  return fences(root, file)
    .filter((f) => !["js", "mjs", "ts", "sh", "diff"].includes(f.lang))
    .map((f) => `${file}:${f.line} ${f.lang || "(no language)"}`);
}

export function extractBlocks(root: string, file: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  for (const { line, lang, info: rest, body } of fences(root, file)) {
    if (lang !== "js" && lang !== "mjs" && lang !== "ts") continue;
    const info = rest.trim();
    const notRun = /^not-run\b:?\s*(.*)$/.exec(info);
    const flags = notRun ? ["not-run"] : info.split(/\s+/).filter(Boolean);
    blocks.push({ where: `${file}:${line}`, lang, flags, reason: notRun?.[1] ?? "", code: body.join("\n") });
  }
  return blocks;
}

/** Type annotations stripped; nothing else changes (no down-levelling, imports kept as written). */
function toJs(block: DocBlock): string {
  if (block.lang !== "ts") return block.code;
  const out = ts.transpileModule(block.code, {
    fileName: "block.ts",
    reportDiagnostics: true,
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const errors = out.diagnostics ?? [];
  if (errors.length > 0) {
    throw new Error(`${block.where}: not TypeScript: ${errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n")).join("; ")}`);
  }
  return out.outputText;
}

const isCommonJs = (code: string) => /\brequire\(/.test(code) && !/^\s*import\s/m.test(code);

/**
 * Whether the next runnable block continues this one: then this block runs as the start of that
 * chain, not on its own (a server, for one, whose next block is the client that calls it and closes it).
 */
export function runsWithNext(blocks: DocBlock[], index: number): boolean {
  const next = blocks.slice(index + 1).find((b) => !b.flags.includes("not-run"));
  return next !== undefined && next.flags.includes("continues");
}

/**
 * The ES module a block runs as: its own code, after the blocks it continues (import lines already
 * present dropped), and, for a CommonJS block, a `require` of its own.
 */
export function moduleSource(blocks: DocBlock[], index: number): string {
  const chain = [blocks[index]];
  let more = blocks[index].flags.includes("continues");
  for (let i = index - 1; more && i >= 0; i--) {
    if (blocks[i].flags.includes("not-run")) continue;
    chain.unshift(blocks[i]);
    more = blocks[i].flags.includes("continues");
  }
  const seen = new Set<string>();
  const parts = chain.map((block) => {
    const js = toJs(block);
    const kept = js.split("\n").filter((line) => {
      if (!/^import\s.*from\s|^import\s+["']/.test(line)) return true;
      if (seen.has(line.trim())) return false;
      seen.add(line.trim());
      return true;
    });
    return `// ${block.where}\n${kept.join("\n")}`;
  });
  const source = parts.join("\n");
  return chain.some((b) => isCommonJs(b.code))
    ? `import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);\n${source}`
    : source;
}
