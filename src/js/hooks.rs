//! Where a dispatch finds its hooks: the per-call options object of `dispatchToolCall`, or the
//! options a `createToolDispatcher` read once and bound (references kept, filter and secrets
//! compiled). Either way the machine asks for a hook by name and gets a JS value.

use std::cell::RefCell;
use std::ffi::CStr;
use std::num::NonZeroUsize;
use std::rc::Rc;

use lru::LruCache;
use napi::sys;

use super::raw::{type_error, Js, Ty, R, V};
use super::redact::{native_redactor, read_secrets};
use super::registry::read_filter;
use crate::filter::Filter;
use crate::redact::Secrets;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(usize)]
pub enum Hook {
    Middleware,
    Guardrails,
    Identity,
    Ownership,
    Trust,
    Permission,
    Validate,
    EffectStore,
    BeforeExecute,
    Emit,
    Ledger,
    Redactor,
    Registry,
}

pub const HOOKS: [(Hook, &CStr); 13] = [
    (Hook::Middleware, c"middleware"),
    (Hook::Guardrails, c"guardrails"),
    (Hook::Identity, c"identity"),
    (Hook::Ownership, c"ownership"),
    (Hook::Trust, c"trust"),
    (Hook::Permission, c"permission"),
    (Hook::Validate, c"validate"),
    (Hook::EffectStore, c"effectStore"),
    (Hook::BeforeExecute, c"beforeExecute"),
    (Hook::Emit, c"emit"),
    (Hook::Ledger, c"ledger"),
    (Hook::Redactor, c"redactor"),
    (Hook::Registry, c"registry"),
];

/// Which hooks an options object sets (as a bit set over `Hook`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Present(u32);

impl Present {
    pub fn has(self, h: Hook) -> bool {
        self.0 & (1 << h as usize) != 0
    }
    fn add(&mut self, h: Hook) {
        self.0 |= 1 << h as usize;
    }
}

/// What the machine needs from its options besides the hook values.
pub struct Compiled {
    pub present: Present,
    pub filter: Option<Rc<Filter>>,
    /// `secrets` plus a native redactor's secrets: applied in Rust.
    pub secrets: Rc<Secrets>,
    /// A host redactor is set: results, events and rows also go through its `redact`.
    pub host_redactor: bool,
    pub any_redaction: bool,
}

/// Options bound once by `createToolDispatcher`.
pub struct Bound {
    env: sys::napi_env,
    refs: Vec<Option<sys::napi_ref>>,
    pub compiled: Compiled,
}

impl Drop for Bound {
    fn drop(&mut self) {
        for r in self.refs.iter().flatten() {
            unsafe { sys::napi_delete_reference(self.env, *r) };
        }
    }
}

pub const DISPATCHER_TAG: sys::napi_type_tag = sys::napi_type_tag {
    lower: 0x7072_6973_6d2d_6473,
    upper: 0x7061_7463_6865_0001,
};

#[derive(Clone)]
pub enum Source {
    /// `dispatchToolCall`: hooks are read from this options object (kept in the frame slot 0).
    Options,
    Bound(Rc<Bound>),
}

impl Source {
    /// The hook's current value (`undefined` when absent).
    pub fn hook(&self, js: &Js, options: V, h: Hook) -> R<V> {
        match self {
            Source::Options => js.get(options, HOOKS[h as usize].1),
            Source::Bound(b) => match b.refs[h as usize] {
                Some(r) => js.ref_value(r),
                None => Ok(js.undefined()),
            },
        }
    }
}

thread_local! {
    /// Compiled secret sets keyed by their contents: a dispatch that passes the same `secrets`
    /// array every call builds its automaton once.
    static SECRET_CACHE: RefCell<LruCache<Vec<String>, Rc<Secrets>>> =
        RefCell::new(LruCache::new(NonZeroUsize::new(32).unwrap_or(NonZeroUsize::MIN)));
}

pub fn cached_secrets(list: Vec<String>) -> Rc<Secrets> {
    if list.is_empty() {
        return EMPTY.with(|e| e.clone());
    }
    SECRET_CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if let Some(s) = c.get(&list) {
            return s.clone();
        }
        let s = Rc::new(Secrets::new(list.iter().cloned()));
        c.put(list, s.clone());
        s
    })
}

thread_local! {
    static EMPTY: Rc<Secrets> = Rc::new(Secrets::default());
}

/// What an options object sets besides the hooks.
#[derive(Default)]
pub struct Extra {
    pub call: Option<V>,
    pub context: Option<V>,
    filter: Option<V>,
    secrets: Option<V>,
}

