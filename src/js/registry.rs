//! `createToolRegistry` and `filterTools`.
//!
//! The registry's tool objects live in one JS array the registry references (so `get(n) === tool`
//! and nothing is copied); the name index and the duplicate policy are Rust. Dispatch recognises a
//! native registry by its type tag and looks names up without calling back into JS; any other
//! object with the registry shape is used through its `get`.

use std::cell::RefCell;
use std::ffi::c_void;
use std::rc::Rc;

use napi::sys;

use super::raw::{cb_args, error, type_error, Fail, Js, Ty, R, V};
use crate::filter::{Filter, FilterRule};
use crate::raw_fn;
use crate::registry::{DuplicatePolicy, Placement, RegistryIndex};

pub const REGISTRY_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x7072_6973_6d2d_7467,
    upper: 0x7265_6769_7374_0001,
};

pub struct RegistryState {
    env: sys::napi_env,
    index: RegistryIndex,
    policy: DuplicatePolicy,
    /// The JS array of tool objects, slot for slot with `index`.
    store: sys::napi_ref,
}

impl Drop for RegistryState {
    fn drop(&mut self) {
        unsafe { sys::napi_delete_reference(self.env, self.store) };
    }
}

type Shared = Rc<RefCell<RegistryState>>;

impl RegistryState {
    pub fn lookup(&self, js: &Js, name: &str) -> R<Option<V>> {
        match self.index.slot(name) {
            Some(slot) => Ok(Some(js.element(js.ref_value(self.store)?, slot as u32)?)),
            None => Ok(None),
        }
    }

    fn register(&mut self, js: &Js, tool: V, name: &str) -> R<()> {
        let placement = self
            .index
            .register(name, self.policy)
            .map_err(|dup| error(dup.to_string(), "ERR_PRISM_DUPLICATE_TOOL"))?;
        let store = js.ref_value(self.store)?;
        match placement {
            Placement::Appended(slot) | Placement::Replaced(slot) => {
                js.set_element(store, slot as u32, tool)
            }
        }
    }
}

/// The tool's `name`, which must be a non-empty string.
fn tool_name(js: &Js, tool: V) -> R<String> {
    if js.ty(tool)? != Ty::Object {
        return Err(type_error(
            "Tool definition must be an object",
            "ERR_PRISM_INVALID_TOOL",
        ));
    }
    match js.opt_str(js.get(tool, c"name")?)? {
        Some(n) if !n.is_empty() => Ok(n),
        _ => Err(type_error(
            "Tool definition must have a non-empty string name",
            "ERR_PRISM_INVALID_TOOL",
        )),
    }
}

fn shared<'a>(data: *mut c_void) -> &'a Shared {
    unsafe { &*(data as *const Shared) }
}

/// The state of a native registry object, when `v` is one.
#[allow(dead_code)] // dispatch now looks tools up through `registry.get` in JS
pub fn native_registry(js: &Js, v: V) -> R<Option<Shared>> {
    if js.ty(v)? != Ty::Object || !js.has_type_tag(v, &REGISTRY_TAG)? {
        return Ok(None);
    }
    let p = unsafe { js.unwrap::<Shared>(v)? };
    Ok(Some(unsafe { (*p).clone() }))
}

fn borrow_mut(s: &Shared) -> R<std::cell::RefMut<'_, RegistryState>> {
    s.try_borrow_mut().map_err(|_| {
        error(
            "ToolRegistry was re-entered while registering a tool",
            "ERR_PRISM_REENTRANT",
        )
    })
}

raw_fn!(registry_register, |js, info| {
    let (_, data, [tool], _) = cb_args::<1>(js, info)?;
    let name = tool_name(js, tool)?;
    borrow_mut(shared(data))?.register(js, tool, &name)?;
    Ok(js.undefined())
});

raw_fn!(registry_get, |js, info| {
    let (_, data, [name], _) = cb_args::<1>(js, info)?;
    let Some(name) = js.opt_str(name)? else {
        return Ok(js.undefined());
    };
    let state = shared(data)
        .try_borrow()
        .map_err(|_| error("ToolRegistry was re-entered", "ERR_PRISM_REENTRANT"))?;
    Ok(state.lookup(js, &name)?.unwrap_or_else(|| js.undefined()))
});

raw_fn!(registry_resolve, |js, info| {
    let (_, data, [name], _) = cb_args::<1>(js, info)?;
    let text = js.to_js_string(name)?;
    let state = shared(data)
        .try_borrow()
        .map_err(|_| error("ToolRegistry was re-entered", "ERR_PRISM_REENTRANT"))?;
    let found = if js.ty(name)? == Ty::String {
        state.lookup(js, &text)?
    } else {
        None
    };
    found.ok_or_else(|| {
        error(
            crate::dispatch::reasons::unknown_tool(&text),
            "ERR_PRISM_UNKNOWN_TOOL",
        )
    })
});

raw_fn!(registry_list, |js, info| {
    let (_, data, _, _) = cb_args::<0>(js, info)?;
    let state = shared(data)
        .try_borrow()
        .map_err(|_| error("ToolRegistry was re-entered", "ERR_PRISM_REENTRANT"))?;
    let store = js.ref_value(state.store)?;
    let n = state.index.len();
    let out = js.array(n)?;
    for i in 0..n as u32 {
        js.set_element(out, i, js.element(store, i)?)?;
    }
    Ok(out)
});

