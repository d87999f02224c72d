//! A thin, checked layer over the raw Node-API calls the harness needs on its hot paths.
//!
//! The dispatch machine reads host objects and calls host functions many times per call; going
//! through raw `napi_value`s (plain `Copy` handles, valid for the current callback) keeps each
//! step to the one Node-API call it needs. Every status is checked: a JS exception becomes
//! `Fail::Pending` (left pending, so returning it rethrows the very object), anything else a
//! `Fail::Throw` that the entry point turns into a JS error. Nothing here panics.
// What is left of the raw layer serves only the redaction walk (js::redact) and the registry
// (js::registry) until both move to napi-rs's safe API; dispatch no longer uses it.
#![allow(dead_code, clippy::wrong_self_convention)]

use std::ffi::{c_void, CStr};
use std::ptr;

use napi::sys;

pub type V = sys::napi_value;

/// Why a boundary operation failed.
#[derive(Debug)]
pub enum Fail {
    /// A JS exception is pending in the engine; returning it rethrows that exception.
    Pending,
    /// Throw a new JS error of this kind.
    Throw {
        kind: ErrKind,
        message: String,
        code: Option<&'static str>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrKind {
    Error,
    Type,
    Range,
}

pub type R<T> = Result<T, Fail>;

pub fn type_error(message: impl Into<String>, code: &'static str) -> Fail {
    Fail::Throw {
        kind: ErrKind::Type,
        message: message.into(),
        code: Some(code),
    }
}
pub fn range_error(message: impl Into<String>, code: &'static str) -> Fail {
    Fail::Throw {
        kind: ErrKind::Range,
        message: message.into(),
        code: Some(code),
    }
}
pub fn error(message: impl Into<String>, code: &'static str) -> Fail {
    Fail::Throw {
        kind: ErrKind::Error,
        message: message.into(),
        code: Some(code),
    }
}

/// JS value types, as `typeof` distinguishes them (plus null).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Undefined,
    Null,
    Boolean,
    Number,
    String,
    Symbol,
    Object,
    Function,
    External,
    BigInt,
}

/// `is_x(&self, v) -> R<bool>` methods over Node-API's `napi_is_x` checks.
macro_rules! predicates {
    ($($name:ident => $f:ident),* $(,)?) => {
        $(
            pub fn $name(&self, v: V) -> R<bool> {
                let mut b = false;
                call!(self, $f(v, &mut b))?;
                Ok(b)
            }
        )*
    };
}

#[derive(Clone, Copy)]
pub struct Js {
    pub env: sys::napi_env,
}

macro_rules! call {
    ($self:ident, $f:ident ( $($arg:expr),* )) => {{
        let status = unsafe { sys::$f($self.env, $($arg),*) };
        $self.check(status)
    }};
}

impl Js {
    pub fn new(env: sys::napi_env) -> Self {
        Js { env }
    }

    #[inline]
    pub fn check(&self, status: sys::napi_status) -> R<()> {
        if status == sys::Status::napi_ok {
            return Ok(());
        }
        let mut pending = false;
        unsafe { sys::napi_is_exception_pending(self.env, &mut pending) };
        if pending || status == sys::Status::napi_pending_exception {
            return Err(Fail::Pending);
        }
        Err(error(
            format!("Node-API call failed (status {status})"),
            "ERR_PRISM_NATIVE",
        ))
    }

    // ----- constants and primitives -------------------------------------------------------------

    pub fn undefined(&self) -> V {
        let mut v = ptr::null_mut();
        unsafe { sys::napi_get_undefined(self.env, &mut v) };
        v
    }

    pub fn boolean(&self, b: bool) -> V {
        let mut v = ptr::null_mut();
        unsafe { sys::napi_get_boolean(self.env, b, &mut v) };
        v
    }
    pub fn number(&self, n: f64) -> R<V> {
        let mut v = ptr::null_mut();
        call!(self, napi_create_double(n, &mut v))?;
        Ok(v)
    }
    pub fn string(&self, s: &str) -> R<V> {
        let mut v = ptr::null_mut();
        call!(
            self,
            napi_create_string_utf8(s.as_ptr().cast(), s.len() as isize, &mut v)
        )?;
        Ok(v)
    }
    pub fn global(&self) -> R<V> {
        let mut v = ptr::null_mut();
        call!(self, napi_get_global(&mut v))?;
        Ok(v)
    }

