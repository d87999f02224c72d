//! napi exports of the effects module: canonical JSON, keys, identity checks, declarations, and the
//! built-in `ToolEffectStore`s. Host objects are read through raw N-API calls (one property read each);
//! records cross back as JSON text parsed by V8 (`JSON.parse`), one call per record.

use crate::throw::Throw;
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::effects::canonical::{
    self, check_key, compare_keys, write_json_string, write_number, MAX_CANONICAL_DEPTH,
};
use prism_tools_core::effects::declaration::{invalid_declaration, parse_declaration, Declaration};
use prism_tools_core::effects::error::{
    EffectError, IdentityFailure, StoreError, IDENTITY_ERROR_CODE, STORE_FAILURE_CODE,
};
use prism_tools_core::effects::identity::{
    self, Field, IdentityView, OwnershipView, PrincipalView,
};
use prism_tools_core::effects::record::EffectRecord;
use prism_tools_core::effects::sqlite::{SqliteOptions, SqliteStorage};
use prism_tools_core::effects::store::{
    BeginOutcome, Claim, EffectStore, FailureInput, KeyInput, MemoryStorage, Resolution,
    ResultInput, Transition,
};
use prism_tools_core::effects::time::{now_ms, parse_iso_strict};
use std::cell::Cell;
use std::ffi::CStr;
use std::ptr;

// ---------------------------------------------------------------------------------------------------
// Raw N-API helpers (shared with the ledger exports).

/// A JS environment handle for raw calls. Every helper returns `napi::Result`; a pending JS exception
/// comes back as `Err(PendingException)` and rethrows the original value.
///
/// Invariant the `// SAFETY:` comments below rely on: a `Js` is made only at an entry point from
/// the `Env` of the callback running now, is never stored, and every `napi_value` given to it is a
/// handle of that callback's scope. Node-API checks each handle's type and answers a status, which
/// `check` turns into an error; out-pointers are locals of the helper.
#[derive(Clone, Copy)]
pub(crate) struct Js(pub sys::napi_env);

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else if status == sys::Status::napi_pending_exception {
        Err(Error::new(Status::PendingException, "pending exception"))
    } else {
        Err(Error::new(
            Status::GenericFailure,
            format!("N-API call failed ({status})"),
        ))
    }
}

