//! The effect claim path of dispatch (SPEC section 7): resolve the tool's declaration, derive the
//! one authoritative key, claim it (`begin`) before the side effect, `markDispatched` just before
//! `execute`, `complete` after it; replay a completed record instead of executing; never re-execute
//! a `dispatched` or `unknown` one; mark `unknown` on any failure after dispatch, and release a
//! claim (`fail`) when the call stops before dispatch.

use super::{
    Answer, Flow, Input, Machine, Terminal, Vals, S_ARGS, S_CTX, S_EFFECT_KEY, S_IDENTITY,
    S_RESULT, S_TOOL,
};
use crate::dispatch::reasons::BlockedReason;
use crate::effects::declaration::{EffectPlan, Idempotency};
use crate::effects::error::{EffectError, EffectErrorCode};
use crate::js::effects as fx;
use crate::js::hooks::Hook;
use crate::js::raw::{Fail, Js, Ty, R, V};
use crate::js::realm::Realm;

/// A claim this dispatch holds.
pub(super) struct Claim {
    token: String,
    version: f64,
    /// `markDispatched` was called (its outcome may be unknown).
    attempted: bool,
    /// `markDispatched` succeeded: the side effect may have happened.
    dispatched: bool,
    completed: bool,
}

/// A napi result from the effects module: a thrown JS error comes back as `Err(thrown)`.
fn caught<T>(js: &Js, r: napi::Result<T>) -> R<Result<T, V>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(e) => {
            let mut pending = false;
            unsafe { napi::sys::napi_is_exception_pending(js.env, &mut pending) };
            if pending {
                Ok(Err(js.take_exception()))
            } else {
                Ok(Err(js.new_error(
                    crate::js::raw::ErrKind::Error,
                    &e.reason,
                    Some("ERR_PRISM_TOOL_EFFECT_STORE"),
                )?))
            }
        }
    }
}

fn unknown_of<'a>(js: &Js, v: V) -> R<napi::bindgen_prelude::Unknown<'a>> {
    use napi::bindgen_prelude::FromNapiValue;
    unsafe { napi::bindgen_prelude::Unknown::from_napi_value(js.env, v) }.map_err(|_| Fail::Pending)
}

impl Claim {
    /// `markDispatched` was called but did not confirm.
    pub(super) fn attempted_only(&self) -> bool {
        self.attempted && !self.dispatched && !self.completed
    }
}

impl Machine {
    fn effect_error(&self, js: &Js, code: EffectErrorCode, message: &'static str) -> R<V> {
        let e = match fx::tool_effect_error(fx::Js(js.env), &EffectError::new(code, message)) {
            Ok(e) => e,
            Err(_) => js.new_error(crate::js::raw::ErrKind::Error, message, Some(code.as_str()))?,
        };
        Ok(e)
    }

    /// Blocks with `execution_denied` and the effect error (or a thrown value) as `ErrorInfo`.
    fn effect_denied(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, thrown: V) -> R<Flow> {
        let info = self.error_info(js, realm, thrown)?;
        self.block(BlockedReason::ExecutionDenied, js, vals, info)
    }

    fn effect_denied_code(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        code: EffectErrorCode,
        message: &'static str,
    ) -> R<Flow> {
        let e = self.effect_error(js, code, message)?;
        self.effect_denied(js, realm, vals, e)
    }

    /// `{ ...key, claimToken, expectedVersion }` for a transition.
    fn transition(&self, js: &Js, vals: &Vals) -> R<V> {
        let key = vals.0[S_EFFECT_KEY];
        let t = js.object()?;
        for k in [
            c"identity",
            c"ownership",
            c"key",
            c"sessionId",
            c"runId",
            c"toolCallId",
            c"toolName",
            c"argumentsHash",
            c"signal",
        ] {
            js.set(t, k, js.get(key, k)?)?;
        }
        if let Some(c) = &self.claim {
            js.set(t, c"claimToken", js.string(&c.token)?)?;
            js.set(t, c"expectedVersion", js.number(c.version)?)?;
        }
        Ok(t)
    }

