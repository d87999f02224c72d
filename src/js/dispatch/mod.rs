//! The dispatch state machine (SPEC section 3), run against host objects on the JS thread.
//!
//! `dispatchStart(options)` runs the steps synchronously as far as host callbacks answer with plain
//! values. When one answers with a thenable, the machine parks itself in a frame array
//! `[state, thenable, signal, ...values]` and returns it; the JS driver (`lib/driver.js`) awaits the
//! thenable and calls `dispatchResume(frame, value, mode)`. A finished call returns the result
//! object; a call that must reject (tripwire, a middleware under `errorPolicy: "throw"`) throws.

mod effects;

use std::rc::Rc;
use std::time::Instant;

use super::guardrails::{GuardOutcome, GuardRun, Stage};
use super::hooks::{self, Bound, Compiled, Hook, Source, HOOKS};
use super::raw::{cb_args, error, type_error, Fail, Js, Ty, R, V};
use super::realm::{is_plain_object, Realm};
use super::redact::{error_to_error_info, redact_value};
use super::registry::native_registry;
use crate::dispatch::clock::{iso8601, now_millis, row_id};
use crate::dispatch::reasons::{self, BlockedReason};
use crate::dispatch::steps::Step;
use crate::raw_fn;

// Frame value slots (after the three header slots).
pub const S_OPTIONS: usize = 0;
pub const S_CALL: usize = 1;
pub const S_CTX: usize = 2;
pub const S_TOOL: usize = 3;
pub const S_ARGS: usize = 4;
pub const S_TOOL_CTX: usize = 5;
pub const S_RESULT: usize = 6;
pub const S_AUX: usize = 7;
pub const S_SAFE_ARGS: usize = 8;
pub const S_SAFE_CALL: usize = 9;
pub const S_SIGNAL: usize = 10;
pub const S_REGISTRY: usize = 11;
/// `options.identity ?? context.identity`.
pub const S_IDENTITY: usize = 12;
/// The effect key input `{ identity, ownership, key, … }` while a claim is held.
pub const S_EFFECT_KEY: usize = 13;
/// The call's `id` and `name` as given (handed to the tool context without a copy).
pub const S_ID: usize = 14;
pub const S_NAME: usize = 15;
pub const S_ARGS_ERROR: usize = 16;
pub const S_AUTHORITY: usize = 17;
/// `context.sessionId` and `context.runId` as given (events and rows carry them as is).
pub const S_SESSION: usize = 18;
pub const S_RUN: usize = 19;
pub const NVALS: usize = 20;
const HEADER: u32 = 3;

/// How a parked machine is resumed.
pub enum Input {
    Value(V),
    Threw(V),
    Aborted,
}

/// What a host callback gave.
pub enum Answer {
    Value(V),
    Threw(V),
    Aborted,
    Park(V),
}

enum Flow {
    Continue,
    Park(V),
    Done(V),
    Reject(V),
}

/// The terminal phase: an event and a row to write, then resolve or reject.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Terminal {
    Finished,
    Error,
    Blocked(BlockedReason),
}

pub struct Machine {
    step: Step,
    sub: u32,
    source: Source,
    compiled: Rc<Compiled>,
    hv: [V; 13],
    session_id: String,
    run_id: String,
    tool_call_id: String,
    name: String,
    t0: Instant,
    /// When the dispatch began: `startedAt` of every row, as upstream writes it.
    dispatch_at: String,
    claim: Option<effects::Claim>,
    /// Set only when derived by the effect machinery; the tool then sees it.
    idempotency_key: Option<String>,
    guard: Option<GuardRun>,
    terminal: Option<(Terminal, u32)>,
    /// Set when the call must reject after its terminal row is written.
    reject_after: bool,
    /// The native registry's state when `options.registry` is one (looked up without JS).
    native: Option<Rc<std::cell::RefCell<super::registry::RegistryState>>>,
    /// `sessionId`, `runId` and the call id are read as strings only when an event, a row or an
    /// error needs them.
    ids_ready: bool,
    signal_read: bool,
    /// The call's fields were handed over read (no middleware may have rewritten them yet).
    call_read: bool,
    identity_read: bool,
    start_ms: f64,
}

pub struct Vals(pub [V; NVALS]);

/// Fields the package entry read in JS, where a property read costs a nanosecond instead of a
/// boundary crossing: the call's own fields and the context's identity and signal.
pub struct PreRead {
    pub name: V,
    pub id: V,
    pub args: V,
    pub args_error: V,
    pub authority: V,
    pub identity: V,
    pub signal: V,
}

