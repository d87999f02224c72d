//! PostgreSQL run ledger: many workers append to one table.
//!
//! `append` queues the row and returns at once; a writer thread inserts the queue in batches (one
//! statement per batch, rows in append order) when `batch_size` rows are queued or `flush_interval_ms`
//! after the first. A batch leaves the queue only once committed: while the database is unreachable the
//! writer retries with backoff and the rows wait (up to `max_pending_rows`; past that `append` refuses
//! with a clear error rather than growing without bound). `flush` waits for everything appended so far;
//! `close` commits what it can within its deadline and stops the writer.

use super::{LedgerError, RecordKind};
use crate::effects::postgres::{migrate, storage_error, PostgresOptions};
use postgres::{Client, NoTls, Statement};
use std::collections::VecDeque;
use std::str::FromStr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct PostgresLedgerOptions {
    pub postgres: PostgresOptions,
    /// Rows per insert (default 512).
    pub batch_size: usize,
    /// Longest a queued row waits before its batch is written (default 10 ms).
    pub flush_interval_ms: u64,
    /// Most rows waiting for the database before `append` refuses (default 65 536).
    pub max_pending_rows: usize,
}

impl PostgresLedgerOptions {
    pub fn new(postgres: PostgresOptions) -> Self {
        Self {
            postgres,
            batch_size: 512,
            flush_interval_ms: 10,
            max_pending_rows: 65_536,
        }
    }
}

/// `status()`: rows accepted by `append`, rows committed, rows waiting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LedgerStatus {
    pub accepted: u64,
    pub flushed: u64,
    pub buffered: u64,
}

#[derive(Default)]
struct State {
    pending: VecDeque<(RecordKind, String)>,
    accepted: u64,
    flushed: u64,
    flush_wanted: bool,
    closing: bool,
    stopped: bool,
    /// The last write failure, cleared by the next success.
    error: Option<String>,
}

