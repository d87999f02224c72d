//! Redaction of JS values (docs: redaction): a bounded, cycle-safe copy with every secret replaced
//! in strings and keys, and `errorToErrorInfo`. Also the `createSecretRedactor` object, which
//! `redactRunLedgerRecord` recognises by its wrapped secrets and redacts with in Rust instead of
//! calling back into JS.

use crate::effects::js::{check, Js};
use crate::host::{read_host, write_host};
use crate::throw::Throw;
use std::rc::Rc;

use napi::bindgen_prelude::{
    Array, FromNapiValue, Function, JsObjectValue, Object, ToNapiValue, Unknown,
};
use napi::{sys, Env, JsValue, Result, ValueType};
use napi_derive::napi;

use prism_tools_core::error::PrismError;
use prism_tools_core::redact::{redact_host_with, HostText, Secrets, HOST_POLICY};

/// Clears the exception a failed call left pending; `false` when none was. A throwing getter
/// makes Node-API answer a generic failure with the exception pending, so the status alone does
/// not tell. napi-rs has no safe call for either step.
fn clear_exception(env: &Env) -> bool {
    let mut pending = false;
    // SAFETY: `env` is the env of the callback running now and `pending` a valid out-pointer.
    unsafe { napi::sys::napi_is_exception_pending(env.raw(), &mut pending) };
    if pending {
        let mut thrown = std::ptr::null_mut();
        // SAFETY: as above; `thrown` is a valid out-pointer for the one handle Node-API writes,
        // which is dropped unused.
        unsafe { napi::sys::napi_get_and_clear_last_exception(env.raw(), &mut thrown) };
    }
    pending
}

/// `None` stands for a read that threw (its exception cleared); other failures propagate.
fn read<T>(env: &Env, r: Result<T>) -> Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if clear_exception(env) => {
            drop(e);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn js_str<'e>(env: &'e Env, s: &str) -> Result<Unknown<'e>> {
    Ok(env.create_string(s)?.to_unknown())
}

/// A redacted copy of `v`: read once by the host reader (`crate::host`), redacted in the core
/// crate (`prism_tools_core::redact::redact_host`: what becomes of each kind of value), written back.
fn redact_value<'e>(env: &'e Env, secrets: &Secrets, v: Unknown<'e>) -> Result<Unknown<'e>> {
    let read = read_host(env, v.raw(), HOST_POLICY)?;
    let js = Js(env.raw());
    let redacted = redact_host_with(secrets, read, &JsText(js));
    js.unknown(env, write_host(js, redacted)?)
}

/// The code units of the JS string `v` (lone surrogates kept), `None` when it is not a string.
fn string_units(js: Js, v: sys::napi_value) -> Result<Option<Vec<u16>>> {
    let mut len = 0usize;
    // SAFETY: a live env and handle (see `Js`); a null buffer of size 0 asks for the length only.
    let status =
        unsafe { sys::napi_get_value_string_utf16(js.0, v, std::ptr::null_mut(), 0, &mut len) };
    if status == sys::Status::napi_string_expected {
        return Ok(None);
    }
    check(status)?;
    let mut units = vec![0u16; len + 1];
    let mut copied = 0usize;
    // SAFETY: as above; Node-API writes at most `units.len()` code units into `units`.
    check(unsafe {
        sys::napi_get_value_string_utf16(js.0, v, units.as_mut_ptr(), units.len(), &mut copied)
    })?;
    units.truncate(copied.min(len));
    Ok(Some(units))
}

/// The host's strings as UTF-16 code units, for the matcher (`HostText`): a `String` cannot
/// hold a lone surrogate.
struct JsText(Js);

impl HostText<sys::napi_value> for JsText {
    fn units(&self, handle: &sys::napi_value) -> Option<Vec<u16>> {
        string_units(self.0, *handle).ok().flatten()
    }

    fn string(&self, units: &[u16]) -> Option<sys::napi_value> {
        let mut out = std::ptr::null_mut();
        // SAFETY: a live env (see `Js`); `units` is valid for its length, `out` a valid
        // out-pointer for the one handle Node-API writes.
        let status = unsafe {
            sys::napi_create_string_utf16(self.0 .0, units.as_ptr(), units.len() as isize, &mut out)
        };
        check(status).ok().map(|()| out)
    }
}

/// The matcher of a list of secret strings (non-strings are ignored; a non-array is an error).
fn read_secrets(env: &Env, v: Option<Unknown>, what: &str) -> Result<Secrets> {
    let Some(v) = v else {
        return Ok(Secrets::default());
    };
    match v.get_type()? {
        ValueType::Undefined | ValueType::Null => return Ok(Secrets::default()),
        _ if v.is_array()? => {}
        _ => {
            return PrismError::invalid_option(format!("{what} must be an array of strings"))
                .throw(env)
        }
    }
    let array = Array::from_unknown(v)?;
    let js = Js(env.raw());
    let mut out = Vec::with_capacity(array.len() as usize);
    for i in 0..array.len() {
        let item: Unknown = array.get_element(i)?;
        // As code units: a secret holding a lone surrogate is found where JS finds it.
        if let Some(units) = string_units(js, item.raw())? {
            out.push(units);
        }
    }
    Ok(Secrets::from_units(out))
}