impl Machine {
    pub fn hook_value(&self, h: Hook) -> V {
        self.hv[h as usize]
    }
    pub fn has_hook(&self, h: Hook) -> bool {
        self.compiled.present.has(h)
    }
    pub fn session_id(&self) -> &str {
        &self.session_id
    }
    pub fn run_id(&self) -> &str {
        &self.run_id
    }
    pub fn tool_call_id(&self) -> &str {
        &self.tool_call_id
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn secrets(&self) -> &crate::redact::Secrets {
        &self.compiled.secrets
    }
    pub fn redact_value(&self, js: &Js, realm: &Realm, v: V) -> R<V> {
        self.redact(js, realm, v)
    }

    fn hook(&self, h: Hook) -> V {
        self.hv[h as usize]
    }
    fn has(&self, h: Hook) -> bool {
        self.compiled.present.has(h)
    }

    fn refresh_hooks(&mut self, js: &Js, options: V) -> R<()> {
        let present = self.compiled.present;
        for (h, _) in HOOKS.iter() {
            if present.has(*h) {
                self.hv[*h as usize] = self.source.hook(js, options, *h)?;
            }
        }
        Ok(())
    }

    fn duration_ms(&self) -> f64 {
        self.t0.elapsed().as_secs_f64() * 1000.0
    }

    /// Calls a host function, or hands back the answer the machine was resumed with.
    fn ask(&self, js: &Js, input: &mut Option<Input>, this: V, f: V, args: &[V]) -> R<Answer> {
        if let Some(i) = input.take() {
            return Ok(match i {
                Input::Value(v) => Answer::Value(v),
                Input::Threw(e) => Answer::Threw(e),
                Input::Aborted => Answer::Aborted,
            });
        }
        match js.call_catch(this, f, args)? {
            Err(thrown) => Ok(Answer::Threw(thrown)),
            Ok(v) => {
                if js.is_thenable(v)? {
                    Ok(Answer::Park(v))
                } else {
                    Ok(Answer::Value(v))
                }
            }
        }
    }

    // ----- redaction ------------------------------------------------------------------------

    /// A value with every secret removed: the native secrets in Rust, then a host redactor.
    fn redact(&self, js: &Js, realm: &Realm, v: V) -> R<V> {
        if !self.compiled.any_redaction {
            return Ok(v);
        }
        let mut out = v;
        if !self.compiled.secrets.is_empty() {
            out = super::redact::redact_if_needed(js, realm, &self.compiled.secrets, out)?;
        }
        if self.compiled.host_redactor {
            let r = self.hook(Hook::Redactor);
            let f = js.get(r, c"redact")?;
            out = match js.call_catch(r, f, &[out])? {
                Ok(v) => v,
                // A redactor that fails must not let the unredacted value through.
                Err(_) => js.string(crate::redact::REDACTED)?,
            };
        }
        Ok(out)
    }

    fn error_info(&self, js: &Js, realm: &Realm, thrown: V) -> R<V> {
        let info = error_to_error_info(js, &self.compiled.secrets, thrown)?;
        if self.compiled.host_redactor { self.redact(js, realm, info) } else { Ok(info) }
    }

    /// `{ message }`: the shape upstream gives lookup, filter, argument and guardrail blocks.
    fn plain_error(&self, js: &Js, realm: &Realm, message: &str) -> R<V> {
        let e = js.object()?;
        js.set(e, c"message", js.string(&self.compiled.secrets.redact(message))?)?;
        if self.compiled.host_redactor { self.redact(js, realm, e) } else { Ok(e) }
    }

    fn make_error(&self, js: &Js, realm: &Realm, name: &str, message: &str, code: &str, cause: Option<&str>) -> R<V> {
        let e = js.object()?;
        js.set(e, c"name", js.string(name)?)?;
        js.set(e, c"message", js.string(&self.compiled.secrets.redact(message))?)?;
        js.set(e, c"code", js.string(code)?)?;
        if let Some(c) = cause {
            js.set(e, c"cause", js.string(&self.compiled.secrets.redact(c))?)?;
        }
        if self.compiled.host_redactor { self.redact(js, realm, e) } else { Ok(e) }
    }

    // ----- objects ---------------------------------------------------------------------------

    fn glue(&self, js: &Js, pick: impl Fn(&super::realm::Glue) -> napi::sys::napi_ref, args: &[V]) -> R<V> {
        let realm = Realm::get(js)?;
        let f = js.ref_value(pick(realm.glue()?))?;
        js.call(js.undefined(), f, args)
    }

    fn result_with_error(&self, js: &Js, vals: &Vals, error: V) -> R<V> {
        self.glue(js, |g| g.error_result, &[vals.0[S_ID], vals.0[S_NAME], error])
    }

    /// A `ToolCallRecord`: `{ id, sessionId, runId, toolCallId, name, arguments, status, startedAt,
    /// redacted, ...ownership }` plus the terminal fields when given.
    fn row(&self, js: &Js, vals: &Vals, status: &str, finished: Option<(V, V, V)>) -> R<V> {
        let u = js.undefined();
        let args = vals.0[S_SAFE_ARGS];
        let args = if js.ty(args)? == Ty::Object { args } else { js.object()? };
        let ownership = if self.has(Hook::Ownership) && js.ty(self.hook(Hook::Ownership))? == Ty::Object { self.hook(Hook::Ownership) } else { u };
        let (finished_at, reason, result) = finished.unwrap_or((u, u, u));
        self.glue(
            js,
            |g| g.row,
            &[
                js.string(&row_id())?,
                vals.0[S_SESSION],
                vals.0[S_RUN],
                vals.0[S_ID],
                vals.0[S_NAME],
                args,
                js.string(status)?,
                js.string(&self.dispatch_at)?,
                js.boolean(self.has(Hook::Redactor)),
                ownership,
                finished_at,
                reason,
                result,
            ],
        )
    }

    /// Arguments as they may appear in rows and events: redacted once, reused.
    fn safe_args(&self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<V> {
        let cur = vals.0[S_SAFE_ARGS];
        if js.ty(cur)? != Ty::Undefined {
            return Ok(cur);
        }
        let args = vals.0[S_ARGS];
        let args = if js.ty(args)? == Ty::Undefined { js.object()? } else { args };
        let safe = self.redact(js, realm, args)?;
        vals.0[S_SAFE_ARGS] = safe;
        Ok(safe)
    }

    fn safe_call(&self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<V> {
        let cur = vals.0[S_SAFE_CALL];
        if js.ty(cur)? != Ty::Undefined {
            return Ok(cur);
        }
        let safe = self.redact(js, realm, vals.0[S_CALL])?;
        vals.0[S_SAFE_CALL] = safe;
        Ok(safe)
    }

    // ----- notifications ---------------------------------------------------------------------

    /// Calls `emit(event)`; a failing observer never changes the call's outcome.
    fn emit(&self, js: &Js, input: &mut Option<Input>, event: impl FnOnce() -> R<V>) -> R<Option<V>> {
        if !self.has(Hook::Emit) {
            return Ok(None);
        }
        let f = self.hook(Hook::Emit);
        if input.is_some() {
            input.take();
            return Ok(None);
        }
        if js.ty(f)? != Ty::Function {
            return Ok(None);
        }
        let ev = event()?;
        match js.call_catch(js.undefined(), f, &[ev])? {
            Ok(v) if js.is_thenable(v)? => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    /// `ledger.appendToolCall(redactRunLedgerRecord(row, redactor))`.
    fn append(&self, js: &Js, input: &mut Option<Input>, row: impl FnOnce() -> R<V>) -> R<Option<V>> {
        if !self.has(Hook::Ledger) {
            return Ok(None);
        }
        if input.is_some() {
            input.take();
            return Ok(None);
        }
        let ledger = self.hook(Hook::Ledger);
        let f = js.get_opt(ledger, c"appendToolCall")?;
        if js.ty(f)? != Ty::Function {
            return Ok(None);
        }
        let mut row = row()?;
        if self.compiled.host_redactor {
            // redactRunLedgerRecord(record, redactor): the whole row through the host's redactor.
            let r = self.hook(Hook::Redactor);
            let redact = js.get(r, c"redact")?;
            row = match js.call_catch(r, redact, &[row])? {
                Ok(v) => v,
                Err(_) => return Ok(None),
            };
        }
        match js.call_catch(ledger, f, &[row])? {
            Ok(v) if js.is_thenable(v)? => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    // ----- the steps -------------------------------------------------------------------------

    fn block(&mut self, reason: BlockedReason, js: &Js, vals: &mut Vals, error: V) -> R<Flow> {
        self.ids(js, vals)?;
        vals.0[S_RESULT] = self.result_with_error(js, vals, error)?;
        self.terminal = Some((Terminal::Blocked(reason), 0));
        Ok(Flow::Continue)
    }

    fn fail(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, thrown: V) -> R<Flow> {
        let info = self.error_info(js, realm, thrown)?;
        self.fail_with(js, vals, info)
    }

    fn fail_with(&mut self, js: &Js, vals: &mut Vals, info: V) -> R<Flow> {
        self.ids(js, vals)?;
        vals.0[S_RESULT] = self.result_with_error(js, vals, info)?;
        self.terminal = Some((Terminal::Error, 0));
        Ok(Flow::Continue)
    }

    /// Reads the call's name and arguments (after `tool_call` middleware); the id stays a JS value
    /// until something needs it as text.
    fn read_call(&mut self, js: &Js, vals: &mut Vals) -> R<()> {
        let call = vals.0[S_CALL];
        if js.ty(call)? != Ty::Object {
            return Err(type_error("dispatchToolCall: call must be a tool_call object", "ERR_PRISM_INVALID_CALL"));
        }
        if !self.call_read {
            vals.0[S_NAME] = js.get(call, c"name")?;
            vals.0[S_ID] = js.get(call, c"id")?;
            vals.0[S_ARGS] = js.get(call, c"arguments")?;
            vals.0[S_ARGS_ERROR] = js.get(call, c"argumentsError")?;
            vals.0[S_AUTHORITY] = js.get(call, c"authority")?;
        }
        self.call_read = false;
        let name = vals.0[S_NAME];
        self.name = match js.fast_str(name)? {
            Some(n) => n,
            None if js.is_nullish(name)? => String::new(),
            None => js.to_js_string(name)?,
        };
        vals.0[S_SAFE_ARGS] = js.undefined();
        vals.0[S_SAFE_CALL] = js.undefined();
        self.ids_ready = false;
        Ok(())
    }

    /// Reads `sessionId`, `runId` and the call id as text, once.
    fn ids(&mut self, js: &Js, vals: &mut Vals) -> R<()> {
        if self.ids_ready {
            return Ok(());
        }
        let text = |v: V| -> R<String> {
            match js.fast_str(v)? {
                Some(s) => Ok(s),
                None if js.is_nullish(v)? => Ok(String::new()),
                None => js.to_js_string(v),
            }
        };
        let ctx = vals.0[S_CTX];
        let (session, run) = (js.get(ctx, c"sessionId")?, js.get(ctx, c"runId")?);
        self.session_id = text(session)?;
        self.run_id = text(run)?;
        vals.0[S_SESSION] = session;
        vals.0[S_RUN] = run;
        self.tool_call_id = text(vals.0[S_ID])?;
        self.ids_ready = true;
        Ok(())
    }

    /// The caller's abort signal, read once.
    fn signal(&mut self, js: &Js, vals: &mut Vals) -> R<V> {
        if !self.signal_read {
            vals.0[S_SIGNAL] = js.get(vals.0[S_CTX], c"signal")?;
            self.signal_read = true;
        }
        Ok(vals.0[S_SIGNAL])
    }

    fn run(&mut self, js: &Js, vals: &mut Vals, mut input: Option<Input>) -> R<Flow> {
        let realm = Realm::get(js)?;
        loop {
            if let Some((kind, sub)) = self.terminal {
                return self.terminal_phase(js, realm, vals, kind, sub, &mut input);
            }
            let flow = match self.step {
                Step::CallMiddleware => self.step_middleware(js, vals, &mut input, "tool_call")?,
                Step::InputGuardrails => self.step_guardrails(js, realm, vals, &mut input, Stage::Input)?,
                Step::Lookup => self.step_lookup(js, realm, vals, &mut input)?,
                Step::Filter => self.step_filter(js, realm, vals)?,
                Step::Arguments => self.step_arguments(js, realm, vals)?,
                Step::Identity => self.step_identity(js, realm, vals)?,
                Step::Trust => self.step_trust(js, realm, vals, &mut input)?,
                Step::Permission => self.step_permission(js, realm, vals, &mut input)?,
                Step::Validate => self.step_validate(js, realm, vals, &mut input)?,
                Step::Effect => self.step_effect(js, realm, vals, &mut input)?,
                Step::BeforeExecute => self.step_before_execute(js, realm, vals, &mut input)?,
                Step::Started => self.step_started(js, realm, vals, &mut input)?,
                Step::Execute => self.step_execute(js, realm, vals, &mut input)?,
                Step::ResultMiddleware => self.step_middleware(js, vals, &mut input, "tool_result")?,
                Step::OutputGuardrails => self.step_guardrails(js, realm, vals, &mut input, Stage::Output)?,
                Step::Finish => {
                    if self.sub == 0 {
                        let safe = self.redact(js, realm, vals.0[S_RESULT])?;
                        vals.0[S_RESULT] = safe;
                        self.sub = 1;
                    }
                    match self.complete_effect(js, realm, vals, &mut input)? {
                        Some(flow) => flow,
                        None => {
                            self.terminal = Some((Terminal::Finished, 0));
                            Flow::Continue
                        }
                    }
                }
            };
            match flow {
                Flow::Continue => {}
                other => return Ok(other),
            }
        }
    }

    fn advance(&mut self) -> Flow {
        self.sub = 0;
        if let Some(n) = self.step.next() {
            self.step = n;
        }
        Flow::Continue
    }

    fn step_middleware(&mut self, js: &Js, vals: &mut Vals, input: &mut Option<Input>, hook: &str) -> R<Flow> {
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
            if js.ty(sync)? == Ty::Function { sync } else { js.get_opt(mw, c"run")? }
        };
        if js.ty(run)? != Ty::Function && input.is_none() {
            return Err(type_error("middleware must be a MiddlewareRegistry with run(hook, value)", "ERR_PRISM_INVALID_OPTION"));
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

    fn aborted(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
        if self.step.after_execute() {
            let e = self.make_error(js, realm, "AbortError", &format!("Tool call aborted: {}", self.name), reasons::CODE_ABORTED, None)?;
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

    fn step_guardrails(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, input: &mut Option<Input>, stage: Stage) -> R<Flow> {
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
        let value = if stage == Stage::Input { vals.0[S_CALL] } else { vals.0[S_RESULT] };
        let mut guard = self.guard.take().ok_or_else(|| error("guardrail state lost", "ERR_PRISM_INTERNAL"))?;
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

    fn step_lookup(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, input: &mut Option<Input>) -> R<Flow> {
        if input.is_none() && js.opt_str(vals.0[S_AUTHORITY])?.as_deref() == Some("provider-hosted") {
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
            let s = state.try_borrow().map_err(|_| error("ToolRegistry was re-entered", "ERR_PRISM_REENTRANT"))?;
            s.lookup(js, &self.name)?
        } else {
            let get = js.get_opt(registry, c"get")?;
            if js.ty(get)? != Ty::Function {
                return Err(type_error("dispatchToolCall: registry must have get(name)", "ERR_PRISM_INVALID_OPTION"));
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

    fn step_filter(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
        if let Some(f) = &self.compiled.filter {
            if !f.permits(&self.name) {
                let err = self.plain_error(js, realm, &reasons::tool_denied(&self.name))?;
                return self.block(BlockedReason::ToolDenied, js, vals, err);
            }
        }
        Ok(self.advance())
    }

    fn step_arguments(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
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

    fn step_identity(&mut self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<Flow> {
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
            unsafe { napi::bindgen_prelude::Unknown::from_napi_value(js.env, v) }.map_err(|_| Fail::Pending)
        };
        let mut outcome = super::effects::assert_identity_active(env, as_unknown(identity)?, None);
        if outcome.is_ok() && self.has(Hook::Ownership) {
            outcome = super::effects::assert_identity_matches_ownership(env, as_unknown(identity)?, Some(as_unknown(self.hook(Hook::Ownership))?));
        }
        if let Err(e) = outcome {
            let mut pending = false;
            unsafe { napi::sys::napi_is_exception_pending(js.env, &mut pending) };
            let thrown = if pending { js.take_exception() } else { js.new_error(super::raw::ErrKind::Error, &e.reason, None)? };
            let info = self.error_info(js, realm, thrown)?;
            return self.block(BlockedReason::PermissionDenied, js, vals, info);
        }
        Ok(self.advance())
    }

    fn policy_request(&self, js: &Js, vals: &Vals, trust: bool) -> R<V> {
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

    fn step_trust(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, input: &mut Option<Input>) -> R<Flow> {
        if !self.has(Hook::Trust) {
            return Ok(self.advance());
        }
        let policy = self.hook(Hook::Trust);
        let check = js.get_opt(policy, c"check")?;
        let deny = |m: &mut Machine, js: &Js, vals: &mut Vals, cause: Option<String>| -> R<Flow> {
            let e = m.make_error(js, realm, "TrustDeniedError", &reasons::untrusted(&m.name), reasons::CODE_UNTRUSTED, cause.as_deref())?;
            m.block(BlockedReason::PermissionDenied, js, vals, e)
        };
        if js.ty(check)? != Ty::Function && input.is_none() {
            return deny(self, js, vals, Some("trust policy has no check function".into()));
        }
        let req = if input.is_none() { self.policy_request(js, vals, true)? } else { js.undefined() };
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

    fn step_permission(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, input: &mut Option<Input>) -> R<Flow> {
        if !self.has(Hook::Permission) {
            return Ok(self.advance());
        }
        let policy = self.hook(Hook::Permission);
        let check = js.get_opt(policy, c"check")?;
        let deny = |m: &mut Machine, js: &Js, vals: &mut Vals, message: String, cause: Option<String>| -> R<Flow> {
            let e = m.make_error(js, realm, "PermissionDeniedError", &message, reasons::CODE_PERMISSION_DENIED, cause.as_deref())?;
            m.block(BlockedReason::PermissionDenied, js, vals, e)
        };
        let default_message = reasons::permission_denied(&self.name);
        if js.ty(check)? != Ty::Function && input.is_none() {
            return deny(self, js, vals, default_message, Some("permission policy has no check function".into()));
        }
        let req = if input.is_none() { self.policy_request(js, vals, false)? } else { js.undefined() };
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

    fn step_validate(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, input: &mut Option<Input>) -> R<Flow> {
        if !self.has(Hook::Validate) {
            return Ok(self.advance());
        }
        let f = self.hook(Hook::Validate);
        if js.ty(f)? != Ty::Function {
            return Err(type_error("validate must be a function (tool, args, ctx)", "ERR_PRISM_INVALID_OPTION"));
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
                    if self.compiled.host_redactor { self.redact(js, realm, safe)? } else { safe }
                }
                _ => self.plain_error(
                    js,
                    realm,
                    &format!("Validation failed for tool {}: the validator returned {}", self.name, type_name(js, v)?),
                )?,
            },
            // A throwing validator blocks too (upstream would reject the dispatch).
            Answer::Threw(e) => self.error_info(js, realm, e)?,
        };
        self.block(BlockedReason::ValidationFailed, js, vals, e)
    }

    fn step_before_execute(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, input: &mut Option<Input>) -> R<Flow> {
        if self.has(Hook::BeforeExecute) {
            let f = self.hook(Hook::BeforeExecute);
            if js.ty(f)? != Ty::Function {
                return Err(type_error("beforeExecute must be a function (call, tool, ctx)", "ERR_PRISM_INVALID_OPTION"));
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

    fn step_started(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, input: &mut Option<Input>) -> R<Flow> {
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
            let safe_call = if self.has(Hook::Emit) { self.safe_call(js, realm, vals)? } else { js.undefined() };
            let parked = self.emit(js, input, || self.glue(js, |g| g.started_event, &[vals.0[S_SESSION], vals.0[S_RUN], safe_call]))?;
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

    fn step_execute(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, input: &mut Option<Input>) -> R<Flow> {
        let tool = vals.0[S_TOOL];
        let answer = if input.is_some() {
            self.ask(js, input, js.undefined(), js.undefined(), &[])?
        } else {
            let execute = js.get(tool, c"execute")?;
            if js.ty(execute)? != Ty::Function {
                let e = self.make_error(js, realm, "ToolDefinitionError", &format!("Tool {} has no execute function", self.name), "invalid_tool", None)?;
                return self.fail_with(js, vals, e);
            }
            let tool_ctx = self.tool_context(js, realm, vals)?;
            vals.0[S_TOOL_CTX] = tool_ctx;
            self.ask(js, input, tool, execute, &[vals.0[S_ARGS], tool_ctx])?
        };
        if self.effect_in_flight() && !matches!(answer, Answer::Park(_)) {
            // After dispatch, a failure or an error result leaves the effect's outcome unknown.
            let failed = match answer {
                Answer::Value(v) => js.ty(v)? != Ty::Object || !js.is_nullish(js.get(v, c"error")?)?,
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
                        &format!("Tool {} returned {} instead of a ToolResult object", self.name, type_name(js, v)?),
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
    fn tool_context(&self, js: &Js, realm: &Realm, vals: &Vals) -> R<V> {
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

    /// Settle an unfinished effect claim, then the terminal event and row, then resolve or reject.
    /// Sub-steps: 0 settle the claim (1: after a `get`, mark it unknown), 2 the event, 3 the row, 4 done.
    fn terminal_phase(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, kind: Terminal, sub: u32, input: &mut Option<Input>) -> R<Flow> {
        if self.has(Hook::Emit) || self.has(Hook::Ledger) || self.claim.is_some() {
            self.ids(js, vals)?;
        }
        let mut sub = sub;
        if sub == 0 {
            let getting = self.claim.as_ref().is_some_and(|c| c.attempted_only());
            if let Some(p) = self.settle_effect(js, vals, 0, input)? {
                self.terminal = Some((kind, if getting { 1 } else { 2 }));
                return Ok(Flow::Park(p));
            }
            sub = 2;
        } else if sub == 1 {
            if let Some(p) = self.settle_effect(js, vals, 1, input)? {
                self.terminal = Some((kind, 2));
                return Ok(Flow::Park(p));
            }
            sub = 2;
        } else if sub == 2 {
            input.take();
        }
        if sub == 2 {
            self.terminal = Some((kind, 3));
            let parked = self.emit(js, input, || self.terminal_event(js, realm, vals, kind))?;
            if let Some(p) = parked {
                return Ok(Flow::Park(p));
            }
        } else if sub == 3 {
            input.take();
        }
        if sub <= 3 {
            self.terminal = Some((kind, 4));
            if self.has(Hook::Ledger) {
                self.safe_args(js, realm, vals)?;
            }
            let parked = self.append(js, input, || self.terminal_row(js, vals, kind))?;
            if let Some(p) = parked {
                return Ok(Flow::Park(p));
            }
        } else {
            input.take();
        }
        if self.reject_after {
            return Ok(Flow::Reject(vals.0[S_AUX]));
        }
        Ok(Flow::Done(vals.0[S_RESULT]))
    }

    fn terminal_event(&self, js: &Js, realm: &Realm, vals: &mut Vals, kind: Terminal) -> R<V> {
        let result = vals.0[S_RESULT];
        let ms = js.number(self.duration_ms())?;
        match kind {
            Terminal::Finished => self.glue(js, |g| g.finished_event, &[vals.0[S_SESSION], vals.0[S_RUN], result, ms]),
            Terminal::Error => {
                let call = self.safe_call(js, realm, vals)?;
                let error = js.get(result, c"error")?;
                self.glue(js, |g| g.error_event, &[vals.0[S_SESSION], vals.0[S_RUN], call, error, ms])
            }
            Terminal::Blocked(reason) => {
                let error = js.get(result, c"error")?;
                let reason = js.string(reason.as_str())?;
                self.glue(js, |g| g.blocked_event, &[vals.0[S_SESSION], vals.0[S_RUN], vals.0[S_ID], vals.0[S_NAME], reason, error, ms])
            }
        }
    }

    fn terminal_row(&self, js: &Js, vals: &Vals, kind: Terminal) -> R<V> {
        let finished_at = js.string(&iso8601(now_millis()))?;
        let (status, reason) = match kind {
            Terminal::Finished => ("finished", js.undefined()),
            Terminal::Error => ("error", js.undefined()),
            Terminal::Blocked(r) => ("blocked", js.string(r.as_str())?),
        };
        self.row(js, vals, status, Some((finished_at, reason, vals.0[S_RESULT])))
    }
}

/// `{ allowed | trusted: boolean, reason? }`, or a bare boolean.
fn decision(js: &Js, d: V, key: &'static std::ffi::CStr) -> R<(bool, Option<String>)> {
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

fn thrown_message(js: &Js, secrets: &crate::redact::Secrets, e: V) -> R<String> {
    let info = error_to_error_info(js, secrets, e)?;
    js.to_js_string(js.get(info, c"message")?)
}

fn type_name(js: &Js, v: V) -> R<&'static str> {
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

// ----- entry points -------------------------------------------------------------------------------

/// A dispatch whose options are exactly `{ call, registry, context }`: no hook to read.
fn start_bare(js: &Js, options: V, call: V, ctx: V, registry: V, pre: Option<PreRead>) -> R<V> {
    let mut hv = [js.undefined(); 13];
    hv[Hook::Registry as usize] = registry;
    start_with(js, options, call, ctx, registry, Source::Options, hooks::bare_compiled(), hv, pre)
}

fn start(js: &Js, options: V, mut call: V, mut ctx: V, bound: Option<Rc<Bound>>, pre: Option<PreRead>) -> R<V> {
    let mut hv = [std::ptr::null_mut(); 13];
    let (source, compiled) = match bound {
        Some(b) => {
            let present = b.compiled.present;
            for (h, _) in HOOKS.iter() {
                if present.has(*h) {
                    hv[*h as usize] = Source::Bound(b.clone()).hook(js, options, *h)?;
                }
            }
            let compiled = Rc::new(Compiled {
                present,
                filter: b.compiled.filter.clone(),
                secrets: b.compiled.secrets.clone(),
                host_redactor: b.compiled.host_redactor,
                any_redaction: b.compiled.any_redaction,
            });
            (Source::Bound(b), compiled)
        }
        None => {
            let (c, extra) = hooks::compile(js, options, &mut hv, pre.is_some())?;
            if pre.is_none() {
                call = extra.call.unwrap_or(call);
                ctx = extra.context.unwrap_or(ctx);
            }
            (Source::Options, Rc::new(c))
        }
    };
    let registry = hv[Hook::Registry as usize];
    if !compiled.present.has(Hook::Registry) {
        return Err(type_error("dispatchToolCall: options.registry is required", "ERR_PRISM_INVALID_OPTION"));
    }
    start_with(js, options, call, ctx, registry, source, compiled, hv, pre)
}

#[allow(clippy::too_many_arguments)]
fn start_with(
    js: &Js,
    options: V,
    call: V,
    ctx: V,
    registry: V,
    source: Source,
    compiled: Rc<Compiled>,
    hv: [V; 13],
    pre: Option<PreRead>,
) -> R<V> {
    let native = native_registry(js, registry)?;
    let ctx = match js.ty(ctx)? {
        Ty::Object => ctx,
        Ty::Undefined | Ty::Null => js.object()?,
        _ => return Err(type_error("dispatchToolCall: context must be a ToolExecutionContext object", "ERR_PRISM_INVALID_OPTION")),
    };
    let start_ms = now_millis();
    let mut m = Machine {
        step: Step::CallMiddleware,
        sub: 0,
        source,
        compiled,
        hv,
        session_id: String::new(),
        run_id: String::new(),
        tool_call_id: String::new(),
        name: String::new(),
        t0: Instant::now(),
        dispatch_at: iso8601(start_ms),
        claim: None,
        idempotency_key: None,
        guard: None,
        terminal: None,
        reject_after: false,
        native,
        ids_ready: false,
        signal_read: pre.is_some(),
        call_read: pre.is_some(),
        identity_read: pre.is_some(),
        start_ms: start_ms as f64,
    };
    let u = js.undefined();
    let mut vals = Vals([u; NVALS]);
    vals.0[S_OPTIONS] = options;
    vals.0[S_CALL] = call;
    vals.0[S_CTX] = ctx;
    vals.0[S_REGISTRY] = registry;
    if let Some(p) = pre {
        vals.0[S_NAME] = p.name;
        vals.0[S_ID] = p.id;
        vals.0[S_ARGS] = p.args;
        vals.0[S_ARGS_ERROR] = p.args_error;
        vals.0[S_AUTHORITY] = p.authority;
        vals.0[S_IDENTITY] = p.identity;
        vals.0[S_SIGNAL] = p.signal;
    }
    let flow = m.run(js, &mut vals, None)?;
    settle(js, m, vals, flow)
}

fn settle(js: &Js, m: Machine, vals: Vals, flow: Flow) -> R<V> {
    match flow {
        Flow::Done(v) => Ok(v),
        Flow::Reject(e) => {
            js.throw(e)?;
            Err(Fail::Pending)
        }
        Flow::Continue => Err(error("dispatch stopped without an outcome", "ERR_PRISM_INTERNAL")),
        Flow::Park(thenable) => {
            let after = m.step.after_execute() || m.terminal.is_some();
            let signal = if m.signal_read { vals.0[S_SIGNAL] } else { js.get_opt(vals.0[S_CTX], c"signal")? };
            // The driver races the wait against the caller's abort signal only while a host
            // callback, not an observer, is pending.
            let race = if m.terminal.is_none() && js.ty(signal)? == Ty::Object { signal } else { js.undefined() };
            let _ = after;
            let frame = js.array(HEADER as usize + NVALS)?;
            js.set_element(frame, 0, js.external(Some(m))?)?;
            js.set_element(frame, 1, thenable)?;
            js.set_element(frame, 2, race)?;
            for (i, v) in vals.0.iter().enumerate() {
                js.set_element(frame, HEADER + i as u32, *v)?;
            }
            Ok(frame)
        }
    }
}

fn resume(js: &Js, frame: V, value: V, mode: u32) -> R<V> {
    if !js.is_array(frame)? {
        return Err(type_error("dispatchResume: not a dispatch frame", "ERR_PRISM_INTERNAL"));
    }
    let ext = js.element(frame, 0)?;
    if js.ty(ext)? != Ty::External {
        return Err(type_error("dispatchResume: not a dispatch frame", "ERR_PRISM_INTERNAL"));
    }
    let slot = unsafe { js.external_ptr::<Option<Machine>>(ext)? };
    let mut m = unsafe { (*slot).take() }.ok_or_else(|| error("dispatch frame resumed twice", "ERR_PRISM_INTERNAL"))?;
    let mut vals = Vals([js.undefined(); NVALS]);
    for i in 0..NVALS {
        vals.0[i] = js.element(frame, HEADER + i as u32)?;
    }
    m.refresh_hooks(js, vals.0[S_OPTIONS])?;
    let input = match mode {
        0 => Input::Value(value),
        1 => Input::Threw(value),
        _ => Input::Aborted,
    };
    let flow = m.run(js, &mut vals, Some(input))?;
    settle(js, m, vals, flow)
}

// dispatchStart(options, call, context, name, id, arguments, argumentsError, authority, identity, signal):
// the package entry reads `options.call`, `options.context` and the fields after them in JS.
raw_fn!(dispatch_start, |js, info| {
    let (_, _, [options, call, ctx, name, id, args, args_error, authority, identity, signal, bare_registry], argc) =
        cb_args::<11>(js, info)?;
    if js.ty(options)? != Ty::Object {
        return Err(type_error("dispatchToolCall: options must be an object", "ERR_PRISM_INVALID_OPTION"));
    }
    let pre = (argc >= 10).then_some(PreRead { name, id, args, args_error, authority, identity, signal });
    // `{ call, registry, context }` and nothing else: no hook to look for.
    if argc == 11 && js.ty(bare_registry)? == Ty::Object {
        return start_bare(js, options, call, ctx, bare_registry, pre);
    }
    start(js, options, call, ctx, None, pre)
});

raw_fn!(dispatch_resume, |js, info| {
    let (_, _, [frame, value, mode], _) = cb_args::<3>(js, info)?;
    let mode = if js.ty(mode)? == Ty::Number { js.f64(mode)? as u32 } else { 0 };
    resume(js, frame, value, mode)
});

// `createToolDispatcher(options)`: the native half. Returns the bound dispatcher object; the
// package entry adds `dispatch(call, context)`.
raw_fn!(create_dispatcher, |js, info| {
    let (_, _, [options], _) = cb_args::<1>(js, info)?;
    if js.ty(options)? != Ty::Object {
        return Err(type_error("createToolDispatcher: options must be an object", "ERR_PRISM_INVALID_OPTION"));
    }
    let bound = hooks::bind(js, options)?;
    if !bound.compiled.present.has(Hook::Registry) {
        return Err(type_error("createToolDispatcher: options.registry is required", "ERR_PRISM_INVALID_OPTION"));
    }
    let obj = js.object()?;
    js.wrap(obj, Rc::new(bound))?;
    js.type_tag(obj, &hooks::DISPATCHER_TAG)?;
    Ok(obj)
});

// `dispatcherStart(dispatcher, call, context)`.
raw_fn!(dispatcher_start, |js, info| {
    let (_, _, [dispatcher, call, ctx, name, id, args, args_error, authority, identity, signal], argc) = cb_args::<10>(js, info)?;
    if js.ty(dispatcher)? != Ty::Object || !js.has_type_tag(dispatcher, &hooks::DISPATCHER_TAG)? {
        return Err(type_error("not a tool dispatcher", "ERR_PRISM_INVALID_OPTION"));
    }
    let bound = unsafe { (*js.unwrap::<Rc<Bound>>(dispatcher)?).clone() };
    let pre = (argc == 10).then_some(PreRead { name, id, args, args_error, authority, identity, signal });
    start(js, dispatcher, call, ctx, Some(bound), pre)
});

/// The bound options behind a dispatcher object (for the progress sink).
pub fn bound_of(js: &Js, v: V) -> R<Option<Rc<Bound>>> {
    if js.ty(v)? != Ty::Object || !js.has_type_tag(v, &hooks::DISPATCHER_TAG)? {
        return Ok(None);
    }
    Ok(Some(unsafe { (*js.unwrap::<Rc<Bound>>(v)?).clone() }))
}


/// The fields every `ToolCallRecord` carries.
pub struct RowFields<'a> {
    pub session_id: &'a str,
    pub run_id: &'a str,
    pub tool_call_id: &'a str,
    pub name: &'a str,
    /// Already redacted.
    pub args: V,
    pub started_at: &'a str,
    pub redacted: bool,
    pub ownership: Option<V>,
}

/// `{ id, sessionId, runId, toolCallId, name, arguments, status, startedAt, redacted, ...ownership }`.
pub fn build_row(js: &Js, f: &RowFields, status: &str) -> R<V> {
    let r = js.object()?;
    js.set(r, c"id", js.string(&row_id())?)?;
    js.set(r, c"sessionId", js.string(f.session_id)?)?;
    js.set(r, c"runId", js.string(f.run_id)?)?;
    js.set(r, c"toolCallId", js.string(f.tool_call_id)?)?;
    js.set(r, c"name", js.string(f.name)?)?;
    js.set(r, c"arguments", if js.ty(f.args)? == Ty::Object { f.args } else { js.object()? })?;
    js.set(r, c"status", js.string(status)?)?;
    js.set(r, c"startedAt", js.string(f.started_at)?)?;
    js.set(r, c"redacted", js.boolean(f.redacted))?;
    if let Some(o) = f.ownership {
        if js.ty(o)? == Ty::Object {
            for key in [c"tenantId", c"accountId", c"userId"] {
                let v = js.get(o, key)?;
                if !js.is_nullish(v)? {
                    js.set(r, key, v)?;
                }
            }
        }
    }
    Ok(r)
}
