//! `toolSearchLimits()` (exported as `TOOL_SEARCH_LIMITS`) and `SEARCH_TOOLS_NAME`.

use std::cell::RefCell;
use std::ffi::CStr;

use napi::bindgen_prelude::*;
use napi::{Env, JsValue};
use napi_derive::napi;

use prism_tools_core::search::{
    DEFAULT_QUERY_BYTES, DEFAULT_TOP_K, DESCRIPTION_CHARS, HARD_MAX_INDEXED_TOOLS,
    MAX_ACTIVATED_NAMES, MAX_INDEXED_TOOLS, MAX_QUERY_BYTES, MAX_TOP_K, SEARCH_TOOLS_DEFAULT_K,
};

use super::raw::Raw;

thread_local! {
    /// The frozen limits object of this thread's env, created once so every entry point (CommonJS,
    /// ES modules, a second loader instance) exports the very same object. Keyed by the env and
    /// cleared by the env's cleanup hook, so a reference never outlives its env.
    static LIMITS: RefCell<Option<(usize, ObjectRef<false>)>> = const { RefCell::new(None) };
}

/// The limits of tool search as one frozen object (`TOOL_SEARCH_LIMITS`), the same object on
/// every call.
#[napi(ts_return_type = "Readonly<Record<string, number>>")]
pub fn tool_search_limits(env: &Env) -> Result<Object<'_>> {
    let raw = Raw(env.raw());
    let key = env.raw() as usize;
    let cached = LIMITS.with(|c| match &*c.borrow() {
        Some((k, r)) if *k == key => r.get_value(env).map(Some),
        _ => Ok(None),
    })?;
    if let Some(o) = cached {
        return Ok(o);
    }
    let mut o = raw.object(raw.create_object()?);
    let fields: [(&CStr, usize); 9] = [
        (c"defaultTopK", DEFAULT_TOP_K),
        (c"maxTopK", MAX_TOP_K),
        (c"searchToolsDefaultK", SEARCH_TOOLS_DEFAULT_K),
        (c"maxIndexedTools", MAX_INDEXED_TOOLS),
        (c"hardMaxIndexedTools", HARD_MAX_INDEXED_TOOLS),
        (c"defaultQueryBytes", DEFAULT_QUERY_BYTES),
        (c"maxQueryBytes", MAX_QUERY_BYTES),
        (c"maxActivatedNames", MAX_ACTIVATED_NAMES),
        (c"descriptionChars", DESCRIPTION_CHARS),
    ];
    for (name, value) in fields {
        raw.set(o.raw(), name, raw.create_f64(value as f64)?)?;
    }
    o.freeze()?;
    let reference = o.create_ref::<false>()?;
    env.add_env_cleanup_hook(key, |key| {
        // The env is going away: forget its reference (dropping it only drops the handle).
        let _ = LIMITS.try_with(|c| {
            let mut c = c.borrow_mut();
            if c.as_ref().is_some_and(|(k, _)| *k == key) {
                *c = None;
            }
        });
    })?;
    LIMITS.with(|c| *c.borrow_mut() = Some((key, reference)));
    Ok(o)
}

/// The name of the generated tool: `"search_tools"`.
#[napi]
pub const SEARCH_TOOLS_NAME: &str = prism_tools_core::search::SEARCH_TOOLS_NAME;
