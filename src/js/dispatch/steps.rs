//! The steps of the dispatch machine from `tool_call` middleware to `execute` (SPEC section 3, steps
//! 1–11): each asks its host callback through `Machine::ask`, so a plain answer continues at once
//! and a thenable parks the machine.

use super::*;
use crate::dispatch::reasons::{self, BlockedReason};
use crate::js::guardrails::{GuardOutcome, GuardRun, Stage};
use crate::js::hooks::Hook;
use crate::js::raw::{error, type_error, Fail, Js, Ty, R, V};
use crate::js::realm::{is_plain_object, Realm};
use crate::js::redact::{error_to_error_info, redact_value};

impl Machine {
    pub(super) fn step_middleware(
        &mut self,
        js: &Js,
        vals: &mut Vals,
        input: &mut Option<Input>,
        hook: &str,
    ) -> R<Flow> {
        let is_call = hook == "tool_call";
        if !self.has(Hook::Middleware) {
            if is_call {
                self.read_call(js, vals)?;
            }
            return Ok(self.advance());
        }
        let mw = self.hook(Hook::Middleware);
        let slot = if is_call { S_CALL } else { S_RESULT };
        let run = {
            let sync = js.get_opt(mw, c"runSync")?;
            if js.ty(sync)? == Ty::Function {
                sync
            } else {
                js.get_opt(mw, c"run")?
            }
        };
        if js.ty(run)? != Ty::Function && input.is_none() {
            return Err(type_error(
                "middleware must be a MiddlewareRegistry with run(hook, value)",
                "ERR_PRISM_INVALID_OPTION",
            ));
        }
        let hook_v = js.string(hook)?;
        match self.ask(js, input, mw, run, &[hook_v, vals.0[slot]])? {
            Answer::Park(p) => return Ok(Flow::Park(p)),
            Answer::Value(v) => {
                if !js.is_nullish(v)? {
                    vals.0[slot] = v;
                }
                if is_call {
                    self.call_read = false;
                }
            }
            Answer::Threw(e) => {
                // errorPolicy "throw": the host asked for the failure to surface. The call still
                // gets its terminal row first.
                if is_call {
                    let _ = self.read_call(js, vals);
                }
                let realm = Realm::get(js)?;
                let info = self.error_info(js, realm, e)?;
                vals.0[S_AUX] = e;
                self.reject_after = true;
                return if is_call {
                    self.block(BlockedReason::ExecutionDenied, js, vals, info)
                } else {
                    self.fail_with(js, vals, info)
                };
            }
            Answer::Aborted => {
                if is_call {
                    self.read_call(js, vals)?;
                }
                return self.aborted(js, Realm::get(js)?, vals);
            }
        }
        if is_call {
            self.read_call(js, vals)?;
        }
        Ok(self.advance())
    }

    pub(super) fn aborted(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
        if self.step.after_execute() {
            let e = self.make_error(
                js,
                realm,
                "AbortError",
                &format!("Tool call aborted: {}", self.name),
                reasons::CODE_ABORTED,
                None,
            )?;
            self.fail_with(js, vals, e)
        } else {
            let e = self.make_error(
                js,
                realm,
                "AbortError",
                &format!("Tool call aborted before execution: {}", self.name),
                reasons::CODE_ABORTED,
                None,
            )?;
            self.block(BlockedReason::ExecutionDenied, js, vals, e)
        }
    }

