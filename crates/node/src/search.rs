//! napi exports of tool search: `createToolSearchIndex`, the `ToolSearchIndex` class,
//! `createSearchToolsTool`, `selectDisclosedTools`, `activateToolNames`, `toolSearchLimits`.
//!
//! Host data is read once with plain napi calls (no serde): each tool's `name`, `description` and
//! its parameters' names and descriptions, at index build. Per query only the query string and `k`
//! cross; results are built as plain objects. Misuse (a non-array tool list, a tool without a
//! string name, a non-string query) throws a `TypeError` with a stable `code`; every other input
//! has a defined result (see docs/search.md).

#![cfg_attr(test, allow(dead_code))]

use std::cell::RefCell;
use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi::{sys, Env, JsValue, Unknown, ValueType};
use napi_derive::napi;

use prism_tools_core::search::format::{line, NO_MATCH_TEXT};
use prism_tools_core::search::fuse::{
    reciprocal_rank_fusion, DEFAULT_RANKING_WEIGHT, LEXICAL_DEPTH, MAX_RANKING_WEIGHT,
};
use prism_tools_core::search::select::{activate, disclose, Disclosure};
use prism_tools_core::search::{
    clamp_count, truncate_utf8, Scoring, SearchIndex, ToolText, DEFAULT_QUERY_BYTES, DEFAULT_TOP_K,
    DESCRIPTION_CHARS, MAX_ACTIVATED_NAMES, MAX_INDEXED_TOOLS, MAX_QUERY_BYTES, MAX_TOP_K,
    SEARCH_TOOLS_DEFAULT_K,
};

/// Error code of misuse: a value of the wrong type where the API needs a specific one.
const CODE_INVALID_INPUT: &str = "invalid_tool_search_input";
/// Error code of `createToolSearchIndex` over more than `MAX_INDEXED_TOOLS` tools.
const CODE_INDEX_CAP: &str = "tool_search_index_cap";
/// Bytes of a description, and of a tool's parameter text, that are indexed.
const INDEXED_TEXT_BYTES: usize = 16 * 1024;
/// Parameters of one tool that are indexed.
const INDEXED_PARAMETERS: usize = 64;
/// Entries of a host-supplied `ranking` read for fusion; later ones are ignored.
const MAX_FUSED_RANKING: u32 = 256;

// ---------------------------------------------------------------------------------------------
// Raw helpers. Each returns `Result`; none panics on host data.

/// Node-API calls on the env of the callback running now.
///
/// Invariant the `// SAFETY:` comments below rely on: a `Raw` is made only at an entry point (or a
/// closure's callback) from that callback's `Env`, is never stored, and every `napi_value` given to
/// it is a handle of that callback's scope. Node-API itself checks each handle's type and answers
/// a status, which `check` turns into an error.
#[derive(Clone, Copy)]
struct Raw(sys::napi_env);

impl Raw {
    fn check(status: sys::napi_status, what: &str) -> Result<()> {
        if status == sys::Status::napi_ok {
            Ok(())
        } else {
            Err(Error::new(
                Status::from(status),
                format!("tool search: {what} failed"),
            ))
        }
    }

    fn type_of(self, v: sys::napi_value) -> Result<ValueType> {
        let mut t = 0;
        // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
        Self::check(unsafe { sys::napi_typeof(self.0, v, &mut t) }, "typeof")?;
        Ok(ValueType::from(t))
    }

    fn is_array(self, v: sys::napi_value) -> Result<bool> {
        let mut b = false;
        // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
        Self::check(unsafe { sys::napi_is_array(self.0, v, &mut b) }, "is_array")?;
        Ok(b)
    }