    // ----- inspection ---------------------------------------------------------------------------

    #[inline]
    pub fn ty(&self, v: V) -> R<Ty> {
        let mut t = 0;
        call!(self, napi_typeof(v, &mut t))?;
        Ok(match t {
            sys::ValueType::napi_undefined => Ty::Undefined,
            sys::ValueType::napi_null => Ty::Null,
            sys::ValueType::napi_boolean => Ty::Boolean,
            sys::ValueType::napi_number => Ty::Number,
            sys::ValueType::napi_string => Ty::String,
            sys::ValueType::napi_symbol => Ty::Symbol,
            sys::ValueType::napi_function => Ty::Function,
            sys::ValueType::napi_external => Ty::External,
            sys::ValueType::napi_bigint => Ty::BigInt,
            _ => Ty::Object,
        })
    }
    pub fn is_nullish(&self, v: V) -> R<bool> {
        Ok(matches!(self.ty(v)?, Ty::Undefined | Ty::Null))
    }
    predicates! {
        is_array => napi_is_array,
        is_error => napi_is_error,
        is_date => napi_is_date,
        is_typedarray => napi_is_typedarray,
        is_promise => napi_is_promise,
    }
    /// A native promise, or any object or function with a callable `then` (Promises/A+ thenable).
    pub fn is_thenable(&self, v: V) -> R<bool> {
        match self.ty(v)? {
            Ty::Object => {
                if self.is_promise(v)? {
                    return Ok(true);
                }
                let then = self.get(v, c"then")?;
                Ok(self.ty(then)? == Ty::Function)
            }
            Ty::Function => {
                let then = self.get(v, c"then")?;
                Ok(self.ty(then)? == Ty::Function)
            }
            _ => Ok(false),
        }
    }
    pub fn strict_eq(&self, a: V, b: V) -> R<bool> {
        let mut r = false;
        call!(self, napi_strict_equals(a, b, &mut r))?;
        Ok(r)
    }
    pub fn prototype_of(&self, v: V) -> R<V> {
        let mut p = ptr::null_mut();
        call!(self, napi_get_prototype(v, &mut p))?;
        Ok(p)
    }
    pub fn instance_of(&self, v: V, ctor: V) -> R<bool> {
        let mut b = false;
        call!(self, napi_instanceof(v, ctor, &mut b))?;
        Ok(b)
    }

    // ----- values out -------------------------------------------------------------------------

