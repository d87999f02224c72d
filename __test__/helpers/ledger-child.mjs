// Child process for the ledger tests. Usage:
//   node ledger-child.mjs kill <db> <flushed> <extra> <maxPendingRows>  append+flush <flushed> rows, append <extra> more, wait for SIGKILL
//   node ledger-child.mjs exit <db> <rows> [process.exit]                append <rows> rows and end without close()
//   node ledger-child.mjs writer <db> <rows> <tag>                       append <rows> rows tagged <tag>, close
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { createSqliteRunLedger } = require("../../index.js");

const [mode, db, a, b, c] = process.argv.slice(2);
const row = (tag, i) => ({
  id: `${tag}-${i}`,
  sessionId: "session",
  runId: tag,
  toolCallId: `call-${i}`,
  name: "tool",
  arguments: { i },
  status: "finished",
  startedAt: "2026-01-01T00:00:00.000Z",
  redacted: false,
});

if (mode === "kill") {
  const ledger = createSqliteRunLedger(db, { maxPendingRows: Number(c), batchSize: Math.min(512, Number(c)), flushIntervalMs: 60_000 });
  for (let i = 0; i < Number(a); i++) ledger.appendToolCall(row("k", i));
  ledger.flush();
  for (let i = Number(a); i < Number(a) + Number(b); i++) ledger.appendToolCall(row("k", i));
  process.stdout.write("appended\n");
  setInterval(() => {}, 1000);
} else if (mode === "exit") {
  const ledger = createSqliteRunLedger(db, { flushIntervalMs: 60_000 });
  for (let i = 0; i < Number(a); i++) ledger.appendToolCall(row("e", i));
  // no close(): the environment cleanup hook commits the queue
  if (b === "process.exit") process.exit(0); // exit listener commits the queue
} else if (mode === "writer") {
  const ledger = createSqliteRunLedger(db);
  for (let i = 0; i < Number(a); i++) ledger.appendToolCall(row(b, i));
  ledger.close();
}