    fn array_len(self, v: sys::napi_value) -> Result<u32> {
        let mut n = 0;
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_get_array_length(self.0, v, &mut n) },
            "array length",
        )?;
        Ok(n)
    }

    fn element(self, v: sys::napi_value, i: u32) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_get_element(self.0, v, i, &mut out) },
            "get element",
        )?;
        Ok(out)
    }

    fn get(self, obj: sys::napi_value, key: &CStr) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_get_named_property(self.0, obj, key.as_ptr(), &mut out) },
            "get property",
        )?;
        Ok(out)
    }

    fn set(self, obj: sys::napi_value, key: &CStr, value: sys::napi_value) -> Result<()> {
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_set_named_property(self.0, obj, key.as_ptr(), value) },
            "set property",
        )
    }

    /// The string value of `v` if it is a string: UTF-8, at most `max` bytes, cut on a character
    /// boundary (lone surrogates arrive as U+FFFD). Returns the text and whether it was cut.
    /// Short strings take one napi call: a copy into `buf`; only a copy that may have been cut
    /// asks for the full length.
    fn string(
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
        let mut copied = 0usize;
        // SAFETY: a live env and handle (see `Raw`); `buf` holds at least `first + 1` bytes, the size passed.
        let status = unsafe {
            sys::napi_get_value_string_utf8(
                self.0,
                v,
                buf.as_mut_ptr().cast(),
                first + 1,
                &mut copied,
            )
        };
        if status == sys::Status::napi_string_expected {
            return Ok(None);
        }
        Self::check(status, "string copy")?;
        // A copy ending more than 3 bytes before the buffer's end is whole (V8 copies whole
        // characters only, so a cut one can stop up to 3 bytes early).
        if copied + 3 < first {
            return Ok(Some((Self::utf8(&buf[..copied]), false)));
        }
        let mut len = 0usize;
        Self::check(
            // SAFETY: a live env and handle (see `Raw`); a null buffer asks for the length only.
            unsafe { sys::napi_get_value_string_utf8(self.0, v, ptr::null_mut(), 0, &mut len) },
            "string length",
        )?;
        let want = len.min(max);
        if buf.len() < want + 1 {
            buf.resize(want + 1, 0);
        }
        Self::check(
            // SAFETY: a live env and handle (see `Raw`); `buf` was grown to at least `want + 1` bytes, the size passed.
            unsafe {
                sys::napi_get_value_string_utf8(
                    self.0,
                    v,
                    buf.as_mut_ptr().cast(),
                    want + 1,
                    &mut copied,
                )
            },
            "string copy",
        )?;
        let text = Self::utf8(&buf[..copied.min(want)]);
        let (kept, cut) = truncate_utf8(&text, max);
        let cut = cut || len > kept.len();
        Ok(Some((kept.to_owned(), cut)))
    }

    /// Whether the JS string `v` holds a lone UTF-16 surrogate. Its UTF-8 copy shows one as U+FFFD,
    /// so two different names (`pay\ud800`, `pay\udc00`) would read as the same text; callers ask
    /// only when the copy contains U+FFFD.
    fn has_lone_surrogate(self, v: sys::napi_value) -> Result<bool> {
        let mut len = 0usize;
        Self::check(
            // SAFETY: `v` is a live string handle of this env's scope; a null buffer asks for the length only.
            unsafe { sys::napi_get_value_string_utf16(self.0, v, ptr::null_mut(), 0, &mut len) },
            "string length",
        )?;
        let mut units = vec![0u16; len + 1];
        let mut copied = 0usize;
        Self::check(
            // SAFETY: `units` has room for `len` code units plus the terminator napi writes.
            unsafe {
                sys::napi_get_value_string_utf16(
                    self.0,
                    v,
                    units.as_mut_ptr(),
                    len + 1,
                    &mut copied,
                )
            },
            "string copy",
        )?;
        Ok(char::decode_utf16(units[..copied.min(len)].iter().copied()).any(|c| c.is_err()))
    }

    /// A tool name: its text and whether it is well-formed (no lone surrogate), or `None` when
    /// `v` is not a string.
    fn name(self, v: sys::napi_value, buf: &mut Vec<u8>) -> Result<Option<(String, bool)>> {
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
    fn prop(self, obj: sys::napi_value, key: sys::napi_value) -> Result<Option<sys::napi_value>> {
        let t = self.type_of(obj)?;
        if t != ValueType::Object && t != ValueType::Function {
            return Ok(None);
        }
        self.get_by_key(obj, key).map(Some)
    }

    fn number(self, v: sys::napi_value) -> Result<Option<f64>> {
        if self.type_of(v)? != ValueType::Number {
            return Ok(None);
        }
        let mut out = 0f64;
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_get_value_double(self.0, v, &mut out) },
            "number",
        )?;
        Ok(Some(out))
    }

    fn create_string(self, s: &str) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env (see `Raw`); the pointer and length are those of `s`, valid UTF-8 for this call.
            unsafe {
                sys::napi_create_string_utf8(self.0, s.as_ptr().cast(), s.len() as isize, &mut out)
            },
            "create string",
        )?;
        Ok(out)
    }

    fn create_f64(self, n: f64) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_create_double(self.0, n, &mut out) },
            "create number",
        )?;
        Ok(out)
    }

    fn create_bool(self, b: bool) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_get_boolean(self.0, b, &mut out) },
            "create boolean",
        )?;
        Ok(out)
    }

    fn create_object(self) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_create_object(self.0, &mut out) },
            "create object",
        )?;
        Ok(out)
    }

    fn create_array(self, len: usize) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_create_array_with_length(self.0, len, &mut out) },
            "create array",
        )?;
        Ok(out)
    }

    fn push(self, arr: sys::napi_value, i: u32, v: sys::napi_value) -> Result<()> {
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_set_element(self.0, arr, i, v) },
            "set element",
        )
    }

    fn string_array(self, items: &[&str]) -> Result<sys::napi_value> {
        let arr = self.create_array(items.len())?;
        for (i, s) in items.iter().enumerate() {
            self.push(arr, i as u32, self.create_string(s)?)?;
        }
        Ok(arr)
    }

    /// Own enumerable string keys of `obj`.
    fn keys(self, obj: sys::napi_value) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe {
                sys::napi_get_all_property_names(
                    self.0,
                    obj,
                    sys::KeyCollectionMode::own_only,
                    sys::KeyFilter::enumerable | sys::KeyFilter::skip_symbols,
                    sys::KeyConversion::numbers_to_strings,
                    &mut out,
                )
            },
            "property names",
        )?;
        Ok(out)
    }

    fn get_by_key(self, obj: sys::napi_value, key: sys::napi_value) -> Result<sys::napi_value> {
        let mut out = ptr::null_mut();
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_get_property(self.0, obj, key, &mut out) },
            "get property",
        )?;
        Ok(out)
    }

    /// The data and element count of typed array `v` if it is one of type `ty`, else `None`.
    fn typed_array(
        self,
        v: sys::napi_value,
        ty: sys::napi_typedarray_type,
    ) -> Result<Option<(*mut std::ffi::c_void, usize)>> {
        let mut is = false;
        Self::check(
            // SAFETY: a live env and handle of the running callback (see `Raw`); out-pointers are locals.
            unsafe { sys::napi_is_typedarray(self.0, v, &mut is) },
            "is typed array",
        )?;
        if !is {
            return Ok(None);
        }
        let (mut t, mut len, mut data, mut buffer, mut offset) =
            (0, 0usize, ptr::null_mut(), ptr::null_mut(), 0usize);
        Self::check(
            // SAFETY: `v` is a live typed-array handle of this callback; out-pointers are locals.
            unsafe {
                sys::napi_get_typedarray_info(
                    self.0,
                    v,
                    &mut t,
                    &mut len,
                    &mut data,
                    &mut buffer,
                    &mut offset,
                )
            },
            "typed array info",
        )?;
        if t != ty || (data.is_null() && len > 0) {
            return Ok(None);
        }
        Ok(Some((data, len)))
    }

    fn is_object(self, v: sys::napi_value) -> Result<bool> {
        Ok(self.type_of(v)? == ValueType::Object)
    }
}

/// Throws a `TypeError` with `code` and returns the error that rethrows it.
fn type_error(env: sys::napi_env, code: &str, message: &str) -> Error {
    let _ = Env::from_raw(env).throw_type_error(message, Some(code));
    Error::new(Status::PendingException, message.to_owned())
}

fn range_error(env: sys::napi_env, code: &str, message: &str) -> Error {
    let _ = Env::from_raw(env).throw_range_error(message, Some(code));
    Error::new(Status::PendingException, message.to_owned())
}

// ---------------------------------------------------------------------------------------------
// Reading tools.

struct ToolStrings {
    name: String,
    /// False when the JS name holds a lone surrogate: such a tool is never indexed, so a search
    /// can never name it (its U+FFFD text could equal another tool's name).
    well_formed: bool,
    description: String,
    parameters: String,
}

