//! The built-in `ToolEffectStore`s: the memory store as a JS object answering synchronously, and the
//! SQLite store's handle, whose operations run on the thread pool.

use super::errors::throw_store_error;
use super::js::{host_parse, Js};
use super::pool::{PoolStore, PoolToolEffectStoreHandle};
use super::read::{check_signal, read_claim, read_failure, read_key, read_ownership, read_result};
use crate::throw::Throw;
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::effects::error::StoreError;
use prism_tools_core::effects::identity::Field;
use prism_tools_core::effects::key::{validate_key, KeyInput};
use prism_tools_core::effects::memory::MemoryStorage;
use prism_tools_core::effects::record::EffectRecord;
use prism_tools_core::effects::sqlite::SqliteStorage;
use prism_tools_core::effects::store::{
    BeginOutcome, Claim, EffectStore, Resolution, Transition, DEFAULT_CLAIM_TTL_MS,
    HARD_CLAIM_TTL_MS, HARD_MAX_RESULT_BYTES, MAX_RESULT_BYTES,
};
use prism_tools_core::effects::time::now_ms;
use prism_tools_core::storage::sqlite::{check_store_path, SqliteOptions};
use std::ops::Deref;
use std::ptr;
use std::rc::Rc;
use std::sync::Arc;

/// The transition of dispatch's lean `markDispatched` (`complete: false`) or `complete`: the result
/// as its JSON text, `unserializable` when it had none.
pub(crate) fn lean_transition(
    complete: bool,
    result: Option<String>,
    unserializable: bool,
    result_ref: Field,
) -> Transition {
    if !complete {
        return Transition::Dispatched;
    }
    Transition::Complete {
        result: if unserializable {
            Some(Err(()))
        } else {
            result.map(Ok)
        },
        result_ref,
    }
}

/// The memory `ToolEffectStore`. Every method answers synchronously with a plain value (no Promise, no
/// event-loop turn) and throws synchronously; `await store.method(...)` works as for any store.
/// Errors: `ToolEffectError` (contract refusals), `IdentityError` (the key's identity is inactive or
/// does not own the key), `Error` with code `ERR_PRISM_TOOL_EFFECT_STORE` (storage failure).
///
/// The class is the store's face for its own methods; its state is shared with the handle
/// [`memory_store_handle`] makes, through which dispatch's claim and transitions reach it as free
/// functions (a class method pays an unwrap and a type-tag check at every call).
#[napi]
pub struct NativeToolEffectStore {
    state: Rc<MemoryEffectStore>,
}

/// What a memory store is: its records and its clock.
pub struct MemoryEffectStore {
    pub(crate) backend: EffectStore<MemoryStorage>,
    now: Option<FunctionRef<(), f64>>,
}

impl Deref for NativeToolEffectStore {
    type Target = MemoryEffectStore;
    fn deref(&self) -> &MemoryEffectStore {
        &self.state
    }
}

/// `memoryStoreHandle(store)`: the handle dispatch passes to `claimDispatch` and `advanceClaim`
/// (`lib/effects.js` makes it once, with the store's face).
#[napi(js_name = "memoryStoreHandle")]
pub fn memory_store_handle(store: &NativeToolEffectStore) -> External<Rc<MemoryEffectStore>> {
    External::new(Rc::clone(&store.state))
}

fn read_now_option(options: Option<&Unknown>) -> Result<Option<FunctionRef<(), f64>>> {
    let Some(o) = options else { return Ok(None) };
    if o.get_type()? != ValueType::Object {
        return Ok(None);
    }
    let obj = Object::from_unknown(*o)?;
    match obj.get::<Unknown>("now")? {
        Some(f) if f.get_type()? == ValueType::Function => {
            let f = Function::<(), f64>::from_unknown(f)?;
            Ok(Some(f.create_ref()?))
        }
        Some(f) if f.get_type()? != ValueType::Undefined => Err(Error::new(
            Status::InvalidArg,
            "options.now must be a function returning epoch milliseconds",
        )),
        _ => Ok(None),
    }
}

