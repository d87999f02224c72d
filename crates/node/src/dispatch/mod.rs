//! The binding of the dispatch machine (`prism_tools_core::dispatch::machine`): `lib/dispatch-loop.js` runs the
//! command loop, calling the host's hooks, tool and stores itself, and crosses here only to hand an
//! answer over and learn the next command. Commands and answers cross as small integers; the rare
//! details (an error's text, a claim's token, a guardrail record) are read when a command has them.
//! No JS value is held here.

mod codes;

use std::rc::Rc;

use napi::bindgen_prelude::{External, JsObjectValue, Object, Unknown};
use napi::JsValue;
use napi::{Env, Result, ValueType};
use napi_derive::napi;

use codes::*;
use prism_tools_core::dispatch::machine::{
    Answer, ArgumentsShape, Begun, CallFacts, Cause, Command, Dispatch, ErrorSpec, GuardAction,
    GuardDecision, GuardFacts, RecordStatus, Rejection, Setup, Terminal, ToolReturn, Validation,
};
use prism_tools_core::dispatch::slab::Slab;
use prism_tools_core::error::{Code, Kind, PrismError};
use prism_tools_core::filter::{Filter, FilterRule};
use prism_tools_core::redact::Secrets;

use crate::effects::dispatch::EffectSnapshot;
use crate::throw::Throw;

/// What `createToolDispatcher` (or one `dispatchToolCall`) compiles once: the filter and secrets.
pub struct Plan {
    filter: Option<Rc<Filter>>,
    secrets: Rc<Secrets>,
}

thread_local! {
    /// The dispatches in flight, by generational id: a number crosses to JS instead of an
    /// External, whose finaliser cost more than the whole machine (bench/RESULTS.md), and a stale
    /// number finds nothing.
    static SESSIONS: std::cell::RefCell<Slab<Session>> = std::cell::RefCell::new(Slab::default());
}

fn with_session<T>(id: u32, f: impl FnOnce(&mut Session) -> T) -> Option<T> {
    SESSIONS.with(|s| s.borrow_mut().get_mut(id).map(f))
}

/// The claim named by dispatch `id`'s transition command in progress (`markDispatched`,
/// `complete`, `markUnknown`, a release): its token and expected version, read where the machine
/// keeps them so the built-in stores take them without a round trip through JS.
pub(crate) fn transition_claim(id: u32) -> Option<(String, f64)> {
    with_session(id, |s| match &s.last {
        Command::MarkDispatched(r)
        | Command::EffectComplete(r)
        | Command::MarkUnknown(r)
        | Command::ReleaseClaim(r)
        | Command::ReleaseRetryable(r) => Some((r.token.clone(), r.version)),
        _ => None,
    })
    .flatten()
}

/// Dispatch `id`'s tool name as its machine holds it (the call's, after any rewrite by middleware).
pub(crate) fn tool_name(id: u32) -> Option<String> {
    with_session(id, |s| s.machine.name().to_owned())
}

/// Whether dispatch `id`'s command in progress is `markDispatched` (on the claim it just took).
pub(crate) fn marking_dispatched(id: u32) -> bool {
    with_session(id, |s| matches!(s.last, Command::MarkDispatched(_))).unwrap_or(false)
}

/// The effect snapshot of dispatch `id` (`crate::effects::dispatch`), for `f` to read, fill or
/// drop; `None` when no such dispatch is in flight. `f` must run no JS: the dispatches are
/// borrowed while it runs.
pub(crate) fn with_effect<T>(
    id: u32,
    f: impl FnOnce(&mut Option<Box<EffectSnapshot>>) -> T,
) -> Option<T> {
    with_session(id, |s| f(&mut s.effect))
}

/// Hands dispatch `id`'s machine an answer found by the binding itself (a built-in effect store's
/// claim or transition): the next command's code, as `dispatchStep` returns it.
pub(crate) fn answer(id: u32, answer: Answer) -> u32 {
    step(id, answer, false)
}

