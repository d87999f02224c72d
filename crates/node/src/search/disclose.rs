//! Progressive disclosure: `selectDisclosedTools` (the tools to send this turn, failing closed to
//! the whole list) and `activateToolNames` (a session's activation list).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi::{sys, Env, JsValue, Unknown, ValueType};
use napi_derive::napi;

use prism_tools_core::search::select::{activate, disclose, Disclosure};
use prism_tools_core::search::{
    clamp_count, DEFAULT_TOP_K, HARD_MAX_INDEXED_TOOLS, MAX_ACTIVATED_NAMES, MAX_QUERY_BYTES,
    MAX_TOP_K,
};
use prism_tools_core::text::utf8_prefix;

use super::class::{Shared, ToolSearchIndex};
use super::invalid_input;
use super::raw::Raw;
use super::read::{build_index, read_query_bytes, read_tools, ReadTools};

/// The string entries of the array `v` that can count in an activation list (the newest
/// `4 × MAX_ACTIVATED_NAMES`); non-strings are skipped and a non-array reads as empty.
fn read_names(raw: Raw, v: sys::napi_value, buf: &mut Vec<u8>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if raw.is_array(v)? {
        let len = raw.array_len(v)?;
        let from = len.saturating_sub(MAX_ACTIVATED_NAMES as u32 * 4);
        for i in from..len {
            if let Some((s, _)) = raw.string(raw.element(v, i)?, usize::MAX, buf)? {
                out.push(s);
            }
        }
    }
    Ok(out)
}

/// The tools to send this turn (see `select::disclose`). Fails closed to a copy of the whole
/// list; throws only when `options` is not an object or `options.tools` is not an array.
#[napi(
    ts_args_type = "options: SelectDisclosedToolsOptions",
    ts_return_type = "ToolDefinition[]"
)]
pub fn select_disclosed_tools<'env>(
    env: &'env Env,
    options: Unknown<'env>,
) -> Result<Object<'env>> {
    let raw = Raw(env.raw());
    if !raw.is_object(options.raw())? {
        return Err(invalid_input(
            raw,
            "selectDisclosedTools: options must be an object",
        ));
    }
    let o = options.raw();
    let tools = raw.get(o, c"tools")?;
    if !raw.is_array(tools)? {
        return Err(invalid_input(
            raw,
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
            raw.clear_exception()?;
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
    Ok(raw.object(out))
}

fn choose(raw: Raw, o: sys::napi_value, tools: sys::napi_value, n: u32) -> Result<Disclosure> {
    // A list past the default cap is disclosed in part only through an index built for it
    // (`maxTools`); core's `disclose` compares the list with that index.
    if n as usize > HARD_MAX_INDEXED_TOOLS {
        return Ok(Disclosure::All);
    }
    let mut buf = Vec::new();
    // Input text: a string, else everything is disclosed.
    let Some((input, _)) = raw.string(raw.get(o, c"input")?, MAX_QUERY_BYTES, &mut buf)? else {
        return Ok(Disclosure::All);
    };
    let top_k = clamp_count(raw.number(raw.get(o, c"topK")?)?, DEFAULT_TOP_K, MAX_TOP_K);
    let activated = read_names(raw, raw.get(o, c"activated")?, &mut buf)?;
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
            let q = utf8_prefix(&input, shared.query_bytes);
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
            let q = utf8_prefix(&input, query_bytes);
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
    let a = read_names(raw, activated.raw(), &mut buf)?;
    let b = read_names(raw, names.raw(), &mut buf)?;
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    Ok(activate(&a, &b))
}
