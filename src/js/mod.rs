//! The JS boundary: napi exports and conversions between JS values and Rust.
//! Pure logic lives in the concern modules; only this tree knows napi details.

pub mod arguments;
pub mod dispatch;
pub mod effects;
pub mod extensions;
pub mod guardrails;
pub mod hooks;
pub mod ledger;
pub mod middleware;
pub mod policy;
pub mod progress;
pub mod raw;
pub mod realm;
pub mod redact;
pub mod registry;
pub mod run;
pub mod search;
pub mod validate;

use raw::{cb_args, type_error, Js, Ty, R, V};
use realm::{Glue, Realm};

use crate::raw_fn;

// `bindGlue({ toolContext, guardrailError, guardrailSignal, noop })`: the package entry hands over
// the small JS helpers once, at load.
raw_fn!(bind_glue, |js, info| {
    let (_, _, [glue], _) = cb_args::<1>(js, info)?;
    let get = |key: &'static std::ffi::CStr| -> R<napi::sys::napi_ref> {
        let f = js.get(glue, key)?;
        if js.ty(f)? != Ty::Function {
            return Err(type_error(
                format!(
                    "bindGlue: {} must be a function",
                    key.to_str().unwrap_or("?")
                ),
                "ERR_PRISM_INTERNAL",
            ));
        }
        js.create_ref(f)
    };
    let g = Glue {
        tool_context: get(c"toolContext")?,
        guardrail_error: get(c"guardrailError")?,
        guardrail_signal: get(c"guardrailSignal")?,
        noop: get(c"noop")?,
        row: get(c"row")?,
        started_event: get(c"startedEvent")?,
        finished_event: get(c"finishedEvent")?,
        error_event: get(c"errorEvent")?,
        blocked_event: get(c"blockedEvent")?,
        error_result: get(c"errorResult")?,
        json_for_scan: get(c"jsonForScan")?,
    };
    let realm = Realm::get(js)?;
    if let Some(old) = realm.glue.replace(g) {
        for r in old.refs() {
            js.delete_ref(r);
        }
    }
    Ok(js.undefined())
});

/// Adds every raw export to the module's exports object.
pub fn register(js: &Js, exports: V) -> R<()> {
    Realm::install(js)?;
    let table: [(&str, napi::sys::napi_callback); 13] = [
        ("bindGlue", Some(bind_glue)),
        ("createToolRegistry", Some(registry::create_tool_registry)),
        ("filterTools", Some(registry::filter_tools)),
        ("redactSecrets", Some(redact::redact_secrets)),
        ("errorToErrorInfo", Some(redact::error_to_error_info_export)),
        ("createSecretRedactor", Some(redact::create_secret_redactor)),
        (
            "redactRunLedgerRecord",
            Some(redact::redact_run_ledger_record),
        ),
        ("dispatchStart", Some(dispatch::dispatch_start)),
        ("dispatchResume", Some(dispatch::dispatch_resume)),
        ("dispatcherCreate", Some(dispatch::create_dispatcher)),
        ("dispatcherStart", Some(dispatch::dispatcher_start)),
        ("progressSink", Some(progress::progress_sink)),
        ("nativeVersion", Some(native_version)),
    ];
    for (name, cb) in table {
        let f = js.function(name, cb, std::ptr::null_mut())?;
        js.set_str_key(exports, name, f)?;
    }
    Ok(())
}

raw_fn!(native_version, |js, _info| {
    js.string(env!("CARGO_PKG_VERSION"))
});
