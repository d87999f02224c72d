//! napi exports for provider argument text (the private surface of `lib/arguments-text.js`).

use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use prism_tools_core::arguments::{
    arguments_text_problem, DEFAULT_MAX_ARGUMENTS_BYTES, MAX_ARGUMENTS_BYTES_CAP,
};

/// The `maxBytes` option: the default when `undefined`, else a positive safe integer up to the
/// cap, or a `RangeError` naming the option and the cap.
#[napi(js_name = "argumentsMaxBytes")]
pub fn arguments_max_bytes(env: Env, value: Option<f64>) -> Result<u32> {
    match value {
        None => Ok(DEFAULT_MAX_ARGUMENTS_BYTES as u32),
        Some(v) if v.fract() == 0.0 && v >= 1.0 && v <= MAX_ARGUMENTS_BYTES_CAP as f64 => {
            Ok(v as u32)
        }
        Some(_) => {
            let message = format!("maxBytes must be a positive safe integer no greater than {MAX_ARGUMENTS_BYTES_CAP}");
            env.throw_range_error(&message, None)?;
            Err(Error::from_status(Status::PendingException))
        }
    }
}

/// Why a tool's argument text gives no arguments object (the message of its
/// `invalid_json_arguments` error), or `undefined` when it is a JSON object within `maxBytes`.
#[napi(js_name = "argumentsTextProblem")]
pub fn arguments_text_problem_js(name: String, text: String, max_bytes: u32) -> Option<String> {
    arguments_text_problem(&name, &text, max_bytes as usize)
}