fn method(
    js: &Js,
    obj: V,
    name: &'static std::ffi::CStr,
    cb: sys::napi_callback,
    state: &Shared,
) -> R<()> {
    let data = Box::into_raw(Box::new(state.clone()));
    let f = match js.function(name.to_str().unwrap_or("method"), cb, data.cast()) {
        Ok(f) => f,
        Err(e) => {
            drop(unsafe { Box::from_raw(data) });
            return Err(e);
        }
    };
    js.attach_box(f, data)?;
    js.set(obj, name, f)
}

// `createToolRegistry(tools = [], { duplicate = "replace" })`.
raw_fn!(create_tool_registry, |js, info| {
    let (_, _, [tools, options], _) = cb_args::<2>(js, info)?;
    let policy = match js.ty(options)? {
        Ty::Undefined | Ty::Null => DuplicatePolicy::Replace,
        Ty::Object => {
            let d = js.get(options, c"duplicate")?;
            match js.ty(d)? {
                Ty::Undefined => DuplicatePolicy::Replace,
                _ => js
                    .opt_str(d)?
                    .as_deref()
                    .and_then(DuplicatePolicy::parse)
                    .ok_or_else(|| {
                        type_error(
                        "createToolRegistry: options.duplicate must be \"replace\" or \"error\"",
                        "ERR_PRISM_INVALID_OPTION",
                    )
                    })?,
            }
        }
        _ => {
            return Err(type_error(
                "createToolRegistry: options must be an object",
                "ERR_PRISM_INVALID_OPTION",
            ))
        }
    };
    let store = js.array(0)?;
    let state: Shared = Rc::new(RefCell::new(RegistryState {
        env: js.env,
        index: RegistryIndex::new(),
        policy,
        store: js.create_ref(store)?,
    }));
    match js.ty(tools)? {
        Ty::Undefined | Ty::Null => {}
        _ if js.is_array(tools)? => {
            let n = js.array_len(tools)?;
            for i in 0..n {
                let tool = js.element(tools, i)?;
                let name = tool_name(js, tool)?;
                borrow_mut(&state)?.register(js, tool, &name)?;
            }
        }
        _ => {
            return Err(type_error(
                "createToolRegistry: tools must be an array of tool definitions",
                "ERR_PRISM_INVALID_OPTION",
            ))
        }
    }
    let obj = js.object()?;
    method(js, obj, c"register", Some(registry_register), &state)?;
    method(js, obj, c"get", Some(registry_get), &state)?;
    method(js, obj, c"resolve", Some(registry_resolve), &state)?;
    method(js, obj, c"list", Some(registry_list), &state)?;
    js.wrap(obj, state)?;
    js.type_tag(obj, &REGISTRY_TAG)?;
    Ok(obj)
});

// ----- filters ------------------------------------------------------------------------------------

fn name_list(js: &Js, v: V, what: &str) -> R<Vec<String>> {
    match js.ty(v)? {
        Ty::Undefined | Ty::Null => return Ok(Vec::new()),
        _ if js.is_array(v)? => {}
        _ => {
            return Err(type_error(
                format!("{what} must be an array of tool names"),
                "ERR_PRISM_INVALID_FILTER",
            ))
        }
    }
    let n = js.array_len(v)?;
    let mut out = Vec::with_capacity(n as usize);
    for i in 0..n {
        match js.opt_str(js.element(v, i)?)? {
            Some(s) => out.push(s),
            None => {
                return Err(type_error(
                    format!("{what} must contain only strings"),
                    "ERR_PRISM_INVALID_FILTER",
                ))
            }
        }
    }
    Ok(out)
}

fn read_rule(js: &Js, v: V) -> R<FilterRule> {
    if js.ty(v)? != Ty::Object || js.is_array(v)? {
        return Err(type_error(
            "A tool filter must be an object { allow?, deny? }",
            "ERR_PRISM_INVALID_FILTER",
        ));
    }
    let allow = name_list(js, js.get(v, c"allow")?, "filter.allow")?;
    let deny = name_list(js, js.get(v, c"deny")?, "filter.deny")?;
    Ok(FilterRule::new(allow, deny))
}

/// Reads `ToolFilter | readonly ToolFilter[] | undefined`.
pub fn read_filter(js: &Js, v: V) -> R<Filter> {
    match js.ty(v)? {
        Ty::Undefined | Ty::Null => Ok(Filter::default()),
        _ if js.is_array(v)? => {
            let n = js.array_len(v)?;
            let mut rules = Vec::with_capacity(n as usize);
            for i in 0..n {
                rules.push(read_rule(js, js.element(v, i)?)?);
            }
            Ok(Filter { rules })
        }
        _ => Ok(Filter {
            rules: vec![read_rule(js, v)?],
        }),
    }
}

// `filterTools(tools, filter?)`: the tools that survive, in input order; never anything else.
raw_fn!(filter_tools, |js, info| {
    let (_, _, [tools, filter], _) = cb_args::<2>(js, info)?;
    if !js.is_array(tools)? {
        return Err(type_error(
            "filterTools: tools must be an array of tool definitions",
            "ERR_PRISM_INVALID_OPTION",
        ));
    }
    let filter = read_filter(js, filter)?;
    let n = js.array_len(tools)?;
    let out = js.array(0)?;
    let mut kept = 0u32;
    for i in 0..n {
        let tool = js.element(tools, i)?;
        let keep = if js.ty(tool)? == Ty::Object {
            match js.opt_str(js.get(tool, c"name")?)? {
                Some(name) => filter.permits(&name),
                None => false,
            }
        } else {
            false
        };
        if keep {
            js.set_element(out, kept, tool)?;
            kept += 1;
        }
    }
    Ok(out)
});

#[allow(dead_code)]
fn _assert_fail_is_used(_: Fail) {}
