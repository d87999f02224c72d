//! Node-API calls on the env of the running callback, each returning `Result` (none panics on
//! host data). Every read and write of a JS value in tool search goes through here or through
//! `typed.rs` (typed arrays), so the `unsafe` of the crossing sits in these two files.

use std::ffi::CStr;
use std::ptr;

use napi::bindgen_prelude::*;
use napi::{sys, ValueType};

use prism_tools_core::text::utf8_prefix;

// Raw helpers. Each returns `Result`; none panics on host data.

/// Node-API calls on the env of the callback running now.
///
/// Invariant the `// SAFETY:` comments below rely on: a `Raw` is made only at an entry point (or a
/// closure's callback) from that callback's `Env`, is never stored, and every `napi_value` given to
/// it is a handle of that callback's scope. Node-API itself checks each handle's type and answers
/// a status, which `check` turns into an error.
#[derive(Clone, Copy)]
pub(super) struct Raw(pub(super) sys::napi_env);

impl Raw {
    pub(super) fn check(status: sys::napi_status, what: &str) -> Result<()> {
        if status == sys::Status::napi_ok {
            Ok(())
        } else {
            Err(Error::new(
                Status::from(status),
                format!("tool search: {what} failed"),
            ))
        }
    }

    /// Runs a Node-API call that answers through one out-pointer (`init` until it writes),
    /// and checks its status.
    pub(super) fn answer<T>(
        mut init: T,
        what: &str,
        call: impl FnOnce(&mut T) -> sys::napi_status,
    ) -> Result<T> {
        Self::check(call(&mut init), what)?;
        Ok(init)
    }

