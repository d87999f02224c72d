//! Dispatch's lean effect path: the identity is read from JS once per dispatch (at its identity
//! check), the key is derived and validated once (at its key step), and the built-in stores' claim
//! and transitions work from what was read, with no second read of the key or the identity. The
//! identity is still checked for activity (expiry, revocation) at every transition, from the snapshot.
//!
//! JS holds the snapshot as an External (`DispatchEffect`) for the dispatch's life:
//! `dispatchIdentity` makes it, `dispatchEffectKey` completes it, a built-in store's
//! `claimDispatch` and `advanceClaim` use it.

use super::canonical::canonical_of;
use super::errors::{effect_result, throw_store_error};
use super::identity::checked_dispatch_identity;
use super::js::Js;
use super::read::check_abort;
use super::store::{lean_transition, NativeToolEffectStore};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use prism_tools_core::effects::canonical::{self, KeyMaterial};
use prism_tools_core::effects::error::{EffectError, StoreError};
use prism_tools_core::effects::identity::{self, Field, IdentityView, OwnershipView};
use prism_tools_core::effects::record::EffectRecord;
use prism_tools_core::effects::store::{key_fields, BeginOutcome, Claim, KeyInput, ValidKey};
use prism_tools_core::effects::time::parse_iso_strict;

/// One dispatch's effect identity: the identity as read at the identity check, and the key once
/// derived (or why it is not a valid store key, reported when a store is asked to claim it). Boxed
/// and dropped as soon as the dispatch is done with it, so what waits for the garbage collector is
/// a pointer.
pub struct DispatchEffect(Option<Box<Snapshot>>);

struct Snapshot {
    identity: IdentityView,
    /// The identity's timestamps that only `Date.parse` reads, parsed when the snapshot was made, so
    /// a later check runs no JS while the snapshot is borrowed.
    dates: Vec<(String, i64)>,
    key: Option<std::result::Result<ValidKey, StoreError>>,
}

impl DispatchEffect {
    /// Frees what the snapshot holds once the dispatch is done with it (its claim completed, or
    /// another claimant's record found): the External itself lives until the garbage collector takes
    /// it, which sees none of this memory and may not run for thousands of dispatches.
    fn release(&mut self) {
        self.0 = None;
    }

    fn get(&self) -> std::result::Result<&Snapshot, StoreError> {
        self.0.as_deref().ok_or_else(|| {
            EffectError::limit("tool effect dispatch snapshot was already used").into()
        })
    }
}

/// Dispatch's identity check, reading the identity once: `assertIdentityActive(identity)` then,
/// when `ownership` is given, `assertIdentityMatchesOwnership(identity, ownership)` (`null` is an
/// ownership, an empty one). Returns the snapshot the dispatch's effect steps use.
#[napi(js_name = "dispatchIdentity")]
pub fn dispatch_identity(
    env: Env,
    identity: Unknown,
    ownership: Unknown,
) -> Result<External<DispatchEffect>> {
    let js = Js(env.raw());
    let id = checked_dispatch_identity(js, identity.raw(), ownership.raw())?;
    let dates = [&id.issued_at, &id.expires_at, &id.revoked_at]
        .into_iter()
        .filter_map(|f| f.text())
        .filter(|t| parse_iso_strict(t).is_none())
        .filter_map(|t| js.date_parse(t).map(|ms| (t.to_owned(), ms)))
        .collect();
    Ok(External::new(DispatchEffect(Some(Box::new(Snapshot {
        identity: id,
        dates,
        key: None,
    })))))
}

/// The ownership a dispatch's key carries: the identity's own tenant, account and user.
fn ownership_of(id: &IdentityView) -> OwnershipView {
    OwnershipView {
        tenant_id: id.tenant_id.clone(),
        account_id: id.account_id.clone(),
        user_id: id.user_id.clone(),
    }
}

/// A key field as dispatch hands it: text, else invalid.
fn text_of(js: Js, v: sys::napi_value) -> Result<Field> {
    Ok(match js.field_of(v)? {
        Field::Text(s) => Field::Text(s),
        _ => Field::Invalid,
    })
}