    pub(super) fn step_guardrails(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
        stage: Stage,
    ) -> R<Flow> {
        if !self.has(Hook::Guardrails) {
            return Ok(self.advance());
        }
        self.ids(js, vals)?;
        if self.guard.is_none() {
            match GuardRun::new(js, self.hook(Hook::Guardrails), stage)? {
                Some(g) => self.guard = Some(g),
                None => return Ok(self.advance()),
            }
            vals.0[S_AUX] = js.undefined();
        }
        let value = if stage == Stage::Input {
            vals.0[S_CALL]
        } else {
            vals.0[S_RESULT]
        };
        let mut guard = self
            .guard
            .take()
            .ok_or_else(|| error("guardrail state lost", "ERR_PRISM_INTERNAL"))?;
        let outcome = guard.run(js, realm, self, vals, value, input);
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                self.guard = Some(guard);
                return Err(e);
            }
        };
        match outcome {
            GuardOutcome::Park(p) => {
                self.guard = Some(guard);
                Ok(Flow::Park(p))
            }
            GuardOutcome::Allow => Ok(self.advance()),
            GuardOutcome::Block { message } => {
                if self.effect_in_flight() {
                    return self.effect_unknown(js, realm, vals);
                }
                let e = self.plain_error(js, realm, &message)?;
                self.block(BlockedReason::GuardrailBlocked, js, vals, e)
            }
            GuardOutcome::Tripwire { message, error } => {
                let e = self.plain_error(js, realm, &message)?;
                vals.0[S_AUX] = error;
                self.reject_after = true;
                self.block(BlockedReason::GuardrailBlocked, js, vals, e)
            }
        }
    }

    pub(super) fn step_lookup(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        if input.is_none() && js.opt_str(vals.0[S_AUTHORITY])?.as_deref() == Some("provider-hosted")
        {
            // The provider already executed it; the host never does.
            let e = self.make_error(
                js,
                realm,
                "ToolDispatchError",
                &format!("Provider-hosted tool call is not dispatched: {}", self.name),
                reasons::CODE_PROVIDER_HOSTED,
                None,
            )?;
            return self.block(BlockedReason::ExecutionDenied, js, vals, e);
        }
        let registry = vals.0[S_REGISTRY];
        let name_is_string = js.ty(vals.0[S_NAME])? == Ty::String;
        let found = if !name_is_string {
            None
        } else if let Some(state) = &self.native {
            let s = state
                .try_borrow()
                .map_err(|_| error("ToolRegistry was re-entered", "ERR_PRISM_REENTRANT"))?;
            s.lookup(js, &self.name)?
        } else {
            let get = js.get_opt(registry, c"get")?;
            if js.ty(get)? != Ty::Function {
                return Err(type_error(
                    "dispatchToolCall: registry must have get(name)",
                    "ERR_PRISM_INVALID_OPTION",
                ));
            }
            let name_v = js.string(&self.name)?;
            match self.ask(js, input, registry, get, &[name_v])? {
                Answer::Park(p) => return Ok(Flow::Park(p)),
                Answer::Value(v) => Some(v),
                Answer::Aborted => return self.aborted(js, realm, vals),
                Answer::Threw(e) => {
                    let info = error_to_error_info(js, &self.compiled.secrets, e)?;
                    let cause = js.to_js_string(js.get(info, c"message")?)?;
                    let _ = cause;
                    let err = self.plain_error(js, realm, &reasons::unknown_tool(&self.name))?;
                    return self.block(BlockedReason::UnknownTool, js, vals, err);
                }
            }
        };
        match found {
            Some(tool) if matches!(js.ty(tool)?, Ty::Object | Ty::Function) => {
                vals.0[S_TOOL] = tool;
                Ok(self.advance())
            }
            _ => {
                let err = self.plain_error(js, realm, &reasons::unknown_tool(&self.name))?;
                self.block(BlockedReason::UnknownTool, js, vals, err)
            }
        }
    }

    pub(super) fn step_filter(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
        if let Some(f) = &self.compiled.filter {
            if !f.permits(&self.name) {
                let err = self.plain_error(js, realm, &reasons::tool_denied(&self.name))?;
                return self.block(BlockedReason::ToolDenied, js, vals, err);
            }
        }
        Ok(self.advance())
    }

    pub(super) fn step_arguments(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
        let args_error = vals.0[S_ARGS_ERROR];
        if !js.is_nullish(args_error)? {
            // The provider's error as is (its code is invalid_json_arguments), minus secrets.
            let e = if js.ty(args_error)? == Ty::Object {
                self.redact(js, realm, args_error)?
            } else {
                error_to_error_info(js, &self.compiled.secrets, args_error)?
            };
            return self.block(BlockedReason::InvalidArguments, js, vals, e);
        }
        if !is_plain_object(js, realm, vals.0[S_ARGS])? {
            let e = self.plain_error(js, realm, reasons::ARGUMENTS_NOT_OBJECT)?;
            return self.block(BlockedReason::InvalidArguments, js, vals, e);
        }
        Ok(self.advance())
    }

    pub(super) fn step_identity(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
        // The host-verified identity: the option, else the context's.
        let identity = if self.has(Hook::Identity) {
            self.hook(Hook::Identity)
        } else if self.identity_read {
            vals.0[S_IDENTITY]
        } else {
            js.get_opt(vals.0[S_CTX], c"identity")?
        };
        vals.0[S_IDENTITY] = identity;
        if js.is_nullish(identity)? {
            return Ok(self.advance());
        }
        let env = napi::Env::from(js.env);
        let as_unknown = |v: V| -> R<napi::bindgen_prelude::Unknown<'_>> {
            use napi::bindgen_prelude::FromNapiValue;
            unsafe { napi::bindgen_prelude::Unknown::from_napi_value(js.env, v) }
                .map_err(|_| Fail::Pending)
        };
        let mut outcome =
            crate::js::effects::assert_identity_active(env, as_unknown(identity)?, None);
        if outcome.is_ok() && self.has(Hook::Ownership) {
            outcome = crate::js::effects::assert_identity_matches_ownership(
                env,
                as_unknown(identity)?,
                Some(as_unknown(self.hook(Hook::Ownership))?),
            );
        }
        if let Err(e) = outcome {
            let mut pending = false;
            unsafe { napi::sys::napi_is_exception_pending(js.env, &mut pending) };
            let thrown = if pending {
                js.take_exception()
            } else {
                js.new_error(crate::js::raw::ErrKind::Error, &e.reason, None)?
            };
            let info = self.error_info(js, realm, thrown)?;
            return self.block(BlockedReason::PermissionDenied, js, vals, info);
        }
        Ok(self.advance())
    }

    pub(super) fn policy_request(&self, js: &Js, vals: &Vals, trust: bool) -> R<V> {
        let req = js.object()?;
        js.set(req, c"kind", js.string("tool")?)?;
        if trust {
            js.set(req, c"target", js.string(&self.name)?)?;
            js.set(req, c"capability", js.string("execute")?)?;
        } else {
            js.set(req, c"action", js.string("execute")?)?;
            js.set(req, c"target", js.string(&self.name)?)?;
        }
        let ctx = vals.0[S_CTX];
        js.set(req, c"metadata", js.get_opt(ctx, c"metadata")?)?;
        Ok(req)
    }

    pub(super) fn step_trust(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        if !self.has(Hook::Trust) {
            return Ok(self.advance());
        }
        let policy = self.hook(Hook::Trust);
        let check = js.get_opt(policy, c"check")?;
        let deny = |m: &mut Machine, js: &Js, vals: &mut Vals, cause: Option<String>| -> R<Flow> {
            let e = m.make_error(
                js,
                realm,
                "TrustDeniedError",
                &reasons::untrusted(&m.name),
                reasons::CODE_UNTRUSTED,
                cause.as_deref(),
            )?;
            m.block(BlockedReason::PermissionDenied, js, vals, e)
        };
        if js.ty(check)? != Ty::Function && input.is_none() {
            return deny(
                self,
                js,
                vals,
                Some("trust policy has no check function".into()),
            );
        }
        let req = if input.is_none() {
            self.policy_request(js, vals, true)?
        } else {
            js.undefined()
        };
        match self.ask(js, input, policy, check, &[req])? {
            Answer::Park(p) => Ok(Flow::Park(p)),
            Answer::Aborted => self.aborted(js, realm, vals),
            Answer::Threw(e) => {
                let cause = thrown_message(js, &self.compiled.secrets, e)?;
                deny(self, js, vals, Some(cause))
            }
            Answer::Value(d) => match decision(js, d, c"trusted")? {
                (true, _) => Ok(self.advance()),
                (false, reason) => deny(self, js, vals, reason),
            },
        }
    }

    pub(super) fn step_permission(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        if !self.has(Hook::Permission) {
            return Ok(self.advance());
        }
        let policy = self.hook(Hook::Permission);
        let check = js.get_opt(policy, c"check")?;
        let deny = |m: &mut Machine,
                    js: &Js,
                    vals: &mut Vals,
                    message: String,
                    cause: Option<String>|
         -> R<Flow> {
            let e = m.make_error(
                js,
                realm,
                "PermissionDeniedError",
                &message,
                reasons::CODE_PERMISSION_DENIED,
                cause.as_deref(),
            )?;
            m.block(BlockedReason::PermissionDenied, js, vals, e)
        };
        let default_message = reasons::permission_denied(&self.name);
        if js.ty(check)? != Ty::Function && input.is_none() {
            return deny(
                self,
                js,
                vals,
                default_message,
                Some("permission policy has no check function".into()),
            );
        }
        let req = if input.is_none() {
            self.policy_request(js, vals, false)?
        } else {
            js.undefined()
        };
        match self.ask(js, input, policy, check, &[req])? {
            Answer::Park(p) => Ok(Flow::Park(p)),
            Answer::Aborted => self.aborted(js, realm, vals),
            Answer::Threw(e) => {
                let cause = thrown_message(js, &self.compiled.secrets, e)?;
                deny(self, js, vals, default_message, Some(cause))
            }
            Answer::Value(d) => match decision(js, d, c"allowed")? {
                (true, _) => Ok(self.advance()),
                (false, reason) => {
                    let message = reason.filter(|r| !r.is_empty()).unwrap_or(default_message);
                    deny(self, js, vals, message, None)
                }
            },
        }
    }

    pub(super) fn step_validate(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        if !self.has(Hook::Validate) {
            return Ok(self.advance());
        }
        let f = self.hook(Hook::Validate);
        if js.ty(f)? != Ty::Function {
            return Err(type_error(
                "validate must be a function (tool, args, ctx)",
                "ERR_PRISM_INVALID_OPTION",
            ));
        }
        let args = [vals.0[S_TOOL], vals.0[S_ARGS], vals.0[S_CTX]];
        let e = match self.ask(js, input, js.undefined(), f, &args)? {
            Answer::Park(p) => return Ok(Flow::Park(p)),
            Answer::Aborted => return self.aborted(js, realm, vals),
            Answer::Value(v) => match js.ty(v)? {
                Ty::Undefined => return Ok(self.advance()),
                // A message, as upstream's errorToErrorInfo(message) gives it.
                Ty::String => self.plain_error(js, realm, &js.str(v)?)?,
                // An ErrorInfo, as is but for secrets.
                Ty::Object if js.ty(js.get(v, c"message")?)? == Ty::String => {
                    let safe = redact_value(js, realm, &self.compiled.secrets, v)?;
                    if self.compiled.host_redactor {
                        self.redact(js, realm, safe)?
                    } else {
                        safe
                    }
                }
                _ => self.plain_error(
                    js,
                    realm,
                    &format!(
                        "Validation failed for tool {}: the validator returned {}",
                        self.name,
                        type_name(js, v)?
                    ),
                )?,
            },
            // A throwing validator blocks too (upstream would reject the dispatch).
            Answer::Threw(e) => self.error_info(js, realm, e)?,
        };
        self.block(BlockedReason::ValidationFailed, js, vals, e)
    }

    pub(super) fn step_before_execute(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        if self.has(Hook::BeforeExecute) {
            let f = self.hook(Hook::BeforeExecute);
            if js.ty(f)? != Ty::Function {
                return Err(type_error(
                    "beforeExecute must be a function (call, tool, ctx)",
                    "ERR_PRISM_INVALID_OPTION",
                ));
            }
            let args = [vals.0[S_CALL], vals.0[S_TOOL], vals.0[S_CTX]];
            match self.ask(js, input, js.undefined(), f, &args)? {
                Answer::Park(p) => return Ok(Flow::Park(p)),
                Answer::Aborted => return self.aborted(js, realm, vals),
                Answer::Value(_) => {}
                Answer::Threw(e) => {
                    let info = self.error_info(js, realm, e)?;
                    return self.block(BlockedReason::ExecutionDenied, js, vals, info);
                }
            }
        }
        let signal = self.signal(js, vals)?;
        if js.ty(signal)? == Ty::Object && js.bool(js.get(signal, c"aborted")?).unwrap_or(false) {
            return self.aborted(js, realm, vals);
        }
        Ok(self.advance())
    }

    pub(super) fn step_started(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        if self.sub == 3 {
            if let Some(flow) = self.mark_dispatched(js, realm, vals, input)? {
                return Ok(flow);
            }
            return Ok(self.advance());
        }
        if self.sub == 0 {
            self.sub = 1;
            if self.has(Hook::Emit) || self.has(Hook::Ledger) {
                self.ids(js, vals)?;
            }
            let safe_call = if self.has(Hook::Emit) {
                self.safe_call(js, realm, vals)?
            } else {
                js.undefined()
            };
            let parked = self.emit(js, input, || {
                self.glue(
                    js,
                    |g| g.started_event,
                    &[vals.0[S_SESSION], vals.0[S_RUN], safe_call],
                )
            })?;
            if let Some(p) = parked {
                return Ok(Flow::Park(p));
            }
        } else if self.sub == 1 {
            input.take();
        }
        if self.sub == 1 {
            self.sub = 2;
            if self.has(Hook::Ledger) {
                self.safe_args(js, realm, vals)?;
            }
            let parked = self.append(js, input, || self.row(js, vals, "started", None))?;
            if let Some(p) = parked {
                return Ok(Flow::Park(p));
            }
        } else if self.sub == 2 {
            input.take();
        }
        // The claim turns `dispatched` immediately before the side effect.
        self.sub = 3;
        if let Some(flow) = self.mark_dispatched(js, realm, vals, input)? {
            return Ok(flow);
        }
        Ok(self.advance())
    }

    pub(super) fn step_execute(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        let tool = vals.0[S_TOOL];
        let answer = if input.is_some() {
            self.ask(js, input, js.undefined(), js.undefined(), &[])?
        } else {
            let execute = js.get(tool, c"execute")?;
            if js.ty(execute)? != Ty::Function {
                let e = self.make_error(
                    js,
                    realm,
                    "ToolDefinitionError",
                    &format!("Tool {} has no execute function", self.name),
                    "invalid_tool",
                    None,
                )?;
                return self.fail_with(js, vals, e);
            }
            let tool_ctx = self.tool_context(js, realm, vals)?;
            vals.0[S_TOOL_CTX] = tool_ctx;
            self.ask(js, input, tool, execute, &[vals.0[S_ARGS], tool_ctx])?
        };
        if self.effect_in_flight() && !matches!(answer, Answer::Park(_)) {
            // After dispatch, a failure or an error result leaves the effect's outcome unknown.
            let failed = match answer {
                Answer::Value(v) => {
                    js.ty(v)? != Ty::Object || !js.is_nullish(js.get(v, c"error")?)?
                }
                _ => true,
            };
            if failed {
                return self.effect_unknown(js, realm, vals);
            }
        }
        match answer {
            Answer::Park(p) => Ok(Flow::Park(p)),
            Answer::Aborted => self.aborted(js, realm, vals),
            Answer::Threw(e) => self.fail(js, realm, vals, e),
            Answer::Value(v) => {
                if js.ty(v)? != Ty::Object || js.is_array(v)? {
                    let e = self.make_error(
                        js,
                        realm,
                        "ToolResultError",
                        &format!(
                            "Tool {} returned {} instead of a ToolResult object",
                            self.name,
                            type_name(js, v)?
                        ),
                        reasons::CODE_INVALID_RESULT,
                        None,
                    )?;
                    return self.fail_with(js, vals, e);
                }
                vals.0[S_RESULT] = v;
                Ok(self.advance())
            }
        }
    }

    /// The caller's context with this call's id and a wrapped `progress` (built by a JS literal).
    pub(super) fn tool_context(&self, js: &Js, realm: &Realm, vals: &Vals) -> R<V> {
        let glue = realm.glue()?;
        let observers = self.has(Hook::Emit) || self.has(Hook::Ledger);
        let key = match &self.idempotency_key {
            Some(k) => js.string(k)?,
            None => js.undefined(),
        };
        let args = [
            vals.0[S_CTX],
            vals.0[S_ID],
            key,
            js.ref_value(realm.progress_sink)?,
            vals.0[S_OPTIONS],
            vals.0[S_ARGS],
            vals.0[S_NAME],
            js.number(self.start_ms)?,
            vals.0[S_IDENTITY],
            js.boolean(observers),
        ];
        js.call(js.undefined(), js.ref_value(glue.tool_context)?, &args)
    }
}

