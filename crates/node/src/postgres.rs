//! napi exports of the PostgreSQL tool effect store and run ledger. Every operation runs on the libuv thread pool
//! (`AsyncTask`), never on the JS thread: inputs cross as JSON text written by `lib/postgres.js`, records
//! come back as JSON text, and failures reject with real `Error`s carrying the store's code (the facade
//! gives them their `ToolEffectError` / `IdentityError` class).

use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, JsObjectValue, JsValue};
use napi::{Env, Error, Result, Status, Task};
use napi_derive::napi;
use serde_json::{Map, Value};

use prism_tools_core::effects::error::{StoreError, IDENTITY_ERROR_CODE, STORE_FAILURE_CODE};
use prism_tools_core::effects::postgres::PostgresStorage;
use prism_tools_core::effects::store::{EffectStore, Resolution};
use prism_tools_core::effects::time::now_ms;
use prism_tools_core::effects::{wire, EffectError};
use prism_tools_core::storage::postgres::PostgresOptions;

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

/// A rejection: a real `Error` whose `code` (and `reason`, for identity refusals) the facade reads.
fn reject(env: &Env, e: &StoreError) -> Error {
    let (code, reason, message) = match e {
        StoreError::Effect(err) => (err.code.as_str(), None, err.message.to_string()),
        StoreError::Identity(f) => (IDENTITY_ERROR_CODE, Some(f.reason), f.message.to_string()),
        StoreError::Storage(m) => (STORE_FAILURE_CODE, None, m.clone()),
    };
    let build = || -> Result<Error> {
        let mut obj = env.create_error(Error::new(Status::GenericFailure, message.clone()))?;
        obj.set_named_property("code", code)?;
        if let Some(r) = reason {
            obj.set_named_property("reason", r)?;
        }
        Ok(Error::from(obj.to_unknown()))
    };
    build().unwrap_or_else(|err| err)
}

/// Opens the pool and runs the migrations off the JS thread.
pub struct OpenTask {
    options: PostgresOptions,
    max_result_bytes: usize,
}

impl Task for OpenTask {
    type Output = std::result::Result<Arc<Store>, StoreError>;
    type JsValue = PostgresToolEffectStoreHandle;

    fn compute(&mut self) -> Result<Self::Output> {
        let max = self.max_result_bytes;
        Ok(PostgresStorage::open(&self.options)
            .map(|s| Arc::new(EffectStore::with_max_result_bytes(s, max))))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        match output {
            Ok(store) => Ok(PostgresToolEffectStoreHandle { store }),
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

#[napi]
pub struct PostgresToolEffectStoreHandle {
    store: Arc<Store>,
}

/// One store operation, run on the thread pool.
pub struct OperationTask {
    store: Arc<Store>,
    method: String,
    input: String,
    now: Option<i64>,
}

fn run(
    store: &Store,
    method: &str,
    input: &str,
    now: i64,
) -> std::result::Result<String, StoreError> {
    let value: Value = serde_json::from_str(input).map_err(|_| {
        StoreError::Effect(EffectError::limit("tool effect store input must be JSON"))
    })?;
    let empty = Map::new();
    let obj = value.as_object().unwrap_or(&empty);
    let key = wire::key(obj);
    let parse = wire::date_parser(obj);
    match method {
        "get" => Ok(store
            .get(&key, now, &parse)?
            .map_or_else(|| "null".to_owned(), |r| r.to_json())),
        "begin" => {
            let (outcome, record) = store.begin(
                &key,
                wire::number(obj, "claimTtlMs"),
                wire::number(obj, "maxAttempts"),
                now,
                &parse,
            )?;
            Ok(format!(
                "{{\"outcome\":\"{}\",\"record\":{}}}",
                outcome.as_str(),
                record.to_json()
            ))
        }
        "resolveUnknown" => {
            let r: Resolution = wire::resolution(obj);
            Ok(store.resolve_unknown(&key, r, now, &parse)?.to_json())
        }
        "cleanup" => {
            let ownership = wire::ownership(obj.get("ownership"));
            let before = match obj.get("before") {
                Some(Value::String(s)) => {
                    prism_tools_core::effects::identity::Field::Text(s.clone())
                }
                Some(_) => prism_tools_core::effects::identity::Field::Invalid,
                None => prism_tools_core::effects::identity::Field::Absent,
            };
            let deleted = store.cleanup(&ownership, &before, wire::number(obj, "limit"), &parse)?;
            Ok(format!("{{\"deleted\":{deleted}}}"))
        }
        other => match wire::transition(other, obj) {
            Some(to) => Ok(store
                .transition(&key, &wire::claim(obj), to, now, &parse)?
                .to_json()),
            None => Err(StoreError::Effect(EffectError::limit(
                "unknown tool effect store method",
            ))),
        },
    }
}

impl Task for OperationTask {
    type Output = std::result::Result<String, StoreError>;
    type JsValue = String;

    fn compute(&mut self) -> Result<Self::Output> {
        let now = self.now.unwrap_or_else(now_ms);
        Ok(run(&self.store, &self.method, &self.input, now))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<Self::JsValue> {
        output.map_err(|e| reject(&env, &e))
    }
}

#[napi]
impl PostgresToolEffectStoreHandle {
    /// Runs `method` with its input as JSON text; resolves with the answer as JSON text. `now` (epoch ms)
    /// replaces the clock, for tests of lease expiry.
    #[napi]
    pub fn call(
        &self,
        method: String,
        input: String,
        now: Option<f64>,
    ) -> AsyncTask<OperationTask> {
        AsyncTask::new(OperationTask {
            store: self.store.clone(),
            method,
            input,
            now: now.filter(|n| n.is_finite()).map(|n| n as i64),
        })
    }

    /// Closes the pool's idle connections; operations still running finish on theirs.
    #[napi]
    pub fn close(&self) {
        prism_tools_core::effects::store::RecordStorage::close(&self.store.storage);
    }
}

// ---------------------------------------------------------------------------------------------------
// Run ledger.

use prism_tools_core::ledger::postgres::{LedgerStatus, PostgresLedger, PostgresLedgerOptions};
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

fn record_kind(kind: &str) -> Result<RecordKind> {
    RecordKind::parse(kind).ok_or_else(|| {
        Error::new(
            Status::InvalidArg,
            format!("unknown ledger record kind {kind:?}"),
        )
    })
}

#[napi]
impl PostgresRunLedgerHandle {
    /// Queues one row's JSON text; throws `ERR_PRISM_LEDGER` when closed or when too many rows wait.
    #[napi]
    pub fn append(&self, env: Env, kind: String, json: String) -> Result<()> {
        self.ledger
            .append(record_kind(&kind)?, json)
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
    pub fn list(&self, kind: String, limit: f64) -> Result<AsyncTask<LedgerListTask>> {
        let limit = if limit.is_finite() && limit >= 0.0 {
            limit.min(1e12) as i64
        } else {
            i64::MAX
        };
        Ok(AsyncTask::new(LedgerListTask {
            ledger: self.ledger.clone(),
            kind: record_kind(&kind)?,
            limit,
        }))
    }
}
