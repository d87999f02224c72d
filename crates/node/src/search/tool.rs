//! The generated `search_tools` tool: a ToolDefinition whose `execute` searches an index and
//! answers a ToolResult (inert lines and the names to activate), never throwing for bad arguments.

use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi::{sys, Env, JsValue, Unknown};
use napi_derive::napi;

use prism_tools_core::search::format::{line, NO_MATCH_TEXT};
use prism_tools_core::search::fuse::{
    reciprocal_rank_fusion, DEFAULT_RANKING_WEIGHT, LEXICAL_DEPTH,
};
use prism_tools_core::search::packed::{ranking_docs, MAX_FUSED_RANKING};
use prism_tools_core::search::{clamp_count, MAX_TOP_K, SEARCH_TOOLS_DEFAULT_K};

use super::class::{Shared, ToolSearchIndex};
use super::limits::SEARCH_TOOLS_NAME;
use super::optional;
use super::raw::Raw;
use super::typed;

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

/// Sets `result.value` to `{ names }`.
fn set_names(raw: Raw, result: sys::napi_value, names: &[&str]) -> Result<()> {
    let value = raw.create_object()?;
    raw.set(value, c"names", raw.string_array(names)?)?;
    raw.set(result, c"value", value)
}

/// Whether `v` was passed and is an object.
fn object_arg(raw: Raw, v: Option<sys::napi_value>) -> Result<Option<sys::napi_value>> {
    match v {
        Some(v) if raw.is_object(v)? => Ok(Some(v)),
        _ => Ok(None),
    }
}

/// One `search_tools` call: a ToolResult object. `args` and `ctx` are `None` when not passed;
/// `dense` is a hybrid index's embedding ranking (documents, best first), fused as the `ranking`
/// seam fuses it.
fn run_search_tools(
    raw: Raw,
    shared: &Shared,
    default_k: usize,
    args: Option<sys::napi_value>,
    ctx: Option<sys::napi_value>,
    dense: Option<Vec<u32>>,
) -> Result<sys::napi_value> {
    let result = raw.create_object()?;
    if let Some(ctx) = object_arg(raw, ctx)? {
        raw.set(result, c"toolCallId", raw.get(ctx, c"toolCallId")?)?;
    }
    raw.set(result, c"name", raw.create_string(SEARCH_TOOLS_NAME)?)?;
    let args = object_arg(raw, args)?;
    let query = match args {
        Some(args) => {
            // The property is read (a getter may run JS, even this tool again) before the
            // scratch buffer is borrowed for the string's copy.
            let v = raw.get(args, c"query")?;
            let query = raw.string(v, shared.query_bytes, &mut shared.buf.borrow_mut())?;
            query.map(|q| (args, q))
        }
        None => None,
    };
    let Some((args, (query, truncated))) = query else {
        let err = raw.create_object()?;
        raw.set(
            err,
            c"message",
            raw.create_string("search_tools: query must be a string")?,
        )?;
        raw.set(err, c"code", raw.create_string("invalid_arguments")?)?;
        raw.set(result, c"error", err)?;
        set_names(raw, result, &[])?;
        return Ok(result);
    };
    let k_arg = raw.number(raw.get(args, c"k")?)?;
    let k = clamp_count(k_arg, default_k, MAX_TOP_K);
    let (terms, hits) = match dense {
        None => shared.index.search(&query, k),
        Some(docs) => {
            let dense = ranking_docs(docs, shared.index.size());
            let (terms, lexical) = shared.index.search(&query, LEXICAL_DEPTH);
            let fused = reciprocal_rank_fusion(&lexical, &dense, DEFAULT_RANKING_WEIGHT, k);
            (terms, fused)
        }
    };
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
    set_names(raw, result, &names)?;
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
) -> Result<Object<'env>> {
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
    let execute =
        env.create_function_from_closure::<(Unknown, Unknown), Object, _>("execute", move |ctx| {
            let raw = Raw(ctx.env.raw());
            let arg = |i: usize| -> Result<Option<sys::napi_value>> {
                match i < ctx.length() {
                    true => Ok(Some(ctx.get::<Unknown>(i)?.raw())),
                    false => Ok(None),
                }
            };
            let (args, call_ctx) = (arg(0)?, arg(1)?);
            // A third argument is lib/search-hybrid.js's embedding ranking: a Uint32Array of
            // documents; anything else but a shared buffer is ignored.
            let dense = match arg(2)? {
                Some(v) => typed::read::<u32>(raw, v, "ranking", MAX_FUSED_RANKING)?,
                None => None,
            };
            let out = run_search_tools(raw, &shared, default_k, args, call_ctx, dense)?;
            Ok(raw.object(out))
        })?;
    raw.set(tool, c"execute", execute.raw())?;
    Ok(raw.object(tool))
}
