//! napi exports of the PostgreSQL tool effect store and run ledger. Every operation runs on the libuv thread pool
//! (`AsyncTask`), never on the JS thread: the effect store's operations are `effects::pool`'s (JSON text in
//! and out, rejections with the store's code), shared with the SQLite store.

use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, JsObjectValue, JsValue};
use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use crate::blocking::{blocking, Blocking};
use crate::effects::pool::{reject, PoolStore, PoolToolEffectStoreHandle};
use prism_tools_core::effects::error::StoreError;
use prism_tools_core::effects::postgres::PostgresStorage;
use prism_tools_core::effects::store::EffectStore;
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
    /// The lease of a claim whose `begin` names none (default 15 min, at most 60 min; the facade
    /// checks the range).
    pub claim_ttl_ms: Option<u32>,
}

/// A promise of a store's handle.
type StoreTask<O, J> = AsyncTask<Blocking<O, StoreError, J>>;

/// `openPostgresToolEffectStore(options)` → a promise of the native handle the facade wraps (the
/// pool is opened and the migrations run off the JS thread).
#[napi(js_name = "openPostgresToolEffectStore")]
pub fn open_postgres_tool_effect_store(
    options: PostgresStoreOptions,
) -> StoreTask<Arc<Store>, PoolToolEffectStoreHandle> {
    let max = options
        .max_result_bytes
        .map_or(prism_tools_core::effects::store::MAX_RESULT_BYTES, |n| {
            n as usize
        });
    let ttl = options.claim_ttl_ms.map_or(
        prism_tools_core::effects::store::DEFAULT_CLAIM_TTL_MS,
        i64::from,
    );
    let options = PostgresOptions::from_host(
        options.connection_string,
        options.schema,
        options.max_connections,
        options.connect_timeout_ms,
        options.statement_timeout_ms,
    );
    blocking(
        move || {
            PostgresStorage::open(&options).map(|s| {
                Arc::new(EffectStore::with_max_result_bytes(s, max).with_claim_ttl_ms(ttl))
            })
        },
        |store| PoolToolEffectStoreHandle {
            store: PoolStore::Postgres(store),
        },
        reject,
    )
}

// ---------------------------------------------------------------------------------------------------
// Run ledger.

use crate::ledger::kind_of;
use prism_tools_core::ledger::postgres::{LedgerStatus, PostgresLedger, PostgresLedgerOptions};
use prism_tools_core::ledger::LedgerError;
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

/// A promise of a ledger's handle or of a ledger operation's answer.
type LedgerTask<O, J> = AsyncTask<Blocking<O, LedgerError, J>>;

/// `openPostgresRunLedger(options)` → a promise of the native handle the facade wraps.
#[napi(js_name = "openPostgresRunLedger")]
pub fn open_postgres_run_ledger(
    options: PostgresLedgerJsOptions,
) -> LedgerTask<Arc<PostgresLedger>, PostgresRunLedgerHandle> {
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
    blocking(
        move || PostgresLedger::open(o).map(Arc::new),
        |ledger| PostgresRunLedgerHandle { ledger },
        ledger_reject,
    )
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
    pub fn flush(&self, timeout_ms: u32) -> LedgerTask<LedgerStatus, RunLedgerStatus> {
        let ledger = self.ledger.clone();
        let timeout = Duration::from_millis(timeout_ms as u64);
        blocking(move || ledger.flush(timeout), Into::into, ledger_reject)
    }

    #[napi]
    pub fn close(&self, timeout_ms: u32) -> LedgerTask<LedgerStatus, RunLedgerStatus> {
        let ledger = self.ledger.clone();
        let timeout = Duration::from_millis(timeout_ms as u64);
        blocking(
            move || ledger.close(timeout).map(|_| ledger.status()),
            Into::into,
            ledger_reject,
        )
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
    pub fn list(
        &self,
        env: Env,
        kind: u32,
        limit: f64,
    ) -> Result<LedgerTask<Vec<String>, Vec<String>>> {
        let limit = if limit.is_finite() && limit >= 0.0 {
            limit.min(1e12) as i64
        } else {
            i64::MAX
        };
        let ledger = self.ledger.clone();
        let kind = kind_of(&env, kind)?;
        Ok(blocking(
            move || ledger.list(kind, limit),
            |rows| rows,
            ledger_reject,
        ))
    }
}