/// Property keys made once per build.
struct Keys {
    name: sys::napi_value,
    description: sys::napi_value,
    parameters: sys::napi_value,
    properties: sys::napi_value,
}

impl Keys {
    fn new(raw: Raw) -> Result<Keys> {
        Ok(Keys {
            name: raw.create_string("name")?,
            description: raw.create_string("description")?,
            parameters: raw.create_string("parameters")?,
            properties: raw.create_string("properties")?,
        })
    }
}

/// Reads one tool: `Ok(None)` when it is not an object with a string `name`.
fn read_tool(
    raw: Raw,
    keys: &Keys,
    tool: sys::napi_value,
    buf: &mut Vec<u8>,
) -> Result<Option<ToolStrings>> {
    if raw.type_of(tool)? != ValueType::Object {
        return Ok(None);
    }
    let Some((name, well_formed)) = raw.name(raw.get_by_key(tool, keys.name)?, buf)? else {
        return Ok(None);
    };
    let description = raw
        .string(
            raw.get_by_key(tool, keys.description)?,
            INDEXED_TEXT_BYTES,
            buf,
        )?
        .map(|s| s.0)
        .unwrap_or_default();
    let mut parameters = String::new();
    let props = match raw.prop(raw.get_by_key(tool, keys.parameters)?, keys.properties)? {
        Some(p) if raw.type_of(p)? == ValueType::Object => Some(p),
        _ => None,
    };
    if let Some(props) = props {
        let names = raw.keys(props)?;
        let n = raw.array_len(names)?.min(INDEXED_PARAMETERS as u32);
        for i in 0..n {
            if parameters.len() >= INDEXED_TEXT_BYTES {
                break;
            }
            let key = raw.element(names, i)?;
            if let Some((k, _)) = raw.string(key, INDEXED_TEXT_BYTES, buf)? {
                parameters.push_str(&k);
                parameters.push(' ');
            }
            if let Some(d) = raw.prop(raw.get_by_key(props, key)?, keys.description)? {
                if let Some((d, _)) = raw.string(d, INDEXED_TEXT_BYTES, buf)? {
                    parameters.push_str(&d);
                    parameters.push(' ');
                }
            }
        }
    }
    let (p, _) = truncate_utf8(&parameters, INDEXED_TEXT_BYTES);
    let parameters = p.to_owned();
    Ok(Some(ToolStrings {
        name,
        well_formed,
        description,
        parameters,
    }))
}

enum ReadTools {
    Ok(Vec<ToolStrings>),
    OverCap(u32),
    /// Entry `i` is not an object with a string name.
    BadEntry(u32),
}

fn read_tools(raw: Raw, tools: sys::napi_value) -> Result<ReadTools> {
    let n = raw.array_len(tools)?;
    if n as usize > MAX_INDEXED_TOOLS {
        return Ok(ReadTools::OverCap(n));
    }
    let mut out = Vec::with_capacity(n as usize);
    let mut buf = Vec::new();
    let keys = Keys::new(raw)?;
    for i in 0..n {
        match read_tool(raw, &keys, raw.element(tools, i)?, &mut buf)? {
            Some(t) => out.push(t),
            None => return Ok(ReadTools::BadEntry(i)),
        }
    }
    Ok(ReadTools::Ok(out))
}

/// A packed tool list (see `read_packed`), read: the tools' text as UTF-8 and, per tool, the byte
/// ranges of its name, description and parameter text and whether its name is well-formed (no
/// lone surrogate).
struct Packed {
    text: String,
    spans: Vec<[std::ops::Range<usize>; 3]>,
    well_formed: Vec<bool>,
}

impl Packed {
    /// Each tool as the index reads it (names with a lone surrogate left out), and its position.
    fn tools(&self) -> Vec<(usize, ToolText<'_>)> {
        let cut =
            |r: &std::ops::Range<usize>| truncate_utf8(&self.text[r.clone()], INDEXED_TEXT_BYTES).0;
        self.spans
            .iter()
            .zip(&self.well_formed)
            .enumerate()
            .filter(|(_, (_, ok))| **ok)
            .map(|(i, ([n, d, p], _))| {
                let tool = ToolText {
                    name: &self.text[n.clone()],
                    description: cut(d),
                    parameters: cut(p),
                };
                (i, tool)
            })
            .collect()
    }
}

