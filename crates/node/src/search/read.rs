//! The tool-by-tool reader: a tool list read from host objects through Node-API, as
//! `createToolSearchIndex` (called directly on the binding) and `selectDisclosedTools` without an
//! index read it. lib/search.js reads the same fields in JS and sends them packed; both join the
//! parameter text with `packed::ParameterText`, and a test checks they index the same text.

use napi::bindgen_prelude::*;
use napi::{sys, ValueType};

use prism_tools_core::search::packed::{ParameterText, INDEXED_TEXT_BYTES};
use prism_tools_core::search::{
    clamp_count, Scoring, SearchIndex, ToolText, DEFAULT_QUERY_BYTES, MAX_INDEXED_TOOLS,
    MAX_QUERY_BYTES,
};

use super::raw::Raw;

pub(super) struct ToolStrings {
    pub(super) name: String,
    /// False when the JS name holds a lone surrogate: such a tool is never indexed, so a search
    /// can never name it (its U+FFFD text could equal another tool's name).
    pub(super) well_formed: bool,
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
    let mut parameters = ParameterText::default();
    let props = match raw.prop(raw.get_by_key(tool, keys.parameters)?, keys.properties)? {
        Some(p) if raw.type_of(p)? == ValueType::Object => Some(p),
        _ => None,
    };
    if let Some(props) = props {
        let names = raw.keys(props)?;
        let n = raw.array_len(names)?;
        for i in 0..n {
            if parameters.is_full(i as usize) {
                break;
            }
            let key = raw.element(names, i)?;
            if let Some((k, _)) = raw.string(key, INDEXED_TEXT_BYTES, buf)? {
                parameters.push(&k);
            }
            if let Some(d) = raw.prop(raw.get_by_key(props, key)?, keys.description)? {
                if let Some((d, _)) = raw.string(d, INDEXED_TEXT_BYTES, buf)? {
                    parameters.push(&d);
                }
            }
        }
    }
    let parameters = parameters.finish();
    Ok(Some(ToolStrings {
        name,
        well_formed,
        description,
        parameters,
    }))
}

pub(super) enum ReadTools {
    Ok(Vec<ToolStrings>),
    OverCap(u32),
    /// Entry `i` is not an object with a string name.
    BadEntry(u32),
}

pub(super) fn read_tools(raw: Raw, tools: sys::napi_value) -> Result<ReadTools> {
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

pub(super) fn build_index(tools: &[ToolStrings]) -> SearchIndex {
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
pub(super) fn read_query_bytes(raw: Raw, options: Option<sys::napi_value>) -> Result<usize> {
    let Some(o) = options else {
        return Ok(DEFAULT_QUERY_BYTES);
    };
    if !raw.is_object(o)? {
        return Ok(DEFAULT_QUERY_BYTES);
    }
    let v = raw.number(raw.get(o, c"queryBytes")?)?;
    Ok(clamp_count(v, DEFAULT_QUERY_BYTES, MAX_QUERY_BYTES))
}