    /// The UTF-8 contents of a JS string (lone surrogates become U+FFFD, as Node-API converts).
    pub fn str(&self, v: V) -> R<String> {
        let mut len = 0usize;
        call!(
            self,
            napi_get_value_string_utf8(v, ptr::null_mut(), 0, &mut len)
        )?;
        let mut buf: Vec<u8> = Vec::with_capacity(len + 1);
        let mut written = 0usize;
        call!(
            self,
            napi_get_value_string_utf8(v, buf.as_mut_ptr().cast(), len + 1, &mut written)
        )?;
        unsafe { buf.set_len(written) };
        Ok(String::from_utf8(buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
    }
    /// `Some(string)` when `v` is a string.
    pub fn opt_str(&self, v: V) -> R<Option<String>> {
        if self.ty(v)? == Ty::String {
            Ok(Some(self.str(v)?))
        } else {
            Ok(None)
        }
    }
    pub fn f64(&self, v: V) -> R<f64> {
        let mut n = 0.0;
        call!(self, napi_get_value_double(v, &mut n))?;
        Ok(n)
    }
    pub fn bool(&self, v: V) -> R<bool> {
        let mut b = false;
        call!(self, napi_get_value_bool(v, &mut b))?;
        Ok(b)
    }
    /// `String(v)` as JS computes it; symbols and throwing `toString`s give a fixed text.
    pub fn to_js_string(&self, v: V) -> R<String> {
        match self.ty(v)? {
            Ty::String => self.str(v),
            Ty::Symbol => Ok("Symbol()".into()),
            _ => {
                let mut s = ptr::null_mut();
                let status = unsafe { sys::napi_coerce_to_string(self.env, v, &mut s) };
                match self.check(status) {
                    Ok(()) => self.str(s),
                    Err(Fail::Pending) => {
                        self.take_exception();
                        Ok("[unprintable value]".into())
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }

    // ----- objects and arrays -----------------------------------------------------------------

    pub fn object(&self) -> R<V> {
        let mut v = ptr::null_mut();
        call!(self, napi_create_object(&mut v))?;
        Ok(v)
    }
    pub fn array(&self, len: usize) -> R<V> {
        let mut v = ptr::null_mut();
        call!(self, napi_create_array_with_length(len, &mut v))?;
        Ok(v)
    }
    #[inline]
    pub fn get(&self, obj: V, key: &'static CStr) -> R<V> {
        let mut v = ptr::null_mut();
        call!(self, napi_get_named_property(obj, key.as_ptr(), &mut v))?;
        Ok(v)
    }
    /// Property read on any value: `undefined` for non-objects instead of a TypeError.
    pub fn get_opt(&self, obj: V, key: &'static CStr) -> R<V> {
        match self.ty(obj)? {
            Ty::Object | Ty::Function => self.get(obj, key),
            _ => Ok(self.undefined()),
        }
    }
    pub fn get_prop(&self, obj: V, key: V) -> R<V> {
        let mut v = ptr::null_mut();
        call!(self, napi_get_property(obj, key, &mut v))?;
        Ok(v)
    }
    #[inline]
    pub fn set(&self, obj: V, key: &CStr, value: V) -> R<()> {
        call!(self, napi_set_named_property(obj, key.as_ptr(), value))
    }
    pub fn set_prop(&self, obj: V, key: V, value: V) -> R<()> {
        call!(self, napi_set_property(obj, key, value))
    }
    /// Sets an own data property named `key`. `__proto__` is defined, not assigned: assigning it
    /// would replace the object's prototype with host data.
    pub fn set_str_key(&self, obj: V, key: &str, value: V) -> R<()> {
        let k = self.string(key)?;
        if key != "__proto__" {
            return self.set_prop(obj, k, value);
        }
        let desc = sys::napi_property_descriptor {
            utf8name: ptr::null(),
            name: k,
            method: None,
            getter: None,
            setter: None,
            value,
            attributes: sys::PropertyAttributes::writable
                | sys::PropertyAttributes::enumerable
                | sys::PropertyAttributes::configurable,
            data: ptr::null_mut(),
        };
        call!(self, napi_define_properties(obj, 1, &desc))
    }
    pub fn element(&self, arr: V, i: u32) -> R<V> {
        let mut v = ptr::null_mut();
        call!(self, napi_get_element(arr, i, &mut v))?;
        Ok(v)
    }
    pub fn set_element(&self, arr: V, i: u32, value: V) -> R<()> {
        call!(self, napi_set_element(arr, i, value))
    }
    pub fn array_len(&self, arr: V) -> R<u32> {
        let mut n = 0u32;
        call!(self, napi_get_array_length(arr, &mut n))?;
        Ok(n)
    }
    /// Own enumerable string keys, as `Object.keys` gives them.
    pub fn keys(&self, obj: V) -> R<V> {
        let mut v = ptr::null_mut();
        call!(
            self,
            napi_get_all_property_names(
                obj,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut v
            )
        )?;
        Ok(v)
    }

    /// Own string keys, enumerable or not (what a property read by name would find on the object
    /// itself).
    pub fn keys_all(&self, obj: V) -> R<V> {
        let mut v = ptr::null_mut();
        call!(
            self,
            napi_get_all_property_names(
                obj,
                sys::KeyCollectionMode::own_only,
                sys::KeyFilter::skip_symbols,
                sys::KeyConversion::numbers_to_strings,
                &mut v
            )
        )?;
        Ok(v)
    }

    /// A short string read in one crossing into `buf`: `None` when `v` is not a string or does not
    /// fit (the caller then treats it as no match).
    pub fn short_str<'b>(&self, v: V, buf: &'b mut [u8]) -> R<Option<&'b [u8]>> {
        let mut written = 0usize;
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                v,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            )
        };
        if status == sys::Status::napi_string_expected {
            return Ok(None);
        }
        self.check(status)?;
        if written + 1 >= buf.len() {
            return Ok(None);
        }
        Ok(Some(&buf[..written]))
    }

    /// A string read in one crossing when it is short, two otherwise; `None` when not a string.
    pub fn fast_str(&self, v: V) -> R<Option<String>> {
        let mut buf = [0u8; 128];
        let mut written = 0usize;
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.env,
                v,
                buf.as_mut_ptr().cast(),
                buf.len(),
                &mut written,
            )
        };
        if status == sys::Status::napi_string_expected {
            return Ok(None);
        }
        self.check(status)?;
        if written + 1 < buf.len() {
            return Ok(Some(String::from_utf8_lossy(&buf[..written]).into_owned()));
        }
        Ok(Some(self.str(v)?))
    }

