//! Tool filters read from JS for the native dispatch (`toolFilter`).
//!
//! `createToolRegistry` and `filterTools` themselves are JS (`lib/registry.js`): a registry is a
//! `Map` of host objects and a filter a few set lookups per tool, both cheaper than one crossing
//! (bench/RESULTS.md, "Registry and filters"). Dispatch finds a tool through `registry.get(name)`.

use napi::bindgen_prelude::{Array, JsObjectValue, Object, Unknown};
use napi::{Env, JsValue, ValueType};

use crate::error::{Code, Kind, PrismError};
use crate::filter::{Filter, FilterRule};

fn invalid_filter(message: String) -> PrismError {
    PrismError::new(Kind::TypeError, Code::InvalidFilter, message)
}

enum Read<T> {
    Ok(T),
    Refused(PrismError),
}

/// `value` as a `String`; the caller has checked that it is a string.
fn string_of(value: Unknown) -> napi::Result<String> {
    // SAFETY: every caller checked `get_type() == String` first, so the conversion reads a string.
    unsafe { value.cast::<String>() }
}

fn name_list(value: Unknown, what: &str) -> napi::Result<Read<Vec<String>>> {
    match value.get_type()? {
        ValueType::Undefined | ValueType::Null => return Ok(Read::Ok(Vec::new())),
        ValueType::Object if value.is_array()? => {}
        _ => {
            return Ok(Read::Refused(invalid_filter(format!(
                "{what} must be an array of tool names"
            ))))
        }
    }
    // SAFETY: `value` is an object for which `napi_is_array` answered true.
    let array: Array = unsafe { value.cast() }?;
    let mut out = Vec::with_capacity(array.len() as usize);
    for i in 0..array.len() {
        let item: Unknown = array.get_element(i)?;
        if item.get_type()? != ValueType::String {
            return Ok(Read::Refused(invalid_filter(format!(
                "{what} must contain only strings"
            ))));
        }
        out.push(string_of(item)?);
    }
    Ok(Read::Ok(out))
}

fn rule(value: Unknown) -> napi::Result<Read<FilterRule>> {
    if value.get_type()? != ValueType::Object || value.is_array()? {
        return Ok(Read::Refused(invalid_filter(
            "A tool filter must be an object { allow?, deny? }".into(),
        )));
    }
    // SAFETY: `value` has type object (checked above).
    let obj: Object = unsafe { value.cast() }?;
    let allow = match name_list(obj.get_named_property("allow")?, "filter.allow")? {
        Read::Ok(v) => v,
        Read::Refused(e) => return Ok(Read::Refused(e)),
    };
    let deny = match name_list(obj.get_named_property("deny")?, "filter.deny")? {
        Read::Ok(v) => v,
        Read::Refused(e) => return Ok(Read::Refused(e)),
    };
    Ok(Read::Ok(FilterRule::new(allow, deny)))
}

/// Reads `ToolFilter | readonly ToolFilter[] | undefined`; a malformed filter throws
/// `ERR_PRISM_INVALID_FILTER` with the same messages as `filterTools`.
pub fn filter_from_js(env: &Env, value: Unknown) -> napi::Result<Filter> {
    let rules = match value.get_type()? {
        ValueType::Undefined | ValueType::Null => return Ok(Filter::default()),
        ValueType::Object if value.is_array()? => {
            // SAFETY: `value` is an object for which `napi_is_array` answered true.
            let array: Array = unsafe { value.cast() }?;
            let mut rules = Vec::with_capacity(array.len() as usize);
            for i in 0..array.len() {
                match rule(array.get_element(i)?)? {
                    Read::Ok(r) => rules.push(r),
                    Read::Refused(e) => return e.throw(env),
                }
            }
            rules
        }
        _ => match rule(value)? {
            Read::Ok(r) => vec![r],
            Read::Refused(e) => return e.throw(env),
        },
    };
    Ok(Filter { rules })
}

// ----- shims for the current raw dispatch --------------------------------------------------------
// The dispatch still speaks `raw.rs`; these adapt it to the safe reader above and go away with it.

use super::raw::{error, Fail, Js, R, V};

/// The dispatch's old native-registry fast path. Registries are JS now, so there is none: dispatch
/// looks every tool up through `registry.get(name)`.
pub struct RegistryState;

impl RegistryState {
    pub fn lookup(&self, _js: &Js, _name: &str) -> R<Option<V>> {
        Ok(None)
    }
}

/// Always `None`: see [`RegistryState`].
pub fn native_registry(
    _js: &Js,
    _v: V,
) -> R<Option<std::rc::Rc<std::cell::RefCell<RegistryState>>>> {
    Ok(None)
}

/// [`filter_from_js`] for a raw value.
pub fn read_filter(js: &Js, v: V) -> R<Filter> {
    // SAFETY: `js.env` is the env of the callback the dispatch is running in and `v` is a value
    // handle of that same callback scope, alive for the whole call.
    let value = unsafe { Unknown::from_raw_unchecked(js.env, v) };
    let env = Env::from_raw(js.env);
    filter_from_js(&env, value).map_err(|e| match e.status {
        napi::Status::PendingException => Fail::Pending,
        _ => error(e.reason.clone(), Code::Internal.as_str()),
    })
}
