//! The JS boundary: napi exports and conversions between JS values and Rust.
//! Pure logic lives in the concern modules; only this tree knows napi details.

pub mod approval;
pub mod arguments;
pub mod dispatch;
pub mod effects;
pub mod ledger;
pub mod middleware;
pub mod policy;
pub mod postgres;
pub mod raw;
pub mod realm;
pub mod redact;
pub mod run;
pub mod search;
pub mod validate;

use raw::{Js, R, V};
use realm::Realm;

use crate::raw_fn;

/// Adds every raw export to the module's exports object.
pub fn register(js: &Js, exports: V) -> R<()> {
    Realm::install(js)?;
    let table: [(&str, napi::sys::napi_callback); 5] = [
        ("redactSecrets", Some(redact::redact_secrets)),
        ("errorToErrorInfo", Some(redact::error_to_error_info_export)),
        ("createSecretRedactor", Some(redact::create_secret_redactor)),
        (
            "redactRunLedgerRecord",
            Some(redact::redact_run_ledger_record),
        ),
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