impl Js {
    pub fn type_of(self, v: sys::napi_value) -> Result<i32> {
        let mut t = 0;
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_typeof(self.0, v, &mut t) })?;
        Ok(t)
    }
    pub fn is_object(self, v: sys::napi_value) -> Result<bool> {
        Ok(!v.is_null() && self.type_of(v)? == sys::ValueType::napi_object)
    }
    pub fn get(self, obj: sys::napi_value, name: &CStr) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_get_named_property(self.0, obj, name.as_ptr(), &mut out) })?;
        Ok(out)
    }
    /// Reads a property of an object; `undefined` when `obj` is not an object.
    pub fn prop(self, obj: sys::napi_value, name: &CStr) -> Result<sys::napi_value> {
        if self.is_object(obj)?
            || (!obj.is_null() && self.type_of(obj)? == sys::ValueType::napi_function)
        {
            self.get(obj, name)
        } else {
            self.undefined()
        }
    }
    pub fn undefined(self) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_get_undefined(self.0, &mut out) })?;
        Ok(out)
    }
    pub fn string_value(self, v: sys::napi_value) -> Result<String> {
        // Identity fields, ids and hashes are short: one call into a stack buffer reads them (asking
        // for the length first cost a second UTF-8 pass per string).
        let mut small = [0u8; 128];
        let mut written = 0usize;
        // SAFETY: a live env and handle (see `Js`); `small` holds the 128 bytes passed.
        check(unsafe {
            sys::napi_get_value_string_utf8(
                self.0,
                v,
                small.as_mut_ptr().cast(),
                small.len(),
                &mut written,
            )
        })?;
        // Node writes whole characters only, into at most 127 bytes: a string it cut short filled more
        // than 123 of them (the character that did not fit takes at most 4). Fewer is the whole string.
        if written <= small.len() - 5 {
            return Ok(utf8(small[..written].to_vec()));
        }
        let mut len = 0usize;
        // SAFETY: a live env and handle (see `Js`); a null buffer asks for the length only.
        check(unsafe { sys::napi_get_value_string_utf8(self.0, v, ptr::null_mut(), 0, &mut len) })?;
        let mut buf = vec![0u8; len + 1];
        // SAFETY: a live env and handle (see `Js`); `buf` holds `len + 1` bytes, the size passed.
        check(unsafe {
            sys::napi_get_value_string_utf8(
                self.0,
                v,
                buf.as_mut_ptr().cast(),
                len + 1,
                &mut written,
            )
        })?;
        buf.truncate(written);
        Ok(utf8(buf))
    }
    pub fn field_of(self, v: sys::napi_value) -> Result<Field> {
        Ok(match self.type_of(v)? {
            sys::ValueType::napi_undefined => Field::Absent,
            sys::ValueType::napi_string => Field::Text(self.string_value(v)?),
            _ => Field::Invalid,
        })
    }
    pub fn field(self, obj: sys::napi_value, name: &CStr) -> Result<Field> {
        let v = self.prop(obj, name)?;
        self.field_of(v)
    }
    /// `undefined` → `None`; a number → its value; anything else → NaN (fails every bound).
    pub fn number(self, obj: sys::napi_value, name: &CStr) -> Result<Option<f64>> {
        let v = self.prop(obj, name)?;
        match self.type_of(v)? {
            sys::ValueType::napi_undefined => Ok(None),
            sys::ValueType::napi_number => {
                let mut f = 0.0;
                // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
                check(unsafe { sys::napi_get_value_double(self.0, v, &mut f) })?;
                Ok(Some(f))
            }
            _ => Ok(Some(f64::NAN)),
        }
    }
    pub fn is_true(self, v: sys::napi_value) -> Result<bool> {
        if self.type_of(v)? != sys::ValueType::napi_boolean {
            return Ok(false);
        }
        let mut b = false;
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_get_value_bool(self.0, v, &mut b) })?;
        Ok(b)
    }
    pub fn create_string(self, s: &str) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live env (see `Js`); the pointer and length are those of `s`, valid UTF-8 for this call.
        check(unsafe {
            sys::napi_create_string_utf8(self.0, s.as_ptr().cast(), s.len() as isize, &mut out)
        })?;
        Ok(out)
    }
    pub fn global_fn(
        self,
        object: &CStr,
        method: &CStr,
    ) -> Result<(sys::napi_value, sys::napi_value)> {
        let mut global = ptr::null_mut();
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_get_global(self.0, &mut global) })?;
        let holder = self.get(global, object)?;
        Ok((holder, self.get(holder, method)?))
    }
    pub fn call(
        self,
        this: sys::napi_value,
        f: sys::napi_value,
        args: &[sys::napi_value],
    ) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live env and handles (see `Js`); `args` outlives the call and its length is passed with it.
        check(unsafe {
            sys::napi_call_function(self.0, this, f, args.len(), args.as_ptr(), &mut out)
        })?;
        Ok(out)
    }
    /// `JSON.parse(text)`.
    pub fn json_parse(self, text: &str) -> Result<sys::napi_value> {
        let (json, parse) = self.global_fn(c"JSON", c"parse")?;
        let s = self.create_string(text)?;
        self.call(json, parse, &[s])
    }
    /// `JSON.stringify(value)`: `Ok(Some(text))`, `Ok(None)` when it yields `undefined`, `Err` (with the
    /// exception cleared) when it throws.
    pub fn json_stringify(
        self,
        v: sys::napi_value,
    ) -> Result<std::result::Result<Option<String>, ()>> {
        let (json, stringify) = self.global_fn(c"JSON", c"stringify")?;
        match self.call(json, stringify, &[v]) {
            Ok(out) => match self.type_of(out)? {
                sys::ValueType::napi_string => Ok(Ok(Some(self.string_value(out)?))),
                _ => Ok(Ok(None)),
            },
            Err(e) if e.status == Status::PendingException => {
                self.clear_exception()?;
                Ok(Err(()))
            }
            Err(e) => Err(e),
        }
    }
    pub fn clear_exception(self) -> Result<()> {
        let mut ex = ptr::null_mut();
        // SAFETY: a live env (see `Js`); the cleared exception handle is dropped unused.
        check(unsafe { sys::napi_get_and_clear_last_exception(self.0, &mut ex) })
    }
    /// `Date.parse(text)` as epoch ms, `None` for NaN.
    pub fn date_parse(self, text: &str) -> Option<i64> {
        let run = || -> Result<Option<i64>> {
            let (date, parse) = self.global_fn(c"Date", c"parse")?;
            let s = self.create_string(text)?;
            let v = self.call(date, parse, &[s])?;
            let mut f = f64::NAN;
            // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
            check(unsafe { sys::napi_get_value_double(self.0, v, &mut f) })?;
            Ok(f.is_finite().then_some(f as i64))
        };
        run().ok().flatten()
    }
    /// Throws `value` and returns the error that rethrows it.
    pub fn throw(self, value: sys::napi_value) -> Error {
        // SAFETY: a live env and handle (see `Js`); the status is not needed: the returned error names the pending throw.
        unsafe { sys::napi_throw(self.0, value) };
        Error::new(Status::PendingException, "thrown")
    }
    pub fn new_error(self, code: &str, message: &str) -> Result<sys::napi_value> {
        let c = self.create_string(code)?;
        let m = self.create_string(message)?;
        let mut out = ptr::null_mut();
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_create_error(self.0, c, m, &mut out) })?;
        Ok(out)
    }
    pub fn set(self, obj: sys::napi_value, name: &CStr, v: sys::napi_value) -> Result<()> {
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_set_named_property(self.0, obj, name.as_ptr(), v) })
    }
    /// `v` as an `Unknown` that lives no longer than the callback's `env` borrow.
    pub fn unknown<'a>(self, _env: &'a Env, v: sys::napi_value) -> Result<Unknown<'a>> {
        // SAFETY: `v` is a handle of the running callback's scope (see `Js`), and the result's
        // lifetime is bounded by that callback's `Env` borrow.
        unsafe { Unknown::from_napi_value(self.0, v) }
    }
}

/// Parses a timestamp as `Date.parse` does: common ISO forms in Rust, the rest through the host.
fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

pub(crate) fn host_parse(js: Js) -> impl Fn(&str) -> Option<i64> {
    move |s: &str| parse_iso_strict(s).or_else(|| js.date_parse(s))
}

