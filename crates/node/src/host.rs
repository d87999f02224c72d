//! The one reader of host values (docs/boundary.md): a JS value becomes an owned
//! `prism_tools_core::host::Host` tree once, and the consumers (canonical JSON and the arguments hash,
//! redaction) work from the tree in the core crate. Also the writer that turns a tree back into JS
//! values (a redacted copy).
//!
//! One answer for each kind of value: primitives as they are; a function, symbol or bigint as a
//! handle; a `Date`, `RegExp` or typed array as a handle, not walked; arrays with their holes; a
//! `Map`'s entries and a `Set`'s values through this realm's `Array.from`; an object's own enumerable
//! string keys (an `Error` also its `name` and `message`), classified plain (`Object.prototype` of
//! this realm or, recognised by shape, of another; or no prototype) or not; a container at the
//! policy's depth not read; an ancestor again (with the policy's cycle check) not read; a getter or
//! proxy trap that throws kept as the thrown value.

use crate::effects::js::{check, Js};
use crate::instance::{instance, Held, Realm};
use napi::bindgen_prelude::*;
use napi::sys;
use prism_tools_core::host::{Host, Key, ObjectKind, ReadPolicy};
use std::ptr;

type Value = sys::napi_value;

/// This realm's built-ins the reader compares against, as handles of the current call.
#[derive(Clone, Copy)]
struct Builtins {
    object_proto: Value,
    map_ctor: Value,
    set_ctor: Value,
    regexp_ctor: Value,
    array_from: Value,
}

/// Captures this environment's built-ins as the addon loads in it (the main thread, each worker),
/// so a script that replaces `globalThis.Map` after loading the package cannot change what the
/// reader recognises. A capture that fails here is tried again at the first use.
#[napi_derive::napi(module_exports)]
pub fn capture_realm(_exports: Object, env: Env) -> Result<()> {
    if builtins(&env).is_err() {
        // Nothing to report at load: clear what the failed read left pending.
        let mut thrown = ptr::null_mut();
        // SAFETY: `env` is the env of the load running now and `thrown` a valid out-pointer; the
        // handle written, if any, is dropped unused.
        unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut thrown) };
    }
    Ok(())
}

/// The built-ins, kept in the environment's instance data (`crate::instance`) from the addon's load
/// on, so each worker thread has its own. Copied out at once: no reference into the instance data
/// outlives this function (a getter the reader runs may re-enter the addon).
fn builtins(env: &Env) -> Result<Builtins> {
    if let Some(realm) = instance(env)?.realm.as_ref() {
        return realm.builtins(env);
    }
    // Read before the instance data is taken again: reading globals may run a host getter.
    let global = env.get_global()?;
    let object: Object = global.get_c_named_property_unchecked(c"Object")?;
    let array: Object = global.get_c_named_property_unchecked(c"Array")?;
    let proto: Object = object.get_c_named_property_unchecked(c"prototype")?;
    let ctor = |name: &std::ffi::CStr| -> Result<Held> {
        global
            .get_c_named_property_unchecked::<Object>(name)?
            .create_ref()
    };
    let realm = Realm {
        object_proto: proto.create_ref()?,
        map_ctor: ctor(c"Map")?,
        set_ctor: ctor(c"Set")?,
        regexp_ctor: ctor(c"RegExp")?,
        array_from: array
            .get_c_named_property_unchecked::<Object>(c"from")?
            .create_ref()?,
    };
    let slot = &mut instance(env)?.realm;
    match slot {
        // A getter above re-entered and captured the realm first: keep that one.
        Some(_) => realm.unref(env)?,
        None => *slot = Some(realm),
    }
    let Some(realm) = instance(env)?.realm.as_ref() else {
        return Err(Error::new(
            Status::GenericFailure,
            "prism-tools-native: no realm for this environment",
        ));
    };
    realm.builtins(env)
}

