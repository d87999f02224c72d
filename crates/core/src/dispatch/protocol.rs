//! The machine's vocabulary: what the binding reads once (`Setup`, `CallFacts`), the answers it
//! hands in (`Answer`) and the commands it gets back (`Command`), with the errors, causes and
//! terminal kinds they name. Plain data: the machine (`machine.rs`) gives it meaning.

use std::rc::Rc;

use super::guard::Stage;
use super::reasons::BlockedReason;
use crate::effects::declaration::{Declaration, EffectPlan, Idempotency};
use crate::filter::Filter;
use crate::redact::Secrets;

/// What the options set, read once by the binding.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub middleware: bool,
    /// How many `tool_input` / `tool_output` guardrails there are.
    pub input_guardrails: u32,
    pub output_guardrails: u32,
    /// `guardrails.maxConcurrency` (1 to 16).
    pub guardrail_concurrency: u32,
    /// A verified identity (the option or the context's) is present.
    pub identity: bool,
    pub trust: bool,
    pub permission: bool,
    pub validate: bool,
    pub effect_store: bool,
    pub before_execute: bool,
    pub emit: bool,
    pub ledger: bool,
    /// The caller's context carries an abort signal.
    pub signal: bool,
    /// Secrets or a redactor are set: what leaves the call is redacted.
    pub redaction: bool,
    pub filter: Option<Rc<Filter>>,
    pub secrets: Rc<Secrets>,
}

/// The call's fields the machine decides on (read by the binding from the call, again after
/// `tool_call` middleware rewrote it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallFacts {
    /// `name` as text (a name that is not a string as `String(name)`).
    pub name: Option<String>,
    /// `name` is a string: only then is it looked up.
    pub name_is_string: bool,
    pub provider_hosted: bool,
    pub arguments: ArgumentsShape,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ArgumentsShape {
    /// A JSON object (any realm's plain object).
    #[default]
    Object,
    /// Anything else: an array, a primitive, a class instance.
    NotObject,
    /// The provider reported `argumentsError`.
    ProviderError,
}

/// What a validator answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Validation {
    Valid,
    Message(String),
    /// An `ErrorInfo`-like object with a string `message`: reported as is, minus secrets.
    Info,
    /// Anything else, by its type name ("a number", "an array", …).
    Other(&'static str),
}

/// What a tool's `execute` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolReturn {
    /// A result object; `has_error` when its `error` is set.
    Result { has_error: bool },
    /// Anything but a non-array object, by its type name.
    NotResult(&'static str),
}

/// A stored effect record's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordStatus {
    Claimed,
    Dispatched,
    Completed,
    Unknown,
    /// `failed_retryable`: answered by `begin` as `existing`, every attempt of the key is used up.
    FailedRetryable,
    Other,
}

/// What `effectStore.begin` answered.
#[derive(Debug, Clone, PartialEq)]
pub enum Begun {
    Acquired {
        token: String,
        version: f64,
    },
    Existing {
        status: RecordStatus,
        result_is_object: bool,
    },
    /// Neither: the claim's outcome is unknown.
    Malformed,
}

/// One guardrail's decision.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardAction {
    Allow,
    Block,
    Tripwire,
    Interrupt,
}

#[derive(Debug, Clone, PartialEq)]
pub struct GuardDecision {
    pub action: GuardAction,
    pub reason: Option<String>,
    pub metadata: bool,
}

/// A guardrail's own fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GuardFacts {
    pub name: Option<String>,
    pub pack: Option<String>,
    pub rule: Option<String>,
}

/// An answer to the last command.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The command ran; its value is not inspected (emit, append, beforeExecute, a settle write).
    Done,
    /// The callback threw or its promise rejected; the binding keeps the thrown value.
    Threw {
        code: Option<String>,
    },
    /// The caller's signal aborted while the callback was pending.
    Aborted,
    /// A command gated by the signal (`Dispatch::signal_gated`) did not run: the caller's signal was
    /// already aborted.
    SignalAborted,
    /// `tool_call` middleware ran; the call as it now is.
    Call(CallFacts),
    /// `registry.get` answered.
    Found(bool),
    /// A policy answered `{ allowed | trusted, reason? }` (or a boolean).
    Decision {
        granted: bool,
        reason: Option<String>,
    },
    /// A policy has no `check` function.
    Missing,
    Validated(Validation),
    /// The tool's declaration: `None` when it declares no effect.
    EffectPlan {
        plan: Option<EffectPlan>,
        idempotency_unsupported: bool,
    },
    Begun(Begun),
    /// A transition answered with a record; `version` when it holds a numeric one. After
    /// `EffectComplete` the caller has already taken the record's stored result when it is an
    /// object (dispatch answers with what the store kept, as upstream's `record.result ?? result`).
    Record {
        version: Option<f64>,
    },
    /// `effectStore.get` answered (for an unconfirmed `markDispatched`).
    Stored {
        status: RecordStatus,
        token: Option<String>,
        version: Option<f64>,
    },
    /// The tool has no `execute` function.
    NoExecute,
    /// The tool did not settle within its deadline of this many milliseconds; the host aborted the
    /// tool's signal and stopped waiting.
    TimedOut(u32),
    /// The tool's `timeoutMs` is not an integer from 1 to `MAX_TOOL_TIMEOUT_MS`; it was not run.
    InvalidTimeout,
    Returned(ToolReturn),
    /// The tool returned a result whose `value` does not match its `outputSchema`: the validator's
    /// issues (`<path>: <message>; …`).
    OutputMismatch(String),
    /// A guardrail was started: its answer (a promise or a value) is held by the binding.
    GuardStarted,
    /// A guardrail is malformed (`guardrail_invalid`).
    GuardInvalid(GuardFacts),
    /// A guardrail answered something that is not a decision (`guardrail_invalid_decision`).
    GuardMalformed(GuardFacts),
    /// A guardrail threw or its promise rejected (`guardrail_failed`).
    GuardFailed(GuardFacts),
    Guard(GuardDecision, GuardFacts),
}