/// The secrets of a redactor made by `createSecretRedactor`, when `v` is one.
fn native_redactor(v: Unknown) -> Result<Option<Rc<Secrets>>> {
    if v.get_type()? != ValueType::Object {
        return Ok(None);
    }
    // `unwrap` checks that the object wraps an `Rc<Secrets>` made by this addon; anything else is
    // an ordinary host redactor.
    match Object::from_unknown(v)?.unwrap::<Rc<Secrets>>() {
        Ok(secrets) => Ok(Some(secrets.clone())),
        Err(_) => Ok(None),
    }
}

// ----- errorToErrorInfo ---------------------------------------------------------------------------

/// `errorToErrorInfo(thrown, secrets)`, in `@arnilo/prism`'s shape, so a host that compares error
/// infos sees the same object from either package:
/// - an `Error` (any realm): `{ name, message, code, retryAfterMs?, cause }`, `cause` being
///   `String(error.cause)` when the cause is truthy;
/// - another object with a `message`: `{ message: String(message), code, retryAfterMs? }`;
/// - anything else: `{ message: String(thrown), code, retryAfterMs? }` (`"null"`, `"42"`,
///   `"Symbol(s)"`, `"[object Object]"`).
///
/// `code` is kept when it is a string or a number, `retryAfterMs` when it is a finite number ≥ 0;
/// `code` and `cause` are present as `undefined` when absent, as upstream's are. Strings lose every
/// secret. Unlike upstream, a throwing getter or `toString` never escapes: the field is left out,
/// or the text is `[unprintable value]`.
fn error_to_error_info<'e>(
    env: &'e Env,
    secrets: &Secrets,
    thrown: Unknown<'e>,
) -> Result<Object<'e>> {
    let mut out = Object::new(env)?;
    let red = |s: &str| secrets.redact(s).into_owned();
    let ty = thrown.get_type()?;
    let is_object = matches!(ty, ValueType::Object | ValueType::Function);
    let is_error = is_object && thrown.is_error()?;
    let obj = if is_object {
        Some(Object::from_unknown(thrown)?)
    } else {
        None
    };
    let get = |key: &std::ffi::CStr| -> Result<Option<Unknown<'e>>> {
        match &obj {
            Some(o) => read(env, o.get_c_named_property_unchecked::<Unknown>(key)),
            None => Ok(None),
        }
    };
    if is_error {
        match get(c"name")? {
            Some(n) if n.get_type()? == ValueType::String => {
                out.set_c_named_property(c"name", js_str(env, &red(&String::from_unknown(n)?))?)?
            }
            _ => out.set_c_named_property(c"name", ())?,
        }
    }
    let message = if is_object {
        match get(c"message")? {
            Some(m) if m.get_type()? != ValueType::Undefined => string_of(env, m)?,
            Some(_) if is_error => String::new(),
            _ => string_of(env, thrown)?,
        }
    } else {
        string_of(env, thrown)?
    };
    out.set_c_named_property(c"message", js_str(env, &red(&message))?)?;
    match get(c"code")? {
        Some(c) if c.get_type()? == ValueType::String => {
            out.set_c_named_property(c"code", js_str(env, &red(&String::from_unknown(c)?))?)?
        }
        Some(c) if c.get_type()? == ValueType::Number => out.set_c_named_property(c"code", c)?,
        _ => out.set_c_named_property(c"code", ())?,
    }
    if let Some(r) = get(c"retryAfterMs")? {
        if r.get_type()? == ValueType::Number {
            let n = f64::from_unknown(r)?;
            if n.is_finite() && n >= 0.0 {
                out.set_c_named_property(c"retryAfterMs", r)?;
            }
        }
    }
    if is_error {
        match get(c"cause")? {
            Some(c) if truthy(c)? => {
                out.set_c_named_property(c"cause", js_str(env, &red(&string_of(env, c)?))?)?
            }
            _ => out.set_c_named_property(c"cause", ())?,
        }
    }
    Ok(out)
}

/// The value of a call into JS, `None` when it threw: napi-rs takes a call's exception into its
/// `Error`, so any failure counts as a throw; one still pending is cleared.
fn caught<T>(env: &Env, r: Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            clear_exception(env);
            drop(e);
            None
        }
    }
}

fn is_nullish(v: Unknown) -> Result<bool> {
    Ok(matches!(
        v.get_type()?,
        ValueType::Undefined | ValueType::Null
    ))
}

/// `String(v)` (a symbol keeps its description). When that throws (`Object.create(null)`, a throwing
/// `toString`), `Object.prototype.toString.call(v)`, and `[unprintable value]` if even that throws.
fn string_of(env: &Env, v: Unknown) -> Result<String> {
    if v.get_type()? == ValueType::String {
        return String::from_unknown(v);
    }
    let global = env.get_global()?;
    let string: Function<Unknown, Unknown> = global.get_c_named_property_unchecked(c"String")?;
    if let Some(s) = caught(env, string.call(v)) {
        return String::from_unknown(s);
    }
    let object: Object = global.get_c_named_property_unchecked(c"Object")?;
    let proto: Object = object.get_c_named_property_unchecked(c"prototype")?;
    let to_string: Function<(), Unknown> = proto.get_c_named_property_unchecked(c"toString")?;
    match caught(env, to_string.apply(v, ())) {
        Some(s) if s.get_type()? == ValueType::String => String::from_unknown(s),
        _ => Ok("[unprintable value]".to_owned()),
    }
}