/// One dispatch, the last command it gave and, on the effect path, what its identity check read
/// and its key step derived (dropped with the dispatch, or sooner once its claim is settled).
pub struct Session {
    machine: Dispatch,
    last: Command,
    effect: Option<Box<EffectSnapshot>>,
}

fn invalid_filter(message: String) -> PrismError {
    PrismError::new(Kind::TypeError, Code::InvalidFilter, message)
}

fn elements<'e>(v: Unknown<'e>) -> Option<Vec<Unknown<'e>>> {
    let o = v.coerce_to_object().ok()?;
    let n = o.get_array_length().ok()?;
    (0..n).map(|i| o.get_element::<Unknown>(i).ok()).collect()
}

fn names(v: Option<Unknown<'_>>, what: &str) -> std::result::Result<Vec<String>, PrismError> {
    let Some(v) = v else { return Ok(Vec::new()) };
    match v.get_type() {
        Ok(ValueType::Undefined | ValueType::Null) => return Ok(Vec::new()),
        _ if v.is_array().unwrap_or(false) => {}
        _ => {
            return Err(invalid_filter(format!(
                "{what} must be an array of tool names"
            )))
        }
    }
    let list = elements(v)
        .ok_or_else(|| invalid_filter(format!("{what} must be an array of tool names")))?;
    list.into_iter()
        .map(|item| match item.get_type() {
            Ok(ValueType::String) => item
                .coerce_to_string()
                .and_then(|s| s.into_utf8())
                .and_then(|s| s.into_owned())
                .map_err(|_| invalid_filter(format!("{what} must contain only strings"))),
            _ => Err(invalid_filter(format!("{what} must contain only strings"))),
        })
        .collect()
}

fn rule(v: Unknown<'_>) -> std::result::Result<FilterRule, PrismError> {
    if v.get_type().ok() != Some(ValueType::Object) || v.is_array().unwrap_or(false) {
        return Err(invalid_filter(
            "A tool filter must be an object { allow?, deny? }".into(),
        ));
    }
    let o = v
        .coerce_to_object()
        .map_err(|_| PrismError::internal("filter"))?;
    let allow = names(
        o.get_named_property::<Unknown>("allow").ok(),
        "filter.allow",
    )?;
    let deny = names(o.get_named_property::<Unknown>("deny").ok(), "filter.deny")?;
    Ok(FilterRule::new(allow, deny))
}

fn read_filter(v: Unknown<'_>) -> std::result::Result<Option<Filter>, PrismError> {
    match v.get_type() {
        Ok(ValueType::Undefined | ValueType::Null) => Ok(None),
        _ if v.is_array().unwrap_or(false) => {
            let items = elements(v).ok_or_else(|| PrismError::internal("filter"))?;
            Ok(Some(Filter {
                rules: items
                    .into_iter()
                    .map(rule)
                    .collect::<std::result::Result<_, _>>()?,
            }))
        }
        _ => Ok(Some(Filter {
            rules: vec![rule(v)?],
        })),
    }
}

/// `dispatchPlan(filter, secrets)`: the filter compiled and the secrets' matcher built, once.
#[napi(js_name = "dispatchPlan")]
pub fn dispatch_plan(
    env: Env,
    filter: Unknown<'_>,
    secrets: Option<Vec<String>>,
) -> Result<External<Plan>> {
    let filter = match read_filter(filter) {
        Ok(f) => f.map(Rc::new),
        Err(e) => return e.throw(&env),
    };
    let secrets = cached_secrets(secrets.unwrap_or_default());
    Ok(External::new(Plan { filter, secrets }))
}