/// Appends `units` (one segment, decoded on its own) to `out` as UTF-8, a lone surrogate as
/// U+FFFD (as a single string crossing Node-API reads), and tells whether there was none.
fn push_utf16(out: &mut Vec<u8>, units: &[u16]) -> bool {
    let mut well_formed = true;
    let mut i = 0;
    while i < units.len() {
        let ascii = units[i..].iter().take_while(|&&u| u < 0x80).count();
        out.extend(units[i..i + ascii].iter().map(|&u| u as u8));
        i += ascii;
        let other = units[i..].iter().take_while(|&&u| u >= 0x80).count();
        for c in char::decode_utf16(units[i..i + other].iter().copied()) {
            let c = c.unwrap_or_else(|_| {
                well_formed = false;
                char::REPLACEMENT_CHARACTER
            });
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
        i += other;
    }
    well_formed
}

/// Reads a packed tool list: an array of strings `texts` (chunks of a few tools, so that no string
/// is large enough for V8 to place it in fresh pages) holding, per tool, its name, its description (cut
/// by JS to at most 16 384 UTF-16 units) and its parameter text (`key description ` per parameter,
/// at most 64 parameters, as `read_tool` joins them) back to back, and `meta`, the three lengths per
/// tool in UTF-16 code units. The text crosses as UTF-16 (one copy) and each segment is decoded on
/// its own, so a lone surrogate is seen exactly; the index then cuts the description and the
/// parameter text to 16 KB of UTF-8, as `read_tool` does. Malformed meta is an error, never a panic.
fn read_packed(raw: Raw, texts: sys::napi_value, meta: &[u32], count: usize) -> Result<Packed> {
    let bad = || Error::new(Status::InvalidArg, "tool search: malformed packed tools");
    if meta.len() < count * 3 {
        return Err(bad());
    }
    let lens = &meta[..count * 3];
    if !raw.is_array(texts)? {
        return Err(bad());
    }
    // The chunks' UTF-16 code units, back to back, in a buffer kept for the next build (fresh
    // pages cost more than the copy).
    let chunks = raw.array_len(texts)?;
    let mut handles = Vec::with_capacity(chunks as usize);
    let mut total = 0usize;
    for i in 0..chunks {
        let v = raw.element(texts, i)?;
        if raw.type_of(v)? != ValueType::String {
            return Err(bad());
        }
        let mut len = 0usize;
        Raw::check(
            // SAFETY: a live string handle of this callback; a null buffer asks for the length only.
            unsafe { sys::napi_get_value_string_utf16(raw.0, v, ptr::null_mut(), 0, &mut len) },
            "string length",
        )?;
        total += len;
        handles.push((v, len));
    }
    if lens.iter().map(|&l| l as usize).sum::<usize>() != total {
        return Err(bad());
    }
    UNITS.with(|cell| -> Result<Packed> {
        let mut units = cell.borrow_mut();
        // Only growth is zero-filled: the kept units are overwritten by the copies below.
        units.resize(total + 1, 0);
        let mut at = 0usize;
        for (v, len) in handles {
            let mut copied = 0usize;
            Raw::check(
                // SAFETY: `units[at..]` has room for `len` code units plus the terminator napi
                // writes (`at + len <= total` and the buffer holds `total + 1`).
                unsafe {
                    sys::napi_get_value_string_utf16(
                        raw.0,
                        v,
                        units[at..].as_mut_ptr(),
                        len + 1,
                        &mut copied,
                    )
                },
                "string copy",
            )?;
            if copied != len {
                return Err(bad());
            }
            at += len;
        }
        let packed = decode_packed(&units[..total], lens, count);
        if units.capacity() > SCRATCH_UNITS {
            *units = Vec::new();
        }
        packed.ok_or_else(bad)
    })
}

/// Most UTF-16 code units the packed-text buffer keeps between builds.
const SCRATCH_UNITS: usize = 1 << 21;

thread_local! {
    /// The packed tool text of the build running on this thread (kept to be reused).
    static UNITS: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// Decodes the packed text (see `read_packed`); `None` when `lens` does not cover `units`.
fn decode_packed(units: &[u16], lens: &[u32], count: usize) -> Option<Packed> {
    if lens.iter().map(|&l| l as usize).sum::<usize>() != units.len() {
        return None;
    }
    let mut bytes: Vec<u8> = Vec::with_capacity(units.len() + units.len() / 4);
    let mut spans = Vec::with_capacity(count);
    let mut well_formed = Vec::with_capacity(count);
    let mut at = 0usize;
    for l in lens.chunks_exact(3) {
        let mut span: [std::ops::Range<usize>; 3] = [0..0, 0..0, 0..0];
        let mut ok = true;
        for (f, &len) in l.iter().enumerate() {
            let start = bytes.len();
            let seg_ok = push_utf16(&mut bytes, &units[at..at + len as usize]);
            ok &= f != 0 || seg_ok;
            at += len as usize;
            span[f] = start..bytes.len();
        }
        spans.push(span);
        well_formed.push(ok);
    }
    let text = String::from_utf8(bytes).ok()?;
    Some(Packed {
        text,
        spans,
        well_formed,
    })
}

fn build_index(tools: &[ToolStrings]) -> SearchIndex {
    SearchIndex::build(
        tools.iter().filter(|t| t.well_formed).map(|t| ToolText {
            name: &t.name,
            description: &t.description,
            parameters: &t.parameters,
        }),
        Scoring::DEFAULT,
    )
}

/// `options.queryBytes`: default 4 096, clamped to 65 536; NaN or absent gives the default.
fn read_query_bytes(raw: Raw, options: Option<sys::napi_value>) -> Result<usize> {
    let Some(o) = options else {
        return Ok(DEFAULT_QUERY_BYTES);
    };
    if !raw.is_object(o)? {
        return Ok(DEFAULT_QUERY_BYTES);
    }
    let v = raw.number(raw.get(o, c"queryBytes")?)?;
    Ok(clamp_count(v, DEFAULT_QUERY_BYTES, MAX_QUERY_BYTES))
}

/// The host ranking's weight: absent or NaN gives the default, negative gives 0, above the cap
/// (+∞ too) gives the cap.
fn ranking_weight(value: Option<f64>) -> f32 {
    match value {
        None => DEFAULT_RANKING_WEIGHT,
        Some(v) if v.is_nan() => DEFAULT_RANKING_WEIGHT,
        Some(v) => v.clamp(0.0, f64::from(MAX_RANKING_WEIGHT)) as f32,
    }
}

fn optional(raw: Raw, v: Option<Unknown>) -> Result<Option<sys::napi_value>> {
    match v {
        None => Ok(None),
        Some(u) => match raw.type_of(u.raw())? {
            ValueType::Undefined | ValueType::Null => Ok(None),
            _ => Ok(Some(u.raw())),
        },
    }
}

// ---------------------------------------------------------------------------------------------
// The index class.

struct Shared {
    index: SearchIndex,
    query_bytes: usize,
    /// Scratch for string reads on the JS thread.
    buf: RefCell<Vec<u8>>,
}

/// An immutable BM25-lite index over a tool list. Created by `createToolSearchIndex`.
///
/// Its native memory (~1 MB for 1 024 tools) is reported to V8 as external memory, and given back
/// when the object is finalized: otherwise V8 sees a few small objects, collects rarely, and each
/// new index lands on freshly mapped pages while the old ones wait for a collection (measured:
/// ~40 % of a build's time in page faults in a loop of builds).
#[napi(custom_finalize)]
pub struct ToolSearchIndex {
    shared: Rc<Shared>,
    /// Bytes reported to V8 for this index.
    external: i64,
}

impl ToolSearchIndex {
    fn new(env: &Env, index: SearchIndex, query_bytes: usize) -> ToolSearchIndex {
        let external = i64::try_from(index.heap_bytes()).unwrap_or(i64::MAX);
        // Best effort: a failed report only leaves V8 collecting as it would have.
        let external = match env.adjust_external_memory(external) {
            Ok(_) => external,
            Err(_) => 0,
        };
        ToolSearchIndex {
            shared: Rc::new(Shared {
                index,
                query_bytes,
                buf: RefCell::new(Vec::new()),
            }),
            external,
        }
    }
}

impl ObjectFinalize for ToolSearchIndex {
    fn finalize(self, env: Env) -> Result<()> {
        if self.external > 0 {
            env.adjust_external_memory(-self.external)?;
        }
        Ok(())
    }
}

#[napi]
impl ToolSearchIndex {
    /// The names of the indexed tools, by document (lib/search.js keeps them to name hits).
    #[napi(js_name = "_names", ts_return_type = "string[]")]
    pub fn names<'env>(&self, env: &'env Env) -> Result<Unknown<'env>> {
        let raw = Raw(env.raw());
        let index = &self.shared.index;
        let names: Vec<&str> = (0..index.size() as u32).map(|d| index.name(d)).collect();
        let arr = raw.string_array(&names)?;
        // SAFETY: `arr` is an array made just above in this callback's scope for `env`.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), arr) })
    }

    /// The packed search behind `search` in lib/search.js: the query string in (cut at the index's
    /// query bytes), hits out into the `Float64Array` `out` as `[count, then per hit: doc, score,
    /// matched count, matched term positions…]`. Returns the query's terms joined by spaces (tokens
    /// never hold one) when there are hits, `undefined` when there are none, and the length `out`
    /// needs when it is too short (nothing written). `ranking` is `undefined` or a `Uint32Array`
    /// of documents, best first (the host's ranking, mapped to documents by lib/search.js).
    #[napi(
        js_name = "_searchPacked",
        ts_return_type = "string | number | undefined"
    )]
    pub fn search_packed<'env>(
        &self,
        env: &'env Env,
        query: Unknown<'env>,
        k: Unknown<'env>,
        ranking: Unknown<'env>,
        weight: Unknown<'env>,
        out: Unknown<'env>,
    ) -> Result<Unknown<'env>> {
        let raw = Raw(env.raw());
        let mut buf = self.shared.buf.borrow_mut();
        let Some((q, _)) = raw.string(query.raw(), self.shared.query_bytes, &mut buf)? else {
            return Err(type_error(
                env.raw(),
                CODE_INVALID_INPUT,
                "ToolSearchIndex.search: query must be a string",
            ));
        };
        drop(buf);
        let k = clamp_count(raw.number(k.raw())?, DEFAULT_TOP_K, MAX_TOP_K);
        let index = &self.shared.index;
        let dense: Option<Vec<u32>> =
            match raw.typed_array(ranking.raw(), sys::TypedarrayType::uint32_array)? {
                None => None,
                Some((_, 0)) => Some(Vec::new()),
                Some((data, len)) => {
                    // SAFETY: `data` points at `len` u32 elements of a live Uint32Array of this
                    // call (checked type, non-null), read before any other Node-API call.
                    let docs = unsafe { std::slice::from_raw_parts(data as *const u32, len) };
                    let mut out: Vec<u32> = Vec::new();
                    for &d in docs.iter().take(MAX_FUSED_RANKING as usize) {
                        if (d as usize) < index.size() && !out.contains(&d) {
                            out.push(d);
                        }
                    }
                    Some(out)
                }
            };
        let (terms, hits) = match &dense {
            None => index.search(&q, k),
            Some(dense) => {
                let weight = ranking_weight(raw.number(weight.raw())?);
                let (terms, lexical) = index.search(&q, LEXICAL_DEPTH);
                (terms, reciprocal_rank_fusion(&lexical, dense, weight, k))
            }
        };
        let mut undefined = ptr::null_mut();
        Raw::check(
            // SAFETY: a live env of this callback; `undefined` is a local out-pointer.
            unsafe { sys::napi_get_undefined(env.raw(), &mut undefined) },
            "undefined",
        )?;
        if hits.is_empty() {
            // SAFETY: `undefined` was read just above in this callback's scope for `env`.
            return Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), undefined) });
        }
        let mut packed: Vec<f64> = Vec::with_capacity(1 + hits.len() * 4);
        packed.push(hits.len() as f64);
        for hit in &hits {
            let matched = index.matched(&terms, hit.doc);
            packed.push(f64::from(hit.doc));
            packed.push(f64::from(hit.score));
            packed.push(matched.len() as f64);
            packed.extend(matched.iter().map(|&t| t as f64));
        }
        let Some((data, len)) = raw.typed_array(out.raw(), sys::TypedarrayType::float64_array)?
        else {
            return Err(Error::new(
                Status::InvalidArg,
                "tool search: out must be a Float64Array",
            ));
        };
        if len < packed.len() {
            let needed = raw.create_f64(packed.len() as f64)?;
            // SAFETY: `needed` was made just above in this callback's scope for `env`.
            return Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), needed) });
        }
        // SAFETY: `data` points at `len >= packed.len()` f64 elements of a live Float64Array of
        // this call (checked type, non-null); no JS runs while it is written.
        let dst = unsafe { std::slice::from_raw_parts_mut(data as *mut f64, len) };
        dst[..packed.len()].copy_from_slice(&packed);
        let joined = terms.surface.join(" ");
        let s = raw.create_string(&joined)?;
        // SAFETY: `s` was made just above in this callback's scope for `env`.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), s) })
    }

    /// Number of indexed tools (distinct names; a repeated name keeps its first tool).
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.shared.index.size() as u32
    }

    /// Native heap bytes the index holds (approximate); V8 is told the same figure.
    #[napi(getter)]
    pub fn memory_bytes(&self) -> f64 {
        self.shared.index.heap_bytes() as f64
    }
}