    // ----- functions and exceptions -----------------------------------------------------------

    /// Calls `f` with `this` and `args`. A throw comes back as `Err(Fail::Pending)`.
    #[inline]
    pub fn call(&self, this: V, f: V, args: &[V]) -> R<V> {
        let mut out = ptr::null_mut();
        call!(
            self,
            napi_call_function(this, f, args.len(), args.as_ptr(), &mut out)
        )?;
        Ok(out)
    }
    /// Calls `f`; a JS throw is caught and returned as `Ok(Err(thrown))`.
    pub fn call_catch(&self, this: V, f: V, args: &[V]) -> R<Result<V, V>> {
        match self.call(this, f, args) {
            Ok(v) => Ok(Ok(v)),
            Err(Fail::Pending) => Ok(Err(self.take_exception())),
            Err(e) => Err(e),
        }
    }
    /// Clears and returns the pending exception (undefined when none is pending).
    pub fn take_exception(&self) -> V {
        let mut v = ptr::null_mut();
        let status = unsafe { sys::napi_get_and_clear_last_exception(self.env, &mut v) };
        if status != sys::Status::napi_ok || v.is_null() {
            return self.undefined();
        }
        v
    }
    pub fn throw(&self, v: V) -> R<()> {
        call!(self, napi_throw(v))
    }
    /// Creates (does not throw) an Error of the given kind with `code`.
    pub fn new_error(&self, kind: ErrKind, message: &str, code: Option<&str>) -> R<V> {
        let msg = self.string(message)?;
        let code_v = match code {
            Some(c) => self.string(c)?,
            None => ptr::null_mut(),
        };
        let mut e = ptr::null_mut();
        match kind {
            ErrKind::Error => call!(self, napi_create_error(code_v, msg, &mut e))?,
            ErrKind::Type => call!(self, napi_create_type_error(code_v, msg, &mut e))?,
            ErrKind::Range => call!(self, napi_create_range_error(code_v, msg, &mut e))?,
        }
        Ok(e)
    }

    /// Turns a failure into the pending JS exception an entry point leaves behind.
    pub fn raise(&self, fail: Fail) {
        match fail {
            Fail::Pending => {}
            Fail::Throw {
                kind,
                message,
                code,
            } => {
                if let Ok(e) = self.new_error(kind, &message, code) {
                    let _ = self.throw(e);
                }
            }
        }
    }

    // ----- references and externals -----------------------------------------------------------

    pub fn create_ref(&self, v: V) -> R<sys::napi_ref> {
        let mut r = ptr::null_mut();
        call!(self, napi_create_reference(v, 1, &mut r))?;
        Ok(r)
    }
    pub fn ref_value(&self, r: sys::napi_ref) -> R<V> {
        let mut v = ptr::null_mut();
        call!(self, napi_get_reference_value(r, &mut v))?;
        Ok(v)
    }
    pub fn delete_ref(&self, r: sys::napi_ref) {
        unsafe { sys::napi_delete_reference(self.env, r) };
    }

