//! napi exports of the built-in checkpoint stores (`crates/core/src/run/checkpoint*.rs`, the JS objects in
//! `lib/checkpoints.js`): inputs cross as JSON text, answers come back as `{"ok":…}` or
//! `{"error":{"kind","message"}}` text, which the facade turns into the record or the documented
//! error class. The memory and SQLite stores answer synchronously (no I/O, or a local file);
//! PostgreSQL on libuv's thread pool.

// napi registers these exports; a `cargo test` build sees no caller.
#![cfg_attr(test, allow(dead_code))]

use std::sync::Arc;

use napi::bindgen_prelude::AsyncTask;
use napi::Env;
use napi_derive::napi;
use serde_json::json;

use super::approval::parse;
use crate::blocking::{blocking, Blocking};
use crate::throw::Throw;
use prism_tools_core::run::checkpoint::{CheckpointError, CheckpointStorage, Checkpoints};
use prism_tools_core::run::checkpoint_memory::MemoryCheckpoints;
use prism_tools_core::run::checkpoint_postgres::PostgresCheckpoints;
use prism_tools_core::run::checkpoint_sqlite::SqliteCheckpoints;
use prism_tools_core::storage::postgres::PostgresOptions;
use prism_tools_core::storage::sqlite::{check_store_path, SqliteOptions};

fn answer(r: Result<String, CheckpointError>) -> String {
    let (kind, m) = match r {
        Ok(text) => return format!("{{\"ok\":{text}}}"),
        Err(CheckpointError::Conflict(m)) => ("conflict", m),
        Err(CheckpointError::Range(m)) => ("range", m),
        Err(CheckpointError::Storage(m)) => ("storage", m),
    };
    json!({ "error": { "kind": kind, "message": m } }).to_string()
}

/// One store call as the facade makes it (`lib/checkpoints.js`): the method (`save`, `load`,
/// `list` or `delete`), its input as JSON text, the ISO time of a save, and a save's value and
/// metadata as JSON text of their own (kept and answered as given).
#[napi(object)]
pub struct CheckpointCall {
    pub method: String,
    pub input: String,
    pub now: String,
    pub value: Option<String>,
    pub metadata: Option<String>,
}

/// One store method over JSON text.
fn call<S: CheckpointStorage>(store: &Checkpoints<S>, c: CheckpointCall) -> String {
    let input = parse(&c.input);
    answer(match c.method.as_str() {
        "save" => match c.value {
            Some(value) => store.save(&input, value, c.metadata, &c.now),
            None => Err(CheckpointError::Conflict(
                "Checkpoint value must be JSON serializable".into(),
            )),
        },
        "load" => store
            .load(&input)
            .map(|r| r.unwrap_or_else(|| "null".into())),
        "list" => store.list(&input),
        "delete" => store.delete(&input).map(|d| d.to_string()),
        method => Err(CheckpointError::Storage(format!(
            "checkpoint store: unknown method {method:?}"
        ))),
    })
}

/// A store answered on the calling thread: in memory, or in a SQLite file.
enum Local {
    Memory(MemoryCheckpoints),
    Sqlite(SqliteCheckpoints),
}

/// The memory or SQLite checkpoint store.
#[napi]
pub struct LocalCheckpointStoreHandle {
    inner: Local,
}

#[napi]
impl LocalCheckpointStoreHandle {
    /// Answers `c` as `{"ok":…}` or `{"error":…}` text.
    #[napi]
    pub fn call(&self, c: CheckpointCall) -> String {
        match &self.inner {
            Local::Memory(s) => call(s, c),
            Local::Sqlite(s) => call(s, c),
        }
    }
    #[napi]
    pub fn close(&self) {
        match &self.inner {
            Local::Memory(s) => s.close(),
            Local::Sqlite(s) => s.close(),
        }
    }
}

/// An empty in-process checkpoint store.
#[napi(js_name = "openMemoryCheckpointStore")]
pub fn open_memory_checkpoint_store(
    max_records: u32,
    max_value_bytes: u32,
    max_page_size: u32,
) -> LocalCheckpointStoreHandle {
    let store = MemoryCheckpoints::open(
        max_records as usize,
        max_value_bytes as usize,
        max_page_size as usize,
    );
    LocalCheckpointStoreHandle {
        inner: Local::Memory(store),
    }
}

/// Opens (creating when absent) the checkpoint table in a SQLite file.
#[napi(js_name = "openSqliteCheckpointStore")]
pub fn open_sqlite_checkpoint_store(
    env: Env,
    path: String,
    busy_timeout_ms: u32,
    synchronous_full: bool,
    max_value_bytes: u32,
    max_page_size: u32,
) -> napi::Result<LocalCheckpointStoreHandle> {
    // A private in-memory database would lose a durable approval pause with the process.
    if let Err(e) = check_store_path(
        "createSqliteCheckpointStore",
        &path,
        "createMemoryCheckpointStore()",
    ) {
        return e.throw(&env);
    }
    let options = SqliteOptions {
        busy_timeout_ms,
        synchronous_full,
    };
    SqliteCheckpoints::open(
        &path,
        &options,
        max_value_bytes as usize,
        max_page_size as usize,
    )
    .map(|store| LocalCheckpointStoreHandle {
        inner: Local::Sqlite(store),
    })
    .map_err(|e| napi::Error::from_reason(e.message()))
}

/// Options of `createPostgresCheckpointStore` as the facade hands them over.
#[napi(object)]
pub struct PostgresCheckpointOptions {
    pub connection_string: String,
    pub schema: String,
    pub max_connections: Option<u32>,
    pub connect_timeout_ms: Option<u32>,
    pub statement_timeout_ms: Option<u32>,
    pub max_value_bytes: u32,
    pub max_page_size: u32,
}

fn reject(_env: &Env, e: &CheckpointError) -> napi::Error {
    napi::Error::from_reason(e.message())
}

/// `openPostgresCheckpointStore(options)` → a promise of the handle `lib/checkpoints.js` wraps.
#[napi(
    js_name = "openPostgresCheckpointStore",
    ts_return_type = "Promise<PostgresCheckpointStoreHandle>"
)]
pub fn open_postgres_checkpoint_store(
    options: PostgresCheckpointOptions,
) -> AsyncTask<Blocking<Arc<PostgresCheckpoints>, CheckpointError, PostgresCheckpointStoreHandle>> {
    let o = PostgresOptions::from_host(
        options.connection_string,
        Some(options.schema),
        options.max_connections,
        options.connect_timeout_ms,
        options.statement_timeout_ms,
    );
    let (max_value_bytes, max_page_size) = (
        options.max_value_bytes as usize,
        options.max_page_size as usize,
    );
    blocking(
        move || PostgresCheckpoints::open(&o, max_value_bytes, max_page_size).map(Arc::new),
        |inner| PostgresCheckpointStoreHandle { inner },
        reject,
    )
}

/// The PostgreSQL checkpoint store.
#[napi]
pub struct PostgresCheckpointStoreHandle {
    inner: Arc<PostgresCheckpoints>,
}

#[napi]
impl PostgresCheckpointStoreHandle {
    /// As the local handle's `call`, answered by a promise.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn call(&self, c: CheckpointCall) -> AsyncTask<Blocking<String, CheckpointError, String>> {
        let store = Arc::clone(&self.inner);
        // The answer carries any failure as `{"error":…}` text: the task itself never fails.
        blocking(move || Ok(call(&store, c)), |answer| answer, reject)
    }
    /// Closes the idle connections; later calls fail.
    #[napi]
    pub fn close(&self) {
        self.inner.close()
    }
}