/// Builds the index over `tools` (at most 1 024). Throws `TypeError` (`invalid_tool_search_input`)
/// when `tools` is not an array or an entry has no string `name`, and `RangeError`
/// (`tool_search_index_cap`) over the cap.
#[napi(
    ts_args_type = "tools: readonly ToolDefinition[], options?: ToolSearchIndexOptions",
    ts_return_type = "ToolSearchIndex"
)]
pub fn create_tool_search_index(
    env: &Env,
    tools: Unknown,
    options: Option<Unknown>,
) -> Result<ToolSearchIndex> {
    let raw = Raw(env.raw());
    if !raw.is_array(tools.raw())? {
        return Err(type_error(
            env.raw(),
            CODE_INVALID_INPUT,
            "createToolSearchIndex: tools must be an array",
        ));
    }
    let query_bytes = read_query_bytes(raw, optional(raw, options)?)?;
    let tools = match read_tools(raw, tools.raw())? {
        ReadTools::Ok(t) => t,
        ReadTools::OverCap(n) => {
            let msg = format!(
                "createToolSearchIndex: {n} tools exceed the index cap of {MAX_INDEXED_TOOLS}"
            );
            return Err(range_error(env.raw(), CODE_INDEX_CAP, &msg));
        }
        ReadTools::BadEntry(i) => {
            let msg =
                format!("createToolSearchIndex: tools[{i}] must be an object with a string name");
            return Err(type_error(env.raw(), CODE_INVALID_INPUT, &msg));
        }
    };
    let index = build_index(&tools);
    Ok(ToolSearchIndex::new(env, index, query_bytes))
}