    fn store_call(
        &self,
        js: &Js,
        input: &mut Option<Input>,
        method: &'static std::ffi::CStr,
        arg: impl FnOnce() -> R<V>,
    ) -> R<Answer> {
        let store = self.hook(Hook::EffectStore);
        if input.is_some() {
            return self.ask(js, input, store, store, &[]);
        }
        let f = js.get_opt(store, method)?;
        if js.ty(f)? != Ty::Function {
            let e = js.new_error(
                crate::js::raw::ErrKind::Type,
                &format!(
                    "effectStore.{} is not a function",
                    method.to_str().unwrap_or("method")
                ),
                Some("ERR_PRISM_TOOL_EFFECT_STORE"),
            )?;
            return Ok(Answer::Threw(e));
        }
        let a = arg()?;
        self.ask(js, input, store, f, &[a])
    }

    /// Step 8: prepare the effect; a failure blocks with `execution_denied`.
    pub(super) fn step_effect(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        if self.sub == 0 {
            let fjs = fx::Js(js.env);
            let declaration = match caught(
                js,
                fx::resolve_declaration(fjs, vals.0[S_TOOL], vals.0[S_ARGS], vals.0[S_CTX]),
            )? {
                Ok(None) => return Ok(self.advance()),
                Ok(Some((_, d))) => d,
                Err(thrown) => return self.effect_denied(js, realm, vals, thrown),
            };
            let plan = declaration.plan();
            if plan == EffectPlan::Unmanaged {
                return Ok(self.advance());
            }
            let identity = vals.0[S_IDENTITY];
            if js.is_nullish(identity)? {
                if declaration.idempotency == Idempotency::Unsupported {
                    return Ok(self.advance());
                }
                return self.effect_denied_code(
                    js,
                    realm,
                    vals,
                    EffectErrorCode::Conflict,
                    "verified identity is required for a durable tool effect",
                );
            }
            // The key input: the identity's ownership, the call's ids and the arguments' hash.
            self.ids(js, vals)?;
            let key = js.object()?;
            let ownership = js.object()?;
            for k in [c"tenantId", c"accountId", c"userId"] {
                let v = js.get(identity, k)?;
                if !js.is_nullish(v)? {
                    js.set(ownership, k, v)?;
                }
            }
            js.set(key, c"identity", identity)?;
            js.set(key, c"ownership", ownership)?;
            js.set(key, c"sessionId", js.string(&self.session_id)?)?;
            js.set(key, c"runId", js.string(&self.run_id)?)?;
            js.set(key, c"toolCallId", js.string(&self.tool_call_id)?)?;
            js.set(key, c"toolName", js.string(&self.name)?)?;
            let env = napi::Env::from(js.env);
            let hash = match caught(
                js,
                fx::tool_effect_arguments_hash(env, unknown_of(js, vals.0[S_ARGS])?),
            )? {
                Ok(h) => h,
                Err(thrown) => return self.effect_denied(js, realm, vals, thrown),
            };
            js.set(key, c"argumentsHash", js.string(&hash)?)?;
            let derived = match caught(js, fx::derive_tool_effect_key(env, unknown_of(js, key)?))? {
                Ok(k) => k,
                Err(thrown) => return self.effect_denied(js, realm, vals, thrown),
            };
            js.set(key, c"key", js.string(&derived)?)?;
            js.set(key, c"signal", js.get_opt(vals.0[S_CTX], c"signal")?)?;
            vals.0[S_EFFECT_KEY] = key;
            self.idempotency_key = Some(derived);
            if plan == EffectPlan::KeyOnly {
                return Ok(self.advance());
            }
            if !self.has(Hook::EffectStore) {
                if plan == EffectPlan::ClaimRequired {
                    return self.effect_denied_code(
                        js,
                        realm,
                        vals,
                        EffectErrorCode::Required,
                        "durable tool effect store is required",
                    );
                }
                return Ok(self.advance());
            }
            self.sub = 1;
        }
        let key = vals.0[S_EFFECT_KEY];
        match self.store_call(js, input, c"begin", || Ok(key))? {
            Answer::Park(p) => Ok(Flow::Park(p)),
            Answer::Aborted => self.aborted(js, realm, vals),
            Answer::Threw(e) => {
                if is_effect_error(js, e)? {
                    self.effect_denied(js, realm, vals, e)
                } else {
                    self.effect_denied_code(
                        js,
                        realm,
                        vals,
                        EffectErrorCode::Unknown,
                        "tool effect claim outcome is unknown",
                    )
                }
            }
            Answer::Value(begun) => {
                let record = js.get_opt(begun, c"record")?;
                let outcome = js.opt_str(js.get_opt(begun, c"outcome")?)?;
                if outcome.as_deref() == Some("existing") {
                    return self.replay(js, realm, vals, record);
                }
                let token = js.opt_str(js.get_opt(record, c"claimToken")?)?;
                let version = js.get_opt(record, c"version")?;
                match (outcome.as_deref(), token) {
                    (Some("acquired"), Some(token)) if js.ty(version)? == Ty::Number => {
                        self.claim = Some(Claim {
                            token,
                            version: js.f64(version)?,
                            attempted: false,
                            dispatched: false,
                            completed: false,
                        });
                        Ok(self.advance())
                    }
                    _ => self.effect_denied_code(
                        js,
                        realm,
                        vals,
                        EffectErrorCode::Unknown,
                        "tool effect claim outcome is unknown",
                    ),
                }
            }
        }
    }

