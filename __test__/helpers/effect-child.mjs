// Child process for the effect-store crash and race tests. Usage:
//   node effect-child.mjs race <db> <trials> <out.json>        claim keys 0..trials-1, write the ones acquired
//   node effect-child.mjs crash <db> <sideEffectFile> <point>   run one effect and stop at <point> (waits for SIGKILL)
//   node effect-child.mjs run <db> <sideEffectFile>            run the effect protocol once, print the outcome
// The "tool" appends one line to <sideEffectFile>; the effect protocol is the one dispatch follows:
// begin → markDispatched → execute → complete; an existing completed record replays; dispatched / unknown
// are never executed again.
import { createRequire } from "node:module";
import { appendFileSync, writeFileSync } from "node:fs";
import { effectKey } from "./service-identity.mjs";

const require = createRequire(import.meta.url);
const { createSqliteToolEffectStore } = require("../../index.js");

const [mode, db, a, b, c] = process.argv.slice(2);

function park(point) {
  process.stdout.write(`${point}\n`);
  setInterval(() => {}, 1000); // wait for SIGKILL
}

if (mode === "race") {
  const store = createSqliteToolEffectStore(db, { synchronous: "normal" });
  const trials = Number(a);
  const won = [];
  for (let i = 0; i < trials; i++) {
    if ((await store.begin(effectKey(`race-${i}`))).outcome === "acquired") won.push(i);
  }
  writeFileSync(b, JSON.stringify(won));
  store.close();
} else if (mode === "crash") {
  const [file, point] = [a, b];
  const store = createSqliteToolEffectStore(db);
  const key = effectKey("crash");
  const begun = await store.begin({ ...key, claimTtlMs: 60_000 });
  if (point === "after-claim") park(point);
  else {
    const dispatched = await store.markDispatched({ ...key, claimToken: begun.record.claimToken, expectedVersion: begun.record.version });
    if (point === "after-dispatched") park(point);
    else {
      appendFileSync(file, "charged\n");
      if (point === "during-execute" || point === "after-execute") park(point);
      else {
        await store.complete({
          ...key,
          claimToken: dispatched.claimToken,
          expectedVersion: dispatched.version,
          result: { toolCallId: "crash", name: "charge", value: { charged: 5 } },
        });
        park(point);
      }
    }
  }
} else if (mode === "run") {
  const file = a;
  const store = createSqliteToolEffectStore(db);
  const key = effectKey("crash");
  const begun = await store.begin(key);
  let outcome;
  if (begun.outcome === "acquired") {
    const d = await store.markDispatched({ ...key, claimToken: begun.record.claimToken, expectedVersion: begun.record.version });
    appendFileSync(file, "charged\n");
    await store.complete({ ...key, claimToken: d.claimToken, expectedVersion: d.version, result: { toolCallId: "crash", name: "charge", value: { charged: 5 } } });
    outcome = { executed: true };
  } else if (begun.record.status === "completed") {
    outcome = { replayed: begun.record.result };
  } else if (begun.record.status === "dispatched" || begun.record.status === "unknown") {
    outcome = { code: "ERR_PRISM_TOOL_EFFECT_UNKNOWN", status: begun.record.status };
  } else {
    outcome = { code: "ERR_PRISM_TOOL_EFFECT_CONFLICT", status: begun.record.status };
  }
  process.stdout.write(JSON.stringify(outcome));
  store.close();
}