/// `maxResultBytes`: the largest result a store keeps (default 64 KiB, at most 16 MiB). A larger
/// one completes its record with `resultOmitted: { bytes, sha256 }` instead of the value.
pub(crate) fn read_max_result_bytes(js: Js, options: sys::napi_value) -> Result<usize> {
    match js.number(options, c"maxResultBytes")? {
        None => Ok(MAX_RESULT_BYTES),
        Some(n) if n.fract() == 0.0 && n >= 1.0 && n <= HARD_MAX_RESULT_BYTES as f64 => {
            Ok(n as usize)
        }
        Some(_) => Err(Error::new(
            Status::InvalidArg,
            format!("maxResultBytes must be an integer from 1 to {HARD_MAX_RESULT_BYTES}"),
        )),
    }
}

/// `claimTtlMs`: the lease of a claim whose `begin` names none (default 15 min, at most 60 min).
pub(crate) fn read_claim_ttl_ms(js: Js, options: sys::napi_value) -> Result<i64> {
    match js.number(options, c"claimTtlMs")? {
        None => Ok(DEFAULT_CLAIM_TTL_MS),
        Some(n) if n.fract() == 0.0 && n >= 1.0 && n <= HARD_CLAIM_TTL_MS as f64 => Ok(n as i64),
        Some(_) => Err(Error::new(
            Status::InvalidArg,
            format!("claimTtlMs must be an integer from 1 to {HARD_CLAIM_TTL_MS}"),
        )),
    }
}

impl MemoryEffectStore {
    /// Whether the store reads a host clock (`options.now`), which runs JS.
    pub(crate) fn has_clock(&self) -> bool {
        self.now.is_some()
    }

    /// The store's clock: the system's, or `options.now`. Called before any store state is borrowed,
    /// so a clock that re-enters the store finds it as any other caller would.
    pub(crate) fn now(&self, env: &Env) -> Result<i64> {
        match &self.now {
            None => Ok(now_ms()),
            Some(f) => {
                let t = f.borrow_back(env)?.call(())?;
                if t.is_finite() {
                    Ok(t as i64)
                } else {
                    Err(Error::new(
                        Status::InvalidArg,
                        "options.now must return finite epoch milliseconds",
                    ))
                }
            }
        }
    }

    fn record<'a>(env: &'a Env, js: Js, r: &str) -> Result<Unknown<'a>> {
        js.unknown(env, js.json_parse(r)?)
    }

    /// Reads `begin`'s input (signal, key, options) and runs it; `out` makes the answer from the
    /// record as stored.
    fn run_begin<R>(
        &self,
        env: &Env,
        js: Js,
        v: sys::napi_value,
        out: impl FnOnce(BeginOutcome, &EffectRecord) -> R,
    ) -> Result<R> {
        check_signal(js, v)?;
        let key = read_key(js, v)?;
        let ttl = js.number(v, c"claimTtlMs")?;
        let attempts = js.number(v, c"maxAttempts")?;
        let now = self.now(env)?;
        let parse = host_parse(js);
        let run = || -> std::result::Result<R, StoreError> {
            let k = validate_key(&key, now, &parse)?;
            self.backend.begin_valid(&k, ttl, attempts, now, out)
        };
        run().map_err(|e| throw_store_error(js, &e))
    }

    /// Runs a claimed transition; `out` makes the answer from the record as stored.
    fn run_transition<R>(
        &self,
        env: &Env,
        js: Js,
        key: &KeyInput,
        claim: &Claim,
        to: Transition,
        out: impl FnOnce(&EffectRecord) -> R,
    ) -> Result<R> {
        let now = self.now(env)?;
        let parse = host_parse(js);
        let run = || -> std::result::Result<R, StoreError> {
            let k = validate_key(key, now, &parse)?;
            self.backend.transition_valid(&k, claim, to, now, out)
        };
        run().map_err(|e| throw_store_error(js, &e))
    }

    fn transition<'a>(
        &self,
        env: &'a Env,
        input: Unknown<'a>,
        to: impl FnOnce(Js, sys::napi_value) -> Result<Transition>,
    ) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let v = input.raw();
        check_signal(js, v)?;
        let key = read_key(js, v)?;
        let claim = read_claim(js, v)?;
        let to = to(js, v)?;
        let text = self.run_transition(env, js, &key, &claim, to, EffectRecord::to_json)?;
        MemoryEffectStore::record(env, js, &text)
    }
}

