//! Raw Node-API helpers of the effects binding: one property read, one string, one call each.

use napi::bindgen_prelude::*;
use napi::sys;
use prism_tools_core::effects::identity::Field;
use prism_tools_core::effects::time::parse_iso_strict;
use std::ffi::CStr;
use std::ptr;

/// A JS environment handle for raw calls. Every helper returns `napi::Result`; a pending JS exception
/// comes back as `Err(PendingException)` and rethrows the original value.
///
/// Invariant the `// SAFETY:` comments below rely on: a `Js` is made only at an entry point from
/// the `Env` of the callback running now, is never stored, and every `napi_value` given to it is a
/// handle of that callback's scope. Node-API checks each handle's type and answers a status, which
/// `check` turns into an error; out-pointers are locals of the helper.
#[derive(Clone, Copy)]
pub(crate) struct Js(pub sys::napi_env);

pub(crate) fn check(status: sys::napi_status) -> Result<()> {
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
    /// Element `i` of an object (an array's item).
    pub fn element(self, obj: sys::napi_value, i: u32) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
        check(unsafe { sys::napi_get_element(self.0, obj, i, &mut out) })?;
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
        match self.string_if_any(v)? {
            Some(s) => Ok(s),
            None => Err(Error::new(Status::StringExpected, "a string was expected")),
        }
    }
    /// The string `v` holds, `None` when it is not a string (asked of the string itself: a field
    /// that is a string, the common case, costs one call).
    pub fn string_if_any(self, v: sys::napi_value) -> Result<Option<String>> {
        // Identity fields, ids and hashes are short: one call into a stack buffer reads them (asking
        // for the length first cost a second UTF-8 pass per string).
        let mut small = [0u8; 128];
        let mut written = 0usize;
        // SAFETY: a live env and handle (see `Js`); `small` holds the 128 bytes passed.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.0,
                v,
                small.as_mut_ptr().cast(),
                small.len(),
                &mut written,
            )
        };
        if status == sys::Status::napi_string_expected {
            return Ok(None);
        }
        check(status)?;
        // Node writes whole characters only, into at most 127 bytes: a string it cut short filled more
        // than 123 of them (the character that did not fit takes at most 4). Fewer is the whole string.
        if written <= small.len() - 5 {
            return Ok(Some(utf8(small[..written].to_vec())));
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
        Ok(Some(utf8(buf)))
    }
    pub fn field_of(self, v: sys::napi_value) -> Result<Field> {
        if let Some(s) = self.string_if_any(v)? {
            return Ok(Field::Text(s));
        }
        Ok(match self.type_of(v)? {
            sys::ValueType::napi_undefined => Field::Absent,
            _ => Field::Invalid,
        })
    }
    /// A property of `obj`, known to be an object or a function, as a field.
    pub fn own_field(self, obj: sys::napi_value, name: &CStr) -> Result<Field> {
        self.field_of(self.get(obj, name)?)
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

fn utf8(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Parses a timestamp as `Date.parse` does: common ISO forms in Rust, the rest through the host.
pub(crate) fn host_parse(js: Js) -> impl Fn(&str) -> Option<i64> {
    move |s: &str| parse_iso_strict(s).or_else(|| js.date_parse(s))
}