    /// Wraps a Rust value in a JS external; it is dropped when the external is collected.
    pub fn external<T: 'static>(&self, value: T) -> R<V> {
        unsafe extern "C" fn drop_box<T>(
            _env: sys::napi_env,
            data: *mut c_void,
            _hint: *mut c_void,
        ) {
            drop(unsafe { Box::from_raw(data.cast::<T>()) });
        }
        let raw = Box::into_raw(Box::new(value));
        let mut v = ptr::null_mut();
        let status = unsafe {
            sys::napi_create_external(
                self.env,
                raw.cast(),
                Some(drop_box::<T>),
                ptr::null_mut(),
                &mut v,
            )
        };
        if status != sys::Status::napi_ok {
            drop(unsafe { Box::from_raw(raw) });
        }
        self.check(status)?;
        Ok(v)
    }
    /// The Rust value behind an external made by [`Js::external`] with the same `T`.
    ///
    /// # Safety
    /// `v` must be an external created by `external::<T>` of this module.
    pub unsafe fn external_ptr<T>(&self, v: V) -> R<*mut T> {
        let mut data = ptr::null_mut();
        call!(self, napi_get_value_external(v, &mut data))?;
        Ok(data.cast())
    }

    /// A JS function backed by a raw callback with a data pointer.
    pub fn function(&self, name: &str, cb: sys::napi_callback, data: *mut c_void) -> R<V> {
        let mut v = ptr::null_mut();
        call!(
            self,
            napi_create_function(name.as_ptr().cast(), name.len() as isize, cb, data, &mut v)
        )?;
        Ok(v)
    }
    /// Drops `Box<T>` at `data` when `obj` is collected.
    pub fn attach_box<T: 'static>(&self, obj: V, data: *mut T) -> R<()> {
        unsafe extern "C" fn drop_box<T>(
            _env: sys::napi_env,
            data: *mut c_void,
            _hint: *mut c_void,
        ) {
            drop(unsafe { Box::from_raw(data.cast::<T>()) });
        }
        call!(
            self,
            napi_add_finalizer(
                obj,
                data.cast(),
                Some(drop_box::<T>),
                ptr::null_mut(),
                ptr::null_mut()
            )
        )
    }
    pub fn type_tag(&self, obj: V, tag: &sys::napi_type_tag) -> R<()> {
        call!(self, napi_type_tag_object(obj, tag))
    }
    pub fn has_type_tag(&self, obj: V, tag: &sys::napi_type_tag) -> R<bool> {
        let mut b = false;
        call!(self, napi_check_object_type_tag(obj, tag, &mut b))?;
        Ok(b)
    }
    pub fn wrap<T: 'static>(&self, obj: V, value: T) -> R<*mut T> {
        unsafe extern "C" fn drop_box<T>(
            _env: sys::napi_env,
            data: *mut c_void,
            _hint: *mut c_void,
        ) {
            drop(unsafe { Box::from_raw(data.cast::<T>()) });
        }
        let raw = Box::into_raw(Box::new(value));
        let status = unsafe {
            sys::napi_wrap(
                self.env,
                obj,
                raw.cast(),
                Some(drop_box::<T>),
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if status != sys::Status::napi_ok {
            drop(unsafe { Box::from_raw(raw) });
        }
        self.check(status)?;
        Ok(raw)
    }
    /// # Safety
    /// `obj` must have been wrapped with `wrap::<T>` (check its type tag first).
    pub unsafe fn unwrap<T>(&self, obj: V) -> R<*mut T> {
        let mut data = ptr::null_mut();
        call!(self, napi_unwrap(obj, &mut data))?;
        Ok(data.cast())
    }
}

/// Reads the `this`, data pointer and up to `N` arguments of a raw callback (missing ones are
/// `undefined`).
pub fn cb_args<const N: usize>(
    js: &Js,
    info: sys::napi_callback_info,
) -> R<(V, *mut c_void, [V; N], usize)> {
    let mut argc = N;
    let mut argv = [ptr::null_mut(); N];
    let mut this = ptr::null_mut();
    let mut data = ptr::null_mut();
    js.check(unsafe {
        sys::napi_get_cb_info(
            js.env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            &mut this,
            &mut data,
        )
    })?;
    let undef = js.undefined();
    for (i, slot) in argv.iter_mut().enumerate() {
        if i >= argc {
            *slot = undef;
        }
    }
    Ok((this, data, argv, argc))
}

/// Runs the body of a raw callback: failures become JS exceptions, a panic becomes an Error
/// instead of unwinding into Node.
pub fn boundary(env: sys::napi_env, body: impl FnOnce(&Js) -> R<V>) -> V {
    let js = Js::new(env);
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(&js)));
    match out {
        Ok(Ok(v)) => v,
        Ok(Err(fail)) => {
            js.raise(fail);
            ptr::null_mut()
        }
        Err(_) => {
            js.raise(error(
                "internal error in prism-tools-native (a bug: please report it)",
                "ERR_PRISM_INTERNAL",
            ));
            ptr::null_mut()
        }
    }
}

/// Declares a raw Node-API callback: `raw_fn!(name, |js, info| -> R<V> { ... })`.
#[macro_export]
macro_rules! raw_fn {
    ($(#[$meta:meta])* $name:ident, |$js:ident, $info:ident| $body:block) => {
        $(#[$meta])*
        pub unsafe extern "C" fn $name(
            env: napi::sys::napi_env,
            $info: napi::sys::napi_callback_info,
        ) -> napi::sys::napi_value {
            $crate::js::raw::boundary(env, |$js| $body)
        }
    };
}