// ---------------------------------------------------------------------------------------------------
// Errors: `ToolEffectError` and `IdentityError` instances of the classes in lib/effects.js.

thread_local! {
    static ERROR_CLASSES: Cell<(sys::napi_ref, sys::napi_ref)> = const { Cell::new((ptr::null_mut(), ptr::null_mut())) };
}

/// Called once by `lib/effects.js` with its two Error subclasses, so errors raised in Rust are instances
/// of them. The references live as long as the JS environment.
#[napi(js_name = "__registerToolEffectErrors")]
pub fn register_tool_effect_errors(
    env: Env,
    tool_effect_error: Unknown,
    identity_error: Unknown,
) -> Result<()> {
    let mut a = ptr::null_mut();
    let mut b = ptr::null_mut();
    // SAFETY: `env` is this callback's env and `tool_effect_error` its argument; the reference is kept for the env's life (one per thread, as each worker has its own env and thread).
    check(unsafe { sys::napi_create_reference(env.raw(), tool_effect_error.raw(), 1, &mut a) })?;
    // SAFETY: as above, for `identity_error`.
    check(unsafe { sys::napi_create_reference(env.raw(), identity_error.raw(), 1, &mut b) })?;
    ERROR_CLASSES.with(|c| c.set((a, b)));
    Ok(())
}

fn class(js: Js, which: usize) -> Result<Option<sys::napi_value>> {
    let (a, b) = ERROR_CLASSES.with(Cell::get);
    let r = if which == 0 { a } else { b };
    if r.is_null() {
        return Ok(None);
    }
    let mut out = ptr::null_mut();
    // SAFETY: `r` was created by `register_tool_effect_errors` on this thread's env, which is `js.0`; `out` is a local.
    check(unsafe { sys::napi_get_reference_value(js.0, r, &mut out) })?;
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

fn effect_result<T>(js: Js, r: std::result::Result<T, EffectError>) -> Result<T> {
    r.map_err(|e| throw_store_error(js, &StoreError::Effect(e)))
}

// ---------------------------------------------------------------------------------------------------
// Canonical JSON of a JS value (refusing non-JSON values; see `effects::canonical`).

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

// ---------------------------------------------------------------------------------------------------
// Reading identities, ownership and keys.

fn principal(js: Js, v: sys::napi_value) -> Result<Option<PrincipalView>> {
    if !js.is_object(v)? {
        return Ok(None);
    }
    Ok(Some(PrincipalView {
        kind: js.field(v, c"kind")?,
        id: js.field(v, c"id")?,
        display_name: js.field(v, c"displayName")?,
    }))
}

fn string_list(js: Js, v: sys::napi_value) -> Result<Option<Vec<Field>>> {
    let mut is_array = false;
    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
    check(unsafe { sys::napi_is_array(js.0, v, &mut is_array) })?;
    if !is_array {
        return Ok(None);
    }
    let mut len = 0u32;
    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
    check(unsafe { sys::napi_get_array_length(js.0, v, &mut len) })?;
    let mut out = Vec::with_capacity(len.min(1024) as usize);
    for i in 0..len {
        if i >= 4096 {
            out.push(Field::Invalid); // far past every bound; stop reading
            break;
        }
        let mut item = ptr::null_mut();
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_get_element(js.0, v, i, &mut item) })?;
        out.push(js.field_of(item)?);
    }
    Ok(Some(out))
}

/// Reads an `AgentIdentity` (anything not an object reads as an empty, inactive identity).
pub(crate) fn read_identity(js: Js, v: sys::napi_value) -> Result<IdentityView> {
    if !js.is_object(v)? {
        return Ok(IdentityView::default());
    }
    let mut others = Vec::new();
    for name in [c"sponsor", c"owner", c"delegatedFrom"] {
        let p = js.get(v, name)?;
        if js.type_of(p)? != sys::ValueType::napi_undefined {
            others.push(principal(js, p)?);
        }
    }
    let refs = js.get(v, c"credentialRefs")?;
    let credential_refs = if js.type_of(refs)? == sys::ValueType::napi_undefined {
        None
    } else {
        Some(string_list(js, refs)?)
    };
    let metadata = js.get(v, c"metadata")?;
    let metadata_bytes = if js.type_of(metadata)? == sys::ValueType::napi_undefined {
        None
    } else {
        Some(match js.json_stringify(metadata)? {
            Ok(Some(text)) => Some(text.len()),
            Ok(None) => Some(0),
            Err(()) => None,
        })
    };
    Ok(IdentityView {
        tenant_id: js.field(v, c"tenantId")?,
        account_id: js.field(v, c"accountId")?,
        user_id: js.field(v, c"userId")?,
        principal: principal(js, js.get(v, c"principal")?)?,
        other_principals: others,
        scopes: string_list(js, js.get(v, c"scopes")?)?,
        credential_refs,
        metadata_bytes,
        issued_at: js.field(v, c"issuedAt")?,
        expires_at: js.field(v, c"expiresAt")?,
        revoked_at: js.field(v, c"revokedAt")?,
        verified: js.is_true(js.get(v, c"verified")?)?,
    })
}