/// The bulk form of `createToolSearchIndex`, called by lib/search.js: the tool text crosses as one
/// string and one `Uint32Array` of segment lengths (see `read_packed`) instead of ~25 Node-API
/// reads per tool. `positions` (a `Uint32Array` of at least `count` entries) receives, per indexed
/// tool, its position in the input list. The JS side has already checked the list (an array of at
/// most 1 024 objects with string names) and thrown the documented errors.
#[napi(js_name = "_buildToolSearchIndex")]
pub fn build_tool_search_index_packed(
    env: &Env,
    texts: Unknown,
    meta: Unknown,
    count: u32,
    query_bytes: Unknown,
    positions: Unknown,
) -> Result<ToolSearchIndex> {
    let raw = Raw(env.raw());
    let invalid = || Error::new(Status::InvalidArg, "tool search: malformed packed tools");
    let count = count as usize;
    if count > MAX_INDEXED_TOOLS {
        return Err(invalid());
    }
    let Some((data, len)) = raw.typed_array(meta.raw(), sys::TypedarrayType::uint32_array)? else {
        return Err(invalid());
    };
    let meta: Vec<u32> = if len == 0 {
        Vec::new()
    } else {
        // SAFETY: `data` points at `len` u32 elements of a live Uint32Array of this call (checked
        // type, non-null); they are copied out before any other Node-API call.
        unsafe { std::slice::from_raw_parts(data as *const u32, len) }.to_vec()
    };
    let query_bytes = clamp_count(
        raw.number(query_bytes.raw())?,
        DEFAULT_QUERY_BYTES,
        MAX_QUERY_BYTES,
    );
    let packed = read_packed(raw, texts.raw(), &meta, count)?;
    let tools = packed.tools();
    let index = SearchIndex::build(tools.iter().map(|(_, t)| *t), Scoring::DEFAULT);
    let Some((data, len)) = raw.typed_array(positions.raw(), sys::TypedarrayType::uint32_array)?
    else {
        return Err(invalid());
    };
    if len < index.size() {
        return Err(invalid());
    }
    if len > 0 {
        // SAFETY: `data` points at `len` u32 elements of a live Uint32Array of this call (checked
        // type, non-null); no JS runs while the slice is alive.
        let out = unsafe { std::slice::from_raw_parts_mut(data as *mut u32, len) };
        for doc in 0..index.size() as u32 {
            // The index numbers what it was given (well-formed tools only): map back to the list.
            out[doc as usize] = tools[index.source(doc) as usize].0 as u32;
        }
    }
    Ok(ToolSearchIndex::new(env, index, query_bytes))
}

// ---------------------------------------------------------------------------------------------
// The search_tools tool.

const SEARCH_TOOLS_DESCRIPTION: &str =
    "Search the available tools by keywords and make the best matches callable \
from the next turn. Returns one line per tool: `name: short description [matched: terms]`.";

fn search_tools_parameters(raw: Raw, max_k: usize) -> Result<sys::napi_value> {
    let params = raw.create_object()?;
    raw.set(params, c"type", raw.create_string("object")?)?;
    let props = raw.create_object()?;
    let query = raw.create_object()?;
    raw.set(query, c"type", raw.create_string("string")?)?;
    raw.set(
        query,
        c"description",
        raw.create_string("Keywords describing the tool you need.")?,
    )?;
    raw.set(props, c"query", query)?;
    let k = raw.create_object()?;
    raw.set(k, c"type", raw.create_string("integer")?)?;
    raw.set(
        k,
        c"description",
        raw.create_string("How many tools to return.")?,
    )?;
    raw.set(k, c"minimum", raw.create_f64(1.0)?)?;
    raw.set(k, c"maximum", raw.create_f64(max_k as f64)?)?;
    raw.set(props, c"k", k)?;
    raw.set(params, c"properties", props)?;
    raw.set(params, c"required", raw.string_array(&["query"])?)?;
    raw.set(params, c"additionalProperties", raw.create_bool(false)?)?;
    Ok(params)
}

/// One `search_tools` call: a ToolResult object.
fn run_search_tools(
    raw: Raw,
    shared: &Shared,
    default_k: usize,
    args: sys::napi_value,
    ctx: sys::napi_value,
) -> Result<sys::napi_value> {
    let result = raw.create_object()?;
    if raw.is_object(ctx)? {
        raw.set(result, c"toolCallId", raw.get(ctx, c"toolCallId")?)?;
    }
    raw.set(result, c"name", raw.create_string(SEARCH_TOOLS_NAME)?)?;
    let query = if raw.is_object(args)? {
        let mut buf = shared.buf.borrow_mut();
        raw.string(raw.get(args, c"query")?, shared.query_bytes, &mut buf)?
    } else {
        None
    };
    let Some((query, truncated)) = query else {
        let err = raw.create_object()?;
        raw.set(
            err,
            c"message",
            raw.create_string("search_tools: query must be a string")?,
        )?;
        raw.set(err, c"code", raw.create_string("invalid_arguments")?)?;
        raw.set(result, c"error", err)?;
        let value = raw.create_object()?;
        raw.set(value, c"names", raw.create_array(0)?)?;
        raw.set(result, c"value", value)?;
        return Ok(result);
    };
    let k_arg = raw.number(raw.get(args, c"k")?)?;
    let k = clamp_count(k_arg, default_k, MAX_TOP_K);
    let (terms, hits) = shared.index.search(&query, k);
    let mut text = String::new();
    let mut names: Vec<&str> = Vec::with_capacity(hits.len());
    for hit in &hits {
        let matched: Vec<&str> = shared
            .index
            .matched(&terms, hit.doc)
            .iter()
            .map(|&t| terms.surface[t].as_str())
            .collect();
        if !text.is_empty() {
            text.push('\n');
        }
        line(
            shared.index.name(hit.doc),
            shared.index.description(hit.doc),
            &matched,
            &mut text,
        );
        names.push(shared.index.name(hit.doc));
    }
    if hits.is_empty() {
        text.push_str(NO_MATCH_TEXT);
    }
    raw.set(result, c"content", raw.create_string(&text)?)?;
    let value = raw.create_object()?;
    raw.set(value, c"names", raw.string_array(&names)?)?;
    raw.set(result, c"value", value)?;
    let meta = raw.create_object()?;
    raw.set(meta, c"k", raw.create_f64(k as f64)?)?;
    raw.set(meta, c"queryTruncated", raw.create_bool(truncated)?)?;
    raw.set(result, c"metadata", meta)?;
    Ok(result)
}

