//! SQLite run ledger with batched appends (the writer is `storage::batch`'s).
//!
//! `append` puts the row in an in-process queue and returns; a writer thread commits up to `batch_size`
//! queued rows in one transaction when that many are queued, or `flush_interval_ms` after the first queued
//! row, or when `flush` / `close` asks. Rows are committed in append order (`seq` ascending). `close`
//! commits every queued row before it returns, so a clean close loses nothing. A process killed without
//! `close` loses the rows not yet committed: those queued since the last commit plus the batch being
//! written — at most `max_pending_rows`, since `append` waits for the writer once that many wait.

use super::{LedgerError, RecordKind, MAX_LEDGER_RECORD_BYTES};
use crate::storage::batch::{BatchError, BatchOptions, BatchWriter, Sink, WhenFull};
use crate::storage::sqlite::{SqliteConnection, SqliteError, SqliteOptions};
use rusqlite::params;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct SqliteLedgerOptions {
    /// Rows per commit (default 512).
    pub batch_size: usize,
    /// Longest a queued row waits before its batch is committed (default 10 ms).
    pub flush_interval_ms: u64,
    /// Most rows waiting (queued or being written) before `append` waits for the writer (default 8 192).
    pub max_pending_rows: usize,
    pub sqlite: SqliteOptions,
}

impl Default for SqliteLedgerOptions {
    fn default() -> Self {
        Self {
            batch_size: 512,
            flush_interval_ms: 10,
            max_pending_rows: 8192,
            sqlite: SqliteOptions {
                busy_timeout_ms: 5_000,
                synchronous_full: false,
            },
        }
    }
}

impl From<rusqlite::Error> for LedgerError {
    fn from(e: rusqlite::Error) -> Self {
        LedgerError::Storage(e.to_string())
    }
}

impl SqliteError for LedgerError {
    fn closed() -> Self {
        LedgerError::Closed
    }
}

fn from_batch(e: BatchError) -> LedgerError {
    match e {
        BatchError::Closed => LedgerError::Closed,
        BatchError::Failed(m) => LedgerError::Storage(m),
        BatchError::Full { cause, .. } | BatchError::NotWritten { cause, .. } => {
            LedgerError::Storage(cause.unwrap_or_default())
        }
    }
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS prism_run_ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  record TEXT NOT NULL
);";

/// Commits a batch in one `BEGIN IMMEDIATE` transaction. Rows carry no key against a retried batch
/// (as PostgreSQL's do): SQLite's answer to `COMMIT` comes from this process, not over a connection
/// that can drop it, so a batch that failed (busy, locked, disk full) was rolled back.
struct FileSink(Arc<SqliteConnection>);

impl Sink<(RecordKind, String)> for FileSink {
    fn write(&mut self, _first: u64, rows: &[(RecordKind, String)]) -> Result<(), String> {
        self.0
            .write(|tx| {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO prism_run_ledger (kind, record) VALUES (?1, ?2)",
                )?;
                for (kind, json) in rows {
                    stmt.execute(params![kind.as_str(), json])?;
                }
                Ok(())
            })
            .map_err(|e: LedgerError| match e {
                LedgerError::Storage(m) => m,
                other => other.to_string(),
            })
    }
}

pub struct SqliteLedger {
    db: Arc<SqliteConnection>,
    writer: BatchWriter<(RecordKind, String)>,
}

impl SqliteLedger {
    pub fn open(path: &str, options: SqliteLedgerOptions) -> Result<Self, LedgerError> {
        let db = Arc::new(SqliteConnection::open(path, &options.sqlite, SCHEMA)?);
        let interval = Duration::from_millis(options.flush_interval_ms);
        let batch = BatchOptions {
            batch_size: options.batch_size.max(1),
            flush_interval: interval,
            max_pending: options.max_pending_rows,
            when_full: WhenFull::Wait,
            retry_first: interval.max(Duration::from_millis(5)),
            retry_max: interval.max(Duration::from_millis(5)),
        };
        let writer = BatchWriter::start("prism-run-ledger", batch, FileSink(db.clone()))
            .map_err(|e| LedgerError::Storage(e.to_string()))?;
        Ok(Self { db, writer })
    }

    /// Queues one row; waits only when `max_pending_rows` rows already wait.
    pub fn append(&self, kind: RecordKind, json: String) -> Result<(), LedgerError> {
        if json.len() > MAX_LEDGER_RECORD_BYTES {
            return Err(LedgerError::TooLarge);
        }
        self.writer.append((kind, json)).map_err(from_batch)
    }

    /// Commits every row appended so far.
    pub fn flush(&self) -> Result<(), LedgerError> {
        self.writer.flush().map_err(from_batch)
    }

    /// Rows of one kind, committed ones in `seq` order (flushes this ledger's queue first).
    pub fn list(&self, kind: RecordKind) -> Result<Vec<String>, LedgerError> {
        match self.flush() {
            Ok(()) | Err(LedgerError::Closed) => {}
            Err(e) => return Err(e),
        }
        self.db.with(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT record FROM prism_run_ledger WHERE kind = ?1 ORDER BY seq",
            )?;
            let rows = stmt.query_map([kind.as_str()], |r| r.get::<_, String>(0))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// Rows waiting: queued or being written, not yet committed.
    pub fn pending(&self) -> usize {
        self.writer.status().pending as usize
    }

    /// Commits every queued row, stops the writer and closes the file. Idempotent.
    pub fn close(&self) -> Result<(), LedgerError> {
        let left = self.writer.close(false);
        self.db.close();
        left.map_err(|(_, e)| LedgerError::Storage(e))
    }
}

impl Drop for SqliteLedger {
    fn drop(&mut self) {
        let _ = self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_are_batched_and_all_committed_in_order_on_close() {
        let dir = std::env::temp_dir().join(format!("prism-ledger-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ledger.db").to_string_lossy().into_owned();
        let opts = SqliteLedgerOptions {
            batch_size: 64,
            max_pending_rows: 256,
            ..Default::default()
        };
        let ledger = SqliteLedger::open(&path, opts.clone()).unwrap();
        for i in 0..10_000 {
            ledger
                .append(RecordKind::ToolCall, format!("{{\"i\":{i}}}"))
                .unwrap();
        }
        ledger
            .append(RecordKind::Run, "{\"run\":1}".into())
            .unwrap();
        ledger.close().unwrap();
        assert_eq!(
            ledger.append(RecordKind::Run, "{}".into()),
            Err(LedgerError::Closed)
        );
        let again = SqliteLedger::open(&path, opts).unwrap();
        let rows = again.list(RecordKind::ToolCall).unwrap();
        assert_eq!(rows.len(), 10_000);
        assert!(rows
            .iter()
            .enumerate()
            .all(|(i, r)| *r == format!("{{\"i\":{i}}}")));
        assert_eq!(
            again.list(RecordKind::Run).unwrap(),
            vec!["{\"run\":1}".to_owned()]
        );
        // list() sees this ledger's own queued rows.
        again.append(RecordKind::Usage, "{\"u\":1}".into()).unwrap();
        assert_eq!(again.list(RecordKind::Usage).unwrap().len(), 1);
        drop(again);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
