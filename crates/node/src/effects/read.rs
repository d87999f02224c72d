//! Reading store inputs from JS: identities, ownership, keys, claims, failures, results, signals.

use super::js::{check, Js};
use napi::bindgen_prelude::*;
use napi::sys;
use prism_tools_core::effects::identity::{Field, IdentityView, OwnershipView, PrincipalView};
use prism_tools_core::effects::key::{KeyInput, KeyParts};
use prism_tools_core::effects::store::{Claim, FailureInput, ResultInput};
use std::ffi::CStr;
use std::ptr;

fn principal(js: Js, v: sys::napi_value) -> Result<Option<PrincipalView>> {
    if !js.is_object(v)? {
        return Ok(None);
    }
    Ok(Some(PrincipalView {
        kind: js.own_field(v, c"kind")?,
        id: js.own_field(v, c"id")?,
        display_name: js.own_field(v, c"displayName")?,
    }))
}

fn string_list(js: Js, v: sys::napi_value) -> Result<Option<Vec<Field>>> {
    let mut is_array = false;
    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
    check(unsafe { sys::napi_is_array(js.0, v, &mut is_array) })?;
    if !is_array {
        return Ok(None);
    }
    let mut len = 0u32;
    // SAFETY: a live env and handles of the running callback (see `Js`); out-pointers are locals.
    check(unsafe { sys::napi_get_array_length(js.0, v, &mut len) })?;
    let mut out = Vec::with_capacity(len.min(1024) as usize);
    for i in 0..len {
        if i >= 4096 {
            out.push(Field::Invalid); // far past every bound; stop reading
            break;
        }
        out.push(js.field_of(js.element(v, i)?)?);
    }
    Ok(Some(out))
}

/// The `AgentIdentity` fields the binding reads, in the order it reads them (a getter on one sees
/// the earlier ones read); every top-level field is read before anything it holds. Dispatch's
/// identity check reads an identity in JS, in this same order (`lib/effect-store-wire.js`,
/// `identityWire`): a property read there costs a JIT inline-cache hit where a named read here
/// costs a Node-API call and interning the name. `__test__/dispatch-effects.test.ts` checks the
/// two orders are the same.
const IDENTITY_FIELDS: [&CStr; 14] = [
    c"sponsor",
    c"owner",
    c"delegatedFrom",
    c"credentialRefs",
    c"metadata",
    c"tenantId",
    c"accountId",
    c"userId",
    c"principal",
    c"scopes",
    c"issuedAt",
    c"expiresAt",
    c"revokedAt",
    c"verified",
];

/// Reads an `AgentIdentity` (anything not an object reads as an empty, inactive identity).
pub(crate) fn read_identity(js: Js, v: sys::napi_value) -> Result<IdentityView> {
    if !js.is_object(v)? {
        return Ok(IdentityView::default());
    }
    let mut values = [ptr::null_mut(); IDENTITY_FIELDS.len()];
    for (value, name) in values.iter_mut().zip(IDENTITY_FIELDS) {
        *value = js.get(v, name)?;
    }
    identity_of(js, values)
}

/// The identity held by its top-level field values (read first, in `IDENTITY_FIELDS` order): what
/// they hold is read after.
fn identity_of(js: Js, values: [sys::napi_value; 14]) -> Result<IdentityView> {
    let [sponsor, owner, delegated_from, credential_refs, metadata, tenant_id, account_id, user_id, principal_value, scopes, issued_at, expires_at, revoked_at, verified] =
        values;
    let is_undefined = |v| -> Result<bool> { Ok(js.type_of(v)? == sys::ValueType::napi_undefined) };
    let mut others = Vec::new();
    for p in [sponsor, owner, delegated_from] {
        if !is_undefined(p)? {
            others.push(principal(js, p)?);
        }
    }
    let credential_refs = if is_undefined(credential_refs)? {
        None
    } else {
        Some(string_list(js, credential_refs)?)
    };
    let metadata_bytes = if is_undefined(metadata)? {
        None
    } else {
        Some(match js.json_stringify(metadata)? {
            Ok(Some(text)) => Some(text.len()),
            Ok(None) => Some(0),
            Err(()) => None,
        })
    };
    Ok(IdentityView {
        tenant_id: js.field_of(tenant_id)?,
        account_id: js.field_of(account_id)?,
        user_id: js.field_of(user_id)?,
        principal: principal(js, principal_value)?,
        other_principals: others,
        scopes: string_list(js, scopes)?,
        credential_refs,
        metadata_bytes,
        issued_at: js.field_of(issued_at)?,
        expires_at: js.field_of(expires_at)?,
        revoked_at: js.field_of(revoked_at)?,
        verified: js.is_true(verified)?,
    })
}

pub(crate) fn read_ownership(js: Js, v: sys::napi_value) -> Result<OwnershipView> {
    if !js.is_object(v)? {
        return Ok(OwnershipView::default());
    }
    Ok(OwnershipView {
        tenant_id: js.own_field(v, c"tenantId")?,
        account_id: js.own_field(v, c"accountId")?,
        user_id: js.own_field(v, c"userId")?,
    })
}

pub(crate) fn read_key(js: Js, v: sys::napi_value) -> Result<KeyInput> {
    Ok(KeyInput {
        identity: read_identity(js, js.prop(v, c"identity")?)?,
        parts: KeyParts {
            ownership: read_ownership(js, js.prop(v, c"ownership")?)?,
            key: js.field(v, c"key")?,
            session_id: js.field(v, c"sessionId")?,
            run_id: js.field(v, c"runId")?,
            tool_call_id: js.field(v, c"toolCallId")?,
            tool_name: js.field(v, c"toolName")?,
            arguments_hash: js.field(v, c"argumentsHash")?,
        },
    })
}

/// Throws `signal.reason` (or an `AbortError`) when `input.signal` is aborted.
pub(crate) fn check_signal(js: Js, input: sys::napi_value) -> Result<()> {
    check_abort(js, js.prop(input, c"signal")?)
}

/// Throws `signal.reason` (or an `AbortError`) when `signal` is an aborted signal.
pub(crate) fn check_abort(js: Js, signal: sys::napi_value) -> Result<()> {
    if !js.is_object(signal)? || !js.is_true(js.get(signal, c"aborted")?)? {
        return Ok(());
    }
    let reason = js.get(signal, c"reason")?;
    if js.type_of(reason)? != sys::ValueType::napi_undefined {
        return Err(js.throw(reason));
    }
    let err = js.new_error("ABORT_ERR", "This operation was aborted")?;
    js.set(err, c"name", js.create_string("AbortError")?)?;
    Err(js.throw(err))
}

pub(crate) fn read_failure(js: Js, v: sys::napi_value) -> Result<Option<FailureInput>> {
    let f = js.prop(v, c"failure")?;
    if js.type_of(f)? == sys::ValueType::napi_undefined {
        return Ok(None);
    }
    Ok(Some(FailureInput {
        code: js.field(f, c"code")?,
        reference: js.field(f, c"reference")?,
    }))
}

pub(crate) fn read_result(js: Js, v: sys::napi_value) -> Result<ResultInput> {
    let r = js.prop(v, c"result")?;
    if js.type_of(r)? == sys::ValueType::napi_undefined {
        return Ok(None);
    }
    Ok(Some(match js.json_stringify(r)? {
        Ok(Some(text)) => Ok(text),
        _ => Err(()),
    }))
}

pub(crate) fn read_claim(js: Js, v: sys::napi_value) -> Result<Claim> {
    Ok(Claim {
        claim_token: js.field(v, c"claimToken")?,
        expected_version: js.number(v, c"expectedVersion")?,
    })
}