/// Reads which hooks are set, the filter and the secrets from an options object.
///
/// A plain object is read by walking its own keys once (a dispatch usually sets three of the
/// sixteen names, so this is a handful of boundary crossings instead of sixteen reads); any other
/// object is read name by name, so getters and inherited options still work.
pub fn compile(
    js: &Js,
    options: V,
    values: &mut [V; 13],
    call_given: bool,
) -> R<(Compiled, Extra)> {
    let undef = js.undefined();
    values.iter_mut().for_each(|v| *v = undef);
    let mut extra = Extra::default();
    let mut present = Present::default();
    let proto = js.prototype_of(options)?;
    let plain = js.strict_eq(
        proto,
        js.ref_value(super::realm::Realm::get(js)?.object_proto)?,
    )?;
    if plain {
        let keys = js.keys_all(options)?;
        let n = js.array_len(keys)?;
        let mut buf = [0u8; 32];
        for i in 0..n {
            let key = js.element(keys, i)?;
            let Some(name) = js.short_str(key, &mut buf)? else {
                continue;
            };
            let slot = HOOKS.iter().position(|(_, k)| k.to_bytes() == name);
            let target: &mut Option<V> = match (slot, name) {
                (Some(_), _) => {
                    let h = HOOKS[slot.unwrap_or_default()].0;
                    let v = js.get_prop(options, key)?;
                    values[h as usize] = v;
                    if !js.is_nullish(v)? {
                        present.add(h);
                    }
                    continue;
                }
                (None, b"call") if !call_given => &mut extra.call,
                (None, b"context") if !call_given => &mut extra.context,
                (None, b"filter") => &mut extra.filter,
                (None, b"secrets") => &mut extra.secrets,
                _ => continue,
            };
            *target = Some(js.get_prop(options, key)?);
        }
    } else {
        for (h, key) in HOOKS.iter() {
            let v = js.get(options, key)?;
            values[*h as usize] = v;
            if !js.is_nullish(v)? {
                present.add(*h);
            }
        }
        extra.call = Some(js.get(options, c"call")?);
        extra.context = Some(js.get(options, c"context")?);
        extra.filter = Some(js.get(options, c"filter")?);
        extra.secrets = Some(js.get(options, c"secrets")?);
    }
    let filter = match extra.filter {
        Some(f) if !js.is_nullish(f)? => Some(Rc::new(read_filter(js, f)?)),
        _ => None,
    };
    let mut list = match extra.secrets {
        Some(s) => read_secrets(js, s, "secrets")?,
        None => Vec::new(),
    };
    let mut host_redactor = false;
    if present.has(Hook::Redactor) {
        let r = values[Hook::Redactor as usize];
        match native_redactor(js, r)? {
            Some(s) => list.extend(s.list().iter().cloned()),
            None => {
                let f = js.get_opt(r, c"redact")?;
                if js.ty(f)? != Ty::Function {
                    return Err(type_error(
                        "redactor must have a redact(value) method",
                        "ERR_PRISM_INVALID_OPTION",
                    ));
                }
                host_redactor = true;
            }
        }
    }
    let secrets = cached_secrets(list);
    let any_redaction = host_redactor || !secrets.is_empty();
    Ok((
        Compiled {
            present,
            filter,
            secrets,
            host_redactor,
            any_redaction,
        },
        extra,
    ))
}

thread_local! {
    /// Options that set only a registry: the same compiled state every time.
    static BARE: Rc<Compiled> = Rc::new(Compiled {
        present: { let mut p = Present::default(); p.add(Hook::Registry); p },
        filter: None,
        secrets: Rc::new(Secrets::default()),
        host_redactor: false,
        any_redaction: false,
    });
}

/// The compiled state of options that set only a registry.
pub fn bare_compiled() -> Rc<Compiled> {
    BARE.with(|b| b.clone())
}

/// Binds an options object once (`createToolDispatcher`).
pub fn bind(js: &Js, options: V) -> R<Bound> {
    let mut values = [std::ptr::null_mut(); 13];
    let (compiled, _) = compile(js, options, &mut values, true)?;
    let mut refs = Vec::with_capacity(HOOKS.len());
    for (h, _) in HOOKS.iter() {
        refs.push(if compiled.present.has(*h) {
            Some(js.create_ref(values[*h as usize])?)
        } else {
            None
        });
    }
    Ok(Bound {
        env: js.env,
        refs,
        compiled,
    })
}
