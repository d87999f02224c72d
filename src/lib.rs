//! prism-tools-native: the tool harness of `@arnilo/prism` as a Node.js addon.
//! Each concern is its own module of plain Rust; `js` holds every napi export.

mod arguments;
mod dispatch;
pub mod effects;
pub mod error;
mod filter;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz_api;
mod js;
pub mod ledger;
mod middleware;
mod policy;
mod redact;
mod run;
mod search;
mod validate;

/// Registers the raw Node-API exports (the dispatch machine, registry, filters, redaction).
#[napi_derive::napi(module_exports)]
pub fn register_exports(
    exports: napi::bindgen_prelude::Object,
    env: napi::Env,
) -> napi::Result<()> {
    use napi::bindgen_prelude::JsValue;
    let js = js::raw::Js::new(env.raw());
    js::register(&js, exports.raw()).map_err(|fail| {
        js.raise(fail);
        napi::Error::from_status(napi::Status::PendingException)
    })
}