struct Shared {
    state: Mutex<State>,
    wake_writer: Condvar,
    progress: Condvar,
    options: PostgresLedgerOptions,
    config: postgres::Config,
    table: String,
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub struct PostgresLedger {
    shared: Arc<Shared>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

const MIGRATIONS: &[&str] = &["CREATE TABLE {schema}.prism_run_ledger (
  seq bigserial PRIMARY KEY,
  kind text NOT NULL,
  record text NOT NULL,
  appended_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX prism_run_ledger_kind ON {schema}.prism_run_ledger (kind, seq)"];

fn ledger_storage(e: crate::effects::StoreError) -> LedgerError {
    LedgerError::Storage(e.to_string().replacen("tool effect store failed: ", "", 1))
}

/// A writer connection with its insert prepared.
struct Writer {
    client: Client,
    insert: Statement,
}

fn connect(shared: &Shared) -> Result<Writer, postgres::Error> {
    let mut client = shared.config.connect(NoTls)?;
    // One statement for any batch size; WITH ORDINALITY keeps the append order in `seq`.
    let insert = client.prepare(&format!(
        "INSERT INTO {} (kind, record) SELECT k, r FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(k, r, o) ORDER BY o",
        shared.table
    ))?;
    Ok(Writer { client, insert })
}

fn write_batch(w: &mut Writer, batch: &[(RecordKind, String)]) -> Result<(), postgres::Error> {
    let kinds: Vec<&str> = batch.iter().map(|(k, _)| k.as_str()).collect();
    let records: Vec<&str> = batch.iter().map(|(_, r)| r.as_str()).collect();
    w.client.execute(&w.insert, &[&kinds, &records]).map(|_| ())
}

fn writer_loop(shared: Arc<Shared>) {
    let opts = &shared.options;
    let interval = Duration::from_millis(opts.flush_interval_ms);
    let mut writer: Option<Writer> = None;
    let mut failures = 0u32;
    loop {
        let batch: Vec<(RecordKind, String)> = {
            let mut st = shared.state();
            loop {
                let n = st.pending.len();
                if n >= opts.batch_size
                    || (n > 0 && (st.flush_wanted || st.closing || failures > 0))
                {
                    break;
                }
                if n == 0 {
                    st.flush_wanted = false;
                    if st.closing {
                        st.stopped = true;
                        shared.progress.notify_all();
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
            // Copy, not drain: a batch leaves the queue only once it is committed.
            st.pending.iter().take(opts.batch_size).cloned().collect()
        };
        let result = match writer.as_mut() {
            Some(w) => write_batch(w, &batch),
            None => connect(&shared).and_then(|mut w| {
                let r = write_batch(&mut w, &batch);
                writer = Some(w);
                r
            }),
        };
        let mut st = shared.state();
        match result {
            Ok(()) => {
                failures = 0;
                // `close` may have given up on the queue meanwhile.
                let n = batch.len().min(st.pending.len());
                st.pending.drain(..n);
                st.flushed += batch.len() as u64;
                st.error = None;
                shared.progress.notify_all();
            }
            Err(e) => {
                failures += 1;
                if writer.as_ref().is_some_and(|w| w.client.is_closed())
                    || e.as_db_error().is_none()
                {
                    writer = None; // reconnect on the next try
                }
                st.error = Some(ledger_storage(storage_error("append", &e)).to_string());
                shared.progress.notify_all();
                drop(st);
                // Back off 10 ms, 20 ms, … up to 1 s between tries.
                std::thread::sleep(
                    Duration::from_millis(10u64 << failures.min(7)).min(Duration::from_secs(1)),
                );
            }
        }
    }
}

impl PostgresLedger {
    pub fn open(options: PostgresLedgerOptions) -> Result<Self, LedgerError> {
        let pg = &options.postgres;
        if !crate::effects::postgres::valid_schema(&pg.schema) {
            return Err(LedgerError::Storage(
                "schema must match ^[a-z_][a-z0-9_]{0,62}$".into(),
            ));
        }
        let mut config = postgres::Config::from_str(&pg.url)
            .map_err(|e| LedgerError::Storage(format!("invalid connection string: {e}")))?;
        config
            .connect_timeout(Duration::from_millis(pg.connect_timeout_ms))
            .application_name("prism-tools-native ledger")
            .options(&format!("-c statement_timeout={}", pg.statement_timeout_ms));
        let mut first = config
            .connect(NoTls)
            .map_err(|e| ledger_storage(storage_error("connect", &e)))?;
        migrate(&mut first, &pg.schema, "run_ledger", MIGRATIONS).map_err(ledger_storage)?;
        drop(first);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake_writer: Condvar::new(),
            progress: Condvar::new(),
            table: format!("{}.prism_run_ledger", pg.schema),
            config,
            options,
        });
        let s = shared.clone();
        let writer = std::thread::Builder::new()
            .name("prism-pg-ledger".into())
            .spawn(move || writer_loop(s))
            .map_err(|e| LedgerError::Storage(format!("cannot start the ledger writer: {e}")))?;
        Ok(Self {
            shared,
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Queues a row (already bounded by the caller) and returns.
    pub fn append(&self, kind: RecordKind, json: String) -> Result<(), LedgerError> {
        let mut st = self.shared.state();
        if st.closing {
            return Err(LedgerError::Closed);
        }
        if st.pending.len() >= self.shared.options.max_pending_rows {
            let cause = st
                .error
                .clone()
                .unwrap_or_else(|| "the database is not keeping up".into());
            return Err(LedgerError::Storage(format!(
                "{} rows are waiting for the database ({cause})",
                self.shared.options.max_pending_rows
            )));
        }
        st.pending.push_back((kind, json));
        st.accepted += 1;
        if st.pending.len() == 1 || st.pending.len() >= self.shared.options.batch_size {
            self.shared.wake_writer.notify_one();
        }
        Ok(())
    }

    pub fn status(&self) -> LedgerStatus {
        let st = self.shared.state();
        LedgerStatus {
            accepted: st.accepted,
            flushed: st.flushed,
            buffered: st.pending.len() as u64,
        }
    }

    /// Waits until every row appended before the call is committed, or `timeout` passes (then the error
    /// names the last database failure).
    pub fn flush(&self, timeout: Duration) -> Result<LedgerStatus, LedgerError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.state();
        let target = st.accepted;
        st.flush_wanted = true;
        self.shared.wake_writer.notify_one();
        while st.flushed < target {
            let now = Instant::now();
            if now >= deadline || st.stopped {
                let cause = st
                    .error
                    .clone()
                    .unwrap_or_else(|| "the writer stopped".into());
                return Err(LedgerError::Storage(format!(
                    "{} rows not yet written after {} ms: {cause}",
                    target - st.flushed,
                    timeout.as_millis()
                )));
            }
            st = self
                .shared
                .progress
                .wait_timeout(st, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        Ok(LedgerStatus {
            accepted: st.accepted,
            flushed: st.flushed,
            buffered: st.pending.len() as u64,
        })
    }

    /// Rows of one kind in `seq` order, as JSON text (a fresh connection: the writer keeps its own).
    pub fn list(&self, kind: RecordKind, limit: i64) -> Result<Vec<String>, LedgerError> {
        let mut client = self
            .shared
            .config
            .connect(NoTls)
            .map_err(|e| ledger_storage(storage_error("connect", &e)))?;
        let rows = client
            .query(
                &format!(
                    "SELECT record FROM {} WHERE kind = $1 ORDER BY seq LIMIT $2",
                    self.shared.table
                ),
                &[&kind.as_str(), &limit],
            )
            .map_err(|e| ledger_storage(storage_error("list", &e)))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Flushes within `timeout`, then stops the writer. Rows not written by then are reported, not kept.
    pub fn close(&self, timeout: Duration) -> Result<(), LedgerError> {
        let flushed = self.flush(timeout);
        {
            let mut st = self.shared.state();
            st.closing = true;
            if flushed.is_err() {
                st.pending.clear(); // give up: the error says how many rows were not written
            }
            self.shared.wake_writer.notify_all();
        }
        if let Some(handle) = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = handle.join();
        }
        flushed.map(|_| ())
    }
}

impl Drop for PostgresLedger {
    fn drop(&mut self) {
        let _ = self.close(Duration::from_secs(5));
    }
}
