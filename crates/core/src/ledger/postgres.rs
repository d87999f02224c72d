//! PostgreSQL run ledger: many workers append to one table.
//!
//! `append` queues the row and returns at once; a writer thread (`storage::batch`) inserts the queue in
//! batches (one statement per batch, rows in append order) when `batch_size` rows are queued or
//! `flush_interval_ms` after the first. Each row is keyed by the writer's random id and its place among
//! the writer's rows, and a row whose key is stored is skipped: a batch whose commit answer was lost
//! (a dropped connection, a server restart at the instant of commit) is sent again without storing
//! any row twice. A batch leaves the queue only once committed: while the database is
//! unreachable the writer retries with backoff and the rows wait (up to `max_pending_rows`; past that
//! `append` refuses with a clear error rather than growing without bound). `flush` waits for everything
//! appended so far; `close` commits what it can within its deadline and stops the writer.

use super::{LedgerError, RecordKind};
use crate::storage::batch::{BatchError, BatchOptions, BatchStatus, BatchWriter, Sink, WhenFull};
use crate::storage::postgres::{failed, open_component, PgError, PostgresOptions};
use postgres::{Client, NoTls, Statement};
use std::time::Duration;

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

impl From<BatchStatus> for LedgerStatus {
    fn from(s: BatchStatus) -> Self {
        Self {
            accepted: s.accepted,
            flushed: s.committed,
            buffered: s.pending,
        }
    }
}

impl From<PgError> for LedgerError {
    fn from(e: PgError) -> Self {
        match e {
            PgError::Closed => LedgerError::Closed,
            PgError::Failed(m) | PgError::CommitUnknown(m) => LedgerError::Storage(m),
        }
    }
}

const MIGRATIONS: &[&str] = &["CREATE TABLE {schema}.prism_run_ledger (
  seq bigserial PRIMARY KEY,
  kind text NOT NULL,
  record text NOT NULL,
  appended_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX prism_run_ledger_kind ON {schema}.prism_run_ledger (kind, seq)",
    // Each row's key: its writer and its place among that writer's rows. A batch whose commit answer
    // was lost is sent again and must not store its rows twice. Rows written before this have no key
    // (NULLs never conflict).
    // A uuid, not text: the unique index then compares 16 bytes, not strings under a collation.
    "ALTER TABLE {schema}.prism_run_ledger ADD COLUMN writer_id uuid, ADD COLUMN position bigint;
CREATE UNIQUE INDEX prism_run_ledger_writer_position ON {schema}.prism_run_ledger (writer_id, position)"];

/// A writer's id: 128 random bits from the operating system, in a UUID's text form. Two writers
/// (processes, ledgers) never share one, so one writer's retried rows never collide with another's.
fn writer_id() -> Result<String, LedgerError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)
        .map_err(|e| LedgerError::Storage(format!("cannot draw the writer id: {e}")))?;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// The writer's own connection with its insert prepared; connected again after a connection failure.
struct DatabaseSink {
    config: postgres::Config,
    table: String,
    writer_id: String,
    writer: Option<(Client, Statement)>,
}

impl DatabaseSink {
    fn insert(
        &mut self,
        first: u64,
        batch: &[(RecordKind, String)],
    ) -> Result<(), postgres::Error> {
        let (client, insert) = match &mut self.writer {
            Some(w) => w,
            None => {
                let mut client = self.config.connect(NoTls)?;
                // One statement for any batch size; WITH ORDINALITY keeps the append order in `seq`.
                // A row already stored (its commit answer was lost, the batch is sent again) is
                // skipped, so what is stored stays each writer's rows in order, each once.
                let insert = client.prepare(&format!(
                    "INSERT INTO {} (kind, record, writer_id, position)
                     SELECT k, r, $3::text::uuid, $4::bigint + o - 1 FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS x(k, r, o)
                     ORDER BY o
                     ON CONFLICT (writer_id, position) DO NOTHING",
                    self.table
                ))?;
                self.writer.insert((client, insert))
            }
        };
        let kinds: Vec<&str> = batch.iter().map(|(k, _)| k.as_str()).collect();
        let records: Vec<&str> = batch.iter().map(|(_, r)| r.as_str()).collect();
        let first = first as i64;
        client
            .execute(&*insert, &[&kinds, &records, &self.writer_id, &first])
            .map(|_| ())
    }
}