impl Realm {
    fn builtins(&self, env: &Env) -> Result<Builtins> {
        Ok(Builtins {
            object_proto: self.object_proto.get_value(env)?.raw(),
            map_ctor: self.map_ctor.get_value(env)?.raw(),
            set_ctor: self.set_ctor.get_value(env)?.raw(),
            regexp_ctor: self.regexp_ctor.get_value(env)?.raw(),
            array_from: self.array_from.get_value(env)?.raw(),
        })
    }
}

/// Reads `v` once into an owned tree, as `policy` says.
pub(crate) fn read_host(env: &Env, v: Value, policy: ReadPolicy) -> Result<Host<Value>> {
    let mut reader = Reader {
        env,
        js: Js(env.raw()),
        builtins: None,
        policy,
        open: Vec::new(),
        foreign_object_proto: None,
    };
    reader.value(v, 0)
}

struct Reader<'e> {
    env: &'e Env,
    js: Js,
    /// Taken at the first container: a string or number (a redacted text, a primitive result)
    /// reads none.
    builtins: Option<Builtins>,
    policy: ReadPolicy,
    /// The containers open on the path from the root (with the policy's cycle check).
    open: Vec<Value>,
    /// The last other realm's `Object.prototype` recognised in this read.
    foreign_object_proto: Option<Value>,
}

/// A call that may run JS: `Ok(Err(thrown))` when it threw (the exception cleared and kept).
type Attempt = Result<std::result::Result<Value, Value>>;