pub(crate) fn read_ownership(js: Js, v: sys::napi_value) -> Result<OwnershipView> {
    if !js.is_object(v)? {
        return Ok(OwnershipView::default());
    }
    Ok(OwnershipView {
        tenant_id: js.field(v, c"tenantId")?,
        account_id: js.field(v, c"accountId")?,
        user_id: js.field(v, c"userId")?,
    })
}

fn read_key(js: Js, v: sys::napi_value) -> Result<KeyInput> {
    Ok(KeyInput {
        identity: read_identity(js, js.prop(v, c"identity")?)?,
        ownership: read_ownership(js, js.prop(v, c"ownership")?)?,
        key: js.field(v, c"key")?,
        session_id: js.field(v, c"sessionId")?,
        run_id: js.field(v, c"runId")?,
        tool_call_id: js.field(v, c"toolCallId")?,
        tool_name: js.field(v, c"toolName")?,
        arguments_hash: js.field(v, c"argumentsHash")?,
    })
}

/// Throws `signal.reason` (or an `AbortError`) when `input.signal` is aborted.
fn check_signal(js: Js, input: sys::napi_value) -> Result<()> {
    check_abort(js, js.prop(input, c"signal")?)
}

/// Throws `signal.reason` (or an `AbortError`) when `signal` is an aborted signal.
fn check_abort(js: Js, signal: sys::napi_value) -> Result<()> {
    if !js.is_object(signal)? || !js.is_true(js.get(signal, c"aborted")?)? {
        return Ok(());
    }
    let reason = js.get(signal, c"reason")?;
    if js.type_of(reason)? != sys::ValueType::napi_undefined {
        return Err(js.throw(reason));
    }
    let err = js.new_error("ABORT_ERR", "This operation was aborted")?;
    js.set(err, c"name", js.create_string("AbortError")?)?;
    Err(js.throw(err))
}

fn read_failure(js: Js, v: sys::napi_value) -> Result<Option<FailureInput>> {
    let f = js.prop(v, c"failure")?;
    if js.type_of(f)? == sys::ValueType::napi_undefined {
        return Ok(None);
    }
    Ok(Some(FailureInput {
        code: js.field(f, c"code")?,
        reference: js.field(f, c"reference")?,
    }))
}

fn read_result(js: Js, v: sys::napi_value) -> Result<ResultInput> {
    let r = js.prop(v, c"result")?;
    if js.type_of(r)? == sys::ValueType::napi_undefined {
        return Ok(None);
    }
    Ok(Some(match js.json_stringify(r)? {
        Ok(Some(text)) => Ok(text),
        _ => Err(()),
    }))
}

fn read_claim(js: Js, v: sys::napi_value) -> Result<Claim> {
    Ok(Claim {
        claim_token: js.field(v, c"claimToken")?,
        expected_version: js.number(v, c"expectedVersion")?,
    })
}

// ---------------------------------------------------------------------------------------------------
// Keys, identity checks, declarations.

/// `deriveToolEffectKey({ identity, ownership, sessionId, runId, toolCallId, toolName, argumentsHash })`.
#[napi(js_name = "deriveToolEffectKey")]
pub fn derive_tool_effect_key(env: Env, input: Unknown) -> Result<String> {
    let js = Js(env.raw());
    let v = input.raw();
    let identity = js.prop(v, c"identity")?;
    let principal = js.prop(identity, c"principal")?;
    let ownership = js.prop(v, c"ownership")?;
    let text = |f: Field| f.text().map(str::to_owned);
    let required = [
        text(js.field(ownership, c"tenantId")?),
        text(js.field(principal, c"id")?),
        text(js.field(v, c"sessionId")?),
        text(js.field(v, c"runId")?),
        text(js.field(v, c"toolCallId")?),
        text(js.field(v, c"toolName")?),
        text(js.field(v, c"argumentsHash")?),
    ];
    let optional = |f: Field| -> Result<Option<String>> {
        match f {
            Field::Absent => Ok(None),
            Field::Text(s) => Ok(Some(s)),
            Field::Invalid => effect_result(
                js,
                Err(EffectError::limit("tool effect key input is invalid")),
            ),
        }
    };
    let account = optional(js.field(ownership, c"accountId")?)?;
    let user = optional(js.field(ownership, c"userId")?)?;
    if required.iter().any(Option::is_none) {
        return effect_result(
            js,
            Err(EffectError::limit("tool effect key input is invalid")),
        );
    }
    let [t, p, s, r, c, n, h] = required.map(Option::unwrap_or_default);
    Ok(canonical::derive_key(&canonical::KeyMaterial {
        tenant_id: &t,
        account_id: account.as_deref(),
        user_id: user.as_deref(),
        principal_id: &p,
        session_id: &s,
        run_id: &r,
        tool_call_id: &c,
        tool_name: &n,
        arguments_hash: &h,
    }))
}

fn clock(js: Js, options: sys::napi_value) -> Result<i64> {
    Ok(match js.number(options, c"now")? {
        Some(f) if f.is_finite() => f as i64,
        _ => now_ms(),
    })
}

/// `isAgentIdentityActive(identity, { now? })`: `verified === true`, `issuedAt` parseable and at most a
/// minute ahead, not expired, not revoked, shape within bounds.
#[napi(js_name = "isAgentIdentityActive")]
pub fn is_agent_identity_active(
    env: Env,
    identity: Unknown,
    options: Option<Unknown>,
) -> Result<bool> {
    let js = Js(env.raw());
    let now = clock(js, options.map_or(ptr::null_mut(), |o| o.raw()))?;
    let id = read_identity(js, identity.raw())?;
    Ok(identity::check_active(&id, now, &host_parse(js)).is_ok())
}