/// The generated `search_tools` ToolDefinition over `index`.
#[napi(
    ts_args_type = "index: ToolSearchIndex, options?: SearchToolsToolOptions",
    ts_return_type = "SearchToolsTool"
)]
pub fn create_search_tools_tool<'env>(
    env: &'env Env,
    index: &ToolSearchIndex,
    options: Option<Unknown<'env>>,
) -> Result<Unknown<'env>> {
    let raw = Raw(env.raw());
    let default_k = match optional(raw, options)? {
        Some(o) if raw.is_object(o)? => clamp_count(
            raw.number(raw.get(o, c"defaultK")?)?,
            SEARCH_TOOLS_DEFAULT_K,
            MAX_TOP_K,
        ),
        _ => SEARCH_TOOLS_DEFAULT_K,
    };
    let tool = raw.create_object()?;
    raw.set(tool, c"name", raw.create_string(SEARCH_TOOLS_NAME)?)?;
    raw.set(
        tool,
        c"description",
        raw.create_string(SEARCH_TOOLS_DESCRIPTION)?,
    )?;
    raw.set(
        tool,
        c"parameters",
        search_tools_parameters(raw, MAX_TOP_K)?,
    )?;
    let shared = Rc::clone(&index.shared);
    let execute = env.create_function_from_closure::<(Unknown, Unknown), Unknown, _>(
        "execute",
        move |ctx| {
            let env = ctx.env.raw();
            let raw = Raw(env);
            let mut undefined = ptr::null_mut();
            Raw::check(
                // SAFETY: `env` is the env of this closure's callback; `undefined` is a local out-pointer.
                unsafe { sys::napi_get_undefined(env, &mut undefined) },
                "undefined",
            )?;
            let arg = |i: usize| -> Result<sys::napi_value> {
                if i < ctx.length() {
                    Ok(ctx.get::<Unknown>(i)?.raw())
                } else {
                    Ok(undefined)
                }
            };
            let (args, call_ctx) = (arg(0)?, arg(1)?);
            let out = run_search_tools(raw, &shared, default_k, args, call_ctx)?;
            // SAFETY: `out` is a handle made by `run_search_tools` in this callback's scope for `env`.
            Ok(unsafe { Unknown::from_raw_unchecked(env, out) })
        },
    )?;
    raw.set(tool, c"execute", execute.raw())?;
    // SAFETY: `tool` is a handle made above in this call's scope for `env`.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), tool) })
}

// ---------------------------------------------------------------------------------------------
// Disclosure.

/// The tools to send this turn (see `select::disclose`). Fails closed to a copy of the whole
/// list; throws only when `options` is not an object or `options.tools` is not an array.
#[napi(
    ts_args_type = "options: SelectDisclosedToolsOptions",
    ts_return_type = "ToolDefinition[]"
)]
pub fn select_disclosed_tools<'env>(
    env: &'env Env,
    options: Unknown<'env>,
) -> Result<Unknown<'env>> {
    let raw = Raw(env.raw());
    if !raw.is_object(options.raw())? {
        return Err(type_error(
            env.raw(),
            CODE_INVALID_INPUT,
            "selectDisclosedTools: options must be an object",
        ));
    }
    let o = options.raw();
    let tools = raw.get(o, c"tools")?;
    if !raw.is_array(tools)? {
        return Err(type_error(
            env.raw(),
            CODE_INVALID_INPUT,
            "selectDisclosedTools: tools must be an array",
        ));
    }
    let n = raw.array_len(tools)?;
    let picked =
        catch_unwind(AssertUnwindSafe(|| choose(raw, o, tools, n))).unwrap_or(Ok(Disclosure::All));
    // Any error while choosing (a throwing getter included) discloses everything.
    let picked = match picked {
        Ok(p) => p,
        Err(_) => {
            // A throwing getter leaves an exception pending (napi reports it as a generic
            // failure or a pending exception): clear it, since the result is a disclosure.
            let mut pending = false;
            // SAFETY: `env` is this call's env; `pending` is a local out-pointer.
            unsafe { sys::napi_is_exception_pending(env.raw(), &mut pending) };
            if pending {
                let mut ex = ptr::null_mut();
                // SAFETY: `env` is this call's env; the cleared exception handle is dropped unused.
                unsafe { sys::napi_get_and_clear_last_exception(env.raw(), &mut ex) };
            }
            Disclosure::All
        }
    };
    let out = match picked {
        Disclosure::All => {
            let arr = raw.create_array(n as usize)?;
            for i in 0..n {
                raw.push(arr, i, raw.element(tools, i)?)?;
            }
            arr
        }
        Disclosure::Some(idx) => {
            let arr = raw.create_array(idx.len())?;
            for (j, i) in idx.iter().enumerate() {
                raw.push(arr, j as u32, raw.element(tools, *i as u32)?)?;
            }
            arr
        }
    };
    // SAFETY: `out` is an array made above in this call's scope for `env`.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), out) })
}