#[napi]
impl NativeToolEffectStore {
    /// `get(key)`: the record (lease expiry applied) or `undefined`.
    #[napi]
    pub fn get<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        check_signal(js, input.raw())?;
        let key = read_key(js, input.raw())?;
        let now = self.now(env)?;
        let parse = host_parse(js);
        match self.backend.get(&key, now, &parse) {
            Ok(Some(r)) => MemoryEffectStore::record(env, js, &r.to_json()),
            Ok(None) => js.unknown(env, js.undefined()?),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    /// `begin(key & { claimTtlMs?, maxAttempts? })` → `{ outcome: "acquired" | "existing", record }`.
    #[napi]
    pub fn begin<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let text = self.run_begin(env, js, input.raw(), |outcome, record| {
            format!(
                "{{\"outcome\":\"{}\",\"record\":{}}}",
                outcome.as_str(),
                record.to_json_with(outcome == BeginOutcome::Acquired)
            )
        })?;
        MemoryEffectStore::record(env, js, &text)
    }

    /// `markDispatched` (`complete: false`) or `complete` for dispatch, answered with the new version
    /// alone: dispatch needs nothing else, and making the record a JS object was most of the call.
    /// `result` is the result's JSON text (`JSON.stringify` in `lib/dispatch-effects.js`, the same text the
    /// object method reads), `unserializable` when the result had none.
    #[napi]
    pub fn advance(
        &self,
        env: &Env,
        input: Unknown,
        complete: bool,
        result: Option<String>,
        unserializable: bool,
    ) -> Result<f64> {
        let js = Js(env.raw());
        let v = input.raw();
        check_signal(js, v)?;
        let key = read_key(js, v)?;
        let claim = read_claim(js, v)?;
        let result_ref = if complete {
            js.field(v, c"resultRef")?
        } else {
            Field::Absent
        };
        let to = lean_transition(complete, result, unserializable, result_ref);
        self.run_transition(env, js, &key, &claim, to, |r| r.version as f64)
    }

