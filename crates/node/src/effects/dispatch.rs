//! Dispatch's lean effect path: the identity is read from JS once per dispatch (at its identity
//! check), the key is derived and validated once (at its key step), and the built-in stores' claim
//! and transitions work from what was read, with no second read of the key or the identity. The
//! identity is still checked for activity (expiry, revocation) at every transition, from the snapshot.
//!
//! The snapshot lives in the dispatch's own session (`crate::dispatch`), named by the dispatch id
//! JS already holds: `dispatchIdentity` makes it, `dispatchEffectKey` completes it, a built-in
//! store's `claimDispatch` and `advanceClaim` use it and hand their outcome to the machine
//! themselves, so a claimed call crosses once per store step (`dispatchDeclaration` answers the
//! declaration the same way). Nothing of it waits for the garbage
//! collector: it is dropped once the claim is settled, or with the dispatch.

use super::canonical::canonical_of;
use super::errors::{effect_result, throw_store_error};
use super::identity::{checked_dispatch_identity, resolve_declaration};
use super::js::Js;
use super::read::check_abort;
use super::store::{lean_transition, MemoryEffectStore};
use crate::dispatch::{answer, with_effect};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::dispatch::machine::{Answer, Begun};
use prism_tools_core::effects::canonical::{self, KeyMaterial};
use prism_tools_core::effects::declaration::parse_declaration;
use prism_tools_core::effects::error::{EffectError, StoreError};
use prism_tools_core::effects::identity::{self, Field};
use prism_tools_core::effects::key::{key_fields, KeyParts, ValidKey};
use prism_tools_core::effects::record::EffectRecord;
use prism_tools_core::effects::store::{BeginOutcome, Claim};
use prism_tools_core::effects::time::now_ms;
use prism_tools_core::effects::wire::IdentityCheck;
use std::rc::Rc;

/// One dispatch's effect identity: the identity as read at the identity check (its timestamps that
/// only `Date.parse` reads parsed then, so a later check runs no JS while the snapshot is borrowed),
/// and the key once derived (or why it is not a valid store key, reported when a store is asked to
/// claim it).
pub struct EffectSnapshot {
    check: Rc<IdentityCheck>,
    key: Option<std::result::Result<ValidKey, StoreError>>,
}

fn not_in_flight(what: &str, dispatch: u32) -> Error {
    Error::new(
        Status::InvalidArg,
        format!("{what}: dispatch {dispatch} is not in flight"),
    )
}

fn already_used() -> StoreError {
    EffectError::limit("tool effect dispatch snapshot was already used").into()
}

/// Dispatch's identity check with an effect store, on what `identityCheck` read (the identity read
/// once, in JS, by `lib/effect-store-wire.js`): `assertIdentityActive(identity)` then, when the
/// check names an ownership, `assertIdentityMatchesOwnership(identity, ownership)` (`null` is an
/// ownership, an empty one). Keeps the snapshot in dispatch `dispatch` and answers its identity
/// check: returns the next command's code.
#[napi(js_name = "dispatchIdentity")]
pub fn dispatch_identity(
    env: Env,
    dispatch: u32,
    check: &External<Rc<IdentityCheck>>,
) -> Result<u32> {
    let js = Js(env.raw());
    // An unknown id is the caller's mistake: said before any identity is checked.
    with_effect(dispatch, |_| ()).ok_or_else(|| not_in_flight("dispatchIdentity", dispatch))?;
    checked_dispatch_identity(js, check)?;
    let snapshot = EffectSnapshot {
        check: Rc::clone(check),
        key: None,
    };
    with_effect(dispatch, |slot| *slot = Some(Box::new(snapshot)))
        .ok_or_else(|| not_in_flight("dispatchIdentity", dispatch))?;
    Ok(answer(dispatch, Answer::Done))
}