/// `dispatchBegin(plan, flags, inputGuardrails, outputGuardrails, concurrency, name, call, found?)`:
/// a machine for one call, already at its first command; `call` packs the call's facts.
#[allow(clippy::too_many_arguments)]
#[napi(js_name = "dispatchBegin")]
pub fn dispatch_begin(
    env: &Env,
    plan: &External<Plan>,
    flags: u32,
    input_guardrails: u32,
    output_guardrails: u32,
    concurrency: u32,
    name: Option<String>,
    call: u32,
    found: Option<u32>,
) -> Result<f64> {
    let setup = Setup {
        middleware: flags & F_MIDDLEWARE != 0,
        input_guardrails,
        output_guardrails,
        guardrail_concurrency: concurrency,
        identity: flags & F_IDENTITY != 0,
        trust: flags & F_TRUST != 0,
        permission: flags & F_PERMISSION != 0,
        validate: flags & F_VALIDATE != 0,
        effect_store: flags & F_EFFECT_STORE != 0,
        before_execute: flags & F_BEFORE_EXECUTE != 0,
        emit: flags & F_EMIT != 0,
        ledger: flags & F_LEDGER != 0,
        signal: flags & F_SIGNAL != 0,
        redaction: flags & F_REDACTION != 0 || !plan.secrets.is_empty(),
        filter: plan.filter.clone(),
        secrets: plan.secrets.clone(),
    };
    let facts = call_facts(name, call);
    // The session is made in its slot and started there: the machine is not moved after it is made
    // (copying it in and out was a tenth of a bare dispatch).
    let Some((id, code)) = SESSIONS.with(|s| {
        let mut slab = s.borrow_mut();
        let id = slab.insert(Session {
            machine: Dispatch::new(setup, facts),
            last: Command::Resolve,
            effect: None,
        })?;
        let session = slab.get_mut(id)?;
        let machine = &mut session.machine;
        let mut last = machine.start();
        // The host looked the tool up before beginning (`found`: 1 none, 2 a tool, 3 a tool with
        // no `effect` property), which it does only when nothing runs before the lookup and the
        // registry's lookup runs no host code: its answer is taken here, without a crossing of its
        // own. A tool with no `effect` also answers the declaration, when that is the very next
        // command (no hook between).
        if let (Some(found @ 1..=3), Command::Lookup) = (found, &last) {
            last = machine.step(Answer::Found(found >= 2));
            if found == 3 {
                last = no_effect(machine, last);
            }
        }
        let code = code_of(machine, &last);
        session.last = last;
        Some((id, code))
    }) else {
        return PrismError::new(
            Kind::RangeError,
            Code::Internal,
            "dispatchToolCall: more than 1048576 dispatches in flight",
        )
        .throw(env);
    };
    let code = forget_if_over(id, code);
    Ok(id as f64 * ID_STRIDE as f64 + code as f64)
}

/// `dispatchEnd(id)`: forgets a dispatch that ended other than by resolving or rethrowing (a
/// guardrail rejection, or the loop itself failing).
#[napi(js_name = "dispatchEnd")]
pub fn dispatch_end(id: u32) {
    SESSIONS.with(|s| s.borrow_mut().discard(id));
}

/// `dispatchLive()`: how many dispatches the binding holds (the tests check none is leaked).
#[napi(js_name = "dispatchLive")]
pub fn dispatch_live() -> u32 {
    SESSIONS.with(|s| s.borrow().len() as u32)
}

fn call_facts(name: Option<String>, call: u32) -> CallFacts {
    CallFacts {
        name_is_string: call & C_NAME_NOT_STRING == 0 && name.is_some(),
        name,
        provider_hosted: call & C_PROVIDER_HOSTED != 0,
        arguments: match call & C_ARGS_MASK {
            C_ARGS_PROVIDER_ERROR => ArgumentsShape::ProviderError,
            C_ARGS_NOT_OBJECT => ArgumentsShape::NotObject,
            _ => ArgumentsShape::Object,
        },
    }
}

/// The host found that the tool has no `effect` property: when the machine's next command is the
/// effect declaration, that is its answer too (one crossing fewer), else `next` stands.
fn no_effect(machine: &mut Dispatch, next: Command) -> Command {
    if !matches!(next, Command::EffectDeclaration) {
        return next;
    }
    machine.step(Answer::EffectPlan {
        plan: None,
        idempotency_unsupported: false,
    })
}