impl Reader<'_> {
    fn b(&mut self) -> Result<Builtins> {
        match self.builtins {
            Some(b) => Ok(b),
            None => {
                let b = builtins(self.env)?;
                self.builtins = Some(b);
                Ok(b)
            }
        }
    }

    fn value(&mut self, v: Value, depth: usize) -> Result<Host<Value>> {
        let js = self.js;
        Ok(match js.type_of(v)? {
            sys::ValueType::napi_undefined => Host::Undefined,
            sys::ValueType::napi_null => Host::Null,
            sys::ValueType::napi_boolean => Host::Bool(js.is_true(v)?),
            sys::ValueType::napi_number => {
                let mut f = 0.0;
                // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
                check(unsafe { sys::napi_get_value_double(js.0, v, &mut f) })?;
                Host::Number(f)
            }
            sys::ValueType::napi_string => Host::String(js.string_value(v)?, Some(v)),
            sys::ValueType::napi_function => Host::Function(v),
            sys::ValueType::napi_object => self.object(v, depth)?,
            // symbol, bigint, external
            _ => Host::Other(v),
        })
    }

    /// A value read from a container: what a throwing read threw, or the value.
    fn item(
        &mut self,
        read: std::result::Result<Value, Value>,
        depth: usize,
    ) -> Result<Host<Value>> {
        match read {
            Ok(v) => self.value(v, depth),
            Err(thrown) => Ok(Host::Threw(thrown)),
        }
    }

    fn object(&mut self, v: Value, depth: usize) -> Result<Host<Value>> {
        let js = self.js;
        let mut is_array = false;
        // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_is_array(js.0, v, &mut is_array) })?;
        let mut proto = ptr::null_mut();
        if !is_array {
            // SAFETY: as above.
            check(unsafe { sys::napi_get_prototype(js.0, v, &mut proto) })?;
        }
        // Plain objects and arrays (the usual case) skip the checks for the other kinds.
        let usual = is_array || {
            let object_proto = self.b()?.object_proto;
            self.same(proto, object_proto)?
        };
        if !usual && self.is_opaque(v)? {
            return Ok(Host::Opaque(v));
        }
        if self.policy.cycles {
            for i in 0..self.open.len() {
                if self.same(self.open[i], v)? {
                    return Ok(Host::Circular);
                }
            }
        }
        if depth >= self.policy.max_depth {
            return Ok(Host::TooDeep);
        }
        // Only an unusual object can be a Map or a Set.
        let unusual = if usual { None } else { Some(self.b()?) };
        self.open.push(v);
        let out = match unusual {
            _ if is_array => self.array(v, depth),
            Some(b) if self.instance_of(v, b.map_ctor)? => self.map(v, depth),
            Some(b) if self.instance_of(v, b.set_ctor)? => self.set(v, depth),
            _ => self.record(v, usual, proto, depth),
        };
        self.open.pop();
        out
    }

    fn array(&mut self, v: Value, depth: usize) -> Result<Host<Value>> {
        let js = self.js;
        let len = self.length(v)?;
        let mut items = Vec::with_capacity(len as usize);
        for i in 0..len {
            let mut item = ptr::null_mut();
            // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
            let status = unsafe { sys::napi_get_element(js.0, v, i, &mut item) };
            let got = self.attempt(status, item)?;
            if matches!(got, Ok(item) if js.type_of(item)? == sys::ValueType::napi_undefined) {
                let mut has = true;
                // SAFETY: as above.
                check(unsafe { sys::napi_has_element(js.0, v, i, &mut has) })?;
                if !has {
                    items.push(Host::Hole);
                    continue;
                }
            }
            items.push(self.item(got, depth + 1)?);
        }
        Ok(Host::Array(items))
    }

    /// An object's own enumerable string-keyed properties; `Threw` when they cannot be listed (a
    /// proxy whose `ownKeys` throws).
    fn record(&mut self, v: Value, usual: bool, proto: Value, depth: usize) -> Result<Host<Value>> {
        let js = self.js;
        let kind = if usual {
            ObjectKind::Plain
        } else if self.is_error(v)? {
            // Error's own name and message are not enumerable: keep the two that explain it.
            let mut fields = Vec::new();
            for (key, name) in [("name", c"name"), ("message", c"message")] {
                let mut item = ptr::null_mut();
                // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
                let got =
                    unsafe { sys::napi_get_named_property(js.0, v, name.as_ptr(), &mut item) };
                if let Ok(item) = self.attempt(got, item)? {
                    if js.type_of(item)? == sys::ValueType::napi_string {
                        fields.push((key, self.value(item, depth + 1)?));
                    }
                }
            }
            ObjectKind::Error(fields)
        } else if js.type_of(proto)? == sys::ValueType::napi_null
            || self.is_object_prototype(proto)?
        {
            ObjectKind::Plain
        } else {
            ObjectKind::Instance
        };
        let mut names = ptr::null_mut();
        // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
        let listed = unsafe {
            sys::napi_get_all_property_names(
                js.0,
                v,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut names,
            )
        };
        let names = match self.attempt(listed, names)? {
            Ok(names) => names,
            Err(thrown) => return Ok(Host::Threw(thrown)),
        };
        let len = self.length(names)?;
        let mut entries = Vec::with_capacity(len as usize);
        for i in 0..len {
            let key = self.element(names, i)?;
            let name = key_of(js, key)?;
            let mut item = ptr::null_mut();
            // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
            let status = unsafe { sys::napi_get_property(js.0, v, key, &mut item) };
            let got = self.attempt(status, item)?;
            entries.push((name, self.item(got, depth + 1)?));
        }
        Ok(Host::Object(kind, entries))
    }

    /// `Array.from(v)` of a `Map` or `Set` (called with no receiver, so it builds a plain array).
    fn listed(&mut self, v: Value) -> Result<Value> {
        let js = self.js;
        let array_from = self.b()?.array_from;
        let args = [v];
        let mut out = ptr::null_mut();
        // SAFETY: a live env and handles of the running call (see `Js`); `args` holds the one
        // argument passed and outlives the call; `out` is a local.
        check(unsafe {
            sys::napi_call_function(
                js.0,
                js.undefined()?,
                array_from,
                1,
                args.as_ptr(),
                &mut out,
            )
        })?;
        Ok(out)
    }

    fn map(&mut self, v: Value, depth: usize) -> Result<Host<Value>> {
        let list = self.listed(v)?;
        let len = self.length(list)?;
        let mut entries = Vec::with_capacity(len as usize);
        for i in 0..len {
            let pair = self.element(list, i)?;
            let key = self.to_key(self.element(pair, 0)?)?;
            let item = self.element(pair, 1)?;
            entries.push((key, self.value(item, depth + 1)?));
        }
        Ok(Host::Map(entries))
    }

    fn set(&mut self, v: Value, depth: usize) -> Result<Host<Value>> {
        let list = self.listed(v)?;
        let len = self.length(list)?;
        let mut items = Vec::with_capacity(len as usize);
        for i in 0..len {
            let item = self.element(list, i)?;
            items.push(self.value(item, depth + 1)?);
        }
        Ok(Host::Set(items))
    }

    fn length(&self, array: Value) -> Result<u32> {
        let mut len = 0u32;
        // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_get_array_length(self.js.0, array, &mut len) })?;
        Ok(len)
    }

    fn element(&self, array: Value, i: u32) -> Result<Value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_get_element(self.js.0, array, i, &mut out) })?;
        Ok(out)
    }

    /// `String(v)` as JS computes it; a symbol and a throwing `toString` give a fixed text.
    fn to_key(&self, v: Value) -> Result<Key<Value>> {
        let js = self.js;
        match js.type_of(v)? {
            sys::ValueType::napi_string => key_of(js, v),
            sys::ValueType::napi_symbol => Ok(Key::from("Symbol()")),
            _ => {
                let mut s = ptr::null_mut();
                // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
                let status = unsafe { sys::napi_coerce_to_string(js.0, v, &mut s) };
                match self.attempt(status, s)? {
                    Ok(s) => key_of(js, s),
                    Err(_) => Ok(Key::from("[unprintable value]")),
                }
            }
        }
    }

    /// The value a call wrote, or what it threw (cleared): a throwing getter makes Node-API answer
    /// a generic failure with the exception pending, so the status alone does not tell.
    fn attempt(&self, status: sys::napi_status, out: Value) -> Attempt {
        if status == sys::Status::napi_ok {
            return Ok(Ok(out));
        }
        let js = self.js;
        let mut pending = false;
        // SAFETY: a live env (see `Js`); `pending` is a local.
        check(unsafe { sys::napi_is_exception_pending(js.0, &mut pending) })?;
        if !pending {
            return check(status).map(|()| Ok(out));
        }
        let mut thrown = ptr::null_mut();
        // SAFETY: as above; `thrown` receives the cleared exception.
        check(unsafe { sys::napi_get_and_clear_last_exception(js.0, &mut thrown) })?;
        Ok(Err(thrown))
    }

    fn same(&self, a: Value, b: Value) -> Result<bool> {
        let mut same = false;
        // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_strict_equals(self.js.0, a, b, &mut same) })?;
        Ok(same)
    }

    fn instance_of(&self, v: Value, ctor: Value) -> Result<bool> {
        let mut is = false;
        // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_instanceof(self.js.0, v, ctor, &mut is) })?;
        Ok(is)
    }

    fn is_error(&self, v: Value) -> Result<bool> {
        let mut is = false;
        // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_is_error(self.js.0, v, &mut is) })?;
        Ok(is)
    }

    /// A `Date`, a typed array or a `RegExp`: kept whole.
    fn is_opaque(&mut self, v: Value) -> Result<bool> {
        let js = self.js;
        let mut is = false;
        // SAFETY: a live env and handles of the running call (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_is_date(js.0, v, &mut is) })?;
        if !is {
            // SAFETY: as above.
            check(unsafe { sys::napi_is_typedarray(js.0, v, &mut is) })?;
        }
        Ok(is || {
            let regexp = self.b()?.regexp_ctor;
            self.instance_of(v, regexp)?
        })
    }

    /// Whether `proto` is another realm's `Object.prototype` (a `node:vm` context), recognised by
    /// shape: no prototype of its own, and a `constructor` function named `Object` whose
    /// `prototype` is `proto`.
    fn is_object_prototype(&mut self, proto: Value) -> Result<bool> {
        let js = self.js;
        if self.foreign_object_proto == Some(proto) {
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
        if !self.same(js.get(ctor, c"prototype")?, proto)? {
            return Ok(false);
        }
        let name = js.get(ctor, c"name")?;
        if js.string_if_any(name)?.as_deref() != Some("Object") {
            return Ok(false);
        }
        self.foreign_object_proto = Some(proto);
        Ok(true)
    }
}

