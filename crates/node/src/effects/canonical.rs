//! Canonical JSON of a JS value (refusing non-JSON values; see `effects::canonical`), and the
//! arguments hash made from it.

use super::errors::effect_result;
use super::js::Js;
use crate::host::read_host;
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::effects::canonical::{self, Refusal};

/// Canonical JSON of a JS value, read once by the host reader (`crate::host`); a non-JSON value
/// throws `ToolEffectError` `ERR_PRISM_TOOL_EFFECT_LIMIT`, a read that threw rethrows.
pub(crate) fn canonical_of(env: &Env, v: sys::napi_value) -> Result<String> {
    let js = Js(env.raw());
    match canonical::host_canonical(&read_host(env, v, canonical::HOST_POLICY)?) {
        Ok(text) => Ok(text),
        Err(Refusal::Threw(thrown)) => Err(js.throw(thrown)),
        Err(Refusal::NotJson) => effect_result(js, Err(canonical::not_json())),
    }
}

/// `canonicalToolEffectJson(value)`: sorted keys, no whitespace, JSON values only.
#[napi(js_name = "canonicalToolEffectJson")]
pub fn canonical_tool_effect_json(env: Env, value: Unknown) -> Result<String> {
    canonical_of(&env, value.raw())
}

/// `toolEffectArgumentsHash(args)`: SHA-256 hex of the canonical JSON.
#[napi(js_name = "toolEffectArgumentsHash")]
pub fn tool_effect_arguments_hash(env: Env, args: Unknown) -> Result<String> {
    Ok(canonical::sha256_hex(&canonical_of(&env, args.raw())?))
}