/// Dispatch's key step on the snapshot: hashes `args` (canonical JSON), derives the key as
/// `deriveToolEffectKey` does from the identity's ownership and principal, and keeps both in the
/// snapshot. Returns the key followed by the 64 hex digits of the arguments hash, in one string.
#[napi(js_name = "dispatchEffectKey")]
pub fn dispatch_effect_key(
    env: Env,
    effect: &mut External<DispatchEffect>,
    session_id: Unknown,
    run_id: Unknown,
    tool_call_id: Unknown,
    tool_name: Unknown,
    args: Unknown,
) -> Result<String> {
    let js = Js(env.raw());
    let arguments_hash = canonical::sha256_hex(&canonical_of(&env, args.raw())?);
    let session_id = text_of(js, session_id.raw())?;
    let run_id = text_of(js, run_id.raw())?;
    let tool_call_id = text_of(js, tool_call_id.raw())?;
    let tool_name = text_of(js, tool_name.raw())?;
    let Some(effect) = effect.0.as_deref_mut() else {
        return effect_result(
            js,
            Err(EffectError::limit(
                "tool effect dispatch snapshot was already used",
            )),
        );
    };
    let id = &effect.identity;
    let principal = id.principal.as_ref().and_then(|p| p.id.text());
    let (Some(tenant), Some(principal), Some(s), Some(r), Some(c), Some(n)) = (
        id.tenant_id.text(),
        principal,
        session_id.text(),
        run_id.text(),
        tool_call_id.text(),
        tool_name.text(),
    ) else {
        return effect_result(
            js,
            Err(EffectError::limit("tool effect key input is invalid")),
        );
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
    let mut input = KeyInput {
        identity: std::mem::take(&mut effect.identity),
        ownership: OwnershipView::default(),
        key: Field::Text(key.clone()),
        session_id,
        run_id,
        tool_call_id,
        tool_name,
        arguments_hash: Field::Text(arguments_hash.clone()),
    };
    input.ownership = ownership_of(&input.identity);
    effect.key = Some(key_fields(&input));
    effect.identity = input.identity;
    Ok(key + &arguments_hash)
}

/// The snapshot's key, or the error a store reports for it; the identity checked active at `now`.
fn checked_key(effect: &DispatchEffect, now: i64) -> std::result::Result<&ValidKey, StoreError> {
    let effect = effect.get()?;
    let key = match &effect.key {
        Some(Ok(k)) => k,
        Some(Err(e)) => return Err(e.clone()),
        None => return Err(EffectError::limit("tool effect key input is invalid").into()),
    };
    let parse = |t: &str| {
        parse_iso_strict(t).or_else(|| {
            effect
                .dates
                .iter()
                .find_map(|(text, ms)| (text == t).then_some(*ms))
        })
    };
    identity::check_active(&effect.identity, now, &parse)?;
    Ok(key)
}

/// The snapshot behind `effect`, borrowed for the rest of a call that runs no JS while it holds it
/// (only Rust code and Node-API calls that run none).
fn snapshot_of<'a>(env: &Env, effect: &Unknown<'a>) -> Result<&'a mut External<DispatchEffect>> {
    // SAFETY: `effect` is an argument of the running callback, so its handle is live for the call;
    // napi-rs checks that it is an External made for `DispatchEffect`. The borrow is exclusive: the
    // callers take it after their last call into JS and hold it only while Rust code runs.
    unsafe { FromNapiMutRef::from_napi_mut_ref(env.raw(), effect.raw()) }
}

/// What `claimDispatch` found: the claim taken, or the record another claimant left.
enum Claimed {
    Acquired { version: u64, token: String },
    Existing(String),
}

#[napi]
impl NativeToolEffectStore {
    /// `begin` for dispatch on the snapshot made by `dispatchIdentity` and `dispatchEffectKey`:
    /// when the claim is acquired the answer is `{ outcome: "acquired", version, claimToken, claim }`
    /// where `claim` is the snapshot, for [`Self::advance_claim`]; any other outcome answers like
    /// `begin`, with the record (without its claim token). `signal` is the dispatch's abort signal.
    #[napi]
    pub fn claim_dispatch<'a>(
        &self,
        env: &'a Env,
        effect: Unknown<'a>,
        signal: Unknown<'a>,
    ) -> Result<Unknown<'a>> {
        let js = Js(env.raw());
        check_abort(js, signal.raw())?;
        // The clock first: it may run JS, which must find no payload borrowed.
        let now = self.now(env)?;
        let snapshot = snapshot_of(env, &effect)?;
        let run = || -> std::result::Result<Claimed, StoreError> {
            let k = checked_key(&*snapshot, now)?;
            self.backend
                .begin_valid(k, None, None, now, |outcome, r: &EffectRecord| {
                    match (outcome, &r.claim_token) {
                        (BeginOutcome::Acquired, Some(token)) => Claimed::Acquired {
                            version: r.version,
                            token: token.clone(),
                        },
                        _ => Claimed::Existing(r.to_json_with(false)),
                    }
                })
        };
        let claimed = run();
        if !matches!(claimed, Ok(Claimed::Acquired { .. })) {
            snapshot.release();
        }
        match claimed.map_err(|e| throw_store_error(js, &e))? {
            Claimed::Acquired { version, token } => {
                let mut out = Object::new(env)?;
                out.set_named_property("outcome", "acquired")?;
                out.set_named_property("version", version as f64)?;
                out.set_named_property("claimToken", token)?;
                out.set_named_property("claim", effect)?;
                Ok(out.to_unknown())
            }
            Claimed::Existing(record) => {
                let text = format!("{{\"outcome\":\"existing\",\"record\":{record}}}");
                js.unknown(env, js.json_parse(&text)?)
            }
        }
    }

    /// `markDispatched` (`complete: false`) or `complete` for dispatch on a claim made by
    /// [`Self::claim_dispatch`], answered with the new version alone. The claim token and expected
    /// version are those of dispatch `dispatch`'s transition command in progress (the machine's,
    /// never re-read from JS). `signal` is the dispatch's abort signal, checked first as every
    /// store method checks its input's. `result` is the result's JSON text, `unserializable` when
    /// the result had none.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn advance_claim(
        &self,
        env: &Env,
        effect: Unknown,
        dispatch: u32,
        complete: bool,
        result: Option<String>,
        unserializable: bool,
        signal: Unknown,
    ) -> Result<f64> {
        let js = Js(env.raw());
        check_abort(js, signal.raw())?;
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
        // The clock first: it may run JS, which must find no payload borrowed.
        let now = self.now(env)?;
        let effect = snapshot_of(env, &effect)?;
        let run = || -> std::result::Result<f64, StoreError> {
            let k = checked_key(effect, now)?;
            self.backend
                .transition_valid(k, &claim, to, now, |r| r.version as f64)
        };
        let out = run();
        if complete || out.is_err() {
            // Completed, or refused (dispatch then settles the claim through the store's own methods):
            // the snapshot is not used again.
            effect.release();
        }
        out.map_err(|e| throw_store_error(js, &e))
    }
}
