//! Errors: `ToolEffectError` and `IdentityError` instances of the classes in lib/effects.js.

use super::js::{check, Js};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::effects::error::{
    EffectError, IdentityFailure, StoreError, IDENTITY_ERROR_CODE, STORE_FAILURE_CODE,
};
use std::ptr;

/// The two classes of one JS environment, as `napi_ref`s (kept as integers: they are only ever
/// used with the environment they were made in, on its thread).
struct Classes {
    env: usize,
    tool_effect_error: usize,
    identity_error: usize,
}

/// The classes of every live environment (the main thread's and each worker's). Node-API offers
/// one instance-data slot per addon and environment, which the redaction realm holds, so the
/// classes live here keyed by environment: an environment's entry is removed by a cleanup hook
/// when it is torn down (Node deletes its references then), and registering again deletes the
/// references it replaces.
static CLASSES: std::sync::Mutex<Vec<Classes>> = std::sync::Mutex::new(Vec::new());

fn classes() -> std::sync::MutexGuard<'static, Vec<Classes>> {
    CLASSES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Called by `lib/effects.js` with its two Error subclasses, so errors raised in Rust are instances
/// of them. Called again in the same environment (the module loaded afresh), the new classes
/// replace the old, whose references are deleted.
#[napi(js_name = "__registerToolEffectErrors")]
pub fn register_tool_effect_errors(
    env: Env,
    tool_effect_error: Unknown,
    identity_error: Unknown,
) -> Result<()> {
    let mut a = ptr::null_mut();
    let mut b = ptr::null_mut();
    // SAFETY: `env` is this callback's env and `tool_effect_error` its argument; `a` is a local out-pointer.
    check(unsafe { sys::napi_create_reference(env.raw(), tool_effect_error.raw(), 1, &mut a) })?;
    // SAFETY: as above, for `identity_error`.
    check(unsafe { sys::napi_create_reference(env.raw(), identity_error.raw(), 1, &mut b) })?;
    let key = env.raw() as usize;
    let mut list = classes();
    if let Some(c) = list.iter_mut().find(|c| c.env == key) {
        for old in [c.tool_effect_error, c.identity_error] {
            // SAFETY: `old` was made by an earlier call in this same env (`c.env == env`), is held
            // only here and is replaced below, so nothing uses it after this delete.
            unsafe { sys::napi_delete_reference(env.raw(), old as sys::napi_ref) };
        }
        c.tool_effect_error = a as usize;
        c.identity_error = b as usize;
        return Ok(());
    }
    list.push(Classes {
        env: key,
        tool_effect_error: a as usize,
        identity_error: b as usize,
    });
    drop(list);
    env.add_env_cleanup_hook(key, |key| classes().retain(|c| c.env != key))?;
    Ok(())
}

fn class(js: Js, which: usize) -> Result<Option<sys::napi_value>> {
    let key = js.0 as usize;
    let r = match classes().iter().find(|c| c.env == key) {
        Some(c) if which == 0 => c.tool_effect_error,
        Some(c) => c.identity_error,
        None => return Ok(None),
    } as sys::napi_ref;
    let mut out = ptr::null_mut();
    // SAFETY: `r` was made by `register_tool_effect_errors` in the env `js.0` (the entry's key), which
    // is live (its entry is removed when it is torn down); `out` is a local.
    check(unsafe { sys::napi_get_reference_value(js.0, r, &mut out) })?;
    Ok((!out.is_null()).then_some(out))
}

/// A `ToolEffectError` instance (`new ToolEffectError(code, message)`).
pub(crate) fn tool_effect_error(js: Js, e: &EffectError) -> Result<sys::napi_value> {
    let code = js.create_string(e.code.as_str())?;
    let message = js.create_string(&e.message)?;
    if let Some(ctor) = class(js, 0)? {
        let mut out = ptr::null_mut();
        let args = [code, message];
        // SAFETY: a live env and constructor handle (see `Js`); `args` holds the 2 handles passed.
        check(unsafe { sys::napi_new_instance(js.0, ctor, 2, args.as_ptr(), &mut out) })?;
        return Ok(out);
    }
    let err = js.new_error(e.code.as_str(), &e.message)?;
    js.set(err, c"name", js.create_string("ToolEffectError")?)?;
    Ok(err)
}

fn identity_error(js: Js, f: &IdentityFailure) -> Result<sys::napi_value> {
    let message = js.create_string(&f.message)?;
    let reason = js.create_string(f.reason)?;
    if let Some(ctor) = class(js, 1)? {
        let mut out = ptr::null_mut();
        let args = [message, reason];
        // SAFETY: a live env and constructor handle (see `Js`); `args` holds the 2 handles passed.
        check(unsafe { sys::napi_new_instance(js.0, ctor, 2, args.as_ptr(), &mut out) })?;
        return Ok(out);
    }
    let err = js.new_error(IDENTITY_ERROR_CODE, &f.message)?;
    js.set(err, c"name", js.create_string("IdentityError")?)?;
    js.set(err, c"reason", reason)?;
    Ok(err)
}

/// Throws the JS error for a store failure and returns the `Err` that rethrows it.
pub(crate) fn throw_store_error(js: Js, e: &StoreError) -> Error {
    let made = match e {
        StoreError::Effect(e) => tool_effect_error(js, e),
        StoreError::Identity(f) => identity_error(js, f),
        StoreError::Storage(m) => js.new_error(STORE_FAILURE_CODE, m),
    };
    match made {
        Ok(v) => js.throw(v),
        Err(err) => err,
    }
}

pub(crate) fn effect_result<T>(js: Js, r: std::result::Result<T, EffectError>) -> Result<T> {
    r.map_err(|e| throw_store_error(js, &StoreError::Effect(e)))
}