/// `dispatchStep(id, answer, n)`: the common answers, with at most one number. `A_VALID` with `n`
/// 1 says the tool has no `effect` property ([`no_effect`]).
#[napi(js_name = "dispatchStep")]
pub fn dispatch_step(id: u32, answer: u32, n: Option<f64>) -> u32 {
    dispatch_answer(id, answer, n, None, None)
}

fn step(id: u32, answer: Answer, without_effect: bool) -> u32 {
    let code = with_session(id, |s| {
        let mut next = s.machine.step(answer);
        if without_effect {
            next = no_effect(&mut s.machine, next);
        }
        let code = code_of(&s.machine, &next);
        s.last = next;
        code
    })
    .unwrap_or(K_RESOLVE);
    forget_if_over(id, code)
}

/// The two commands that end a dispatch without reading a detail (`K_RESOLVE`, `K_REJECT_THROWN`)
/// forget it here, saving the loop a `dispatchEnd` crossing; every other exit calls `dispatchEnd`.
fn forget_if_over(id: u32, code: u32) -> u32 {
    if code == K_RESOLVE || code == K_REJECT_THROWN {
        SESSIONS.with(|s| s.borrow_mut().discard(id));
    }
    code
}

/// `dispatchAnswer(id, answer, n, m, text)`: an answer with up to two numbers and a text; returns
/// the next command's code. What each operand carries is the answer's (see the `A_*` codes).
#[napi(js_name = "dispatchAnswer")]
pub fn dispatch_answer(
    id: u32,
    answer: u32,
    n: Option<f64>,
    m: Option<f64>,
    text: Option<String>,
) -> u32 {
    let without_effect = answer == A_VALID && n == Some(1.0);
    let flag = |x: Option<f64>| x.is_some_and(|v| v != 0.0);
    let answer = match answer {
        A_DONE => Answer::Done,
        A_THREW => Answer::Threw { code: text },
        A_ABORTED => Answer::Aborted,
        A_SIGNAL_ABORTED => Answer::SignalAborted,
        A_CALL => Answer::Call(call_facts(text, n.unwrap_or(0.0) as u32)),
        A_FOUND => Answer::Found(flag(n)),
        A_DECISION => Answer::Decision {
            granted: flag(n),
            reason: text,
        },
        A_MISSING => Answer::Missing,
        A_VALID => Answer::Validated(Validation::Valid),
        A_INVALID_MESSAGE => Answer::Validated(Validation::Message(text.unwrap_or_default())),
        A_INVALID_INFO => Answer::Validated(Validation::Info),
        A_INVALID_OTHER => Answer::Validated(Validation::Other(type_name(n))),
        // No declaration; a declared one is answered by `dispatchDeclared` or `dispatchDeclaration`.
        A_DECLARATION => Answer::effect_plan(None),
        A_ACQUIRED => match (text, n) {
            (Some(token), Some(version)) => Answer::Begun(Begun::Acquired { token, version }),
            _ => Answer::Begun(Begun::Malformed),
        },
        A_EXISTING => Answer::Begun(Begun::Existing {
            status: status(n),
            result_is_object: flag(m),
        }),
        A_MALFORMED => Answer::Begun(Begun::Malformed),
        A_RECORD => Answer::Record {
            version: n.filter(|v| !v.is_nan()),
        },
        A_STORED => Answer::Stored {
            status: status(n),
            token: text,
            version: m.filter(|v| !v.is_nan()),
        },
        A_NO_EXECUTE => Answer::NoExecute,
        A_TIMED_OUT => Answer::TimedOut(n.map_or(0, |x| x as u32)),
        A_INVALID_TIMEOUT => Answer::InvalidTimeout,
        A_RETURNED => match n.map(|x| x as u32) {
            Some(0) => Answer::Returned(ToolReturn::Result { has_error: false }),
            Some(1) => Answer::Returned(ToolReturn::Result { has_error: true }),
            other => Answer::Returned(ToolReturn::NotResult(type_name(
                other.map(|x| x.saturating_sub(2) as f64),
            ))),
        },
        A_OUTPUT_MISMATCH => Answer::OutputMismatch(text.unwrap_or_default()),
        A_GUARD_STARTED => Answer::GuardStarted,
        _ => Answer::Threw { code: None },
    };
    step(id, answer, without_effect)
}

