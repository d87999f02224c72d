//! Typed arrays of the packed protocol (`prism_tools_core::search::packed`): the only place tool
//! search makes a Rust slice over JS memory, and each slice lives inside one function here, with
//! no Node-API call between reading the array's info and copying, so no JS runs meanwhile.
//!
//! That alone is not enough for memory a `SharedArrayBuffer` backs: another thread (a worker) can
//! write it at any time, and a `&[u32]` or `&mut [f64]` over memory another thread writes is a data
//! race, undefined behaviour. Such an array is refused with a `TypeError`
//! (`invalid_tool_search_input`), as is one whose data is not aligned for its element type (only an
//! external `ArrayBuffer` could be). lib/search.js only ever passes arrays it made itself.

use std::ptr;

use napi::bindgen_prelude::*;
use napi::sys;

use super::invalid_input;
use super::raw::Raw;

/// An element type of a typed array the protocol uses.
pub(super) trait Element: Copy {
    const TYPE: sys::napi_typedarray_type;
}

impl Element for u32 {
    const TYPE: sys::napi_typedarray_type = sys::TypedarrayType::uint32_array;
}

impl Element for f32 {
    const TYPE: sys::napi_typedarray_type = sys::TypedarrayType::float32_array;
}

impl Element for f64 {
    const TYPE: sys::napi_typedarray_type = sys::TypedarrayType::float64_array;
}

/// The data and element count of `v` when it is a typed array of `T` over an unshared, aligned
/// buffer; `None` when it is not a typed array of `T`; a `TypeError` naming `what` otherwise.
/// The pointer is valid for `len` elements until JS next runs (nothing here runs JS).
fn info<T: Element>(raw: Raw, v: sys::napi_value, what: &str) -> Result<Option<(*mut T, usize)>> {
    let is = Raw::answer(false, "is typed array", |is| {
        // SAFETY: a live env and handle of the running callback (see `Raw`); `is` is a local.
        unsafe { sys::napi_is_typedarray(raw.0, v, is) }
    })?;
    if !is {
        return Ok(None);
    }
    let (mut t, mut len, mut data, mut buffer, mut offset) =
        (0, 0usize, ptr::null_mut(), ptr::null_mut(), 0usize);
    Raw::check(
        // SAFETY: `v` is a live typed-array handle of this callback; out-pointers are locals.
        unsafe {
            sys::napi_get_typedarray_info(
                raw.0,
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
    if t != T::TYPE {
        return Ok(None);
    }
    // `napi_is_arraybuffer` answers false for a SharedArrayBuffer (V8's `IsArrayBuffer`).
    let unshared = Raw::answer(false, "is array buffer", |unshared| {
        // SAFETY: `buffer` is the live buffer handle napi just gave for `v`; `unshared` is a local.
        unsafe { sys::napi_is_arraybuffer(raw.0, buffer, unshared) }
    })?;
    if !unshared {
        let message = format!(
            "tool search: {what} must not be backed by a SharedArrayBuffer (another thread could write it while it is read)"
        );
        return Err(invalid_input(raw, &message));
    }
    if len == 0 {
        return Ok(Some((ptr::NonNull::dangling().as_ptr(), 0)));
    }
    if data.is_null() || !data.cast::<T>().is_aligned() {
        let message = format!("tool search: {what} is not aligned for its element type");
        return Err(invalid_input(raw, &message));
    }
    Ok(Some((data.cast(), len)))
}

/// A copy of the first `max` elements of `v` when it is a typed array of `T` (see `info`).
pub(super) fn read<T: Element>(
    raw: Raw,
    v: sys::napi_value,
    what: &str,
    max: usize,
) -> Result<Option<Vec<T>>> {
    let Some((data, len)) = info::<T>(raw, v, what)? else {
        return Ok(None);
    };
    // SAFETY: `info` checked `data` is non-null (or dangling for 0), aligned, and `len` elements of
    // an unshared buffer; no JS runs (so nothing detaches or writes it) before the copy ends.
    let elements = unsafe { std::slice::from_raw_parts(data as *const T, len) };
    Ok(Some(elements[..len.min(max)].to_vec()))
}

/// Copies `src` to the start of `v` when it is a typed array of `T` (see `info`): `Some(true)`
/// when written, `Some(false)` when `v` is shorter than `src` (nothing written).
pub(super) fn write<T: Element>(
    raw: Raw,
    v: sys::napi_value,
    what: &str,
    src: &[T],
) -> Result<Option<bool>> {
    let Some((data, len)) = info::<T>(raw, v, what)? else {
        return Ok(None);
    };
    if len < src.len() {
        return Ok(Some(false));
    }
    // SAFETY: as in `read`, and no other slice over this memory is alive: every slice this file
    // makes ends inside its function, and `src` is Rust-owned memory, never a JS array's.
    let dst = unsafe { std::slice::from_raw_parts_mut(data, len) };
    dst[..src.len()].copy_from_slice(src);
    Ok(Some(true))
}