impl Sink<(RecordKind, String)> for DatabaseSink {
    fn write(&mut self, first: u64, rows: &[(RecordKind, String)]) -> Result<(), String> {
        self.insert(first, rows).map_err(|e| {
            let closed = self.writer.as_ref().is_some_and(|(c, _)| c.is_closed());
            if closed || e.as_db_error().is_none() {
                self.writer = None; // reconnect on the next try
            }
            LedgerError::from(failed("append", &e)).to_string()
        })
    }
}

pub struct PostgresLedger {
    config: postgres::Config,
    table: String,
    max_pending_rows: usize,
    writer: BatchWriter<(RecordKind, String)>,
}

impl PostgresLedger {
    pub fn open(options: PostgresLedgerOptions) -> Result<Self, LedgerError> {
        let pg = &options.postgres;
        let config = open_component(pg, "prism-tools-native ledger", "run_ledger", MIGRATIONS)?;
        let table = format!("{}.prism_run_ledger", pg.schema);
        let batch = BatchOptions {
            batch_size: options.batch_size.max(1),
            flush_interval: Duration::from_millis(options.flush_interval_ms),
            max_pending: options.max_pending_rows,
            when_full: WhenFull::Refuse,
            // 20 ms, 40 ms, … up to 1 s between tries.
            retry_first: Duration::from_millis(20),
            retry_max: Duration::from_secs(1),
        };
        let sink = DatabaseSink {
            config: config.clone(),
            table: table.clone(),
            writer_id: writer_id()?,
            writer: None,
        };
        let writer = BatchWriter::start("prism-pg-ledger", batch, sink)
            .map_err(|e| LedgerError::Storage(format!("cannot start the ledger writer: {e}")))?;
        Ok(Self {
            config,
            table,
            max_pending_rows: options.max_pending_rows,
            writer,
        })
    }

    /// Queues a row (already bounded by the caller) and returns.
    pub fn append(&self, kind: RecordKind, json: String) -> Result<(), LedgerError> {
        self.writer.append((kind, json)).map_err(|e| match e {
            BatchError::Full { cause, .. } => LedgerError::Storage(format!(
                "{} rows are waiting for the database ({})",
                self.max_pending_rows,
                cause.as_deref().unwrap_or("the database is not keeping up")
            )),
            BatchError::Failed(m) => LedgerError::Storage(m),
            BatchError::Closed | BatchError::NotWritten { .. } => LedgerError::Closed,
        })
    }

    pub fn status(&self) -> LedgerStatus {
        self.writer.status().into()
    }

    /// Waits until every row appended before the call is committed, or `timeout` passes (then the error
    /// names the last database failure).
    pub fn flush(&self, timeout: Duration) -> Result<LedgerStatus, LedgerError> {
        match self.writer.flush_within(timeout) {
            Ok(status) => Ok(status.into()),
            Err(BatchError::NotWritten { rows, cause }) => Err(LedgerError::Storage(format!(
                "{rows} rows not yet written after {} ms: {}",
                timeout.as_millis(),
                cause.as_deref().unwrap_or("the writer stopped")
            ))),
            Err(BatchError::Failed(m)) => Err(LedgerError::Storage(m)),
            Err(BatchError::Closed | BatchError::Full { .. }) => Err(LedgerError::Closed),
        }
    }

    /// Rows of one kind in `seq` order, as JSON text (a fresh connection: the writer keeps its own).
    pub fn list(&self, kind: RecordKind, limit: i64) -> Result<Vec<String>, LedgerError> {
        let mut client = self
            .config
            .connect(NoTls)
            .map_err(|e| failed("connect", &e))?;
        let rows = client
            .query(
                &format!(
                    "SELECT record FROM {} WHERE kind = $1 ORDER BY seq LIMIT $2",
                    self.table
                ),
                &[&kind.as_str(), &limit],
            )
            .map_err(|e| failed("list", &e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Flushes within `timeout`, then stops the writer. Rows not written by then are reported, not kept.
    pub fn close(&self, timeout: Duration) -> Result<(), LedgerError> {
        let flushed = self.flush(timeout);
        // give up on what is left: the error says how many rows were not written
        let _ = self.writer.close(flushed.is_err());
        flushed.map(|_| ())
    }
}

impl Drop for PostgresLedger {
    fn drop(&mut self) {
        let _ = self.close(Duration::from_secs(5));
    }
}
