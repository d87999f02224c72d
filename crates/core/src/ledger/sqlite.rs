//! SQLite run ledger with batched appends.
//!
//! `append` puts the row in an in-process queue and returns; a writer thread commits the queue in one
//! transaction when it holds `batch_size` rows, or `flush_interval_ms` after the first queued row, or when
//! `flush` / `close` asks. Rows are committed in append order (`seq` ascending). `close` commits every
//! queued row before it returns, so a clean close loses nothing. A process killed without `close` loses the
//! rows not yet committed: those queued since the last commit plus the batch being written — at most
//! `max_pending_rows`, since `append` waits for the writer once that many are queued.

use super::{LedgerError, RecordKind, MAX_LEDGER_RECORD_BYTES};
use crate::effects::sqlite::{open_connection, SqliteOptions};
use rusqlite::{params, Connection, TransactionBehavior};
use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct SqliteLedgerOptions {
    /// Rows per commit (default 512).
    pub batch_size: usize,
    /// Longest a queued row waits before its batch is committed (default 10 ms).
    pub flush_interval_ms: u64,
    /// Most rows queued before `append` waits for the writer (default 8 192).
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

#[derive(Default)]
struct State {
    pending: VecDeque<(RecordKind, String)>,
    appended: u64,
    committed: u64,
    flush_wanted: bool,
    closing: bool,
    error: Option<String>,
}

struct Shared {
    state: Mutex<State>,
    wake_writer: Condvar,
    progress: Condvar,
    conn: Mutex<Option<Connection>>,
    options: SqliteLedgerOptions,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
    fn conn(&self) -> MutexGuard<'_, Option<Connection>> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub struct SqliteLedger {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS prism_run_ledger (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  record TEXT NOT NULL
);";

fn storage(e: rusqlite::Error) -> LedgerError {
    LedgerError::Storage(e.to_string())
}

fn write_batch(
    conn: &mut Connection,
    batch: &[(RecordKind, String)],
) -> Result<(), rusqlite::Error> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    {
        let mut stmt =
            tx.prepare_cached("INSERT INTO prism_run_ledger (kind, record) VALUES (?1, ?2)")?;
        for (kind, json) in batch {
            stmt.execute(params![kind.as_str(), json])?;
        }
    }
    tx.commit()
}

fn writer_loop(shared: Arc<Shared>) {
    let opts = &shared.options;
    let interval = Duration::from_millis(opts.flush_interval_ms);
    let mut failures = 0u32;
    loop {
        let batch: Vec<(RecordKind, String)> = {
            let mut st = shared.state();
            loop {
                let n = st.pending.len();
                if n >= opts.batch_size || (n > 0 && (st.flush_wanted || st.closing)) {
                    break;
                }
                if n == 0 {
                    st.flush_wanted = false;
                    if st.closing {
                        return;
                    }
                    st = shared
                        .wake_writer
                        .wait(st)
                        .unwrap_or_else(|e| e.into_inner());
                } else {
                    let (g, t) = shared
                        .wake_writer
                        .wait_timeout(st, interval)
                        .unwrap_or_else(|e| e.into_inner());
                    st = g;
                    if t.timed_out() && !st.pending.is_empty() {
                        break;
                    }
                }
            }
            st.pending.drain(..).collect()
        };
        let outcome = {
            let mut guard = shared.conn();
            match guard.as_mut() {
                Some(conn) => write_batch(conn, &batch).map_err(|e| e.to_string()),
                None => Err("run ledger is closed".to_owned()),
            }
        };
        let mut st = shared.state();
        match outcome {
            Ok(()) => {
                st.committed += batch.len() as u64;
                st.error = None;
                failures = 0;
            }
            Err(e) => {
                for row in batch.into_iter().rev() {
                    st.pending.push_front(row);
                }
                st.error = Some(e);
                failures += 1;
                if st.closing && failures >= 3 {
                    shared.progress.notify_all();
                    return;
                }
            }
        }
        shared.progress.notify_all();
        if st.error.is_some() {
            drop(st);
            std::thread::sleep(interval.max(Duration::from_millis(5)));
        }
    }
}

