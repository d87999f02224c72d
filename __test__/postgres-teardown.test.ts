// No PostgreSQL server outlives a test run: the runner's global setup starts the run's shared server
// and its teardown stops every server of the run, the private ones suites start included, even when
// a worker dies without its `exit` event (before, each worker stopped its own servers on `exit`, and
// servers were left running). A child test run whose worker is killed proves it with `ps`.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "prism-pg-teardown-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const helpers = join(__dirname, "helpers");

/** The command lines of the running PostgreSQL server processes. */
function servers(): string[] {
  const ps = spawnSync("ps", ["-eo", "args"], { encoding: "utf8" });
  return ps.stdout.split("\n").filter((l) => /(^|\/)postgres\s+-D\s/.test(l));
}

it("a run whose worker is killed leaves no PostgreSQL server running", () => {
  const record = join(dir, "servers.txt");
  // The probe suite: the shared server and a private one, then the worker dies at once (no `exit`).
  writeFileSync(
    join(dir, "probe-postgres.test.ts"),
    `import { appendFileSync } from "node:fs";
import { postgresUrl, startPostgres } from ${JSON.stringify(join(helpers, "postgres.ts"))};
it("starts servers, then its worker dies", () => {
  const shared = postgresUrl();
  const own = startPostgres(41);
  appendFileSync(${JSON.stringify(record)}, shared + "\\n" + own.url + "\\n" + own.dataDir + "\\n");
  process.kill(process.pid, "SIGKILL");
});
`,
  );
  writeFileSync(
    join(dir, "vitest.config.mjs"),
    `export default { test: { root: ${JSON.stringify(dir)}, include: ["probe-postgres.test.ts"], globals: true, pool: "forks", testTimeout: 60000, hookTimeout: 60000, globalSetup: [${JSON.stringify(join(helpers, "postgres-global.ts"))}] } };\n`,
  );
  const env = { ...process.env };
  delete env.PRISM_TEST_POSTGRES_URL;
  const vitest = join(__dirname, "..", "node_modules", "vitest", "vitest.mjs");
  const child = spawnSync(process.execPath, [vitest, "run", "--config", join(dir, "vitest.config.mjs")], { cwd: join(__dirname, ".."), env, encoding: "utf8", timeout: 120_000 });
  expect(child.status).not.toBe(0); // the killed worker fails the child run
  const [sharedUrl, ownUrl, ownData] = readFileSync(record, "utf8").trim().split("\n");
  expect(sharedUrl).toMatch(/^postgres:\/\/prism:prism@127\.0\.0\.1:\d+\/postgres$/);
  expect(ownUrl).not.toBe(sharedUrl);
  const ports = [sharedUrl, ownUrl].map((u) => new URL(u).port);
  const left = servers().filter((l) => ports.some((p) => l.includes(`-p ${p}`)) || l.includes(ownData));
  expect(left).toEqual([]);
  expect(existsSync(ownData)).toBe(false); // the run's folder is gone with its servers
}, 180_000);