    pub(super) fn type_of(self, v: sys::napi_value) -> Result<ValueType> {
        let t = Self::answer(0, "typeof", |t| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `t` is a local.
            unsafe { sys::napi_typeof(self.0, v, t) }
        })?;
        Ok(ValueType::from(t))
    }

    pub(super) fn is_array(self, v: sys::napi_value) -> Result<bool> {
        Self::answer(false, "is_array", |b| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `b` is a local.
            unsafe { sys::napi_is_array(self.0, v, b) }
        })
    }

    pub(super) fn array_len(self, v: sys::napi_value) -> Result<u32> {
        Self::answer(0, "array length", |n| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `n` is a local.
            unsafe { sys::napi_get_array_length(self.0, v, n) }
        })
    }

    pub(super) fn element(self, v: sys::napi_value, i: u32) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "get element", |out| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `out` is a local.
            unsafe { sys::napi_get_element(self.0, v, i, out) }
        })
    }

    pub(super) fn get(self, obj: sys::napi_value, key: &CStr) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "get property", |out| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `key` is a
            // NUL-terminated C string; `out` is a local.
            unsafe { sys::napi_get_named_property(self.0, obj, key.as_ptr(), out) }
        })
    }

    pub(super) fn set(
        self,
        obj: sys::napi_value,
        key: &CStr,
        value: sys::napi_value,
    ) -> Result<()> {
        Self::check(
            // SAFETY: live env and handles of the running callback (see `Raw`); `key` is a
            // NUL-terminated C string.
            unsafe { sys::napi_set_named_property(self.0, obj, key.as_ptr(), value) },
            "set property",
        )
    }

    /// Copies string `v` into `dst` with `copy` (napi's UTF-8 or UTF-16 getter, given `dst`'s
    /// pointer and length, or null and 0 when `dst` is empty, which asks for the length only).
    /// Returns what `copy` wrote to its count, `None` when `v` is not a string.
    fn string_into<T>(
        dst: &mut [T],
        copy: impl FnOnce(*mut T, usize, &mut usize) -> sys::napi_status,
    ) -> Result<Option<usize>> {
        let (at, size) = match dst.is_empty() {
            true => (ptr::null_mut(), 0),
            false => (dst.as_mut_ptr(), dst.len()),
        };
        let mut n = 0usize;
        let status = copy(at, size, &mut n);
        if status == sys::Status::napi_string_expected {
            return Ok(None);
        }
        Self::check(status, "string copy")?;
        Ok(Some(n))
    }

    /// Copies the UTF-8 of string `v` into `dst`: at most `dst.len() - 1` bytes of whole
    /// characters, then the NUL napi writes; an empty `dst` asks for the full length only.
    /// Returns the bytes copied (or the length), `None` when `v` is not a string.
    pub(super) fn utf8_into(self, v: sys::napi_value, dst: &mut [u8]) -> Result<Option<usize>> {
        Self::string_into(dst, |at, size, n| {
            // SAFETY: a live env and handle (see `Raw`); napi writes at most `size` bytes at `at`,
            // which is `dst` and its length (or null and 0, which asks for the length only).
            unsafe { sys::napi_get_value_string_utf8(self.0, v, at.cast(), size, n) }
        })
    }

    /// `utf8_into` in UTF-16 code units: the units copied (or the length), `None` when `v` is
    /// not a string.
    pub(super) fn utf16_into(self, v: sys::napi_value, dst: &mut [u16]) -> Result<Option<usize>> {
        Self::string_into(dst, |at, size, n| {
            // SAFETY: a live env and handle (see `Raw`); napi writes at most `size` code units at
            // `at`, which is `dst` and its length (or null and 0, which asks for the length only).
            unsafe { sys::napi_get_value_string_utf16(self.0, v, at, size, n) }
        })
    }

    /// The string value of `v` if it is a string: UTF-8, at most `max` bytes, cut on a character
    /// boundary (lone surrogates arrive as U+FFFD). Returns the text and whether it was cut.
    /// Short strings take one napi call: a copy into `buf`; only a copy that may have been cut
    /// asks for the full length.
    pub(super) fn string(
        self,
        v: sys::napi_value,
        max: usize,
        buf: &mut Vec<u8>,
    ) -> Result<Option<(String, bool)>> {
        const FIRST: usize = 4096;
        let first = max.min(FIRST);
        if buf.len() < first + 1 {
            buf.resize(first + 1, 0);
        }
        let Some(copied) = self.utf8_into(v, &mut buf[..first + 1])? else {
            return Ok(None);
        };
        // A copy ending more than 3 bytes before the buffer's end is whole (V8 copies whole
        // characters only, so a cut one can stop up to 3 bytes early).
        if copied + 3 < first {
            return Ok(Some((Self::utf8(&buf[..copied]), false)));
        }
        let len = self.utf8_into(v, &mut [])?.unwrap_or(0);
        let want = len.min(max);
        if buf.len() < want + 1 {
            buf.resize(want + 1, 0);
        }
        let copied = self.utf8_into(v, &mut buf[..want + 1])?.unwrap_or(0);
        let text = Self::utf8(&buf[..copied.min(want)]);
        let kept = utf8_prefix(&text, max);
        let cut = len > kept.len();
        Ok(Some((kept.to_owned(), cut)))
    }

    /// Whether the JS string `v` holds a lone UTF-16 surrogate. Its UTF-8 copy shows one as U+FFFD,
    /// so two different names (`pay\ud800`, `pay\udc00`) would read as the same text; callers ask
    /// only when the copy contains U+FFFD.
    fn has_lone_surrogate(self, v: sys::napi_value) -> Result<bool> {
        let len = self.utf16_into(v, &mut [])?.unwrap_or(0);
        let mut units = vec![0u16; len + 1];
        let copied = self.utf16_into(v, &mut units)?.unwrap_or(0);
        Ok(char::decode_utf16(units[..copied.min(len)].iter().copied()).any(|c| c.is_err()))
    }

    /// A tool name: its text and whether it is well-formed (no lone surrogate), or `None` when
    /// `v` is not a string.
    pub(super) fn name(
        self,
        v: sys::napi_value,
        buf: &mut Vec<u8>,
    ) -> Result<Option<(String, bool)>> {
        let Some((name, _)) = self.string(v, usize::MAX, buf)? else {
            return Ok(None);
        };
        let well_formed = !name.contains('\u{FFFD}') || !self.has_lone_surrogate(v)?;
        Ok(Some((name, well_formed)))
    }

    fn utf8(bytes: &[u8]) -> String {
        match std::str::from_utf8(bytes) {
            Ok(s) => s.to_owned(),
            // A copy cut inside a character: keep the valid prefix.
            Err(e) => String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(),
        }
    }

    /// Property `key` (a value made once by `key`) of `obj`; `None` when `obj` is not an object
    /// (or function). A throwing getter is an error.
    pub(super) fn prop(
        self,
        obj: sys::napi_value,
        key: sys::napi_value,
    ) -> Result<Option<sys::napi_value>> {
        let t = self.type_of(obj)?;
        if t != ValueType::Object && t != ValueType::Function {
            return Ok(None);
        }
        self.get_by_key(obj, key).map(Some)
    }

    pub(super) fn number(self, v: sys::napi_value) -> Result<Option<f64>> {
        if self.type_of(v)? != ValueType::Number {
            return Ok(None);
        }
        let n = Self::answer(0f64, "number", |n| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `n` is a local.
            unsafe { sys::napi_get_value_double(self.0, v, n) }
        })?;
        Ok(Some(n))
    }

    pub(super) fn create_string(self, s: &str) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "create string", |out| {
            // SAFETY: a live env (see `Raw`); the pointer and length are those of `s`, valid UTF-8
            // for this call; `out` is a local.
            unsafe {
                sys::napi_create_string_utf8(self.0, s.as_ptr().cast(), s.len() as isize, out)
            }
        })
    }

    pub(super) fn create_f64(self, n: f64) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "create number", |out| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `out` is a local.
            unsafe { sys::napi_create_double(self.0, n, out) }
        })
    }

    pub(super) fn create_bool(self, b: bool) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "create boolean", |out| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `out` is a local.
            unsafe { sys::napi_get_boolean(self.0, b, out) }
        })
    }

    pub(super) fn create_object(self) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "create object", |out| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `out` is a local.
            unsafe { sys::napi_create_object(self.0, out) }
        })
    }

    pub(super) fn create_array(self, len: usize) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "create array", |out| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `out` is a local.
            unsafe { sys::napi_create_array_with_length(self.0, len, out) }
        })
    }

    pub(super) fn push(self, arr: sys::napi_value, i: u32, v: sys::napi_value) -> Result<()> {
        Self::check(
            // SAFETY: live env and handles of the running callback (see `Raw`).
            unsafe { sys::napi_set_element(self.0, arr, i, v) },
            "set element",
        )
    }

    pub(super) fn string_array(self, items: &[&str]) -> Result<sys::napi_value> {
        let arr = self.create_array(items.len())?;
        for (i, s) in items.iter().enumerate() {
            self.push(arr, i as u32, self.create_string(s)?)?;
        }
        Ok(arr)
    }

    /// Own enumerable string keys of `obj`.
    pub(super) fn keys(self, obj: sys::napi_value) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "property names", |out| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `out` is a local.
            unsafe {
                sys::napi_get_all_property_names(
                    self.0,
                    obj,
                    sys::KeyCollectionMode::own_only,
                    sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                    sys::KeyConversion::numbers_to_strings,
                    out,
                )
            }
        })
    }

    pub(super) fn get_by_key(
        self,
        obj: sys::napi_value,
        key: sys::napi_value,
    ) -> Result<sys::napi_value> {
        Self::answer(ptr::null_mut(), "get property", |out| {
            // SAFETY: a live env and handle of the running callback (see `Raw`); `out` is a local.
            unsafe { sys::napi_get_property(self.0, obj, key, out) }
        })
    }

    pub(super) fn is_object(self, v: sys::napi_value) -> Result<bool> {
        Ok(self.type_of(v)? == ValueType::Object)
    }

    /// `v` as an object for napi-rs (a return value): `v` is a handle of this callback's scope
    /// (see `Raw`) made or read by the caller.
    pub(super) fn object<'env>(self, v: sys::napi_value) -> Object<'env> {
        Object::from_raw(self.0, v)
    }

    /// Clears the exception a throwing getter left pending, if any.
    pub(super) fn clear_exception(self) -> Result<()> {
        let pending = Self::answer(false, "exception check", |pending| {
            // SAFETY: a live env (see `Raw`); `pending` is a local.
            unsafe { sys::napi_is_exception_pending(self.0, pending) }
        })?;
        if pending {
            Self::answer(ptr::null_mut(), "exception clear", |ex| {
                // SAFETY: a live env (see `Raw`); the cleared exception's handle is dropped unused.
                unsafe { sys::napi_get_and_clear_last_exception(self.0, ex) }
            })?;
        }
        Ok(())
    }
}