/// Writes a tree back as JS values: a string that kept its handle, and every value held by handle,
/// is the original; containers are new arrays and plain objects (a `Map` an object, a `Set` an
/// array, a hole left a hole). The marks of what was not read are a consumer's to choose (redaction
/// writes texts); left in a tree, they are `undefined`.
pub(crate) fn write_host(js: Js, v: Host<Value>) -> Result<Value> {
    let mut out = ptr::null_mut();
    let status = match v {
        Host::String(_, Some(h)) | Host::Function(h) | Host::Other(h) | Host::Opaque(h) => {
            return Ok(h)
        }
        Host::String(s, None) => return js.create_string(&s),
        Host::Array(items) | Host::Set(items) => return write_array(js, items),
        Host::Object(_, entries) | Host::Map(entries) => return write_object(js, entries),
        // SAFETY: a live env (see `Js`); `out` is a local.
        Host::Null => unsafe { sys::napi_get_null(js.0, &mut out) },
        // SAFETY: as above.
        Host::Bool(b) => unsafe { sys::napi_get_boolean(js.0, b, &mut out) },
        // SAFETY: as above.
        Host::Number(f) => unsafe { sys::napi_create_double(js.0, f, &mut out) },
        // SAFETY: as above.
        Host::Undefined | Host::Circular | Host::TooDeep | Host::Threw(_) | Host::Hole => unsafe {
            sys::napi_get_undefined(js.0, &mut out)
        },
    };
    check(status)?;
    Ok(out)
}

