//! napi exports for the middleware registry. The chain runs in `lib/middleware.js`; Rust decides what an
//! `extension_error` carries: the `ErrorInfo` fields kept and the redaction of known secrets.

// napi registers these exports; a `cargo test` build sees no caller.
#![cfg_attr(test, allow(dead_code))]

use napi::bindgen_prelude::Either;
use napi_derive::napi;

use prism_tools_core::middleware::{error_info, Code, Secrets, Thrown};

/// `ErrorInfo` `{ name?, message, code? }` as handed to JS.
#[napi(object)]
pub struct MiddlewareErrorInfo {
    pub name: Option<String>,
    pub message: String,
    pub code: Option<Either<String, f64>>,
}

/// Builds the redacted `ErrorInfo` of a thrown value from the fields the JS side read from it.
/// Internal to the package (used by `lib/middleware.js` and `lib/extensions.js`), not re-exported.
#[napi(js_name = "redactErrorInfo")]
pub fn redact_error_info(
    name: Option<String>,
    message: String,
    code: Option<Either<String, f64>>,
    secrets: Option<Vec<String>>,
) -> MiddlewareErrorInfo {
    let secrets = Secrets::new(secrets.unwrap_or_default());
    let info = error_info(
        Thrown {
            name,
            message,
            code: code.map(|c| match c {
                Either::A(s) => Code::Text(s),
                Either::B(n) => Code::Number(n),
            }),
        },
        &secrets,
    );
    MiddlewareErrorInfo {
        name: info.name,
        message: info.message,
        code: info.code.map(|c| match c {
            Code::Text(s) => Either::A(s),
            Code::Number(n) => Either::B(n),
        }),
    }
}

#[cfg(feature = "bench")]
mod bench_fixture {
    use napi::bindgen_prelude::{Array, FnArgs, Function, JsObjectValue, JsValue, Object, Unknown};
    use napi_derive::napi;

    /// Measurement fixture for `bench/middleware.bench.mjs`, built only with the `bench` feature
    /// (`npm run bench:middleware`), not part of the public API: the smallest
    /// Rust-driven chain over synchronous middlewares. Per step it asks a JS factory for a step record
    /// (`{ next, n, c }`, because `next` must be a fresh JS closure), calls the middleware, checks for a
    /// promise and reads what `next` committed — the crossings any Rust driver of this chain would pay.
    #[napi(js_name = "__benchRustDrivenChain")]
    pub fn bench_rust_driven_chain<'env>(
        fns: Array<'env>,
        value: Unknown<'env>,
        make_step: Function<'env, (), Object<'env>>,
    ) -> napi::Result<Unknown<'env>> {
        let mut current = value;
        for i in 0..fns.len() {
            let f: Function<'env, FnArgs<(Unknown<'env>, Unknown<'env>)>, Unknown<'env>> =
                fns.get_element(i)?;
            let step = make_step.call(())?;
            let next: Unknown = step.get_named_property("next")?;
            let result = f.call(FnArgs::from((current, next)))?;
            if result.is_promise()? {
                return Err(napi::Error::from_reason(
                    "the measurement fixture takes synchronous middlewares only",
                ));
            }
            let calls: u32 = step.get_named_property("n")?;
            current = if calls > 0 {
                step.get_named_property("c")?
            } else if result.get_type()? == napi::ValueType::Undefined {
                current
            } else {
                result
            };
        }
        Ok(current)
    }
}
