//! Store operations on libuv's thread pool, for the stores whose writes wait on a disk or a network
//! (SQLite, PostgreSQL): the JS thread hands over one operation's input as JSON text (written by
//! `lib/effect-store-wire.js`), the transaction runs on a pool thread, and the answer comes back as
//! JSON text or a rejection with the store's code. A SQLite commit with `synchronous: "full"` waits
//! for an fsync; on the JS thread a hundred concurrent calls held the event loop for a second.

use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, JsObjectValue, JsValue};
use napi::{Env, Error, Result, Status};

use crate::blocking::{blocking, Blocking};
use napi_derive::napi;
use serde_json::{Map, Value};

use prism_tools_core::effects::error::{StoreError, IDENTITY_ERROR_CODE, STORE_FAILURE_CODE};
use prism_tools_core::effects::identity::Field;
use prism_tools_core::effects::postgres::PostgresStorage;
use prism_tools_core::effects::sqlite::SqliteStorage;
use prism_tools_core::effects::store::{EffectStore, RecordStorage, Resolution};
use prism_tools_core::effects::time::now_ms;
use prism_tools_core::effects::{wire, EffectError};

/// A rejection: a real `Error` whose `code` (and `reason`, for identity refusals) the facade reads
/// to give it its `ToolEffectError` / `IdentityError` class.
pub(crate) fn reject(env: &Env, e: &StoreError) -> Error {
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

/// One store method on its wire input, answered as JSON text.
fn run<S: RecordStorage>(
    store: &EffectStore<S>,
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
                Some(Value::String(s)) => Field::Text(s.clone()),
                Some(_) => Field::Invalid,
                None => Field::Absent,
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

/// A store whose operations run on the thread pool.
#[derive(Clone)]
pub(crate) enum PoolStore {
    Sqlite(Arc<EffectStore<SqliteStorage>>),
    Postgres(Arc<EffectStore<PostgresStorage>>),
}

/// The native handle of the SQLite and PostgreSQL `ToolEffectStore`s, wrapped by
/// `lib/effect-store-wire.js`.
#[napi]
pub struct PoolToolEffectStoreHandle {
    pub(crate) store: PoolStore,
}

#[napi]
impl PoolToolEffectStoreHandle {
    /// Runs `method` with its input as JSON text on the thread pool; resolves with the answer as
    /// JSON text. `now` (epoch ms) is the facade's clock (`options.now`), else the system's.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn call(
        &self,
        method: String,
        input: String,
        now: Option<f64>,
    ) -> AsyncTask<Blocking<String, StoreError, String>> {
        let store = self.store.clone();
        let now = now.filter(|n| n.is_finite()).map(|n| n as i64);
        blocking(
            move || {
                let now = now.unwrap_or_else(now_ms);
                match &store {
                    PoolStore::Sqlite(s) => run(s, &method, &input, now),
                    PoolStore::Postgres(s) => run(s, &method, &input, now),
                }
            },
            |answer| answer,
            reject,
        )
    }

    /// Closes the file or the pool's idle connections; operations already running finish first,
    /// later ones reject with `ERR_PRISM_TOOL_EFFECT_STORE`.
    #[napi]
    pub fn close(&self) {
        match &self.store {
            PoolStore::Sqlite(s) => s.storage.close(),
            PoolStore::Postgres(s) => s.storage.close(),
        }
    }
}
