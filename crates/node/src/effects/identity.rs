//! Keys, identity checks and effect declarations.

use super::errors::{effect_result, throw_store_error};
use super::js::{check, host_parse, Js};
use super::read::{read_identity, read_ownership};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::effects::canonical;
use prism_tools_core::effects::declaration::{invalid_declaration, parse_declaration, Declaration};
use prism_tools_core::effects::error::{EffectError, IdentityFailure, StoreError};
use prism_tools_core::effects::identity::{self, Field};
use prism_tools_core::effects::time::now_ms;
use prism_tools_core::effects::wire::IdentityCheck;
use std::ptr;
use std::rc::Rc;

/// `deriveToolEffectKey({ identity, ownership, sessionId, runId, toolCallId, toolName, argumentsHash })`.
#[napi(js_name = "deriveToolEffectKey")]
pub fn derive_tool_effect_key(env: Env, input: Unknown) -> Result<String> {
    let js = Js(env.raw());
    let v = input.raw();
    let identity = js.prop(v, c"identity")?;
    let principal = js.prop(identity, c"principal")?;
    let ownership = js.prop(v, c"ownership")?;
    let text = |f: Field| f.text().map(str::to_owned);
    let required = [
        text(js.field(ownership, c"tenantId")?),
        text(js.field(principal, c"id")?),
        text(js.field(v, c"sessionId")?),
        text(js.field(v, c"runId")?),
        text(js.field(v, c"toolCallId")?),
        text(js.field(v, c"toolName")?),
        text(js.field(v, c"argumentsHash")?),
    ];
    let optional = |f: Field| -> Result<Option<String>> {
        match f {
            Field::Absent => Ok(None),
            Field::Text(s) => Ok(Some(s)),
            Field::Invalid => effect_result(
                js,
                Err(EffectError::limit("tool effect key input is invalid")),
            ),
        }
    };
    let account = optional(js.field(ownership, c"accountId")?)?;
    let user = optional(js.field(ownership, c"userId")?)?;
    if required.iter().any(Option::is_none) {
        return effect_result(
            js,
            Err(EffectError::limit("tool effect key input is invalid")),
        );
    }
    let [t, p, s, r, c, n, h] = required.map(Option::unwrap_or_default);
    Ok(canonical::derive_key(&canonical::KeyMaterial {
        tenant_id: &t,
        account_id: account.as_deref(),
        user_id: user.as_deref(),
        principal_id: &p,
        session_id: &s,
        run_id: &r,
        tool_call_id: &c,
        tool_name: &n,
        arguments_hash: &h,
    }))
}

fn clock(js: Js, options: sys::napi_value) -> Result<i64> {
    Ok(match js.number(options, c"now")? {
        Some(f) if f.is_finite() => f as i64,
        _ => now_ms(),
    })
}

/// `isAgentIdentityActive(identity, { now? })`: `verified === true`, `issuedAt` parseable and at most a
/// minute ahead, not expired, not revoked, shape within bounds.
#[napi(js_name = "isAgentIdentityActive")]
pub fn is_agent_identity_active(
    env: Env,
    identity: Unknown,
    options: Option<Unknown>,
) -> Result<bool> {
    let js = Js(env.raw());
    let now = clock(js, options.map_or(ptr::null_mut(), |o| o.raw()))?;
    let id = read_identity(js, identity.raw())?;
    Ok(identity::check_active(&id, now, &host_parse(js)).is_ok())
}

/// `identityMatchesOwnership(identity, ownership?, { now? })`: active, and every field the ownership sets
/// equals the identity's.
#[napi(js_name = "identityMatchesOwnership")]
pub fn identity_matches_ownership(
    env: Env,
    identity: Unknown,
    ownership: Option<Unknown>,
    options: Option<Unknown>,
) -> Result<bool> {
    let js = Js(env.raw());
    let now = clock(js, options.map_or(ptr::null_mut(), |o| o.raw()))?;
    let id = read_identity(js, identity.raw())?;
    let own = read_ownership(js, ownership.map_or(ptr::null_mut(), |o| o.raw()))?;
    Ok(identity::check_matches_ownership(&id, &own, now, &host_parse(js)).is_ok())
}

/// `assertIdentityActive(identity, { now?, expectedTenantId? })`: throws `IdentityError` naming the defect.
#[napi(js_name = "assertIdentityActive")]
pub fn assert_identity_active(env: Env, identity: Unknown, options: Option<Unknown>) -> Result<()> {
    let js = Js(env.raw());
    let opts = options.map_or(ptr::null_mut(), |o| o.raw());
    let now = clock(js, opts)?;
    let id = read_identity(js, identity.raw())?;
    let mut outcome = identity::check_active(&id, now, &host_parse(js));
    if outcome.is_ok() {
        if let Field::Text(expected) = js.field(opts, c"expectedTenantId")? {
            if id.tenant_id.text() != Some(expected.as_str()) {
                outcome = Err(IdentityFailure::new(
                    "wrong_tenant",
                    "Identity tenant mismatch",
                ));
            }
        }
    }
    outcome.map_err(|f| throw_store_error(js, &StoreError::Identity(f)))
}

/// `identityCheck(text)`: what dispatch's identity check reads, from the text
/// `lib/effect-store-wire.js` writes for it (`identityChecker`), as a handle JS keeps while the
/// identity it read stays the same: a run's calls with one identity cross it once.
#[napi(js_name = "identityCheck")]
pub fn identity_check(text: String) -> Result<External<Rc<IdentityCheck>>> {
    let check = IdentityCheck::parse(&text).ok_or_else(|| {
        Error::new(
            Status::InvalidArg,
            "identityCheck: not an identity check's JSON text",
        )
    })?;
    Ok(External::new(Rc::new(check)))
}