impl Answer {
    /// The answer to the declaration step: the tool's declaration, or `None` when it declares none.
    pub fn effect_plan(declared: Option<&Declaration>) -> Answer {
        Answer::EffectPlan {
            plan: declared.map(|d| d.plan()),
            idempotency_unsupported: declared
                .is_some_and(|d| d.idempotency == Idempotency::Unsupported),
        }
    }
}

/// How an error the machine reports is described.
#[derive(Debug, Clone, PartialEq)]
pub enum ErrorSpec {
    /// `{ message }`.
    Plain(String),
    /// `{ name, message, code, cause? }`.
    Named {
        name: &'static str,
        message: String,
        code: &'static str,
        cause: Option<Cause>,
    },
    /// `errorToErrorInfo(thrown)` of the value the last callback threw.
    Thrown,
    /// The provider's `argumentsError`, minus secrets.
    ProviderArguments,
    /// The validator's own `ErrorInfo`, minus secrets.
    ValidatorInfo,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    Text(String),
    /// The message of `errorToErrorInfo(thrown)`.
    ThrownMessage,
}

/// How the call ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    Finished,
    Error,
    Blocked(BlockedReason),
}

/// A held claim as the store knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimRef {
    pub token: String,
    pub version: f64,
}

/// The next thing the binding does.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    CallMiddleware,
    /// Start guardrail `index` of the stage, holding its answer.
    StartGuardrail {
        stage: Stage,
        index: u32,
    },
    /// Wait for guardrail `index`'s answer and report its decision.
    AwaitGuardrail {
        stage: Stage,
        index: u32,
    },
    /// Write the decision record (and its `guardrail_decision` event).
    GuardrailRecord {
        stage: Stage,
        guardrail: String,
        action: &'static str,
        reason: Option<String>,
        metadata: bool,
    },
    /// Abort the guardrails still running.
    AbortGuardrails,
    Lookup,
    CheckIdentity,
    CheckTrust,
    CheckPermission,
    Validate,
    /// Resolve the tool's effect declaration.
    EffectDeclaration,
    /// Derive the effect key (the binding hands the derived key to the tool).
    EffectKey,
    EffectBegin,
    /// Replay the completed record's result instead of executing.
    Replay,
    BeforeExecute,
    EmitStarted,
    AppendStarted,
    MarkDispatched(ClaimRef),
    Execute,
    ResultMiddleware,
    /// Redact the result before it leaves the call.
    RedactResult,
    EffectComplete(ClaimRef),
    /// The call's result becomes `{ toolCallId, name, error }` with this error.
    SetError(ErrorSpec),
    /// Settle an unfinished claim: mark it unknown (after dispatch).
    MarkUnknown(ClaimRef),
    /// Read the record to learn whether an unconfirmed `markDispatched` took.
    EffectGet,
    /// Release a claim taken before dispatch (`failed_terminal`).
    ReleaseClaim(ClaimRef),
    /// Release a claim taken before dispatch so a later attempt may take it again
    /// (`failed_retryable`): the run was suspended before the side effect.
    ReleaseRetryable(ClaimRef),
    EmitTerminal(Terminal),
    AppendTerminal(Terminal),
    /// Resolve with the result.
    Resolve,
    /// Reject with what the call must reject with (a tripwire's `GuardrailError`, the thrown
    /// middleware error).
    Reject(Rejection),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Rejection {
    /// The value the middleware threw.
    Thrown,
    /// `new GuardrailError(message, { record })` with `code`: `@arnilo/prism`'s message and code for
    /// a tripwire or an interrupt.
    Guardrail { message: String, code: &'static str },
}