/// `{ allowed | trusted: boolean, reason? }`, or a bare boolean.
pub(super) fn decision(js: &Js, d: V, key: &'static std::ffi::CStr) -> R<(bool, Option<String>)> {
    match js.ty(d)? {
        Ty::Boolean => Ok((js.bool(d)?, None)),
        Ty::Object => {
            let mut v = js.get(d, key)?;
            if js.ty(v)? == Ty::Undefined && key != c"allowed" {
                v = js.get(d, c"allowed")?;
            }
            let ok = js.ty(v)? == Ty::Boolean && js.bool(v)?;
            let reason = js.opt_str(js.get(d, c"reason")?)?;
            Ok((ok, reason))
        }
        // Anything else fails closed.
        _ => Ok((false, None)),
    }
}

pub(super) fn thrown_message(js: &Js, secrets: &crate::redact::Secrets, e: V) -> R<String> {
    let info = error_to_error_info(js, secrets, e)?;
    js.to_js_string(js.get(info, c"message")?)
}

pub(super) fn type_name(js: &Js, v: V) -> R<&'static str> {
    Ok(match js.ty(v)? {
        Ty::Undefined => "undefined",
        Ty::Null => "null",
        Ty::Boolean => "a boolean",
        Ty::Number => "a number",
        Ty::String => "a string",
        Ty::Symbol => "a symbol",
        Ty::BigInt => "a bigint",
        Ty::Function => "a function",
        Ty::External => "an external",
        Ty::Object if js.is_array(v)? => "an array",
        Ty::Object => "an object",
    })
}