impl SqliteLedger {
    pub fn open(path: &str, options: SqliteLedgerOptions) -> Result<Self, LedgerError> {
        let conn = open_connection(path, &options.sqlite).map_err(storage)?;
        conn.execute_batch(SCHEMA).map_err(storage)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake_writer: Condvar::new(),
            progress: Condvar::new(),
            conn: Mutex::new(Some(conn)),
            options,
        });
        let for_writer = shared.clone();
        let writer = std::thread::Builder::new()
            .name("prism-run-ledger".into())
            .spawn(move || writer_loop(for_writer))
            .map_err(|e| LedgerError::Storage(e.to_string()))?;
        Ok(Self {
            shared,
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Queues one row; waits only when `max_pending_rows` rows are already queued.
    pub fn append(&self, kind: RecordKind, json: String) -> Result<(), LedgerError> {
        if json.len() > MAX_LEDGER_RECORD_BYTES {
            return Err(LedgerError::TooLarge);
        }
        let shared = &self.shared;
        let mut st = shared.state();
        if st.closing {
            return Err(LedgerError::Closed);
        }
        while st.pending.len() >= shared.options.max_pending_rows {
            if let Some(e) = &st.error {
                return Err(LedgerError::Storage(e.clone()));
            }
            shared.wake_writer.notify_one();
            st = shared.progress.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.pending.push_back((kind, json));
        st.appended += 1;
        let n = st.pending.len();
        if n == 1 || n >= shared.options.batch_size {
            shared.wake_writer.notify_one();
        }
        Ok(())
    }

    /// Commits every row appended so far.
    pub fn flush(&self) -> Result<(), LedgerError> {
        let shared = &self.shared;
        let mut st = shared.state();
        let target = st.appended;
        if st.committed >= target {
            return Ok(());
        }
        if st.closing {
            return Err(LedgerError::Closed);
        }
        st.flush_wanted = true;
        shared.wake_writer.notify_one();
        while st.committed < target {
            st = shared.progress.wait(st).unwrap_or_else(|e| e.into_inner());
            if st.committed < target {
                if let Some(e) = &st.error {
                    return Err(LedgerError::Storage(e.clone()));
                }
            }
        }
        Ok(())
    }

    /// Rows of one kind, committed ones in `seq` order (flushes this ledger's queue first).
    pub fn list(&self, kind: RecordKind) -> Result<Vec<String>, LedgerError> {
        match self.flush() {
            Ok(()) | Err(LedgerError::Closed) => {}
            Err(e) => return Err(e),
        }
        let guard = self.shared.conn();
        let conn = guard.as_ref().ok_or(LedgerError::Closed)?;
        let mut stmt = conn
            .prepare_cached("SELECT record FROM prism_run_ledger WHERE kind = ?1 ORDER BY seq")
            .map_err(storage)?;
        let rows = stmt
            .query_map([kind.as_str()], |r| r.get::<_, String>(0))
            .map_err(storage)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(storage)
    }

    /// Rows queued and not yet committed.
    pub fn pending(&self) -> usize {
        self.shared.state().pending.len()
    }

    /// Commits every queued row, stops the writer and closes the file. Idempotent.
    pub fn close(&self) -> Result<(), LedgerError> {
        let handle = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(handle) = handle else { return Ok(()) };
        {
            let mut st = self.shared.state();
            st.closing = true;
            self.shared.wake_writer.notify_one();
        }
        let _ = handle.join();
        let lost = {
            let st = self.shared.state();
            (!st.pending.is_empty()).then(|| st.error.clone().unwrap_or_default())
        };
        if let Some(conn) = self.shared.conn().take() {
            let _ = conn.close();
        }
        match lost {
            Some(e) => Err(LedgerError::Storage(e)),
            None => Ok(()),
        }
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
