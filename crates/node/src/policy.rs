//! napi exports for the static permission and trust policies. The policy object is a plain JS object
//! whose `check` is a native function closing over the lists (decisions in `prism_tools_core::policy`).

// napi registers these exports; a `cargo test` build sees no caller.
#![cfg_attr(test, allow(dead_code))]

use crate::throw::Throw;
use napi::bindgen_prelude::*;
use napi::{Env, ValueType};
use napi_derive::napi;

use prism_tools_core::policy::{
    parse_default, permission_reason, trust_reason, StaticLists, Verdict,
};

use prism_tools_core::error::{Code, Kind, PrismError};

/// `PermissionDecision` as returned by a static policy.
#[napi(object)]
pub struct StaticPermissionDecision {
    pub allowed: bool,
    pub reason: Option<String>,
}

/// `TrustDecision` as returned by a static policy.
#[napi(object)]
pub struct StaticTrustDecision {
    pub trusted: bool,
    pub reason: Option<String>,
}

fn type_error<T>(env: &Env, message: &str) -> Result<T> {
    PrismError::new(Kind::TypeError, Code::InvalidArgType, message.to_owned()).throw(env)
}

fn string_prop(obj: &Object, name: &str) -> Result<Option<String>> {
    let value: Unknown = obj.get_named_property(name)?;
    if value.get_type()? == ValueType::String {
        Ok(Some(String::from_unknown(value)?))
    } else {
        Ok(None)
    }
}

/// Reads an optional `string[]` option; anything else is a `TypeError`.
fn string_list(env: &Env, obj: &Object, name: &str, factory: &str) -> Result<Vec<String>> {
    let value: Unknown = obj.get_named_property(name)?;
    match value.get_type()? {
        ValueType::Undefined | ValueType::Null => return Ok(Vec::new()),
        ValueType::Object if value.is_array()? => {}
        _ => {
            return type_error(
                env,
                &format!("{factory}: {name} must be an array of strings"),
            )
        }
    }
    let array = Array::from_unknown(value)?;
    let mut out = Vec::with_capacity(array.len() as usize);
    for i in 0..array.len() {
        let item: Unknown = array.get_element(i)?;
        if item.get_type()? != ValueType::String {
            return type_error(
                env,
                &format!("{factory}: {name} must be an array of strings"),
            );
        }
        out.push(String::from_unknown(item)?);
    }
    Ok(out)
}

fn default_decision(
    env: &Env,
    obj: &Object,
    factory: &str,
    yes: &str,
    no: &str,
) -> Result<Option<bool>> {
    let value: Unknown = obj.get_named_property("defaultDecision")?;
    let text = match value.get_type()? {
        ValueType::Undefined | ValueType::Null => None,
        ValueType::String => Some(String::from_unknown(value)?),
        _ => {
            return type_error(
                env,
                &format!("{factory}: defaultDecision must be \"{yes}\" or \"{no}\""),
            )
        }
    };
    match parse_default(text.as_deref(), yes, no) {
        Ok(v) => Ok(v),
        Err(message) => type_error(env, &format!("{factory}: {message}")),
    }
}

/// What a static policy was built from.
enum Rule {
    Constant(bool, Option<String>),
    Lists(StaticLists),
}

/// The request fields a static policy reads: `kind`, `target`, and the action or capability.
struct Request {
    kind: String,
    target: String,
    verb: String,
}

fn request_object<'a>(ctx: &'a FunctionCallContext) -> Result<Option<Object<'a>>> {
    if ctx.length() == 0 {
        return Ok(None);
    }
    let value: Unknown = ctx.get(0)?;
    if value.get_type()? != ValueType::Object {
        return Ok(None);
    }
    Ok(Some(Object::from_unknown(value)?))
}

fn full_request(obj: &Object, target: String, verb_name: &str) -> Result<Request> {
    Ok(Request {
        kind: string_prop(obj, "kind")?.unwrap_or_else(|| "undefined".to_owned()),
        target,
        verb: string_prop(obj, verb_name)?.unwrap_or_else(|| "undefined".to_owned()),
    })
}

/// The check both static policies share: `(allowed, reason)` for one request. The full request
/// (kind and verb) is read only when a `kind:target:verb` entry or a refusal needs it.
fn decide(
    rule: &Rule,
    ctx: &FunctionCallContext,
    verb_name: &str,
    invalid: &str,
    reason: impl Fn(Verdict, &Request) -> Option<String>,
) -> Result<(bool, Option<String>)> {
    let lists = match rule {
        Rule::Constant(ok, r) => return Ok((*ok, r.clone())),
        Rule::Lists(lists) => lists,
    };
    let Some(obj) = request_object(ctx)? else {
        return Ok((false, Some(invalid.to_owned())));
    };
    let Some(target) = string_prop(&obj, "target")? else {
        return Ok((false, Some(invalid.to_owned())));
    };
    let mut full: Option<Request> = None;
    let mut read_error: Option<Error> = None;
    let verdict = lists.decide(&target, || {
        match full_request(&obj, target.clone(), verb_name) {
            Ok(r) => {
                let key = format!("{}:{}:{}", r.kind, r.target, r.verb);
                full = Some(r);
                key
            }
            Err(e) => {
                read_error = Some(e);
                String::new()
            }
        }
    });
    if let Some(e) = read_error {
        return Err(e);
    }
    if verdict == Verdict::Allowed {
        return Ok((true, None));
    }
    let r = match full {
        Some(r) => r,
        None => full_request(&obj, target, verb_name)?,
    };
    Ok((false, reason(verdict, &r)))
}

