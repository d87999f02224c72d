//! Redaction of JS values (SPEC section 5): a bounded, cycle-safe copy with every secret replaced in
//! strings and keys, and `errorToErrorInfo`. Also the `createSecretRedactor` object, which dispatch
//! recognises by its type tag and redacts with in Rust instead of calling back into JS.

use std::collections::HashSet;
use std::ffi::c_void;
use std::rc::Rc;

use napi::sys;

use super::raw::{cb_args, type_error, Fail, Js, Ty, R, V};
use super::realm::Realm;
use crate::raw_fn;
use crate::redact::{unique_key, Secrets, CIRCULAR_MARK, MAX_DEPTH, MAX_DEPTH_MARK};

/// Marks objects made by `createSecretRedactor`.
pub const REDACTOR_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x7072_6973_6d2d_7264,
    upper: 0x6163_746f_7201_0001,
};

const UNREADABLE: &str = "[Unreadable]";

/// A redacted copy of `v`. Strings and keys lose every secret; `Map` becomes an object, `Set` an
/// array; `Date`, `RegExp` and typed arrays pass through; containers deeper than 32 become
/// `[MaxDepth]`, an ancestor cycle `[Circular]`, a property whose getter throws `[Unreadable]`.
pub fn redact_value(js: &Js, realm: &Realm, secrets: &Secrets, v: V) -> R<V> {
    let mut ancestors = Vec::new();
    walk(js, realm, secrets, v, 0, &mut ancestors)
}

fn walk(
    js: &Js,
    realm: &Realm,
    secrets: &Secrets,
    v: V,
    depth: usize,
    ancestors: &mut Vec<V>,
) -> R<V> {
    match js.ty(v)? {
        Ty::String => {
            let s = js.str(v)?;
            match secrets.redact(&s) {
                std::borrow::Cow::Borrowed(_) => Ok(v),
                std::borrow::Cow::Owned(r) => js.string(&r),
            }
        }
        Ty::Object => walk_object(js, realm, secrets, v, depth, ancestors),
        _ => Ok(v),
    }
}

fn walk_object(
    js: &Js,
    realm: &Realm,
    secrets: &Secrets,
    v: V,
    depth: usize,
    ancestors: &mut Vec<V>,
) -> R<V> {
    // Plain objects and arrays (the usual case) skip the checks for the other kinds.
    let plain =
        js.strict_eq(js.prototype_of(v)?, js.ref_value(realm.object_proto)?)? || js.is_array(v)?;
    if !plain
        && (js.is_date(v)?
            || js.is_typedarray(v)?
            || js.instance_of(v, js.ref_value(realm.regexp_ctor)?)?)
    {
        return Ok(v);
    }
    for &a in ancestors.iter() {
        if js.strict_eq(a, v)? {
            return js.string(CIRCULAR_MARK);
        }
    }
    if depth >= MAX_DEPTH {
        return js.string(MAX_DEPTH_MARK);
    }
    ancestors.push(v);
    let out = if js.is_array(v)? {
        let n = js.array_len(v)?;
        let out = js.array(n as usize)?;
        for i in 0..n {
            let item = read(js, || js.element(v, i))?;
            let item = walk_or_unreadable(js, realm, secrets, item, depth, ancestors)?;
            js.set_element(out, i, item)?;
        }
        out
    } else if !plain && js.instance_of(v, js.ref_value(realm.map_ctor)?)? {
        map_to_object(js, realm, secrets, v, depth, ancestors)?
    } else if !plain && js.instance_of(v, js.ref_value(realm.set_ctor)?)? {
        set_to_array(js, realm, secrets, v, depth, ancestors)?
    } else {
        let out = js.object()?;
        let mut taken = HashSet::new();
        if !plain && js.is_error(v)? {
            // Error's own name/message/stack are not enumerable; keep the two that explain it.
            for key in [c"name", c"message"] {
                let Some(item) = read(js, || js.get(v, key))? else {
                    continue;
                };
                if js.ty(item)? == Ty::String {
                    let k = key.to_str().unwrap_or_default();
                    let item = walk(js, realm, secrets, item, depth + 1, ancestors)?;
                    js.set(out, key, item)?;
                    taken.insert(k.to_owned());
                }
            }
        }
        let keys = match js.keys(v) {
            Ok(k) => k,
            Err(Fail::Pending) => {
                js.take_exception();
                ancestors.pop();
                return js.string(UNREADABLE);
            }
            Err(e) => return Err(e),
        };
        let n = js.array_len(keys)?;
        for i in 0..n {
            let key_v = js.element(keys, i)?;
            let key = js.to_js_string(key_v)?;
            let item = read(js, || js.get_prop(v, key_v))?;
            // A function is not data, and an own `toJSON` would hand a serialiser whatever it
            // returns, unredacted: the copy keeps neither.
            if let Some(f) = item {
                if js.ty(f)? == Ty::Function {
                    continue;
                }
            }
            let item = walk_or_unreadable(js, realm, secrets, item, depth, ancestors)?;
            let new_key = unique_key(&taken, &secrets.redact(&key));
            js.set_str_key(out, &new_key, item)?;
            taken.insert(new_key);
        }
        out
    };
    ancestors.pop();
    Ok(out)
}