/// `identityMatchesOwnership(identity, ownership?, { now? })`: active, and every field the ownership sets
/// equals the identity's.
#[napi(js_name = "identityMatchesOwnership")]
pub fn identity_matches_ownership(
    env: Env,
    identity: Unknown,
    ownership: Option<Unknown>,
    options: Option<Unknown>,
) -> Result<bool> {
    let js = Js(env.raw());
    let now = clock(js, options.map_or(ptr::null_mut(), |o| o.raw()))?;
    let id = read_identity(js, identity.raw())?;
    let own = read_ownership(js, ownership.map_or(ptr::null_mut(), |o| o.raw()))?;
    Ok(identity::check_matches_ownership(&id, &own, now, &host_parse(js)).is_ok())
}

/// `assertIdentityActive(identity, { now?, expectedTenantId? })`: throws `IdentityError` naming the defect.
#[napi(js_name = "assertIdentityActive")]
pub fn assert_identity_active(env: Env, identity: Unknown, options: Option<Unknown>) -> Result<()> {
    let js = Js(env.raw());
    let opts = options.map_or(ptr::null_mut(), |o| o.raw());
    let now = clock(js, opts)?;
    let id = read_identity(js, identity.raw())?;
    let mut outcome = identity::check_active(&id, now, &host_parse(js));
    if outcome.is_ok() {
        if let Field::Text(expected) = js.field(opts, c"expectedTenantId")? {
            if id.tenant_id.text() != Some(expected.as_str()) {
                outcome = Err(IdentityFailure::new(
                    "wrong_tenant",
                    "Identity tenant mismatch",
                ));
            }
        }
    }
    outcome.map_err(|f| throw_store_error(js, &StoreError::Identity(f)))
}

/// Dispatch's identity check: `assertIdentityActive(identity)` then, when `ownership` is given,
/// `assertIdentityMatchesOwnership(identity, ownership)`, with the identity read once. `null`
/// is an ownership (an empty one), as it is for `assertIdentityMatchesOwnership`.
#[napi(js_name = "assertDispatchIdentity")]
pub fn assert_dispatch_identity(env: Env, identity: Unknown, ownership: Unknown) -> Result<()> {
    let js = Js(env.raw());
    let now = now_ms();
    let parse = host_parse(js);
    let id = read_identity(js, identity.raw())?;
    let mut outcome = identity::check_active(&id, now, &parse);
    if outcome.is_ok() && js.type_of(ownership.raw())? != sys::ValueType::napi_undefined {
        let own = read_ownership(js, ownership.raw())?;
        outcome = identity::check_matches_ownership(&id, &own, now, &parse);
    }
    outcome.map_err(|f| throw_store_error(js, &StoreError::Identity(f)))
}

/// `assertIdentityMatchesOwnership(identity, ownership?)`: throws `IdentityError` on a conflict.
#[napi(js_name = "assertIdentityMatchesOwnership")]
pub fn assert_identity_matches_ownership(
    env: Env,
    identity: Unknown,
    ownership: Option<Unknown>,
) -> Result<()> {
    let js = Js(env.raw());
    let id = read_identity(js, identity.raw())?;
    let own = read_ownership(js, ownership.map_or(ptr::null_mut(), |o| o.raw()))?;
    identity::check_matches_ownership(&id, &own, now_ms(), &host_parse(js))
        .map_err(|f| throw_store_error(js, &StoreError::Identity(f)))
}

/// Resolves `tool.effect` for a call (for dispatch): `None` when the tool declares nothing; the declaration
/// object and its parsed form otherwise. A classifier is called with `(args, frozenContext)` where the
/// context holds only `sessionId`, `runId`, `toolCallId`, `signal`, `metadata`; it must return a
/// declaration synchronously (a thenable is refused). A throwing classifier's error propagates as is.
pub(crate) fn resolve_declaration(
    js: Js,
    tool: sys::napi_value,
    args: sys::napi_value,
    ctx: sys::napi_value,
) -> Result<Option<(sys::napi_value, Declaration)>> {
    let effect = js.prop(tool, c"effect")?;
    let declaration = match js.type_of(effect)? {
        sys::ValueType::napi_undefined | sys::ValueType::napi_null => return Ok(None),
        sys::ValueType::napi_function => {
            let mut frozen = ptr::null_mut();
            // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
            check(unsafe { sys::napi_create_object(js.0, &mut frozen) })?;
            for name in [
                c"sessionId",
                c"runId",
                c"toolCallId",
                c"signal",
                c"metadata",
            ] {
                js.set(frozen, name, js.prop(ctx, name)?)?;
            }
            // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
            check(unsafe { sys::napi_object_freeze(js.0, frozen) })?;
            let out = js.call(tool, effect, &[args, frozen])?;
            if js.type_of(out)? == sys::ValueType::napi_undefined {
                return Ok(None);
            }
            out
        }
        _ => effect,
    };
    if !js.is_object(declaration)? {
        return effect_result(js, Err(invalid_declaration()));
    }
    let mut is_promise = false;
    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
    check(unsafe { sys::napi_is_promise(js.0, declaration, &mut is_promise) })?;
    let then = js.get(declaration, c"then")?;
    if is_promise || js.type_of(then)? == sys::ValueType::napi_function {
        return effect_result(js, Err(invalid_declaration()));
    }
    let kind = js.field(declaration, c"kind")?;
    let idempotency = js.field(declaration, c"idempotency")?;
    let parsed = effect_result(js, parse_declaration(kind.text(), idempotency.text()))?;
    Ok(Some((declaration, parsed)))
}