/// JavaScript truthiness, without calling into user code.
fn truthy(v: Unknown) -> Result<bool> {
    Ok(match v.get_type()? {
        ValueType::Undefined | ValueType::Null => false,
        ValueType::Boolean => bool::from_unknown(v)?,
        ValueType::Number => {
            let n = f64::from_unknown(v)?;
            n != 0.0 && !n.is_nan()
        }
        ValueType::String => !String::from_unknown(v)?.is_empty(),
        ValueType::BigInt => v.coerce_to_string()?.into_utf8()?.as_str()? != "0",
        _ => true,
    })
}

// ----- exports ------------------------------------------------------------------------------------

/// `redactSecrets(value, secrets?)`: a redacted copy of `value`. In each `secrets` list the strings
/// are the secrets and other items are skipped; none (or null) redacts nothing.
#[napi(
    js_name = "redactSecrets",
    catch_unwind,
    ts_generic_types = "T",
    ts_args_type = "value: T, secrets?: ReadonlyArray<unknown> | null",
    ts_return_type = "T"
)]
pub fn redact_secrets<'e>(
    env: &'e Env,
    value: Unknown<'e>,
    secrets: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    let secrets = read_secrets(env, secrets, "redactSecrets: secrets")?;
    redact_value(env, &secrets, value)
}

/// `errorToErrorInfo(thrown, secrets?)`: the `ErrorInfo` of any thrown value, redacted.
#[napi(
    js_name = "errorToErrorInfo",
    catch_unwind,
    ts_args_type = "thrown: unknown, secrets?: ReadonlyArray<unknown> | null",
    ts_return_type = "{ name?: string; message: string; code?: string; [field: string]: unknown }"
)]
pub fn error_to_error_info_export<'e>(
    env: &'e Env,
    thrown: Unknown<'e>,
    secrets: Option<Unknown<'e>>,
) -> Result<Object<'e>> {
    let secrets = read_secrets(env, secrets, "errorToErrorInfo: secrets")?;
    error_to_error_info(env, &secrets, thrown)
}

/// `createSecretRedactor(secrets)`: `{ redact(value) }` over a matcher built once.
#[napi(
    js_name = "createSecretRedactor",
    catch_unwind,
    ts_args_type = "secrets?: ReadonlyArray<unknown> | null",
    ts_return_type = "{ redact<T>(value: T): T }"
)]
pub fn create_secret_redactor<'e>(
    env: &'e Env,
    secrets: Option<Unknown<'e>>,
) -> Result<Object<'e>> {
    let secrets = Rc::new(read_secrets(env, secrets, "createSecretRedactor: secrets")?);
    let mut obj = Object::new(env)?;
    let held = secrets.clone();
    let redact = env.create_function_from_closure::<Unknown, napi::sys::napi_value, _>(
        "redact",
        move |ctx| {
            let value = if ctx.length() > 0 {
                ctx.get::<Unknown>(0)?
            } else {
                ().into_unknown(ctx.env)?
            };
            let env: &Env = ctx.env;
            // The copy's handle belongs to this callback's scope, which returns it.
            Ok(redact_value(env, &held, value)?.raw())
        },
    )?;
    obj.set_c_named_property(c"redact", redact)?;
    obj.wrap(secrets, None)?;
    Ok(obj)
}

/// `redactRunLedgerRecord(record, redactor?)`: the record through the redactor, or as is. A
/// redactor from `createSecretRedactor` redacts in Rust; a host one has its `redact` called.
#[napi(js_name = "redactRunLedgerRecord", catch_unwind)]
pub fn redact_run_ledger_record<'e>(
    env: &'e Env,
    record: Unknown<'e>,
    redactor: Option<Unknown<'e>>,
) -> Result<Unknown<'e>> {
    let Some(redactor) = redactor.filter(|r| !is_nullish(*r).unwrap_or(true)) else {
        return Ok(record);
    };
    if let Some(secrets) = native_redactor(redactor)? {
        return redact_value(env, &secrets, record);
    }
    let host = Object::from_unknown(redactor)?;
    let f: Unknown = if redactor.get_type()? == ValueType::Object
        || redactor.get_type()? == ValueType::Function
    {
        host.get_c_named_property_unchecked(c"redact")?
    } else {
        ().into_unknown(env)?
    };
    if f.get_type()? != ValueType::Function {
        return PrismError::invalid_option("redactor must have a redact(value) method").throw(env);
    }
    Function::<Unknown, Unknown>::from_unknown(f)?.apply(host, record)
}

/// `nativeVersion()`: the crate version of the loaded binary.
#[napi(js_name = "nativeVersion")]
pub fn native_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
