// The Jazzer.js fuzz targets of fuzz/js/ (docs/fuzzing.md), each run here on a bounded number of
// seeded pseudo-random inputs: not coverage-guided (that is `npm run fuzz:js -- <target>`), but it
// keeps the targets' invariants and their input decoding checked in every test run.
import { createRequire } from "node:module";
import { describe, it } from "vitest";

const require = createRequire(import.meta.url);
const RUNS = Number(process.env.PRISM_FUZZ_SMOKE_RUNS ?? 4_000);

/** xorshift32: the same inputs every run. */
function* inputs(seed: number, runs: number): Generator<Buffer> {
  let x = seed >>> 0 || 1;
  const next = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
  for (let i = 0; i < runs; i++) {
    const b = Buffer.alloc(next() % 257);
    for (let j = 0; j < b.length; j++) b[j] = next() & 0xff;
    yield b;
  }
}

describe("fuzz/js targets on seeded inputs", () => {
  it("stream-redaction", () => {
    const { fuzz } = require("../fuzz/js/stream-redaction.fuzz.js") as { fuzz(b: Buffer): void };
    for (const b of inputs(0x5eed1, RUNS * 2)) fuzz(b);
  });

  it("openai-stream", async () => {
    const { fuzz } = require("../fuzz/js/openai-stream.fuzz.js") as { fuzz(b: Buffer): Promise<void> };
    for (const b of inputs(0x5eed2, RUNS)) await fuzz(b);
  });

  it("anthropic-stream", async () => {
    const { fuzz } = require("../fuzz/js/anthropic-stream.fuzz.js") as { fuzz(b: Buffer): Promise<void> };
    for (const b of inputs(0x5eed3, RUNS)) await fuzz(b);
  });

  it("address", () => {
    const { fuzz } = require("../fuzz/js/address.fuzz.js") as { fuzz(b: Buffer): void };
    for (const b of inputs(0x5eed4, RUNS * 2)) fuzz(b);
  });
});
