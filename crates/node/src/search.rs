//! napi exports of tool search: `createToolSearchIndex`, the `ToolSearchIndex` class,
//! `createSearchToolsTool`, `selectDisclosedTools`, `activateToolNames`, `toolSearchLimits`, and
//! the two bulk entry points lib/search.js calls (`_buildToolSearchIndex`, `_searchPacked`).
//!
//! Search crosses in **packed typed arrays**, one of the binding's three protocols: its layouts are
//! written down once, in `prism_tools_core::search::packed` (the JS half is lib/search.js). Host
//! objects are read with plain Node-API calls (no serde) only where a caller hands them over
//! directly: the tool-by-tool reader, the `search_tools` tool and disclosure. Misuse (a non-array
//! tool list, a tool without a string name, a non-string query, a typed array over shared memory)
//! throws a `TypeError` with a stable `code`; every other input has a defined result (see
//! docs/search.md).
//!
//! Files, by seam:
//! - `raw.rs`: Node-API calls on the running callback's env (reads, writes, strings);
//! - `typed.rs`: typed arrays, copied in and out (shared memory refused);
//! - `read.rs`: the tool-by-tool reader of a tool list;
//! - `build.rs`: building an index (`createToolSearchIndex`, `_buildToolSearchIndex`);
//! - `class.rs`: the `ToolSearchIndex` class, its memory accounting and the query crossing;
//! - `tool.rs`: the generated `search_tools` tool;
//! - `disclose.rs`: `selectDisclosedTools` and `activateToolNames`;
//! - `limits.rs`: `toolSearchLimits` and `SEARCH_TOOLS_NAME`.

#![cfg_attr(test, allow(dead_code))]

mod build;
mod class;
mod disclose;
mod limits;
mod raw;
mod read;
mod tool;
mod typed;

use napi::bindgen_prelude::*;
use napi::{sys, Env, JsValue, Unknown, ValueType};

pub use build::{build_tool_search_index_packed, create_tool_search_index};
pub use class::ToolSearchIndex;
pub use disclose::{activate_tool_names, select_disclosed_tools};
pub use limits::{tool_search_limits, SEARCH_TOOLS_NAME};
pub use tool::create_search_tools_tool;

use raw::Raw;

/// Error code of misuse: a value of the wrong type where the API needs a specific one.
const CODE_INVALID_INPUT: &str = "invalid_tool_search_input";
/// Error code of `createToolSearchIndex` over more than `MAX_INDEXED_TOOLS` tools.
const CODE_INDEX_CAP: &str = "tool_search_index_cap";

/// Throws a `TypeError` with `code` and returns the error that rethrows it.
fn type_error(env: sys::napi_env, code: &str, message: &str) -> Error {
    let _ = Env::from_raw(env).throw_type_error(message, Some(code));
    Error::new(Status::PendingException, message.to_owned())
}

fn range_error(env: sys::napi_env, code: &str, message: &str) -> Error {
    let _ = Env::from_raw(env).throw_range_error(message, Some(code));
    Error::new(Status::PendingException, message.to_owned())
}

/// The `TypeError` (`invalid_tool_search_input`) of misuse.
fn invalid_input(raw: Raw, message: &str) -> Error {
    type_error(raw.0, CODE_INVALID_INPUT, message)
}

/// The `TypeError` (`invalid_tool_search_input`) of malformed input to a bulk entry point.
fn malformed(raw: Raw, what: &str) -> Error {
    invalid_input(raw, &format!("tool search: malformed packed input: {what}"))
}

/// An optional argument: `None` when absent, `undefined` or `null`.
fn optional(raw: Raw, v: Option<Unknown>) -> Result<Option<sys::napi_value>> {
    match v {
        None => Ok(None),
        Some(u) => match raw.type_of(u.raw())? {
            ValueType::Undefined | ValueType::Null => Ok(None),
            _ => Ok(Some(u.raw())),
        },
    }
}