/// A guardrail's answer to `K_AWAIT_GUARDRAIL`: the guardrail's `name`, `pack` and `rule` as read
/// (each only when a string), and for `A_GUARD` its decision.
#[napi(object)]
pub struct GuardrailAnswer {
    pub name: Option<String>,
    pub pack: Option<String>,
    pub rule: Option<String>,
    /// `G_ALLOW`, `G_BLOCK`, `G_TRIPWIRE` or `G_INTERRUPT` (`A_GUARD` only).
    pub action: Option<u32>,
    pub reason: Option<String>,
    /// Whether the decision carried metadata (`A_GUARD` only).
    pub metadata: Option<bool>,
}

/// `dispatchGuardAnswer(id, answer, guardrail)`: a guardrail's answer (`A_GUARD`, `A_GUARD_INVALID`,
/// `A_GUARD_MALFORMED` or `A_GUARD_FAILED`); returns the next command's code.
#[napi(js_name = "dispatchGuardAnswer")]
pub fn dispatch_guard_answer(id: u32, answer: u32, guardrail: GuardrailAnswer) -> u32 {
    let facts = GuardFacts {
        name: guardrail.name,
        pack: guardrail.pack,
        rule: guardrail.rule,
    };
    let answer = match answer {
        A_GUARD_INVALID => Answer::GuardInvalid(facts),
        A_GUARD_MALFORMED => Answer::GuardMalformed(facts),
        A_GUARD_FAILED => Answer::GuardFailed(facts),
        A_GUARD => {
            let action = match guardrail.action {
                Some(G_ALLOW) => GuardAction::Allow,
                Some(G_BLOCK) => GuardAction::Block,
                Some(G_INTERRUPT) => GuardAction::Interrupt,
                _ => GuardAction::Tripwire,
            };
            let decision = GuardDecision {
                action,
                reason: guardrail.reason,
                metadata: guardrail.metadata.unwrap_or(false),
            };
            Answer::Guard(decision, facts)
        }
        _ => Answer::Threw { code: None },
    };
    step(id, answer, false)
}

fn status(n: Option<f64>) -> RecordStatus {
    match n.map(|x| x as u32) {
        Some(S_CLAIMED) => RecordStatus::Claimed,
        Some(S_DISPATCHED) => RecordStatus::Dispatched,
        Some(S_COMPLETED) => RecordStatus::Completed,
        Some(S_UNKNOWN) => RecordStatus::Unknown,
        Some(S_FAILED_RETRYABLE) => RecordStatus::FailedRetryable,
        _ => RecordStatus::Other,
    }
}

/// Type names as messages use them, by the `T_*` code `lib/dispatch-host.js` gives.
fn type_name(n: Option<f64>) -> &'static str {
    match n.unwrap_or(0.0) as u32 {
        T_UNDEFINED => "undefined",
        T_NULL => "null",
        T_BOOLEAN => "a boolean",
        T_NUMBER => "a number",
        T_STRING => "a string",
        T_SYMBOL => "a symbol",
        T_BIGINT => "a bigint",
        T_FUNCTION => "a function",
        T_ARRAY => "an array",
        _ => "an object",
    }
}

/// A command's code, with `K_GATED` added when the caller's signal gates it.
fn code_of(machine: &Dispatch, c: &Command) -> u32 {
    let code = command_code(c);
    if machine.signal_gated() {
        code + K_GATED
    } else {
        code
    }
}

