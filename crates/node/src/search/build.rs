//! Building an index: `createToolSearchIndex` over host objects (the tool-by-tool reader) and
//! `_buildToolSearchIndex`, the packed crossing lib/search.js uses (layout in
//! `prism_tools_core::search::packed`): the chunks' UTF-16 code units are copied into one buffer
//! kept per thread, then decoded in Rust.

use std::cell::RefCell;

use napi::bindgen_prelude::*;
use napi::{sys, Env, JsValue, Unknown, ValueType};
use napi_derive::napi;

use prism_tools_core::search::packed::{decode_tools, positions, PackedTools, FIELDS_PER_TOOL};
use prism_tools_core::search::{
    clamp_count, Scoring, SearchIndex, DEFAULT_QUERY_BYTES, HARD_MAX_INDEXED_TOOLS,
    MAX_INDEXED_TOOLS, MAX_QUERY_BYTES,
};

use super::class::ToolSearchIndex;
use super::raw::Raw;
use super::read::{build_index, read_query_bytes, read_tools, ReadTools};
use super::{invalid_input, malformed, optional, range_error, typed, CODE_INDEX_CAP};

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
        return Err(invalid_input(
            raw,
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
            return Err(invalid_input(raw, &msg));
        }
    };
    let index = build_index(&tools);
    Ok(ToolSearchIndex::new(env, index, query_bytes))
}

/// The bulk form of `createToolSearchIndex`, called by lib/search.js: the tool text crosses as a
/// few strings and one `Uint32Array` of segment lengths instead of ~25 Node-API reads per tool
/// (`prism_tools_core::search::packed`). `positions` (a `Uint32Array` of at least `count`
/// entries) receives, per indexed tool, its position in the input list. The JS side has already
/// checked the list (an array of at most `maxTools` objects with string names) and thrown the
/// documented errors; what is malformed here is a `TypeError` (`invalid_tool_search_input`).
#[napi(js_name = "_buildToolSearchIndex")]
pub fn build_tool_search_index_packed(
    env: &Env,
    texts: Unknown,
    lengths: Unknown,
    count: u32,
    query_bytes: Unknown,
    positions_out: Unknown,
) -> Result<ToolSearchIndex> {
    let raw = Raw(env.raw());
    let count = count as usize;
    if count > HARD_MAX_INDEXED_TOOLS {
        return Err(malformed(raw, "more tools than the hard index cap"));
    }
    let Some(lengths) = typed::read::<u32>(raw, lengths.raw(), "lengths", count * FIELDS_PER_TOOL)?
    else {
        return Err(malformed(raw, "lengths must be a Uint32Array"));
    };
    if lengths.len() < count * FIELDS_PER_TOOL {
        return Err(malformed(raw, "fewer lengths than tools"));
    }
    let query_bytes = clamp_count(
        raw.number(query_bytes.raw())?,
        DEFAULT_QUERY_BYTES,
        MAX_QUERY_BYTES,
    );
    let packed = read_texts(raw, texts.raw(), &lengths)?;
    let tools = packed.tools();
    let index = SearchIndex::build(tools.iter().map(|(_, t)| *t), Scoring::DEFAULT);
    let written = typed::write::<u32>(
        raw,
        positions_out.raw(),
        "positions",
        &positions(&index, &tools),
    )?;
    if written != Some(true) {
        return Err(malformed(
            raw,
            "positions must be a Uint32Array of count entries",
        ));
    }
    Ok(ToolSearchIndex::new(env, index, query_bytes))
}

/// Most UTF-16 code units the packed-text buffer keeps between builds.
const SCRATCH_UNITS: usize = 1 << 21;

thread_local! {
    /// The packed tool text of the build running on this thread (kept to be reused: fresh pages
    /// cost more than the copy).
    static UNITS: RefCell<Vec<u16>> = const { RefCell::new(Vec::new()) };
}

/// Reads the build's `texts` (an array of strings) as UTF-16, one copy per chunk into the
/// thread's buffer, and decodes it by `lengths`.
fn read_texts(raw: Raw, texts: sys::napi_value, lengths: &[u32]) -> Result<PackedTools> {
    if !raw.is_array(texts)? {
        return Err(malformed(raw, "texts must be an array of strings"));
    }
    let chunks = raw.array_len(texts)?;
    let mut handles = Vec::with_capacity(chunks as usize);
    let mut total = 0usize;
    for i in 0..chunks {
        let v = raw.element(texts, i)?;
        if raw.type_of(v)? != ValueType::String {
            return Err(malformed(raw, "texts must be an array of strings"));
        }
        let len = raw.utf16_into(v, &mut [])?.unwrap_or(0);
        total += len;
        handles.push((v, len));
    }
    // Reading strings runs no JS, so this borrow cannot be entered again before it ends.
    let packed = UNITS.with(|cell| -> Result<Option<PackedTools>> {
        let mut units = cell.borrow_mut();
        // Only growth is zero-filled: the kept units are overwritten by the copies below.
        units.resize(total + 1, 0);
        let mut at = 0usize;
        for (v, len) in handles {
            // Room for the chunk and the terminator napi writes.
            let copied = raw.utf16_into(v, &mut units[at..at + len + 1])?;
            if copied != Some(len) {
                return Ok(None);
            }
            at += len;
        }
        let packed = decode_tools(&units[..total], lengths);
        if units.capacity() > SCRATCH_UNITS {
            *units = Vec::new();
        }
        Ok(packed)
    })?;
    packed.ok_or_else(|| malformed(raw, "lengths do not cover the text"))
}
