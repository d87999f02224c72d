//! Canonical JSON of a JS value (refusing non-JSON values; see `effects::canonical`), and the
//! arguments hash made from it.

use super::errors::effect_result;
use super::js::{check, Js};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::effects::canonical::{
    self, check_key, compare_keys, write_json_string, write_number, MAX_CANONICAL_DEPTH,
};
use std::ptr;

struct Walker {
    js: Js,
    object_prototype: sys::napi_value,
    /// The last other realm's `Object.prototype` recognised in this walk (a handle of this call's scope).
    foreign_object_prototype: std::cell::Cell<Option<sys::napi_value>>,
}

enum WalkError {
    NotJson,
    Napi(Error),
}

impl From<Error> for WalkError {
    fn from(e: Error) -> Self {
        WalkError::Napi(e)
    }
}

impl Walker {
    fn new(js: Js) -> Result<Self> {
        let (_, object_prototype) = js.global_fn(c"Object", c"prototype")?;
        Ok(Self {
            js,
            object_prototype,
            foreign_object_prototype: std::cell::Cell::new(None),
        })
    }

    /// Whether `proto` is `Object.prototype`: this realm's, or another realm's (a `node:vm` context)
    /// recognised by shape — no prototype of its own, and a `constructor` function named `Object`
    /// whose `prototype` is `proto`.
    fn is_object_prototype(&self, proto: sys::napi_value) -> Result<bool> {
        let js = self.js;
        let mut same = false;
        // SAFETY: both values are live handles of this call's scope and `same` outlives the call.
        check(unsafe { sys::napi_strict_equals(js.0, proto, self.object_prototype, &mut same) })?;
        if same {
            return Ok(true);
        }
        if self.foreign_object_prototype.get() == Some(proto) {
            return Ok(true);
        }
        if js.type_of(proto)? != sys::ValueType::napi_object {
            return Ok(false);
        }
        let mut grand = ptr::null_mut();
        // SAFETY: `proto` is a live object handle (checked above); `grand` is written by the call.
        check(unsafe { sys::napi_get_prototype(js.0, proto, &mut grand) })?;
        if js.type_of(grand)? != sys::ValueType::napi_null {
            return Ok(false);
        }
        let ctor = js.get(proto, c"constructor")?;
        if js.type_of(ctor)? != sys::ValueType::napi_function {
            return Ok(false);
        }
        let back = js.get(ctor, c"prototype")?;
        let mut points_back = false;
        // SAFETY: both values are live handles of this call's scope; `points_back` outlives the call.
        check(unsafe { sys::napi_strict_equals(js.0, back, proto, &mut points_back) })?;
        if !points_back {
            return Ok(false);
        }
        let name = js.get(ctor, c"name")?;
        if js.type_of(name)? != sys::ValueType::napi_string || js.string_value(name)? != "Object" {
            return Ok(false);
        }
        self.foreign_object_prototype.set(Some(proto));
        Ok(true)
    }

    fn walk(
        &self,
        v: sys::napi_value,
        out: &mut String,
        depth: usize,
    ) -> std::result::Result<(), WalkError> {
        let js = self.js;
        if depth > MAX_CANONICAL_DEPTH {
            return Err(WalkError::NotJson);
        }
        match js.type_of(v)? {
            sys::ValueType::napi_null => out.push_str("null"),
            sys::ValueType::napi_boolean => {
                out.push_str(if js.is_true(v)? { "true" } else { "false" })
            }
            sys::ValueType::napi_number => {
                let mut f = 0.0;
                // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                check(unsafe { sys::napi_get_value_double(js.0, v, &mut f) })?;
                write_number(f, out).map_err(|_| WalkError::NotJson)?;
            }
            sys::ValueType::napi_string => write_json_string(&js.string_value(v)?, out),
            sys::ValueType::napi_object => {
                let mut is_array = false;
                // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                check(unsafe { sys::napi_is_array(js.0, v, &mut is_array) })?;
                if is_array {
                    let mut len = 0u32;
                    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                    check(unsafe { sys::napi_get_array_length(js.0, v, &mut len) })?;
                    out.push('[');
                    for i in 0..len {
                        if i > 0 {
                            out.push(',');
                        }
                        let mut has = false;
                        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                        check(unsafe { sys::napi_has_element(js.0, v, i, &mut has) })?;
                        if !has {
                            out.push_str("null"); // a hole, as JSON.stringify writes it
                            continue;
                        }
                        let mut item = ptr::null_mut();
                        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                        check(unsafe { sys::napi_get_element(js.0, v, i, &mut item) })?;
                        self.walk(item, out, depth + 1)?;
                    }
                    out.push(']');
                    return Ok(());
                }
                let mut proto = ptr::null_mut();
                // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                check(unsafe { sys::napi_get_prototype(js.0, v, &mut proto) })?;
                let plain = js.type_of(proto)? == sys::ValueType::napi_null
                    || self.is_object_prototype(proto)?;
                if !plain {
                    return Err(WalkError::NotJson);
                }
                let mut names = ptr::null_mut();
                // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                check(unsafe {
                    sys::napi_get_all_property_names(
                        js.0,
                        v,
                        sys::KeyCollectionMode::own_only,
                        sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                        sys::KeyConversion::numbers_to_strings,
                        &mut names,
                    )
                })?;
                let mut len = 0u32;
                // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                check(unsafe { sys::napi_get_array_length(js.0, names, &mut len) })?;
                let mut keys: Vec<(String, sys::napi_value)> = Vec::with_capacity(len as usize);
                for i in 0..len {
                    let mut k = ptr::null_mut();
                    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                    check(unsafe { sys::napi_get_element(js.0, names, i, &mut k) })?;
                    let name = js.string_value(k)?;
                    check_key(&name).map_err(|_| WalkError::NotJson)?;
                    keys.push((name, k));
                }
                keys.sort_by(|a, b| compare_keys(&a.0, &b.0));
                out.push('{');
                for (i, (name, k)) in keys.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_json_string(name, out);
                    out.push(':');
                    let mut item = ptr::null_mut();
                    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                    check(unsafe { sys::napi_get_property(js.0, v, *k, &mut item) })?;
                    self.walk(item, out, depth + 1)?;
                }
                out.push('}');
            }
            // undefined, function, symbol, bigint, external
            _ => return Err(WalkError::NotJson),
        }
        Ok(())
    }
}

/// Canonical JSON of a JS value; a non-JSON value throws `ToolEffectError` `ERR_PRISM_TOOL_EFFECT_LIMIT`.
pub(crate) fn canonical_of(js: Js, v: sys::napi_value) -> Result<String> {
    let walker = Walker::new(js)?;
    let mut out = String::with_capacity(128);
    match walker.walk(v, &mut out, 1) {
        Ok(()) => Ok(out),
        Err(WalkError::Napi(e)) => Err(e),
        Err(WalkError::NotJson) => effect_result(js, Err(canonical::not_json())),
    }
}

/// `canonicalToolEffectJson(value)`: sorted keys, no whitespace, JSON values only.
#[napi(js_name = "canonicalToolEffectJson")]
pub fn canonical_tool_effect_json(env: Env, value: Unknown) -> Result<String> {
    canonical_of(Js(env.raw()), value.raw())
}

/// `toolEffectArgumentsHash(args)`: SHA-256 hex of the canonical JSON.
#[napi(js_name = "toolEffectArgumentsHash")]
pub fn tool_effect_arguments_hash(env: Env, args: Unknown) -> Result<String> {
    Ok(canonical::sha256_hex(&canonical_of(
        Js(env.raw()),
        args.raw(),
    )?))
}
