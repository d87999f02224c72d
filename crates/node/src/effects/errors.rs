//! Errors: `ToolEffectError` and `IdentityError` instances of the classes in lib/effects.js.

use super::js::{check, Js};
use crate::instance::instance;
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::effects::error::{
    EffectError, IdentityFailure, StoreError, IDENTITY_ERROR_CODE, STORE_FAILURE_CODE,
};
use std::ptr;

/// Called by `lib/effects.js` with its two Error subclasses, so errors raised in Rust are instances
/// of them. They are held in this environment's instance data (`crate::instance`), so each worker
/// has its own and they are released with the environment. Called again in the same environment
/// (the module loaded afresh), the new classes replace the old, whose references are deleted.
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
    if let Some(old) = instance(&env)?.effect_errors.replace([a, b]) {
        for r in old {
            // SAFETY: `r` was made by an earlier call in this same env (instance data is per env), is
            // held only in the slot it was just taken out of, so nothing uses it after this delete.
            unsafe { sys::napi_delete_reference(env.raw(), r) };
        }
    }
    Ok(())
}

fn class(js: Js, which: usize) -> Result<Option<sys::napi_value>> {
    let env = Env::from_raw(js.0);
    let Some(classes) = instance(&env)?.effect_errors else {
        return Ok(None);
    };
    let mut out = ptr::null_mut();
    // SAFETY: the reference was made by `register_tool_effect_errors` in this env (the instance data
    // is the env's own) and is deleted only when replaced or when the env is torn down; `out` is a local.
    check(unsafe { sys::napi_get_reference_value(js.0, classes[which], &mut out) })?;
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
