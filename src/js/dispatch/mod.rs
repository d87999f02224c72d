//! The dispatch state machine (SPEC section 3), run against host objects on the JS thread.
//!
//! `dispatchStart(options)` runs the steps synchronously as far as host callbacks answer with plain
//! values. When one answers with a thenable, the machine parks itself in a frame array
//! `[state, thenable, signal, ...values]` and returns it; the JS driver (`lib/driver.js`) awaits the
//! thenable and calls `dispatchResume(frame, value, mode)`. A finished call returns the result
//! object; a call that must reject (tripwire, a middleware under `errorPolicy: "throw"`) throws.

mod effects;
mod outcome;
mod steps;

pub use outcome::{build_row, RowFields};

use std::rc::Rc;
use std::time::Instant;

use super::guardrails::{GuardRun, Stage};
use super::hooks::{self, Bound, Compiled, Hook, Source, HOOKS};
use super::raw::{cb_args, error, type_error, Fail, Js, Ty, R, V};
use super::realm::Realm;
use super::registry::native_registry;
use crate::dispatch::clock::{iso8601, now_millis};
use crate::dispatch::reasons::BlockedReason;
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

    // ----- the call and its context -----------------------------------------------------------

    /// Reads the call's name and arguments (after `tool_call` middleware); the id stays a JS value
    /// until something needs it as text.
    fn read_call(&mut self, js: &Js, vals: &mut Vals) -> R<()> {
        let call = vals.0[S_CALL];
        if js.ty(call)? != Ty::Object {
            return Err(type_error(
                "dispatchToolCall: call must be a tool_call object",
                "ERR_PRISM_INVALID_CALL",
            ));
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
                Step::InputGuardrails => {
                    self.step_guardrails(js, realm, vals, &mut input, Stage::Input)?
                }
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
                Step::ResultMiddleware => {
                    self.step_middleware(js, vals, &mut input, "tool_result")?
                }
                Step::OutputGuardrails => {
                    self.step_guardrails(js, realm, vals, &mut input, Stage::Output)?
                }
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
}

// ----- entry points -------------------------------------------------------------------------------

/// A dispatch whose options are exactly `{ call, registry, context }`: no hook to read.
fn start_bare(js: &Js, options: V, call: V, ctx: V, registry: V, pre: Option<PreRead>) -> R<V> {
    let mut hv = [js.undefined(); 13];
    hv[Hook::Registry as usize] = registry;
    start_with(
        js,
        options,
        call,
        ctx,
        registry,
        Source::Options,
        hooks::bare_compiled(),
        hv,
        pre,
    )
}

fn start(
    js: &Js,
    options: V,
    mut call: V,
    mut ctx: V,
    bound: Option<Rc<Bound>>,
    pre: Option<PreRead>,
) -> R<V> {
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
        return Err(type_error(
            "dispatchToolCall: options.registry is required",
            "ERR_PRISM_INVALID_OPTION",
        ));
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
        _ => {
            return Err(type_error(
                "dispatchToolCall: context must be a ToolExecutionContext object",
                "ERR_PRISM_INVALID_OPTION",
            ))
        }
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
        Flow::Continue => Err(error(
            "dispatch stopped without an outcome",
            "ERR_PRISM_INTERNAL",
        )),
        Flow::Park(thenable) => {
            let after = m.step.after_execute() || m.terminal.is_some();
            let signal = if m.signal_read {
                vals.0[S_SIGNAL]
            } else {
                js.get_opt(vals.0[S_CTX], c"signal")?
            };
            // The driver races the wait against the caller's abort signal only while a host
            // callback, not an observer, is pending.
            let race = if m.terminal.is_none() && js.ty(signal)? == Ty::Object {
                signal
            } else {
                js.undefined()
            };
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
        return Err(type_error(
            "dispatchResume: not a dispatch frame",
            "ERR_PRISM_INTERNAL",
        ));
    }
    let ext = js.element(frame, 0)?;
    if js.ty(ext)? != Ty::External {
        return Err(type_error(
            "dispatchResume: not a dispatch frame",
            "ERR_PRISM_INTERNAL",
        ));
    }
    let slot = unsafe { js.external_ptr::<Option<Machine>>(ext)? };
    let mut m = unsafe { (*slot).take() }
        .ok_or_else(|| error("dispatch frame resumed twice", "ERR_PRISM_INTERNAL"))?;
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
    let (
        _,
        _,
        [options, call, ctx, name, id, args, args_error, authority, identity, signal, bare_registry],
        argc,
    ) = cb_args::<11>(js, info)?;
    if js.ty(options)? != Ty::Object {
        return Err(type_error(
            "dispatchToolCall: options must be an object",
            "ERR_PRISM_INVALID_OPTION",
        ));
    }
    let pre = (argc >= 10).then_some(PreRead {
        name,
        id,
        args,
        args_error,
        authority,
        identity,
        signal,
    });
    // `{ call, registry, context }` and nothing else: no hook to look for.
    if argc == 11 && js.ty(bare_registry)? == Ty::Object {
        return start_bare(js, options, call, ctx, bare_registry, pre);
    }
    start(js, options, call, ctx, None, pre)
});

raw_fn!(dispatch_resume, |js, info| {
    let (_, _, [frame, value, mode], _) = cb_args::<3>(js, info)?;
    let mode = if js.ty(mode)? == Ty::Number {
        js.f64(mode)? as u32
    } else {
        0
    };
    resume(js, frame, value, mode)
});

// `createToolDispatcher(options)`: the native half. Returns the bound dispatcher object; the
// package entry adds `dispatch(call, context)`.
raw_fn!(create_dispatcher, |js, info| {
    let (_, _, [options], _) = cb_args::<1>(js, info)?;
    if js.ty(options)? != Ty::Object {
        return Err(type_error(
            "createToolDispatcher: options must be an object",
            "ERR_PRISM_INVALID_OPTION",
        ));
    }
    let bound = hooks::bind(js, options)?;
    if !bound.compiled.present.has(Hook::Registry) {
        return Err(type_error(
            "createToolDispatcher: options.registry is required",
            "ERR_PRISM_INVALID_OPTION",
        ));
    }
    let obj = js.object()?;
    js.wrap(obj, Rc::new(bound))?;
    js.type_tag(obj, &hooks::DISPATCHER_TAG)?;
    Ok(obj)
});

// `dispatcherStart(dispatcher, call, context)`.
raw_fn!(dispatcher_start, |js, info| {
    let (
        _,
        _,
        [dispatcher, call, ctx, name, id, args, args_error, authority, identity, signal],
        argc,
    ) = cb_args::<10>(js, info)?;
    if js.ty(dispatcher)? != Ty::Object || !js.has_type_tag(dispatcher, &hooks::DISPATCHER_TAG)? {
        return Err(type_error(
            "not a tool dispatcher",
            "ERR_PRISM_INVALID_OPTION",
        ));
    }
    let bound = unsafe { (*js.unwrap::<Rc<Bound>>(dispatcher)?).clone() };
    let pre = (argc == 10).then_some(PreRead {
        name,
        id,
        args,
        args_error,
        authority,
        identity,
        signal,
    });
    start(js, dispatcher, call, ctx, Some(bound), pre)
});

/// The bound options behind a dispatcher object (for the progress sink).
pub fn bound_of(js: &Js, v: V) -> R<Option<Rc<Bound>>> {
    if js.ty(v)? != Ty::Object || !js.has_type_tag(v, &hooks::DISPATCHER_TAG)? {
        return Ok(None);
    }
    Ok(Some(unsafe { (*js.unwrap::<Rc<Bound>>(v)?).clone() }))
}