/// `resolveToolEffectDeclaration(tool, args, ctx)`: the tool's static declaration or its classifier's
/// answer, validated; `undefined` when the tool declares none. Invalid → `ToolEffectError`
/// `ERR_PRISM_TOOL_EFFECT_LIMIT` `tool effect declaration is invalid`.
#[napi(js_name = "resolveToolEffectDeclaration")]
pub fn resolve_tool_effect_declaration<'a>(
    env: &'a Env,
    tool: Unknown<'a>,
    args: Unknown<'a>,
    ctx: Option<Unknown<'a>>,
) -> Result<Unknown<'a>> {
    let js = Js(env.raw());
    let ctx = match ctx {
        Some(c) => c.raw(),
        None => js.undefined()?,
    };
    match resolve_declaration(js, tool.raw(), args.raw(), ctx)? {
        Some((v, _)) => js.unknown(env, v),
        None => js.unknown(env, js.undefined()?),
    }
}

// ---------------------------------------------------------------------------------------------------
// The built-in stores.

pub(crate) enum Backend {
    Memory(EffectStore<MemoryStorage>),
    Sqlite(EffectStore<SqliteStorage>),
}

macro_rules! with_store {
    ($backend:expr, $s:ident => $body:expr) => {
        match $backend {
            Backend::Memory($s) => $body,
            Backend::Sqlite($s) => $body,
        }
    };
}

/// `begin`'s answer as a JS object: `{ outcome, record }`.
fn begin_answer<'a>(
    env: &'a Env,
    js: Js,
    outcome: BeginOutcome,
    record: &EffectRecord,
) -> Result<Unknown<'a>> {
    let text = format!(
        "{{\"outcome\":\"{}\",\"record\":{}}}",
        outcome.as_str(),
        record.to_json()
    );
    js.unknown(env, js.json_parse(&text)?)
}

/// The transition of dispatch's lean `markDispatched` (`complete: false`) or `complete`: the result
/// as its JSON text, `unserializable` when it had none.
fn lean_transition(
    complete: bool,
    result: Option<String>,
    unserializable: bool,
    result_ref: Field,
) -> Transition {
    if !complete {
        return Transition::Dispatched;
    }
    Transition::Complete {
        result: if unserializable {
            Some(Err(()))
        } else {
            result.map(Ok)
        },
        result_ref,
    }
}

/// The key of a claim dispatch made through `claim`, as read from JS then.
pub struct ClaimedKey(KeyInput);

/// A built-in `ToolEffectStore` (memory or SQLite). Every method answers synchronously with a plain value
/// (no Promise, no event-loop turn) and throws synchronously; `await store.method(...)` works as for any
/// store. Errors: `ToolEffectError` (contract refusals), `IdentityError` (the key's identity is inactive or
/// does not own the key), `Error` with code `ERR_PRISM_TOOL_EFFECT_STORE` (storage failure).
#[napi]
pub struct NativeToolEffectStore {
    pub(crate) backend: Backend,
    now: Option<FunctionRef<(), f64>>,
}

fn read_now_option(options: Option<&Unknown>) -> Result<Option<FunctionRef<(), f64>>> {
    let Some(o) = options else { return Ok(None) };
    if o.get_type()? != ValueType::Object {
        return Ok(None);
    }
    let obj = Object::from_unknown(*o)?;
    match obj.get::<Unknown>("now")? {
        Some(f) if f.get_type()? == ValueType::Function => {
            let f = Function::<(), f64>::from_unknown(f)?;
            Ok(Some(f.create_ref()?))
        }
        Some(f) if f.get_type()? != ValueType::Undefined => Err(Error::new(
            Status::InvalidArg,
            "options.now must be a function returning epoch milliseconds",
        )),
        _ => Ok(None),
    }
}

impl NativeToolEffectStore {
    fn now(&self, env: &Env) -> Result<i64> {
        match &self.now {
            None => Ok(now_ms()),
            Some(f) => {
                let t = f.borrow_back(env)?.call(())?;
                if t.is_finite() {
                    Ok(t as i64)
                } else {
                    Err(Error::new(
                        Status::InvalidArg,
                        "options.now must return finite epoch milliseconds",
                    ))
                }
            }
        }
    }

    fn record<'a>(&self, env: &'a Env, js: Js, r: &EffectRecord) -> Result<Unknown<'a>> {
        js.unknown(env, js.json_parse(&r.to_json())?)
    }
}

#[napi]
impl NativeToolEffectStore {
    /// `get(key)`: the record (lease expiry applied) or `undefined`.
    #[napi]
    pub fn get<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        check_signal(js, input.raw())?;
        let key = read_key(js, input.raw())?;
        let now = self.now(env)?;
        let parse = host_parse(js);
        match with_store!(&self.backend, s => s.get(&key, now, &parse)) {
            Ok(Some(r)) => self.record(env, js, &r),
            Ok(None) => js.unknown(env, js.undefined()?),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    /// `begin(key & { claimTtlMs?, maxAttempts? })` → `{ outcome: "acquired" | "existing", record }`.
    #[napi]
    pub fn begin<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let (_, outcome, record) = self.run_begin(env, js, input.raw())?;
        begin_answer(env, js, outcome, &record)
    }