/// Dispatch's identity check without an effect store: `assertIdentityActive(identity)` then, when
/// the check names an ownership, `assertIdentityMatchesOwnership(identity, ownership)`.
#[napi(js_name = "assertDispatchIdentity")]
pub fn assert_dispatch_identity(env: Env, check: &External<Rc<IdentityCheck>>) -> Result<()> {
    checked_dispatch_identity(Js(env.raw()), check)
}

/// Dispatch's identity check on what `identityCheck` read: active, and owning its ownership when
/// it names one (`null` is an empty one). A refusal throws `IdentityError`.
pub(crate) fn checked_dispatch_identity(js: Js, check: &IdentityCheck) -> Result<()> {
    let now = now_ms();
    let parse = |t: &str| check.parse_date(t);
    let mut outcome = identity::check_active(&check.identity, now, &parse);
    if let (Ok(()), Some(own)) = (&outcome, &check.ownership) {
        outcome = identity::check_matches_ownership(&check.identity, own, now, &parse);
    }
    outcome.map_err(|f| throw_store_error(js, &StoreError::Identity(f)))
}

/// `assertIdentityMatchesOwnership(identity, ownership?)`: throws `IdentityError` on a conflict.
#[napi(js_name = "assertIdentityMatchesOwnership")]
pub fn assert_identity_matches_ownership(
    env: Env,
    identity: Unknown,
    ownership: Option<Unknown>,
) -> Result<()> {
    let js = Js(env.raw());
    let id = read_identity(js, identity.raw())?;
    let own = read_ownership(js, ownership.map_or(ptr::null_mut(), |o| o.raw()))?;
    identity::check_matches_ownership(&id, &own, now_ms(), &host_parse(js))
        .map_err(|f| throw_store_error(js, &StoreError::Identity(f)))
}

/// Resolves `effect` (the `tool.effect` its caller read) for a call: `None` when the tool declares
/// nothing; the declaration object and its parsed form otherwise. A declaration object is read in
/// this order, which `lib/dispatch-effects.js` keeps when it reads one itself: a promise or a thenable is
/// invalid, then `kind`, then `idempotency`. A classifier is called with `(args, frozenContext)` where the
/// context holds only `sessionId`, `runId`, `toolCallId`, `signal`, `metadata`; it must return a
/// declaration synchronously (a thenable is refused). A throwing classifier's error propagates as is.
pub(crate) fn resolve_declaration(
    js: Js,
    tool: sys::napi_value,
    effect: sys::napi_value,
    args: sys::napi_value,
    ctx: sys::napi_value,
) -> Result<Option<(sys::napi_value, Declaration)>> {
    let declaration = match js.type_of(effect)? {
        sys::ValueType::napi_undefined | sys::ValueType::napi_null => return Ok(None),
        sys::ValueType::napi_function => {
            let mut frozen = ptr::null_mut();
            // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
            check(unsafe { sys::napi_create_object(js.0, &mut frozen) })?;
            for name in [
                c"sessionId",
                c"runId",
                c"toolCallId",
                c"signal",
                c"metadata",
            ] {
                js.set(frozen, name, js.prop(ctx, name)?)?;
            }
            // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
            check(unsafe { sys::napi_object_freeze(js.0, frozen) })?;
            let out = js.call(tool, effect, &[args, frozen])?;
            if js.type_of(out)? == sys::ValueType::napi_undefined {
                return Ok(None);
            }
            out
        }
        _ => effect,
    };
    if !js.is_object(declaration)? {
        return effect_result(js, Err(invalid_declaration()));
    }
    let mut is_promise = false;
    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
    check(unsafe { sys::napi_is_promise(js.0, declaration, &mut is_promise) })?;
    let then = js.get(declaration, c"then")?;
    if is_promise || js.type_of(then)? == sys::ValueType::napi_function {
        return effect_result(js, Err(invalid_declaration()));
    }
    let kind = js.field(declaration, c"kind")?;
    let idempotency = js.field(declaration, c"idempotency")?;
    let parsed = effect_result(js, parse_declaration(kind.text(), idempotency.text()))?;
    Ok(Some((declaration, parsed)))
}

/// `resolveToolEffectDeclaration(tool, args, ctx)`: the tool's static declaration or its classifier's
/// answer, validated; `undefined` when the tool declares none. Invalid → `ToolEffectError`
/// `ERR_PRISM_TOOL_EFFECT_LIMIT` `tool effect declaration is invalid`.
#[napi(
    js_name = "resolveToolEffectDeclaration",
    ts_return_type = "{ kind: string; idempotency?: string; [field: string]: unknown } | undefined"
)]
pub fn resolve_tool_effect_declaration<'a>(
    env: &'a Env,
    tool: Unknown<'a>,
    args: Unknown<'a>,
    ctx: Option<Unknown<'a>>,
) -> Result<Unknown<'a>> {
    let js = Js(env.raw());
    let ctx = match ctx {
        Some(c) => c.raw(),
        None => js.undefined()?,
    };
    let effect = js.prop(tool.raw(), c"effect")?;
    match resolve_declaration(js, tool.raw(), effect, args.raw(), ctx)? {
        Some((v, _)) => js.unknown(env, v),
        None => js.unknown(env, js.undefined()?),
    }
}