fn command_code(c: &Command) -> u32 {
    match c {
        Command::CallMiddleware => K_CALL_MIDDLEWARE,
        Command::StartGuardrail { .. } => K_START_GUARDRAIL,
        Command::AwaitGuardrail { .. } => K_AWAIT_GUARDRAIL,
        Command::GuardrailRecord { .. } => K_GUARDRAIL_RECORD,
        Command::AbortGuardrails => K_ABORT_GUARDRAILS,
        Command::Lookup => K_LOOKUP,
        Command::CheckIdentity => K_CHECK_IDENTITY,
        Command::CheckTrust => K_CHECK_TRUST,
        Command::CheckPermission => K_CHECK_PERMISSION,
        Command::Validate => K_VALIDATE,
        Command::EffectDeclaration => K_EFFECT_DECLARATION,
        Command::EffectKey => K_EFFECT_KEY,
        Command::EffectBegin => K_EFFECT_BEGIN,
        Command::Replay => K_REPLAY,
        Command::BeforeExecute => K_BEFORE_EXECUTE,
        Command::EmitStarted => K_EMIT_STARTED,
        Command::AppendStarted => K_APPEND_STARTED,
        Command::MarkDispatched(_) => K_MARK_DISPATCHED,
        Command::Execute => K_EXECUTE,
        Command::ResultMiddleware => K_RESULT_MIDDLEWARE,
        Command::RedactResult => K_REDACT_RESULT,
        Command::EffectComplete(_) => K_EFFECT_COMPLETE,
        Command::SetError(_) => K_SET_ERROR,
        Command::MarkUnknown(_) => K_MARK_UNKNOWN,
        Command::EffectGet => K_EFFECT_GET,
        Command::ReleaseClaim(_) => K_RELEASE_CLAIM,
        Command::ReleaseRetryable(_) => K_RELEASE_RETRYABLE,
        Command::EmitTerminal(t) => K_EMIT_FINISHED + terminal_offset(*t),
        Command::AppendTerminal(t) => K_APPEND_FINISHED + terminal_offset(*t),
        Command::Resolve => K_RESOLVE,
        Command::Reject(Rejection::Thrown) => K_REJECT_THROWN,
        Command::Reject(Rejection::Guardrail { .. }) => K_REJECT_GUARDRAIL,
    }
}

fn terminal_offset(t: Terminal) -> u32 {
    match t {
        Terminal::Finished => 0,
        Terminal::Error => 1,
        Terminal::Blocked(_) => 2,
    }
}