    /// Reads `begin`'s input (signal, key, options) and runs it: the key as read and the store's answer.
    fn run_begin(
        &self,
        env: &Env,
        js: Js,
        v: sys::napi_value,
    ) -> Result<(KeyInput, BeginOutcome, EffectRecord)> {
        check_signal(js, v)?;
        let key = read_key(js, v)?;
        let ttl = js.number(v, c"claimTtlMs")?;
        let attempts = js.number(v, c"maxAttempts")?;
        let now = self.now(env)?;
        let parse = host_parse(js);
        match with_store!(&self.backend, s => s.begin(&key, ttl, attempts, now, &parse)) {
            Ok((outcome, record)) => Ok((key, outcome, record)),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    /// Runs a transition for dispatch's lean calls, answered with the new version alone.
    fn advance_to_version(
        &self,
        env: &Env,
        js: Js,
        key: &KeyInput,
        claim: &Claim,
        to: &Transition,
    ) -> Result<f64> {
        let now = self.now(env)?;
        let parse = host_parse(js);
        match with_store!(&self.backend, s => s.transition(key, claim, to, now, &parse)) {
            Ok(r) => Ok(r.version as f64),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    fn transition<'a>(
        &self,
        env: &'a Env,
        input: Unknown<'a>,
        to: impl FnOnce(Js, sys::napi_value) -> Result<Transition>,
    ) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let v = input.raw();
        check_signal(js, v)?;
        let key = read_key(js, v)?;
        let claim = read_claim(js, v)?;
        let to = to(js, v)?;
        let now = self.now(env)?;
        let parse = host_parse(js);
        match with_store!(&self.backend, s => s.transition(&key, &claim, &to, now, &parse)) {
            Ok(r) => self.record(env, js, &r),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    /// `begin` for dispatch. The key is read from JS once, here: when the claim is acquired the answer
    /// is `{ outcome: "acquired", version, claimToken, claim }`, where `claim` holds the key as read,
    /// for [`Self::advance_claim`] to use at each later transition instead of reading it again (its
    /// identity is still checked for expiry and ownership at every transition). Any other outcome
    /// answers like `begin`, with the record.
    #[napi]
    pub fn claim<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let (key, outcome, record) = self.run_begin(env, js, input.raw())?;
        match (outcome, record.claim_token.as_deref()) {
            (BeginOutcome::Acquired, Some(token)) => {
                let mut out = Object::new(env)?;
                out.set_named_property("outcome", "acquired")?;
                out.set_named_property("version", record.version as f64)?;
                out.set_named_property("claimToken", token)?;
                out.set_named_property("claim", External::new(ClaimedKey(key)))?;
                Ok(out.to_unknown())
            }
            _ => begin_answer(env, js, outcome, &record),
        }
    }

    /// `markDispatched` (`complete: false`) or `complete` for dispatch on a claim made by [`Self::claim`],
    /// answered with the new version alone. `signal` is the dispatch's abort signal, checked first as
    /// every store method checks its input's. `result` is the result's JSON text, `unserializable`
    /// when the result had none.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn advance_claim(
        &self,
        env: &Env,
        claim: &External<ClaimedKey>,
        claim_token: String,
        expected_version: f64,
        complete: bool,
        result: Option<String>,
        unserializable: bool,
        signal: Unknown,
    ) -> Result<f64> {
        let js = Js(env.raw());
        check_abort(js, signal.raw())?;
        let claim_of = Claim {
            claim_token: Field::Text(claim_token),
            expected_version: Some(expected_version),
        };
        let to = lean_transition(complete, result, unserializable, Field::Absent);
        self.advance_to_version(env, js, &claim.0, &claim_of, &to)
    }

    /// `markDispatched` (`complete: false`) or `complete` for dispatch, answered with the new version
    /// alone: dispatch needs nothing else, and making the record a JS object was most of the call.
    /// `result` is the result's JSON text (`JSON.stringify` in `lib/dispatch.js`, the same text the
    /// object method reads), `unserializable` when the result had none.
    #[napi]
    pub fn advance(
        &self,
        env: &Env,
        input: Unknown,
        complete: bool,
        result: Option<String>,
        unserializable: bool,
    ) -> Result<f64> {
        let js = Js(env.raw());
        let v = input.raw();
        check_signal(js, v)?;
        let key = read_key(js, v)?;
        let claim = read_claim(js, v)?;
        let result_ref = if complete {
            js.field(v, c"resultRef")?
        } else {
            Field::Absent
        };
        let to = lean_transition(complete, result, unserializable, result_ref);
        self.advance_to_version(env, js, &key, &claim, &to)
    }

    /// `markDispatched(key & { claimToken, expectedVersion })`: pending → dispatched.
    #[napi]
    pub fn mark_dispatched<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        self.transition(env, input, |_, _| Ok(Transition::Dispatched))
    }

    /// `complete(transition & { result?, resultRef? })`: dispatched → completed.
    #[napi]
    pub fn complete<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        self.transition(env, input, |js, v| {
            Ok(Transition::Complete {
                result: read_result(js, v)?,
                result_ref: js.field(v, c"resultRef")?,
            })
        })
    }