/// `None` stands for a read whose getter threw.
fn read(js: &Js, f: impl FnOnce() -> R<V>) -> R<Option<V>> {
    match f() {
        Ok(v) => Ok(Some(v)),
        Err(Fail::Pending) => {
            js.take_exception();
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn walk_or_unreadable(
    js: &Js,
    realm: &Realm,
    secrets: &Secrets,
    item: Option<V>,
    depth: usize,
    ancestors: &mut Vec<V>,
) -> R<V> {
    match item {
        Some(item) => walk(js, realm, secrets, item, depth + 1, ancestors),
        None => js.string(UNREADABLE),
    }
}

/// Iterates a Map or Set through `Array.from(x)`, which yields entries or values.
fn entries(js: &Js, v: V) -> R<V> {
    let global = js.global()?;
    let array = js.get(global, c"Array")?;
    let from = js.get(array, c"from")?;
    js.call(array, from, &[v])
}

fn map_to_object(
    js: &Js,
    realm: &Realm,
    secrets: &Secrets,
    v: V,
    depth: usize,
    ancestors: &mut Vec<V>,
) -> R<V> {
    let list = entries(js, v)?;
    let n = js.array_len(list)?;
    let out = js.object()?;
    let mut taken = HashSet::new();
    for i in 0..n {
        let pair = js.element(list, i)?;
        let key = js.to_js_string(js.element(pair, 0)?)?;
        let item = walk(
            js,
            realm,
            secrets,
            js.element(pair, 1)?,
            depth + 1,
            ancestors,
        )?;
        let new_key = unique_key(&taken, &secrets.redact(&key));
        js.set_str_key(out, &new_key, item)?;
        taken.insert(new_key);
    }
    Ok(out)
}

fn set_to_array(
    js: &Js,
    realm: &Realm,
    secrets: &Secrets,
    v: V,
    depth: usize,
    ancestors: &mut Vec<V>,
) -> R<V> {
    let list = entries(js, v)?;
    let n = js.array_len(list)?;
    let out = js.array(n as usize)?;
    for i in 0..n {
        let item = walk(
            js,
            realm,
            secrets,
            js.element(list, i)?,
            depth + 1,
            ancestors,
        )?;
        js.set_element(out, i, item)?;
    }
    Ok(out)
}

/// Reads a list of secret strings (non-strings are ignored; a non-array is an error).
pub fn read_secrets(js: &Js, v: V, what: &str) -> R<Vec<String>> {
    match js.ty(v)? {
        Ty::Undefined | Ty::Null => return Ok(Vec::new()),
        _ if js.is_array(v)? => {}
        _ => {
            return Err(type_error(
                format!("{what} must be an array of strings"),
                "ERR_PRISM_INVALID_OPTION",
            ))
        }
    }
    let n = js.array_len(v)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        if let Some(s) = js.opt_str(js.element(v, i)?)? {
            out.push(s);
        }
    }
    Ok(out)
}

/// The secrets of a native redactor object, when `v` is one.
pub fn native_redactor(js: &Js, v: V) -> R<Option<Rc<Secrets>>> {
    if js.ty(v)? != Ty::Object || !js.has_type_tag(v, &REDACTOR_TAG)? {
        return Ok(None);
    }
    let p = unsafe { js.unwrap::<Rc<Secrets>>(v)? };
    Ok(Some(unsafe { (*p).clone() }))
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
pub fn error_to_error_info(js: &Js, secrets: &Secrets, thrown: V) -> R<V> {
    let out = js.object()?;
    let red = |s: &str| secrets.redact(s).into_owned();
    let ty = js.ty(thrown)?;
    let is_object = matches!(ty, Ty::Object | Ty::Function);
    let is_error = is_object && js.is_error(thrown)?;
    if is_error {
        let name = match read(js, || js.get(thrown, c"name"))? {
            Some(n) => js.opt_str(n)?.map(|n| red(&n)),
            None => None,
        };
        match name {
            Some(n) => js.set(out, c"name", js.string(&n)?)?,
            None => js.set(out, c"name", js.undefined())?,
        }
    }
    let message = if is_object {
        match read(js, || js.get(thrown, c"message"))? {
            Some(m) if js.ty(m)? != Ty::Undefined => string_of(js, m)?,
            Some(_) if is_error => String::new(),
            _ => string_of(js, thrown)?,
        }
    } else {
        string_of(js, thrown)?
    };
    js.set(out, c"message", js.string(&red(&message))?)?;
    let code = if is_object {
        read(js, || js.get(thrown, c"code"))?
    } else {
        None
    };
    match code {
        Some(c) if js.ty(c)? == Ty::String => {
            js.set(out, c"code", js.string(&red(&js.str(c)?))?)?
        }
        Some(c) if js.ty(c)? == Ty::Number => js.set(out, c"code", c)?,
        _ => js.set(out, c"code", js.undefined())?,
    }
    if is_object {
        if let Some(r) = read(js, || js.get(thrown, c"retryAfterMs"))? {
            if js.ty(r)? == Ty::Number {
                let n = js.f64(r)?;
                if n.is_finite() && n >= 0.0 {
                    js.set(out, c"retryAfterMs", r)?;
                }
            }
        }
    }
    if is_error {
        match read(js, || js.get(thrown, c"cause"))? {
            Some(c) if truthy(js, c)? => {
                js.set(out, c"cause", js.string(&red(&string_of(js, c)?))?)?
            }
            _ => js.set(out, c"cause", js.undefined())?,
        }
    }
    Ok(out)
}

/// `String(v)` (a symbol keeps its description). When that throws (`Object.create(null)`, a throwing
/// `toString`), `Object.prototype.toString.call(v)`, and `[unprintable value]` if even that throws.
fn string_of(js: &Js, v: V) -> R<String> {
    if js.ty(v)? == Ty::String {
        return js.str(v);
    }
    let global = js.global()?;
    let string = js.get(global, c"String")?;
    if let Ok(s) = js.call_catch(js.undefined(), string, &[v])? {
        return js.str(s);
    }
    let object = js.get(global, c"Object")?;
    let proto = js.get(object, c"prototype")?;
    let to_string = js.get(proto, c"toString")?;
    match js.call_catch(v, to_string, &[])? {
        Ok(s) if js.ty(s)? == Ty::String => js.str(s),
        _ => Ok("[unprintable value]".to_owned()),
    }
}

/// JavaScript truthiness, without calling into user code.
fn truthy(js: &Js, v: V) -> R<bool> {
    Ok(match js.ty(v)? {
        Ty::Undefined | Ty::Null => false,
        Ty::Boolean => js.bool(v)?,
        Ty::Number => {
            let n = js.f64(v)?;
            n != 0.0 && !n.is_nan()
        }
        Ty::String => !js.str(v)?.is_empty(),
        Ty::BigInt => js.to_js_string(v)? != "0",
        _ => true,
    })
}

// ----- exports ------------------------------------------------------------------------------------

raw_fn!(redact_secrets, |js, info| {
    let (_, _, [value, secrets], _) = cb_args::<2>(js, info)?;
    let realm = Realm::get(js)?;
    let secrets = Secrets::new(read_secrets(js, secrets, "redactSecrets: secrets")?);
    redact_value(js, realm, &secrets, value)
});

raw_fn!(error_to_error_info_export, |js, info| {
    let (_, _, [thrown, secrets], _) = cb_args::<2>(js, info)?;
    let secrets = Secrets::new(read_secrets(js, secrets, "errorToErrorInfo: secrets")?);
    error_to_error_info(js, &secrets, thrown)
});

raw_fn!(redactor_redact, |js, info| {
    let (_, data, [value], _) = cb_args::<1>(js, info)?;
    let realm = Realm::get(js)?;
    let secrets = unsafe { &*(data as *const Rc<Secrets>) };
    redact_value(js, realm, secrets, value)
});

raw_fn!(create_secret_redactor, |js, info| {
    let (_, _, [secrets], _) = cb_args::<1>(js, info)?;
    let secrets = Rc::new(Secrets::new(read_secrets(
        js,
        secrets,
        "createSecretRedactor: secrets",
    )?));
    let obj = js.object()?;
    let data = Box::into_raw(Box::new(secrets.clone()));
    let redact = js.function("redact", Some(redactor_redact), data.cast::<c_void>())?;
    js.attach_box(redact, data)?;
    js.set(obj, c"redact", redact)?;
    js.wrap(obj, secrets)?;
    js.type_tag(obj, &REDACTOR_TAG)?;
    Ok(obj)
});

// `redactRunLedgerRecord(record, redactor?)`: the record through the redactor, or as is.
raw_fn!(redact_run_ledger_record, |js, info| {
    let (_, _, [record, redactor], _) = cb_args::<2>(js, info)?;
    redact_with(js, Realm::get(js)?, redactor, record)
});

/// Redacts `value` with a native redactor in Rust, or calls a host redactor's `redact`.
pub fn redact_with(js: &Js, realm: &Realm, redactor: V, value: V) -> R<V> {
    if js.is_nullish(redactor)? {
        return Ok(value);
    }
    if let Some(secrets) = native_redactor(js, redactor)? {
        return redact_value(js, realm, &secrets, value);
    }
    let f = js.get_opt(redactor, c"redact")?;
    if js.ty(f)? != Ty::Function {
        return Err(type_error(
            "redactor must have a redact(value) method",
            "ERR_PRISM_INVALID_OPTION",
        ));
    }
    js.call(redactor, f, &[value])
}
