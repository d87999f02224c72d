//! napi exports for the middleware registry. The chain runs in `lib/middleware.js`; Rust decides what an
//! `extension_error` carries: the `ErrorInfo` fields kept and the redaction of known secrets.

use napi::bindgen_prelude::Either;
use napi_derive::napi;

use crate::middleware::{error_info, Code, Secrets, Thrown};

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
