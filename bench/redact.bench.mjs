// Secret redactor benchmark: building a redactor (createSecretRedactor + one redact of a short
// text, so a lazy redactor pays its work too) for long secrets, and redaction throughput, against
// `@arnilo/prism`'s redactor (split/join per secret) in one process, same data, alternating order.
//
//   npm run build && node bench/redact.bench.mjs [--upstream DIR] [--rounds N]
//
// DIR is a built checkout of github.com/ashiqrniloy/prism (see the peer bench's README for the
// build); without it only the native figures print. Each figure is a median over rounds, with the
// min–max spread; build times are wall-clock (and CPU time) of one call, throughputs MB/s of
// UTF-16 text.
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const rounds = Number(opt("--rounds", 7));
const upstreamDir = opt("--upstream", process.env.PRISM_BENCH_UPSTREAM);
const impls = [["native", require("../index.js")]];
if (upstreamDir) impls.push(["upstream", require(path.resolve(upstreamDir, "dist/index.js"))]);

const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const spread = (xs) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;

// A pseudo-random text of words with secrets sprinkled in (a fixed generator: same data each run).
function text(bytes, secrets, every) {
  let r = 12345;
  const next = () => (r = (r * 1103515245 + 12345) % 2 ** 31);
  const words = ["the ", "quick ", "brown ", "fox ", "jumps ", "over ", "lazy ", "dog. ", "key ", "sk-", "token "];
  let out = "";
  let n = 0;
  while (out.length < bytes) {
    out += words[next() % words.length];
    if (++n % every === 0) out += secrets[next() % secrets.length];
  }
  return out;
}
const randomSecret = (n) => {
  let r = 7;
  let s = "";
  for (let i = 0; i < n; i++) s += String.fromCharCode(97 + ((r = (r * 1103515245 + 12345) % 2 ** 31) % 26));
  return s;
};

function run(name, fn) {
  const times = Object.fromEntries(impls.map(([n]) => [n, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? impls : [...impls].reverse();
    for (const [n, lib] of order) times[n].push(fn(lib));
  }
  return { name, times };
}

const results = [];
// Build: one periodic secret (the quadratic case of the old DFA) and one random one, per size.
for (const [label, size] of [["4 KB", 4096], ["32 KB", 32768], ["1 MB", 1 << 20]]) {
  for (const [kind, secret] of [["periodic", "x".repeat(size)], ["random", randomSecret(size)]]) {
    const cpu = {};
    results.push({
      unit: "ms",
      ...run(`build ${label} ${kind} secret`, (lib) => {
        const c0 = process.cpuUsage();
        const t0 = process.hrtime.bigint();
        lib.createSecretRedactor([secret]).redact("a short text");
        const wall = ms(t0);
        const c = process.cpuUsage(c0);
        (cpu[lib === impls[0][1] ? impls[0][0] : impls[1][0]] ??= []).push((c.user + c.system) / 1e3);
        return wall;
      }),
    });
    // CPU time of the same calls: on a shared machine the wall clock also counts waiting for a core.
    results.push({ unit: "ms CPU", name: `  same, CPU time`, times: cpu });
  }
}
// Throughput: a 1 MB string with 4 typical secrets, then with 100; a ledger-like object of 2 000
// short strings. The redactor is built once, outside the timing.
const four = ["sk-live-0123456789abcdef", "ghp_abcdefghijklmnop0123", "hunter2!", "AKIAIOSFODNN7EXAMPLE"];
const hundred = Array.from({ length: 100 }, (_, i) => `tok-${i}-${randomSecret(16)}`);
// The third adds a 1 MB secret (a key file) that the text does not hold: a secret past 4 KB has a
// scanner of its own, which reads the whole text.
const withLong = [...four, randomSecret(1 << 20)];
for (const [label, secrets] of [["4 secrets", four], ["100 secrets", hundred], ["4 secrets + a 1 MB one", withLong]]) {
  const t = text(1 << 20, secrets.filter((s) => s.length < 4096), 200);
  const made = Object.fromEntries(impls.map(([n, lib]) => [n, lib.createSecretRedactor(secrets)]));
  results.push({
    unit: "MB/s",
    ...run(`redact 1 MB string, ${label}`, (lib) => {
      const r = made[impls.find(([, l]) => l === lib)[0]];
      const t0 = process.hrtime.bigint();
      r.redact(t);
      return (t.length * 2) / 1e6 / (ms(t0) / 1e3);
    }),
  });
}
{
  const rows = Array.from({ length: 2000 }, (_, i) => ({ id: `row-${i}`, text: text(200, four, 10 + (i % 7)), n: i }));
  const made = Object.fromEntries(impls.map(([n, lib]) => [n, lib.createSecretRedactor(four)]));
  const bytes = rows.reduce((sum, r) => sum + (r.id.length + r.text.length) * 2, 0);
  results.push({
    unit: "MB/s",
    ...run("redact 2 000 rows { id, text, n }, 4 secrets", (lib) => {
      const r = made[impls.find(([, l]) => l === lib)[0]];
      const t0 = process.hrtime.bigint();
      r.redact(rows);
      return bytes / 1e6 / (ms(t0) / 1e3);
    }),
  });
}

console.log(`node ${process.version}, ${rounds} rounds; median (min–max)`);
for (const { name, unit, times } of results) {
  const cells = impls.map(([n]) => `${n} ${spread(times[n])} ${unit}`);
  console.log(`${name.padEnd(48)} ${cells.join("   ")}`);
}