fn write_array(js: Js, items: Vec<Host<Value>>) -> Result<Value> {
    let mut out = ptr::null_mut();
    // SAFETY: a live env (see `Js`); `out` is a local.
    check(unsafe { sys::napi_create_array_with_length(js.0, items.len(), &mut out) })?;
    for (i, item) in items.into_iter().enumerate() {
        if matches!(item, Host::Hole) {
            continue;
        }
        let item = write_host(js, item)?;
        // SAFETY: a live env and handles of the running call (see `Js`).
        check(unsafe { sys::napi_set_element(js.0, out, i as u32, item) })?;
    }
    Ok(out)
}

fn write_object(js: Js, entries: Vec<(Key<Value>, Host<Value>)>) -> Result<Value> {
    let mut out = ptr::null_mut();
    // SAFETY: a live env (see `Js`); `out` is a local.
    check(unsafe { sys::napi_create_object(js.0, &mut out) })?;
    for (key, item) in entries {
        let item = write_host(js, item)?;
        set_key(js, out, key, item)?;
    }
    Ok(out)
}

/// A key read from the JS string `v`: its handle is kept when the text holds U+FFFD, which may
/// stand for a lone surrogate the text cannot hold (redaction then reads its code units).
fn key_of(js: Js, v: Value) -> Result<Key<Value>> {
    let text = js.string_value(v)?;
    let handle = text.contains('\u{FFFD}').then_some(v);
    Ok(Key { text, handle })
}

/// Sets an own data property named `key` (its host string where it has one). `__proto__` is
/// defined, not assigned: assigning it would replace the object's prototype with host data.
fn set_key(js: Js, obj: Value, key: Key<Value>, value: Value) -> Result<()> {
    // A JS string key, not a C string: keys may hold NUL characters.
    let name = match key.handle {
        Some(h) => h,
        None => js.create_string(&key.text)?,
    };
    if key.text != "__proto__" {
        // SAFETY: a live env and handles of the running call (see `Js`).
        return check(unsafe { sys::napi_set_property(js.0, obj, name, value) });
    }
    let property = sys::napi_property_descriptor {
        utf8name: ptr::null(),
        name,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable
            | sys::PropertyAttributes::enumerable
            | sys::PropertyAttributes::configurable,
        data: ptr::null_mut(),
    };
    // SAFETY: a live env and handles of the running call (see `Js`); `property` is one descriptor
    // that outlives the call.
    check(unsafe { sys::napi_define_properties(js.0, obj, 1, &property) })
}