/// Dispatch's declaration step for a classifier: `effect` (the `tool.effect` JS read) called and
/// its answer validated as `resolveToolEffectDeclaration` does it, and handed to dispatch
/// `dispatch`'s machine here. Returns the next command's code; an invalid declaration, or a
/// classifier's throw, is thrown.
#[napi(js_name = "dispatchDeclaration")]
pub fn dispatch_declaration(
    env: Env,
    dispatch: u32,
    tool: Unknown,
    effect: Unknown,
    args: Unknown,
    ctx: Unknown,
) -> Result<u32> {
    let js = Js(env.raw());
    let declared = resolve_declaration(js, tool.raw(), effect.raw(), args.raw(), ctx.raw())?;
    Ok(answer(
        dispatch,
        Answer::effect_plan(declared.as_ref().map(|(_, d)| d)),
    ))
}

/// Dispatch's declaration step for a declaration object JS read itself (`lib/dispatch-effects.js`, in the
/// binding's order: not a thenable, then `kind`, then `idempotency`; each `None` unless a string):
/// validated as `resolveToolEffectDeclaration` validates it and handed to dispatch `dispatch`'s
/// machine. Returns the next command's code; an invalid declaration is thrown.
#[napi(js_name = "dispatchDeclared")]
pub fn dispatch_declared(
    env: Env,
    dispatch: u32,
    kind: Option<String>,
    idempotency: Option<String>,
) -> Result<u32> {
    let declared = effect_result(
        Js(env.raw()),
        parse_declaration(kind.as_deref(), idempotency.as_deref()),
    )?;
    Ok(answer(dispatch, Answer::effect_plan(Some(&declared))))
}

/// A key field as dispatch hands it: text, else invalid.
fn text_of(js: Js, v: sys::napi_value) -> Result<Field> {
    Ok(match js.field_of(v)? {
        Field::Text(s) => Field::Text(s),
        _ => Field::Invalid,
    })
}

/// Dispatch's key step on the snapshot: hashes `args` (canonical JSON), derives the key as
/// `deriveToolEffectKey` does from the identity's ownership and principal and the tool name the
/// machine holds, and keeps both in the snapshot. Returns both, as an object.
#[napi(js_name = "dispatchEffectKey")]
pub fn dispatch_effect_key(
    env: Env,
    dispatch: u32,
    session_id: Unknown,
    run_id: Unknown,
    tool_call_id: Unknown,
    args: Unknown,
) -> Result<DispatchEffectKey> {
    let js = Js(env.raw());
    let arguments_hash = canonical::sha256_hex(&canonical_of(&env, args.raw())?);
    let session_id = text_of(js, session_id.raw())?;
    let run_id = text_of(js, run_id.raw())?;
    let tool_call_id = text_of(js, tool_call_id.raw())?;
    let tool_name = crate::dispatch::tool_name(dispatch).map_or(Field::Invalid, Field::Text);
    let derived = with_effect(dispatch, |slot| match slot.as_deref_mut() {
        None => Err(already_used()),
        Some(effect) => Ok(derive_into(
            effect,
            session_id,
            run_id,
            tool_call_id,
            tool_name,
            arguments_hash,
        )),
    })
    .ok_or_else(|| not_in_flight("dispatchEffectKey", dispatch))?;
    match derived {
        Ok(Some(key)) => Ok(key),
        Ok(None) => effect_result(
            js,
            Err(EffectError::limit("tool effect key input is invalid")),
        ),
        Err(e) => Err(throw_store_error(js, &e)),
    }
}

/// The key `dispatchEffectKey` derived, with the hash of the arguments it was derived from.
#[napi(object)]
pub struct DispatchEffectKey {
    pub key: String,
    pub arguments_hash: String,
}