/// The details of the last command, for the commands that carry any:
/// `SetError` → `{ kind, name?, message?, code?, cause?, causeThrown? }`;
/// a claim transition → `{ claimToken, expectedVersion }`; `GuardrailRecord` →
/// `{ guardrail, stage, action, reason?, metadata }`; a guardrail start or wait → `{ index, stage }`;
/// a blocked terminal → `{ reason }`; a guardrail rejection → `{ message }`.
#[napi(
    js_name = "dispatchDetail",
    ts_return_type = "{ kind?: number; name?: string; message?: string; code?: string; cause?: string; causeThrown?: boolean; claimToken?: string; expectedVersion?: number; guardrail?: string; stage?: string; action?: string; reason?: string; metadata?: boolean; index?: number }"
)]
pub fn dispatch_detail(env: &Env, id: u32) -> Result<Object<'_>> {
    let mut o = Object::new(env)?;
    let last = with_session(id, |s| s.last.clone()).unwrap_or(Command::Resolve);
    match &last {
        Command::SetError(spec) => match spec {
            ErrorSpec::Plain(m) => {
                o.set_named_property("kind", E_PLAIN)?;
                o.set_named_property("message", m.as_str())?;
            }
            ErrorSpec::Named {
                name,
                message,
                code,
                cause,
            } => {
                o.set_named_property("kind", E_NAMED)?;
                o.set_named_property("name", *name)?;
                o.set_named_property("message", message.as_str())?;
                o.set_named_property("code", *code)?;
                match cause {
                    Some(Cause::Text(t)) => o.set_named_property("cause", t.as_str())?,
                    Some(Cause::ThrownMessage) => o.set_named_property("causeThrown", true)?,
                    None => {}
                }
            }
            ErrorSpec::Thrown => o.set_named_property("kind", E_THROWN)?,
            ErrorSpec::ProviderArguments => o.set_named_property("kind", E_PROVIDER_ARGUMENTS)?,
            ErrorSpec::ValidatorInfo => o.set_named_property("kind", E_VALIDATOR_INFO)?,
        },
        Command::MarkDispatched(r)
        | Command::EffectComplete(r)
        | Command::MarkUnknown(r)
        | Command::ReleaseClaim(r)
        | Command::ReleaseRetryable(r) => {
            o.set_named_property("claimToken", r.token.as_str())?;
            o.set_named_property("expectedVersion", r.version)?;
        }
        Command::GuardrailRecord {
            stage,
            guardrail,
            action,
            reason,
            metadata,
        } => {
            o.set_named_property("guardrail", guardrail.as_str())?;
            o.set_named_property("stage", stage.as_str())?;
            o.set_named_property("action", *action)?;
            if let Some(r) = reason {
                o.set_named_property("reason", r.as_str())?;
            }
            o.set_named_property("metadata", *metadata)?;
        }
        Command::StartGuardrail { stage, index } | Command::AwaitGuardrail { stage, index } => {
            o.set_named_property("index", *index)?;
            o.set_named_property("stage", stage.as_str())?;
        }
        Command::EmitTerminal(Terminal::Blocked(r))
        | Command::AppendTerminal(Terminal::Blocked(r)) => {
            o.set_named_property("reason", r.as_str())?;
        }
        Command::Reject(Rejection::Guardrail { message, code }) => {
            o.set_named_property("message", message.as_str())?;
            o.set_named_property("code", *code)?;
        }
        _ => {}
    }
    Ok(o)
}

/// The plan's secrets, for `errorToErrorInfo` and the redactor on the JS side.
#[napi(js_name = "dispatchSecrets")]
pub fn dispatch_secrets(plan: &External<Plan>) -> Vec<String> {
    plan.secrets.list().to_vec()
}

/// `dispatchRowBlock(n)`: reserves `n` (1–65 536) row counters and returns the first, with this
/// process's id, for `lib/dispatch-records.js` to format ledger row ids (see `dispatch::clock`).
#[napi(js_name = "dispatchRowBlock")]
pub fn dispatch_row_block(n: u32) -> Vec<f64> {
    let n = u64::from(n.clamp(1, 65_536));
    vec![
        prism_tools_core::dispatch::clock::reserve_row_counters(n) as f64,
        f64::from(std::process::id()),
    ]
}

/// `dispatchCodes()`: the table of flags, answers and commands `lib/dispatch-loop.js` speaks. Its
/// type, `lib/dispatch-codes.d.ts`, is written from this table by `npm run build`.
#[napi(
    js_name = "dispatchCodes",
    ts_return_type = "Readonly<Record<string, number>>"
)]
pub fn dispatch_codes(env: &Env) -> Result<Object<'_>> {
    let mut o = Object::new(env)?;
    for (name, code) in codes::ALL {
        o.set_named_property(name, *code)?;
    }
    Ok(o)
}

thread_local! {
    /// Compiled secret sets keyed by their contents: a dispatch that passes the same `secrets`
    /// array every call builds its automaton once.
    static SECRET_CACHE: std::cell::RefCell<lru::LruCache<Vec<String>, Rc<Secrets>>> =
        std::cell::RefCell::new(lru::LruCache::new(std::num::NonZeroUsize::new(32).unwrap_or(std::num::NonZeroUsize::MIN)));
    static NO_SECRETS: Rc<Secrets> = Rc::new(Secrets::default());
}

fn cached_secrets(list: Vec<String>) -> Rc<Secrets> {
    if list.is_empty() {
        return NO_SECRETS.with(|e| e.clone());
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