/// The options both static policies take: nothing (lists empty), a boolean (a constant decision), or
/// `{ <yes>?, <no>?, defaultDecision? }`. With `constant_form`, `{ <yes>: boolean, reason? }` is a
/// constant decision too, as `@arnilo/prism` accepts it for trust.
fn read_rule(
    env: &Env,
    options: Option<Unknown>,
    factory: &str,
    (yes, no): (&str, &str),
    constant_form: bool,
) -> Result<Rule> {
    let Some(value) = options else {
        return Ok(Rule::Lists(StaticLists::new(Vec::new(), Vec::new(), None)));
    };
    match value.get_type()? {
        ValueType::Undefined => Ok(Rule::Lists(StaticLists::new(Vec::new(), Vec::new(), None))),
        ValueType::Boolean => Ok(Rule::Constant(bool::from_unknown(value)?, None)),
        ValueType::Object => {
            let obj = Object::from_unknown(value)?;
            if constant_form {
                let flag: Unknown = obj.get_named_property(yes)?;
                if flag.get_type()? == ValueType::Boolean {
                    return Ok(Rule::Constant(
                        bool::from_unknown(flag)?,
                        string_prop(&obj, "reason")?,
                    ));
                }
            }
            let listed = string_list(env, &obj, yes, factory)?;
            let refused = string_list(env, &obj, no, factory)?;
            let default = default_decision(env, &obj, factory, yes, no)?;
            Ok(Rule::Lists(StaticLists::new(listed, refused, default)))
        }
        _ => type_error(
            env,
            &format!("{factory}: options must be an object or a boolean"),
        ),
    }
}

/// What sets the two static policies apart: the factory's name (in its errors), the option names
/// of the allowing and refusing lists, whether `{ <yes>: boolean, reason? }` is a constant decision
/// (`read_rule`), the request field that completes a `kind:target:verb` entry, the reason of an
/// invalid request, the reason of a refusal, and the decision object.
struct StaticKind<D> {
    factory: &'static str,
    lists: (&'static str, &'static str),
    constant_form: bool,
    verb_name: &'static str,
    invalid: &'static str,
    reason: fn(Verdict, &Request) -> Option<String>,
    answer: fn(bool, Option<String>) -> D,
}

const PERMISSION: StaticKind<StaticPermissionDecision> = StaticKind {
    factory: "createStaticPermissionPolicy",
    lists: ("allow", "deny"),
    constant_form: false,
    verb_name: "action",
    invalid: "Invalid permission request",
    reason: |verdict, r| permission_reason(verdict, &format!("{}:{}:{}", r.kind, r.target, r.verb)),
    answer: |allowed, reason| StaticPermissionDecision { allowed, reason },
};

const TRUST: StaticKind<StaticTrustDecision> = StaticKind {
    factory: "createStaticTrustPolicy",
    lists: ("trusted", "untrusted"),
    constant_form: true,
    verb_name: "capability",
    invalid: "Invalid trust request",
    reason: |verdict, r| trust_reason(verdict, &r.kind, &r.target),
    answer: |trusted, reason| StaticTrustDecision { trusted, reason },
};

/// A static policy object of `kind` built from `options`: `{ check(request) }`, deciding from the
/// rule and answering with the decision `kind.answer(yes, reason)` makes.
fn static_policy<'env, D: ToNapiValue + 'static>(
    env: &'env Env,
    options: Option<Unknown<'env>>,
    kind: &StaticKind<D>,
) -> Result<Object<'env>> {
    let rule = read_rule(env, options, kind.factory, kind.lists, kind.constant_form)?;
    let StaticKind {
        verb_name,
        invalid,
        reason,
        answer,
        ..
    } = *kind;
    let check = env.create_function_from_closure::<Unknown, _, _>(
        "check",
        move |ctx: FunctionCallContext| {
            let (yes, why) = decide(&rule, &ctx, verb_name, invalid, reason)?;
            Ok(answer(yes, why))
        },
    )?;
    let mut policy = Object::new(env)?;
    policy.set_named_property("check", check)?;
    Ok(policy)
}

/// `createStaticPermissionPolicy(options)`: `{ allow?, deny?, defaultDecision? }` or a boolean.
#[napi(js_name = "createStaticPermissionPolicy")]
pub fn create_static_permission_policy<'env>(
    env: &'env Env,
    options: Option<Unknown<'env>>,
) -> Result<Object<'env>> {
    static_policy(env, options, &PERMISSION)
}

/// `createStaticTrustPolicy(options)`: `{ trusted?, untrusted?, defaultDecision? }`, a boolean, or a
/// constant `TrustDecision` (`{ trusted: boolean, reason? }`).
#[napi(js_name = "createStaticTrustPolicy")]
pub fn create_static_trust_policy<'env>(
    env: &'env Env,
    options: Option<Unknown<'env>>,
) -> Result<Object<'env>> {
    static_policy(env, options, &TRUST)
}