/// Derives the key into `effect` and answers it with the arguments hash, or `None` when a key
/// field is not text.
fn derive_into(
    effect: &mut EffectSnapshot,
    session_id: Field,
    run_id: Field,
    tool_call_id: Field,
    tool_name: Field,
    arguments_hash: String,
) -> Option<DispatchEffectKey> {
    let id = &effect.check.identity;
    let principal = id.principal.as_ref().and_then(|p| p.id.text());
    let (Some(tenant), Some(principal), Some(s), Some(r), Some(c), Some(n)) = (
        id.tenant_id.text(),
        principal,
        session_id.text(),
        run_id.text(),
        tool_call_id.text(),
        tool_name.text(),
    ) else {
        return None;
    };
    let key = canonical::derive_key(&KeyMaterial {
        tenant_id: tenant,
        account_id: id.account_id.text(),
        user_id: id.user_id.text(),
        principal_id: principal,
        session_id: s,
        run_id: r,
        tool_call_id: c,
        tool_name: n,
        arguments_hash: &arguments_hash,
    });
    let answer = DispatchEffectKey {
        key: key.clone(),
        arguments_hash: arguments_hash.clone(),
    };
    let parts = KeyParts {
        ownership: identity::ownership_from_identity(id),
        key: Field::Text(key),
        session_id,
        run_id,
        tool_call_id,
        tool_name,
        arguments_hash: Field::Text(arguments_hash),
    };
    effect.key = Some(key_fields(id, parts));
    Some(answer)
}

/// The snapshot's key, or the error a store reports for it; the identity checked active at `now`.
fn checked_key(
    effect: &Option<Box<EffectSnapshot>>,
    now: i64,
) -> std::result::Result<&ValidKey, StoreError> {
    let effect = effect.as_deref().ok_or_else(already_used)?;
    let key = match &effect.key {
        Some(Ok(k)) => k,
        Some(Err(e)) => return Err(e.clone()),
        None => return Err(EffectError::limit("tool effect key input is invalid").into()),
    };
    let check = &effect.check;
    identity::check_active(&check.identity, now, &|t: &str| check.parse_date(t))?;
    Ok(key)
}

/// What `claimDispatch` found: the claim taken, or the record another claimant left.
enum Claimed {
    Acquired { version: u64, token: String },
    Existing(String),
}

/// `begin` for dispatch `dispatch`, on the snapshot its `dispatchIdentity` and
/// `dispatchEffectKey` made. When the claim is acquired the machine takes it here and the
/// answer is the next command's code (the token and version stay in the machine, for
/// [`advance_claim`]); any other outcome answers like `begin`, with the record (without
/// its claim token), for dispatch to hand over. `signal` is the dispatch's abort signal.
///
/// `mark_too`: the host's `markDispatched` is this store's own, so the claim may make that
/// transition too (see [`MemoryEffectStore::mark_dispatched_at_once`]).
#[napi(js_name = "claimDispatch")]
pub fn claim_dispatch<'a>(
    env: &'a Env,
    store: &External<Rc<MemoryEffectStore>>,
    dispatch: u32,
    signal: Unknown<'a>,
    mark_too: Option<bool>,
) -> Result<Unknown<'a>> {
    let js = Js(env.raw());
    check_abort(js, signal.raw())?;
    // The clock first: it may run JS, which must find no dispatch borrowed.
    let now = store.now(env)?;
    let claimed = with_effect(dispatch, |slot| {
        let claimed = checked_key(slot, now).and_then(|k| {
            store
                .backend
                .begin_valid(k, None, None, now, |outcome, r: &EffectRecord| {
                    match (outcome, &r.claim_token) {
                        (BeginOutcome::Acquired, Some(token)) => Claimed::Acquired {
                            version: r.version,
                            token: token.clone(),
                        },
                        _ => Claimed::Existing(r.to_json_with(false)),
                    }
                })
        });
        if !matches!(claimed, Ok(Claimed::Acquired { .. })) {
            *slot = None; // another claimant's record, or a refusal: not used again
        }
        claimed
    })
    .ok_or_else(|| not_in_flight("claimDispatch", dispatch))?;
    match claimed.map_err(|e| throw_store_error(js, &e))? {
        Claimed::Acquired { version, token } => {
            let next = answer(
                dispatch,
                Answer::Begun(Begun::Acquired {
                    token,
                    version: version as f64,
                }),
            );
            let next = if mark_too == Some(true) {
                store.mark_dispatched_at_once(dispatch, next)?
            } else {
                next
            };
            Ok(env.create_uint32(next)?.to_unknown())
        }
        Claimed::Existing(record) => {
            let text = format!("{{\"outcome\":\"existing\",\"record\":{record}}}");
            js.unknown(env, js.json_parse(&text)?)
        }
    }
}