fn choose(raw: Raw, o: sys::napi_value, tools: sys::napi_value, n: u32) -> Result<Disclosure> {
    if n as usize > MAX_INDEXED_TOOLS {
        return Ok(Disclosure::All);
    }
    let mut buf = Vec::new();
    // Input text: a string, else everything is disclosed.
    let Some((input, _)) = raw.string(raw.get(o, c"input")?, MAX_QUERY_BYTES, &mut buf)? else {
        return Ok(Disclosure::All);
    };
    let top_k = clamp_count(raw.number(raw.get(o, c"topK")?)?, DEFAULT_TOP_K, MAX_TOP_K);
    let activated_v = raw.get(o, c"activated")?;
    let mut activated: Vec<String> = Vec::new();
    if raw.is_array(activated_v)? {
        let len = raw.array_len(activated_v)?;
        // Only the newest MAX_ACTIVATED_NAMES entries can count.
        let from = len.saturating_sub(MAX_ACTIVATED_NAMES as u32 * 4);
        for i in from..len {
            if let Some((s, _)) = raw.string(raw.element(activated_v, i)?, usize::MAX, &mut buf)? {
                activated.push(s);
            }
        }
    }
    let activated: Vec<&str> = activated.iter().map(String::as_str).collect();
    let index_v = raw.get(o, c"index")?;
    let given: Option<Rc<Shared>> = match raw.type_of(index_v)? {
        ValueType::Object => {
            // SAFETY: `index_v` is a live object handle of this call; napi-rs checks the class type tag (napi8) before it casts, so another object is an `Err`.
            match unsafe { ClassInstance::<ToolSearchIndex>::from_napi_value(raw.0, index_v) } {
                Ok(i) => Some(Rc::clone(&i.shared)),
                Err(_) => return Ok(Disclosure::All),
            }
        }
        _ => None,
    };
    match given {
        Some(shared) => {
            let mut names: Vec<(String, bool)> = Vec::with_capacity(n as usize);
            for i in 0..n {
                let t = raw.element(tools, i)?;
                if !raw.is_object(t)? {
                    return Ok(Disclosure::All);
                }
                match raw.name(raw.get(t, c"name")?, &mut buf)? {
                    Some(name) => names.push(name),
                    None => return Ok(Disclosure::All),
                }
            }
            // A name with a lone surrogate cannot be told apart by text: disclose everything.
            let refs: Vec<Option<&str>> = names
                .iter()
                .map(|(s, ok)| ok.then_some(s.as_str()))
                .collect();
            let (q, _) = truncate_utf8(&input, shared.query_bytes);
            Ok(disclose(&refs, &shared.index, q, top_k, &activated))
        }
        None => {
            let tools = match read_tools(raw, tools)? {
                ReadTools::Ok(t) => t,
                _ => return Ok(Disclosure::All),
            };
            let query_bytes = read_query_bytes(raw, Some(o))?;
            let index = build_index(&tools);
            let refs: Vec<Option<&str>> = tools
                .iter()
                .map(|t| t.well_formed.then_some(t.name.as_str()))
                .collect();
            let (q, _) = truncate_utf8(&input, query_bytes);
            Ok(disclose(&refs, &index, q, top_k, &activated))
        }
    }
}

/// Adds `names` to an activation list: returns the new list (distinct names, newest last, at
/// most 128). Non-string entries are ignored; a non-array argument counts as empty.
#[napi(
    ts_args_type = "activated: readonly string[] | undefined, names: readonly string[]",
    ts_return_type = "string[]"
)]
pub fn activate_tool_names(env: &Env, activated: Unknown, names: Unknown) -> Result<Vec<String>> {
    let raw = Raw(env.raw());
    let mut buf = Vec::new();
    let mut read = |v: sys::napi_value| -> Result<Vec<String>> {
        let mut out = Vec::new();
        if raw.is_array(v)? {
            let len = raw.array_len(v)?;
            let from = len.saturating_sub(MAX_ACTIVATED_NAMES as u32 * 4);
            for i in from..len {
                if let Some((s, _)) = raw.string(raw.element(v, i)?, usize::MAX, &mut buf)? {
                    out.push(s);
                }
            }
        }
        Ok(out)
    };
    let (a, b) = (read(activated.raw())?, read(names.raw())?);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    Ok(activate(&a, &b))
}

thread_local! {
    /// The frozen limits object of this thread's env, created once so every entry point (CommonJS,
    /// ES modules, a second loader instance) exports the very same object.
    static LIMITS: RefCell<Option<(usize, sys::napi_ref)>> = const { RefCell::new(None) };
}

/// The limits of tool search as one frozen object (`TOOL_SEARCH_LIMITS`), the same object on
/// every call.
#[napi(ts_return_type = "Readonly<Record<string, number>>")]
pub fn tool_search_limits(env: &Env) -> Result<Unknown<'_>> {
    let raw = Raw(env.raw());
    let key = env.raw() as usize;
    let cached = LIMITS.with(|c| *c.borrow());
    if let Some((k, r)) = cached {
        if k == key {
            let mut out = ptr::null_mut();
            Raw::check(
                // SAFETY: `r` is a reference this function created for this same env (the cache is keyed by env and thread-local); `out` is a local.
                unsafe { sys::napi_get_reference_value(env.raw(), r, &mut out) },
                "limits reference",
            )?;
            if !out.is_null() {
                // SAFETY: `out` came from the reference just above, in this call's scope.
                return Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), out) });
            }
        }
    }
    let o = raw.create_object()?;
    let fields: [(&CStr, usize); 8] = [
        (c"defaultTopK", DEFAULT_TOP_K),
        (c"maxTopK", MAX_TOP_K),
        (c"searchToolsDefaultK", SEARCH_TOOLS_DEFAULT_K),
        (c"maxIndexedTools", MAX_INDEXED_TOOLS),
        (c"defaultQueryBytes", DEFAULT_QUERY_BYTES),
        (c"maxQueryBytes", MAX_QUERY_BYTES),
        (c"maxActivatedNames", MAX_ACTIVATED_NAMES),
        (c"descriptionChars", DESCRIPTION_CHARS),
    ];
    for (name, value) in fields {
        raw.set(o, name, raw.create_f64(value as f64)?)?;
    }
    // SAFETY: `o` is the object created just above for this env.
    Raw::check(unsafe { sys::napi_object_freeze(env.raw(), o) }, "freeze")?;
    let mut r = ptr::null_mut();
    Raw::check(
        // SAFETY: `o` is the object created just above for this env; `r` is a local out-pointer.
        unsafe { sys::napi_create_reference(env.raw(), o, 1, &mut r) },
        "limits reference",
    )?;
    LIMITS.with(|c| *c.borrow_mut() = Some((key, r)));
    // SAFETY: `o` is the object created above in this call's scope for `env`.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), o) })
}

/// The name of the generated tool: `"search_tools"`.
#[napi]
pub const SEARCH_TOOLS_NAME: &str = prism_tools_core::search::SEARCH_TOOLS_NAME;
