// One budget for every property: bounded by count and time, and seeded so a CI run is repeatable.
// The default seed is fixed; PRISM_PROPERTY_SEED picks another (a number, or "random"), and
// PRISM_PROPERTY_RUNS multiplies the counts, for a wider search outside CI:
//   PRISM_PROPERTY_SEED=random PRISM_PROPERTY_RUNS=50 npx vitest run __test__/properties
// A failure prints the seed and path that reproduce it.
const FIXED_SEED = 20261203;

function seed(): number | undefined {
  const raw = process.env.PRISM_PROPERTY_SEED;
  if (raw === undefined || raw === "") return FIXED_SEED;
  if (raw === "random") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw new Error(`PRISM_PROPERTY_SEED must be an integer or "random", got ${raw}`);
  return n;
}

const scale = Math.max(1, Number(process.env.PRISM_PROPERTY_RUNS ?? 1) || 1);

export function budget(numRuns: number, timeLimitMs: number) {
  const s = seed();
  return {
    numRuns: numRuns * scale,
    // Capped under vitest's 60 s test timeout.
    interruptAfterTimeLimit: Math.min(timeLimitMs * scale, 50_000),
    ...(s === undefined ? {} : { seed: s }),
  };
}
