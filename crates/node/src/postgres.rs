//! napi exports of the PostgreSQL tool effect store and run ledger. Every operation runs on the libuv thread pool
//! (`AsyncTask`), never on the JS thread: the effect store's operations are `effects::pool`'s (JSON text in
//! and out, rejections with the store's code), shared with the SQLite store.

use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, JsObjectValue, JsValue};
use napi::{Env, Error, Result, Status, Task};
use napi_derive::napi;

use crate::effects::pool::{reject, PoolStore, PoolToolEffectStoreHandle};
use prism_tools_core::effects::error::StoreError;
use prism_tools_core::effects::postgres::{PostgresOptions, PostgresStorage};
use prism_tools_core::effects::store::EffectStore;

type Store = EffectStore<PostgresStorage>;

/// Options of `createPostgresToolEffectStore` as the facade hands them over.
#[napi(object)]
pub struct PostgresStoreOptions {
    pub connection_string: String,
    pub schema: Option<String>,
    pub max_connections: Option<u32>,
    pub connect_timeout_ms: Option<u32>,
    pub statement_timeout_ms: Option<u32>,
    /// The largest result kept (default 64 KiB, at most 16 MiB); a larger one completes its record
    /// with `resultOmitted: { bytes, sha256 }` instead of the value.
    pub max_result_bytes: Option<u32>,
}

/// Opens the pool and runs the migrations off the JS thread.
pub struct OpenTask {
    options: PostgresOptions,
    max_result_bytes: usize,
}

impl Task for OpenTask {
    type Output = std::result::Result<Arc<Store>, StoreError>;
    type JsValue = PoolToolEffectStoreHandle;

    fn compute(&mut self) -> Result<Self::Output> {
        let max = self.max_result_bytes;
        Ok(PostgresStorage::open(&self.options)
            .map(|s| Arc::new(EffectStore::with_max_result_bytes(s, max))))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        match output {
            Ok(store) => Ok(PoolToolEffectStoreHandle {
                store: PoolStore::Postgres(store),
            }),
            Err(e) => Err(reject(&env, &e)),
        }
    }
}

/// `openPostgresToolEffectStore(options)` → a promise of the native handle the facade wraps.
#[napi(js_name = "openPostgresToolEffectStore")]
pub fn open_postgres_tool_effect_store(options: PostgresStoreOptions) -> AsyncTask<OpenTask> {
    AsyncTask::new(OpenTask {
        max_result_bytes: options
            .max_result_bytes
            .map_or(prism_tools_core::effects::store::MAX_RESULT_BYTES, |n| {
                n as usize
            }),
        options: PostgresOptions::from_host(
            options.connection_string,
            options.schema,
            options.max_connections,
            options.connect_timeout_ms,
            options.statement_timeout_ms,
        ),
    })
}

// ---------------------------------------------------------------------------------------------------
// Run ledger.

use prism_tools_core::ledger::postgres::{LedgerStatus, PostgresLedger, PostgresLedgerOptions};
use crate::ledger::kind_of;
use prism_tools_core::ledger::{LedgerError, RecordKind};
use std::time::Duration;

/// Options of `createPostgresRunLedger` as the facade hands them over.
#[napi(object)]
pub struct PostgresLedgerJsOptions {
    pub connection_string: String,
    pub schema: Option<String>,
    pub connect_timeout_ms: Option<u32>,
    pub statement_timeout_ms: Option<u32>,
    pub batch_size: Option<u32>,
    pub flush_interval_ms: Option<u32>,
    pub max_pending_rows: Option<u32>,
}

#[napi(object)]
pub struct RunLedgerStatus {
    pub accepted: f64,
    pub flushed: f64,
    pub buffered: f64,
}

impl From<LedgerStatus> for RunLedgerStatus {
    fn from(s: LedgerStatus) -> Self {
        Self {
            accepted: s.accepted as f64,
            flushed: s.flushed as f64,
            buffered: s.buffered as f64,
        }
    }
}

fn ledger_reject(env: &Env, e: &LedgerError) -> Error {
    let build = || -> Result<Error> {
        let mut obj = env.create_error(Error::new(Status::GenericFailure, e.to_string()))?;
        obj.set_named_property("code", prism_tools_core::error::Code::Ledger.as_str())?;
        Ok(Error::from(obj.to_unknown()))
    };
    build().unwrap_or_else(|err| err)
}

pub struct OpenLedgerTask {
    options: Option<PostgresLedgerOptions>,
}

impl Task for OpenLedgerTask {
    type Output = std::result::Result<Arc<PostgresLedger>, LedgerError>;
    type JsValue = PostgresRunLedgerHandle;