    /// `fail(transition & { status: "failed_retryable" | "failed_terminal", failure })`.
    #[napi]
    pub fn fail<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        self.transition(env, input, |js, v| {
            Ok(Transition::Fail {
                status: js.field(v, c"status")?,
                failure: read_failure(js, v)?,
            })
        })
    }

    /// `markUnknown(transition & { failure? })`: dispatched → unknown.
    #[napi]
    pub fn mark_unknown<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        self.transition(env, input, |js, v| {
            Ok(Transition::Unknown {
                failure: read_failure(js, v)?,
            })
        })
    }

    /// `resolveUnknown(key & { expectedVersion, status, result?, resultRef?, failure? })`.
    #[napi]
    pub fn resolve_unknown<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let v = input.raw();
        check_signal(js, v)?;
        let key = read_key(js, v)?;
        let resolution = Resolution {
            expected_version: js.number(v, c"expectedVersion")?,
            status: js.field(v, c"status")?,
            result: read_result(js, v)?,
            result_ref: js.field(v, c"resultRef")?,
            failure: read_failure(js, v)?,
        };
        let now = self.now(env)?;
        let parse = host_parse(js);
        match with_store!(&self.backend, s => s.resolve_unknown(&key, &resolution, now, &parse)) {
            Ok(r) => self.record(env, js, &r),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    /// `cleanup({ ownership, before, limit?, signal? })` → `{ deleted }`.
    #[napi]
    pub fn cleanup<'a>(&self, env: &'a Env, input: Unknown<'a>) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        let v = input.raw();
        check_signal(js, v)?;
        let ownership = read_ownership(js, js.prop(v, c"ownership")?)?;
        let before = js.field(v, c"before")?;
        let limit = js.number(v, c"limit")?;
        let parse = host_parse(js);
        match with_store!(&self.backend, s => s.cleanup(&ownership, &before, limit, &parse)) {
            Ok(n) => js.unknown(env, js.json_parse(&format!("{{\"deleted\":{n}}}"))?),
            Err(e) => Err(throw_store_error(js, &e)),
        }
    }

    /// Closes the SQLite file (later calls throw); a no-op for the memory store.
    #[napi]
    pub fn close(&self) {
        if let Backend::Sqlite(s) = &self.backend {
            prism_tools_core::effects::store::RecordStorage::close(&s.storage);
        }
    }
}

/// `createMemoryToolEffectStore({ now? })`: the in-process reference store.
#[napi(js_name = "createMemoryToolEffectStore")]
pub fn create_memory_tool_effect_store(options: Option<Unknown>) -> Result<NativeToolEffectStore> {
    Ok(NativeToolEffectStore {
        backend: Backend::Memory(EffectStore::new(MemoryStorage::default())),
        now: read_now_option(options.as_ref())?,
    })
}

pub(crate) fn read_sqlite_options(
    js: Js,
    v: sys::napi_value,
    default_full: bool,
) -> Result<SqliteOptions> {
    let mut o = SqliteOptions {
        synchronous_full: default_full,
        ..Default::default()
    };
    if let Some(ms) = js.number(v, c"busyTimeoutMs")? {
        if !(ms.fract() == 0.0 && (0.0..=600_000.0).contains(&ms)) {
            return Err(Error::new(
                Status::InvalidArg,
                "busyTimeoutMs must be an integer from 0 to 600000",
            ));
        }
        o.busy_timeout_ms = ms as u32;
    }
    match js.field(v, c"synchronous")? {
        Field::Absent => {}
        Field::Text(s) if s == "full" => o.synchronous_full = true,
        Field::Text(s) if s == "normal" => o.synchronous_full = false,
        _ => {
            return Err(Error::new(
                Status::InvalidArg,
                "synchronous must be \"full\" or \"normal\"",
            ))
        }
    }
    Ok(o)
}

/// `createSqliteToolEffectStore(path, { now?, busyTimeoutMs? = 5000, synchronous? = "full" })`.
#[napi(js_name = "createSqliteToolEffectStore")]
pub fn create_sqlite_tool_effect_store(
    env: Env,
    path: String,
    options: Option<Unknown>,
) -> Result<NativeToolEffectStore> {
    let js = Js(env.raw());
    // SQLite gives "" and ":memory:" each connection a private database: two stores "sharing" one
    // would each claim the same effect. A store must name a file (or use the memory store).
    if path.is_empty() || path == ":memory:" || path.starts_with("file::memory:") {
        return prism_tools_core::error::PrismError::invalid_option(format!(
            "createSqliteToolEffectStore: {:?} opens a private in-memory database that no other store or process shares, so a claim there stops no one; pass a file path, or use createMemoryToolEffectStore() for one process",
            path
        ))
        .throw(&env);
    }
    let opts = read_sqlite_options(
        js,
        options.as_ref().map_or(ptr::null_mut(), |o| o.raw()),
        true,
    )?;
    let storage = SqliteStorage::open(&path, &opts).map_err(|e| throw_store_error(js, &e))?;
    Ok(NativeToolEffectStore {
        backend: Backend::Sqlite(EffectStore::new(storage)),
        now: read_now_option(options.as_ref())?,
    })
}