    /// `markDispatched(key & { claimToken, expectedVersion })`: pending → dispatched.
    #[napi]
    pub fn mark_dispatched<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        self.transition(env, input, |_, _| Ok(Transition::Dispatched))
    }

    /// `complete(transition & { result?, resultRef? })`: dispatched → completed. A result larger than
    /// the store keeps completes the record with `resultOmitted: { bytes, sha256 }` in its place.
    #[napi]
    pub fn complete<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        self.transition(env, input, |js, v| {
            Ok(Transition::Complete {
                result: read_result(js, v)?,
                result_ref: js.field(v, c"resultRef")?,
            })
        })
    }

    /// `fail(transition & { status: "failed_retryable" | "failed_terminal", failure })`.
    #[napi]
    pub fn fail<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        self.transition(env, input, |js, v| {
            Ok(Transition::Fail {
                status: js.field(v, c"status")?,
                failure: read_failure(js, v)?,
            })
        })
    }

    /// `markUnknown(transition & { failure? })`: dispatched → unknown.
    #[napi]
    pub fn mark_unknown<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        self.transition(env, input, |js, v| {
            Ok(Transition::Unknown {
                failure: read_failure(js, v)?,
            })
        })
    }

    /// `resolveUnknown(key & { expectedVersion, status, result?, resultRef?, failure? })`.
    #[napi]
    pub fn resolve_unknown<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let v = input.raw();
        check_signal(js, v)?;
        let key = read_key(js, v)?;
        let resolution = Resolution {
            expected_version: js.number(v, c"expectedVersion")?,
            status: js.field(v, c"status")?,
            result: read_result(js, v)?,
            result_ref: js.field(v, c"resultRef")?,
            failure: read_failure(js, v)?,
        };
        let now = self.now(env)?;
        let parse = host_parse(js);
        match self.backend.resolve_unknown(&key, resolution, now, &parse) {
            Ok(r) => MemoryEffectStore::record(env, js, &r.to_json()),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    /// `cleanup({ ownership, before, limit?, signal? })` → `{ deleted }`.
    #[napi]
    pub fn cleanup<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let v = input.raw();
        check_signal(js, v)?;
        let ownership = read_ownership(js, js.prop(v, c"ownership")?)?;
        let before = js.field(v, c"before")?;
        let limit = js.number(v, c"limit")?;
        let parse = host_parse(js);
        match self.backend.cleanup(&ownership, &before, limit, &parse) {
            Ok(n) => js.unknown(env, js.json_parse(&format!("{{\"deleted\":{n}}}"))?),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    /// The largest result this store keeps (`maxResultBytes`); a larger one completes its record
    /// with `resultOmitted` instead of the value.
    #[napi(getter)]
    pub fn max_result_bytes(&self) -> f64 {
        self.backend.max_result_bytes() as f64
    }

    /// A no-op: the memory store holds no file or connection.
    #[napi]
    pub fn close(&self) {}
}

/// `createMemoryToolEffectStore({ now?, maxResultBytes? })`: the in-process reference store.
#[napi(js_name = "createMemoryToolEffectStore")]
pub fn create_memory_tool_effect_store(
    env: Env,
    options: Option<Unknown>,
) -> Result<NativeToolEffectStore> {
    let js = Js(env.raw());
    let raw_options = options.as_ref().map_or(ptr::null_mut(), |o| o.raw());
    let max = read_max_result_bytes(js, raw_options)?;
    let ttl = read_claim_ttl_ms(js, raw_options)?;
    Ok(NativeToolEffectStore {
        state: Rc::new(MemoryEffectStore {
            backend: EffectStore::with_max_result_bytes(MemoryStorage::default(), max)
                .with_claim_ttl_ms(ttl),
            now: read_now_option(options.as_ref())?,
        }),
    })
}

pub(crate) fn read_sqlite_options(
    js: Js,
    v: sys::napi_value,
    default_full: bool,
) -> Result<SqliteOptions> {
    let mut o = SqliteOptions {
        synchronous_full: default_full,
        ..Default::default()
    };
    if let Some(ms) = js.number(v, c"busyTimeoutMs")? {
        if !(ms.fract() == 0.0 && (0.0..=600_000.0).contains(&ms)) {
            return Err(Error::new(
                Status::InvalidArg,
                "busyTimeoutMs must be an integer from 0 to 600000",
            ));
        }
        o.busy_timeout_ms = ms as u32;
    }
    match js.field(v, c"synchronous")? {
        Field::Absent => {}
        Field::Text(s) if s == "full" => o.synchronous_full = true,
        Field::Text(s) if s == "normal" => o.synchronous_full = false,
        _ => {
            return Err(Error::new(
                Status::InvalidArg,
                "synchronous must be \"full\" or \"normal\"",
            ))
        }
    }
    Ok(o)
}

/// `createSqliteToolEffectStore(path, { busyTimeoutMs? = 5000, synchronous? = "full",
/// maxResultBytes? = 65536 })`: opens (creating when absent) the file on the calling thread, once;
/// `options.now` is the facade's.
#[napi(js_name = "createSqliteToolEffectStore")]
pub fn create_sqlite_tool_effect_store(
    env: Env,
    path: String,
    options: Option<Unknown>,
) -> Result<PoolToolEffectStoreHandle> {
    let js = Js(env.raw());
    let raw_options = options.as_ref().map_or(ptr::null_mut(), |o| o.raw());
    let opts = read_sqlite_options(js, raw_options, true)?;
    let max = read_max_result_bytes(js, raw_options)?;
    // A private in-memory database would let two stores "sharing" it each claim the same effect.
    if let Err(e) = check_store_path(
        "createSqliteToolEffectStore",
        &path,
        "createMemoryToolEffectStore()",
    ) {
        return e.throw(&env);
    }
    let ttl = read_claim_ttl_ms(js, raw_options)?;
    let storage = SqliteStorage::open(&path, &opts).map_err(|e| throw_store_error(js, &e))?;
    Ok(PoolToolEffectStoreHandle {
        store: PoolStore::Sqlite(Arc::new(
            EffectStore::with_max_result_bytes(storage, max).with_claim_ttl_ms(ttl),
        )),
    })
}
