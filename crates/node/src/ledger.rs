//! napi exports of the run ledgers' storage. A row crosses as JSON text that `lib/ledger.js` made
//! (and bounded); `list` answers one JSON array text that JS parses once. Options are checked in JS.

// napi registers these exports; a `cargo test` build sees no caller.
#![cfg_attr(test, allow(dead_code))]

use crate::throw::Throw;
use std::sync::{Arc, Weak};

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use prism_tools_core::error::{Code, Kind, PrismError};
use prism_tools_core::ledger::{
    LedgerError, MemoryLedger, RecordKind, SqliteLedger, SqliteLedgerOptions,
};
use prism_tools_core::storage::sqlite::{check_store_path, SqliteOptions};

enum Inner {
    Memory(MemoryLedger),
    Sqlite(Arc<SqliteLedger>),
}

/// The storage behind a built-in `RunLedger` (the JS object in `lib/ledger.js`).
#[napi]
pub struct RunLedgerStore {
    inner: Inner,
    cleanup: Option<napi::CleanupEnvHook<Weak<SqliteLedger>>>,
}

fn ledger_error<T>(env: &Env, e: LedgerError) -> Result<T> {
    PrismError::new(Kind::Error, Code::Ledger, e.to_string()).throw(env)
}

/// The largest row the built-in ledgers store, in bytes of JSON text; `lib/ledger.js` bounds rows to it.
#[napi]
pub const RUN_LEDGER_MAX_ROW_BYTES: u32 = prism_tools_core::ledger::MAX_LEDGER_RECORD_BYTES as u32;

/// Record kinds by index, in the order `lib/ledger.js` numbers them (a number crosses cheaper than a
/// string); every built-in ledger, PostgreSQL's too, takes them so.
const KINDS: [RecordKind; 4] = [
    RecordKind::ToolCall,
    RecordKind::Run,
    RecordKind::Event,
    RecordKind::Usage,
];

pub(crate) fn kind_of(env: &Env, kind: u32) -> Result<RecordKind> {
    match KINDS.get(kind as usize) {
        Some(k) => Ok(*k),
        None => PrismError::new(
            Kind::RangeError,
            Code::Internal,
            format!("unknown run ledger record kind {kind}"),
        )
        .throw(env),
    }
}

#[napi]
impl RunLedgerStore {
    /// Stores one row's JSON text under `kind`.
    #[napi]
    pub fn append(&self, env: &Env, kind: u32, text: String) -> Result<()> {
        let kind = kind_of(env, kind)?;
        let done = match &self.inner {
            Inner::Memory(m) => m.append(kind, text),
            Inner::Sqlite(s) => s.append(kind, text),
        };
        done.or_else(|e| ledger_error(env, e))
    }

    /// The rows of one kind in append order, as the text of one JSON array. The SQLite ledger
    /// commits its queue first and also returns rows other processes committed.
    #[napi]
    pub fn list_text(&self, env: &Env, kind: u32) -> Result<String> {
        let kind = kind_of(env, kind)?;
        let rows = match &self.inner {
            Inner::Memory(m) => m.list(kind),
            Inner::Sqlite(s) => match s.list(kind) {
                Ok(rows) => rows,
                Err(e) => return ledger_error(env, e),
            },
        };
        Ok(format!("[{}]", rows.join(",")))
    }

    /// Commits every row appended so far (a no-op in memory).
    #[napi]
    pub fn flush(&self, env: &Env) -> Result<()> {
        match &self.inner {
            Inner::Memory(_) => Ok(()),
            Inner::Sqlite(s) => s.flush().or_else(|e| ledger_error(env, e)),
        }
    }

    /// Commits every queued row and closes the ledger (SQLite: its file); later appends throw.
    /// Idempotent.
    #[napi]
    pub fn close(&mut self, env: &Env) -> Result<()> {
        if let Some(hook) = self.cleanup.take() {
            let _ = env.remove_env_cleanup_hook(hook);
        }
        match &self.inner {
            Inner::Memory(m) => {
                m.close();
                Ok(())
            }
            Inner::Sqlite(s) => s.close().or_else(|e| ledger_error(env, e)),
        }
    }
}

/// Rows kept in memory, in order.
#[napi(js_name = "createMemoryRunLedgerStore")]
pub fn create_memory_run_ledger_store() -> RunLedgerStore {
    RunLedgerStore {
        inner: Inner::Memory(MemoryLedger::default()),
        cleanup: None,
    }
}

/// Rows in a SQLite file; the numbers were checked by `lib/ledger.js`.
#[napi(js_name = "createSqliteRunLedgerStore")]
pub fn create_sqlite_run_ledger_store(
    env: Env,
    path: String,
    batch_size: u32,
    flush_interval_ms: u32,
    max_pending_rows: u32,
    busy_timeout_ms: u32,
    synchronous_full: bool,
) -> Result<RunLedgerStore> {
    let opts = SqliteLedgerOptions {
        batch_size: batch_size as usize,
        flush_interval_ms: u64::from(flush_interval_ms),
        max_pending_rows: max_pending_rows as usize,
        sqlite: SqliteOptions {
            busy_timeout_ms,
            synchronous_full,
        },
    };
    // A private in-memory database keeps no row past the process: not a ledger.
    if let Err(e) = check_store_path("createSqliteRunLedger", &path, "createMemoryRunLedger()") {
        return e.throw(&env);
    }
    let ledger = match SqliteLedger::open(&path, opts) {
        Ok(l) => Arc::new(l),
        Err(e) => return ledger_error(&env, e),
    };
    // Commit queued rows when the JS environment shuts down without close() (worker end, natural exit).
    let hook = env.add_env_cleanup_hook(Arc::downgrade(&ledger), |weak| {
        if let Some(l) = weak.upgrade() {
            let _ = l.close();
        }
    })?;
    Ok(RunLedgerStore {
        inner: Inner::Sqlite(ledger),
        cleanup: Some(hook),
    })
}