/// `markDispatched` (`complete: false`) or `complete` for dispatch `dispatch` on the claim its
/// [`claim_dispatch`] took. The claim token and expected version are those of the
/// dispatch's transition command in progress (the machine's, never re-read from JS). `signal`
/// is the dispatch's abort signal, checked first as every store method checks its input's.
/// `result` is the result's JSON text, `unserializable` when the result had none. The machine
/// takes the new version here: the answer is the next command's code.
#[napi(js_name = "advanceClaim")]
pub fn advance_claim(
    env: &Env,
    store: &External<Rc<MemoryEffectStore>>,
    dispatch: u32,
    complete: bool,
    result: Option<String>,
    unserializable: bool,
    signal: Unknown,
) -> Result<u32> {
    let js = Js(env.raw());
    check_abort(js, signal.raw())?;
    // The clock first: it may run JS, which must find no dispatch borrowed.
    let now = store.now(env)?;
    let version = store
        .claimed_transition(dispatch, complete, result, unserializable, now, false)?
        .map_err(|e| throw_store_error(js, &e))?;
    Ok(answer(
        dispatch,
        Answer::Record {
            version: Some(version),
        },
    ))
}

impl MemoryEffectStore {
    /// The claimed transition of dispatch `dispatch`'s command in progress, on its snapshot: the
    /// record's new version, or the store's refusal. The snapshot is dropped once the claim is
    /// completed, and on a refusal unless `keep_on_refusal` (the same transition is then asked
    /// again through `advanceClaim`, which reports it).
    fn claimed_transition(
        &self,
        dispatch: u32,
        complete: bool,
        result: Option<String>,
        unserializable: bool,
        now: i64,
        keep_on_refusal: bool,
    ) -> Result<std::result::Result<f64, StoreError>> {
        let Some((claim_token, expected_version)) = crate::dispatch::transition_claim(dispatch)
        else {
            return Err(Error::new(
                Status::InvalidArg,
                format!("advanceClaim: dispatch {dispatch} has no claim transition in progress"),
            ));
        };
        let claim = Claim {
            claim_token: Field::Text(claim_token),
            expected_version: Some(expected_version),
        };
        let to = lean_transition(complete, result, unserializable, Field::Absent);
        with_effect(dispatch, |slot| {
            let out = checked_key(slot, now).and_then(|k| {
                self.backend
                    .transition_valid(k, &claim, to, now, |r| r.version as f64)
            });
            if complete || (out.is_err() && !keep_on_refusal) {
                // Completed, or refused (dispatch then settles the claim through the store's own
                // methods): the snapshot is not used again.
                *slot = None;
            }
            out
        })
        .ok_or_else(|| not_in_flight("advanceClaim", dispatch))
    }

    /// When the machine's next command after a claim is `markDispatched` (nothing to emit or
    /// append first), the claim's crossing makes that transition too and answers the command
    /// after it: one crossing less per effectful call. Only when nothing in it can run JS or end
    /// differently from `advanceClaim`: the store keeps the default clock, so no JS has run since
    /// the claim read the signal as not aborted. A refused transition answers `next` unchanged,
    /// and dispatch goes the usual way, through `advanceClaim`, which reports it.
    fn mark_dispatched_at_once(&self, dispatch: u32, next: u32) -> Result<u32> {
        if self.has_clock() || !crate::dispatch::marking_dispatched(dispatch) {
            return Ok(next);
        }
        match self.claimed_transition(dispatch, false, None, false, now_ms(), true)? {
            Ok(version) => Ok(answer(
                dispatch,
                Answer::Record {
                    version: Some(version),
                },
            )),
            Err(_) => Ok(next),
        }
    }
}