    /// An existing record: a completed one replays its result without executing; anything else
    /// refuses (a dispatched or unknown record is never re-executed).
    fn replay(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, record: V) -> R<Flow> {
        let status = js.opt_str(js.get_opt(record, c"status")?)?;
        match status.as_deref() {
            Some("completed") => {
                let result = js.get_opt(record, c"result")?;
                if js.ty(result)? != Ty::Object {
                    return self.effect_denied_code(
                        js,
                        realm,
                        vals,
                        EffectErrorCode::Completed,
                        "tool effect already completed without replayable result",
                    );
                }
                vals.0[S_RESULT] = result;
                self.terminal = Some((Terminal::Finished, 0));
                Ok(Flow::Continue)
            }
            Some("dispatched" | "unknown") => self.effect_denied_code(
                js,
                realm,
                vals,
                EffectErrorCode::Unknown,
                "tool effect outcome requires reconciliation",
            ),
            _ => self.effect_denied_code(
                js,
                realm,
                vals,
                EffectErrorCode::Conflict,
                "tool effect is not dispatchable",
            ),
        }
    }

    /// `markDispatched` right before `execute`. `Some(flow)` when the machine must stop or park.
    pub(super) fn mark_dispatched(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Option<Flow>> {
        let Some(claim) = self.claim.as_mut() else {
            return Ok(None);
        };
        claim.attempted = true;
        let answer = if input.is_some() {
            self.store_call(js, input, c"markDispatched", || Ok(js.undefined()))?
        } else {
            let t = self.transition(js, vals)?;
            self.store_call(js, input, c"markDispatched", || Ok(t))?
        };
        match answer {
            Answer::Park(p) => Ok(Some(Flow::Park(p))),
            Answer::Value(record) => {
                let version = js.get_opt(record, c"version")?;
                if js.ty(version)? != Ty::Number {
                    return Ok(Some(self.effect_unknown(js, realm, vals)?));
                }
                if let Some(c) = self.claim.as_mut() {
                    c.version = js.f64(version)?;
                    c.dispatched = true;
                }
                Ok(None)
            }
            Answer::Threw(_) | Answer::Aborted => Ok(Some(self.effect_unknown(js, realm, vals)?)),
        }
    }

    /// True while a claim is held and the side effect may have happened.
    pub(super) fn effect_in_flight(&self) -> bool {
        self.claim
            .as_ref()
            .is_some_and(|c| c.attempted && !c.completed)
    }

    /// Ends the call with `ERR_PRISM_TOOL_EFFECT_UNKNOWN`; the settle phase marks the record unknown.
    pub(super) fn effect_unknown(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
        let e = self.effect_error(
            js,
            EffectErrorCode::Unknown,
            "tool effect outcome requires reconciliation",
        )?;
        let info = self.error_info(js, realm, e)?;
        self.fail_with(js, vals, info)
    }

    /// `complete` with the (redacted) result before `finished` is reported. `Some(flow)` to stop or park.
    pub(super) fn complete_effect(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Option<Flow>> {
        if self
            .claim
            .as_ref()
            .is_none_or(|c| !c.dispatched || c.completed)
        {
            return Ok(None);
        }
        let answer = if input.is_some() {
            self.store_call(js, input, c"complete", || Ok(js.undefined()))?
        } else {
            let t = self.transition(js, vals)?;
            js.set(t, c"result", vals.0[S_RESULT])?;
            self.store_call(js, input, c"complete", || Ok(t))?
        };
        match answer {
            Answer::Park(p) => Ok(Some(Flow::Park(p))),
            Answer::Value(record) => {
                if let Some(c) = self.claim.as_mut() {
                    c.completed = true;
                }
                let stored = js.get_opt(record, c"result")?;
                if js.ty(stored)? == Ty::Object {
                    vals.0[S_RESULT] = stored;
                }
                Ok(None)
            }
            Answer::Threw(_) | Answer::Aborted => Ok(Some(self.effect_unknown(js, realm, vals)?)),
        }
    }

    /// Before the terminal event: an unfinished claim is marked `unknown` (after dispatch) or
    /// released with `failed_terminal` (before). Store failures here are swallowed: the outcome is
    /// already what the result says. Returns a thenable to wait for, if any.
    pub(super) fn settle_effect(
        &mut self,
        js: &Js,
        vals: &mut Vals,
        phase: u32,
        input: &mut Option<Input>,
    ) -> R<Option<V>> {
        let Some(claim) = self.claim.as_ref() else {
            return Ok(None);
        };
        if claim.completed {
            return Ok(None);
        }
        if input.is_some() {
            // Phase 0 with an answer from `get` (attempted, unconfirmed): mark unknown if dispatched.
            let answer = input.take();
            if phase == 1 {
                if let Some(Input::Value(record)) = answer {
                    return self.mark_unknown_from(js, vals, record);
                }
            }
            return Ok(None);
        }
        if phase != 0 {
            return Ok(None);
        }
        let (dispatched, attempted) = (claim.dispatched, claim.attempted);
        let store = self.hook(Hook::EffectStore);
        let call = |method: &'static std::ffi::CStr, arg: V| -> R<Option<V>> {
            let f = js.get_opt(store, method)?;
            if js.ty(f)? != Ty::Function {
                return Ok(None);
            }
            match js.call_catch(store, f, &[arg])? {
                Ok(v) if js.is_thenable(v)? => Ok(Some(v)),
                _ => Ok(None),
            }
        };
        if dispatched {
            let t = self.transition(js, vals)?;
            js.set(t, c"failure", unknown_failure(js)?)?;
            call(c"markUnknown", t)
        } else if attempted {
            let key = vals.0[S_EFFECT_KEY];
            let f = js.get_opt(store, c"get")?;
            if js.ty(f)? != Ty::Function {
                return Ok(None);
            }
            match js.call_catch(store, f, &[key])? {
                Ok(v) if js.is_thenable(v)? => Ok(Some(v)),
                Ok(v) => self.mark_unknown_from(js, vals, v),
                Err(_) => Ok(None),
            }
        } else {
            let t = self.transition(js, vals)?;
            js.set(t, c"status", js.string("failed_terminal")?)?;
            let failure = js.object()?;
            js.set(
                failure,
                c"code",
                js.string("ERR_PRISM_TOOL_EFFECT_PRE_DISPATCH")?,
            )?;
            js.set(t, c"failure", failure)?;
            call(c"fail", t)
        }
    }

    fn mark_unknown_from(&mut self, js: &Js, vals: &Vals, record: V) -> R<Option<V>> {
        if js.opt_str(js.get_opt(record, c"status")?)?.as_deref() != Some("dispatched") {
            return Ok(None);
        }
        let (Some(token), version) = (
            js.opt_str(js.get_opt(record, c"claimToken")?)?,
            js.get_opt(record, c"version")?,
        ) else {
            return Ok(None);
        };
        if js.ty(version)? != Ty::Number {
            return Ok(None);
        }
        if let Some(c) = self.claim.as_mut() {
            c.token = token;
            c.version = js.f64(version)?;
        }
        let t = self.transition(js, vals)?;
        js.set(t, c"failure", unknown_failure(js)?)?;
        let store = self.hook(Hook::EffectStore);
        let f = js.get_opt(store, c"markUnknown")?;
        if js.ty(f)? != Ty::Function {
            return Ok(None);
        }
        match js.call_catch(store, f, &[t])? {
            Ok(v) if js.is_thenable(v)? => Ok(Some(v)),
            _ => Ok(None),
        }
    }
}

fn unknown_failure(js: &Js) -> R<V> {
    let f = js.object()?;
    js.set(f, c"code", js.string(EffectErrorCode::Unknown.as_str())?)?;
    Ok(f)
}

/// A `ToolEffectError` (by its code), which dispatch reports as is.
fn is_effect_error(js: &Js, e: V) -> R<bool> {
    if !matches!(js.ty(e)?, Ty::Object) {
        return Ok(false);
    }
    Ok(js.opt_str(js.get(e, c"code")?)?.is_some_and(|c| {
        c.starts_with("ERR_PRISM_TOOL_EFFECT_") && c != "ERR_PRISM_TOOL_EFFECT_STORE"
    }))
}