    fn compute(&mut self) -> Result<Self::Output> {
        let options = self
            .options
            .take()
            .ok_or_else(|| Error::new(Status::GenericFailure, "opened twice"))?;
        Ok(PostgresLedger::open(options).map(Arc::new))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        match output {
            Ok(ledger) => Ok(PostgresRunLedgerHandle { ledger }),
            Err(e) => Err(ledger_reject(&env, &e)),
        }
    }
}

/// `openPostgresRunLedger(options)` → a promise of the native handle the facade wraps.
#[napi(js_name = "openPostgresRunLedger")]
pub fn open_postgres_run_ledger(options: PostgresLedgerJsOptions) -> AsyncTask<OpenLedgerTask> {
    let pg = PostgresOptions::from_host(
        options.connection_string,
        options.schema,
        None,
        options.connect_timeout_ms,
        options.statement_timeout_ms,
    );
    let mut o = PostgresLedgerOptions::new(pg);
    if let Some(n) = options.batch_size {
        o.batch_size = (n as usize).clamp(1, 10_000);
    }
    if let Some(ms) = options.flush_interval_ms {
        o.flush_interval_ms = ms as u64;
    }
    if let Some(n) = options.max_pending_rows {
        o.max_pending_rows = (n as usize).max(1);
    }
    AsyncTask::new(OpenLedgerTask { options: Some(o) })
}

/// Waits for the writer off the JS thread.
pub struct LedgerWaitTask {
    ledger: Arc<PostgresLedger>,
    close: bool,
    timeout: Duration,
}

impl Task for LedgerWaitTask {
    type Output = std::result::Result<LedgerStatus, LedgerError>;
    type JsValue = RunLedgerStatus;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(if self.close {
            self.ledger
                .close(self.timeout)
                .map(|_| self.ledger.status())
        } else {
            self.ledger.flush(self.timeout)
        })
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        output.map(Into::into).map_err(|e| ledger_reject(&env, &e))
    }
}

pub struct LedgerListTask {
    ledger: Arc<PostgresLedger>,
    kind: RecordKind,
    limit: i64,
}

impl Task for LedgerListTask {
    type Output = std::result::Result<Vec<String>, LedgerError>;
    type JsValue = Vec<String>;

    fn compute(&mut self) -> Result<Self::Output> {
        Ok(self.ledger.list(self.kind, self.limit))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        output.map_err(|e| ledger_reject(&env, &e))
    }
}

#[napi]
pub struct PostgresRunLedgerHandle {
    ledger: Arc<PostgresLedger>,
}

#[napi]
impl PostgresRunLedgerHandle {
    /// Queues one row's JSON text; throws `ERR_PRISM_LEDGER` when closed or when too many rows wait.
    #[napi]
    pub fn append(&self, env: Env, kind: u32, json: String) -> Result<()> {
        self.ledger
            .append(kind_of(&env, kind)?, json)
            .map_err(|e| ledger_reject(&env, &e))
    }

    #[napi]
    pub fn status(&self) -> RunLedgerStatus {
        self.ledger.status().into()
    }

    #[napi]
    pub fn flush(&self, timeout_ms: u32) -> AsyncTask<LedgerWaitTask> {
        AsyncTask::new(LedgerWaitTask {
            ledger: self.ledger.clone(),
            close: false,
            timeout: Duration::from_millis(timeout_ms as u64),
        })
    }

    #[napi]
    pub fn close(&self, timeout_ms: u32) -> AsyncTask<LedgerWaitTask> {
        AsyncTask::new(LedgerWaitTask {
            ledger: self.ledger.clone(),
            close: true,
            timeout: Duration::from_millis(timeout_ms as u64),
        })
    }

    /// Closes on the JS thread, waiting at most `timeout_ms`: for the process's `exit` event, where
    /// nothing asynchronous runs any more.
    #[napi]
    pub fn close_blocking(&self, env: Env, timeout_ms: u32) -> Result<()> {
        self.ledger
            .close(Duration::from_millis(timeout_ms as u64))
            .map_err(|e| ledger_reject(&env, &e))
    }

    #[napi]
    pub fn list(&self, env: Env, kind: u32, limit: f64) -> Result<AsyncTask<LedgerListTask>> {
        let limit = if limit.is_finite() && limit >= 0.0 {
            limit.min(1e12) as i64
        } else {
            i64::MAX
        };
        Ok(AsyncTask::new(LedgerListTask {
            ledger: self.ledger.clone(),
            kind: kind_of(&env, kind)?,
            limit,
        }))
    }
}
