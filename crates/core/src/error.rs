//! The package's stable error codes and the one error type every binding entry point converts to a
//! real JS error (`TypeError`, `RangeError` or `Error`) with `code` set. Codes are public API: hosts
//! match them, so a code's string never changes once shipped.

use std::borrow::Cow;

/// Every `code` a thrown error of this package can carry (except the `ToolEffectError` and
/// `IdentityError` codes, which `effects::error` owns because their classes own them). The JS
/// modules (`lib/`, `testing/`) throw only codes listed here; `__test__/error-codes.test.ts` checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// An option or argument of a public function has the wrong type or is out of range.
    InvalidOption,
    /// `dispatchToolCall` was given something that is not a tool call.
    InvalidCall,
    /// `filterTools` was given a filter that is not `{ allow?, deny? }` of strings.
    InvalidFilter,
    /// A tool definition is malformed (no name, a name that is not a string, …).
    InvalidTool,
    /// A tool's result `value` does not match its `outputSchema` (a tool error, not a throw).
    InvalidOutput,
    /// Strict registration met a name twice.
    DuplicateTool,
    /// Strict registration of a contribution met a key twice.
    DuplicateContribution,
    /// `registry.resolve` of a name no tool has.
    UnknownTool,
    /// `get` of a contribution kind or id that does not exist.
    UnknownContribution,
    /// A registry or store was called again from inside one of its own callbacks.
    Reentrant,
    /// A call was aborted through its signal.
    Aborted,
    /// A tool did not settle within its deadline (`timeoutMs`, or the dispatcher's `toolTimeoutMs`).
    ToolTimeout,
    /// The call claims to be hosted by the provider; the harness never runs those.
    ProviderHosted,
    /// A permission policy refused the call.
    PermissionDenied,
    /// A trust policy refused the tool.
    Untrusted,
    /// A tool effect store failed (I/O, a lock, a corrupt row).
    ToolEffectStore,
    /// A claimed effect stopped before its side effect (the claim is released as failed).
    ToolEffectPreDispatch,
    /// A run ledger failed to accept or write a row.
    Ledger,
    /// A guardrail blocked or tripped (`GuardrailError`).
    GuardrailBlocked,
    /// A guardrail asked to interrupt at a stage that cannot suspend.
    GuardrailInterruptUnavailable,
    /// An extension was refused by the load policy (allow list, signature).
    ExtensionRejected,
    /// A middleware called `next(v)` and returned a different value.
    MiddlewareConflict,
    /// A middleware called `next` after it settled.
    MiddlewareLateNext,
    /// A middleware called `next` twice.
    MiddlewareNextTwice,
    /// An argument of the wrong type, with Node's own code (the static policies and the extension
    /// and middleware registries throw it, as Node's APIs do).
    InvalidArgType,
    /// A bug in this package: it should never be seen.
    Internal,
}

impl Code {
    pub const fn as_str(self) -> &'static str {
        match self {
            Code::InvalidOption => "ERR_PRISM_INVALID_OPTION",
            Code::InvalidCall => "ERR_PRISM_INVALID_CALL",
            Code::InvalidFilter => "ERR_PRISM_INVALID_FILTER",
            Code::InvalidTool => "ERR_PRISM_INVALID_TOOL",
            Code::InvalidOutput => "ERR_PRISM_INVALID_OUTPUT",
            Code::DuplicateTool => "ERR_PRISM_DUPLICATE_TOOL",
            Code::DuplicateContribution => "ERR_PRISM_DUPLICATE_CONTRIBUTION",
            Code::UnknownTool => "ERR_PRISM_UNKNOWN_TOOL",
            Code::UnknownContribution => "ERR_PRISM_UNKNOWN_CONTRIBUTION",
            Code::Reentrant => "ERR_PRISM_REENTRANT",
            Code::Aborted => "ERR_PRISM_ABORTED",
            Code::ToolTimeout => "ERR_PRISM_TOOL_TIMEOUT",
            Code::ProviderHosted => "ERR_PRISM_PROVIDER_HOSTED",
            Code::PermissionDenied => "ERR_PRISM_PERMISSION_DENIED",
            Code::Untrusted => "ERR_PRISM_UNTRUSTED",
            Code::ToolEffectStore => "ERR_PRISM_TOOL_EFFECT_STORE",
            Code::ToolEffectPreDispatch => "ERR_PRISM_TOOL_EFFECT_PRE_DISPATCH",
            Code::Ledger => "ERR_PRISM_LEDGER",
            Code::GuardrailBlocked => "ERR_PRISM_GUARDRAIL_BLOCKED",
            Code::GuardrailInterruptUnavailable => "ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE",
            Code::ExtensionRejected => "ERR_PRISM_EXTENSION_REJECTED",
            Code::MiddlewareConflict => "ERR_PRISM_MIDDLEWARE_CONFLICT",
            Code::MiddlewareLateNext => "ERR_PRISM_MIDDLEWARE_LATE_NEXT",
            Code::MiddlewareNextTwice => "ERR_PRISM_MIDDLEWARE_NEXT_TWICE",
            Code::InvalidArgType => "ERR_INVALID_ARG_TYPE",
            Code::Internal => "ERR_PRISM_INTERNAL",
        }
    }
}

/// Codes of durable runs and approvals, as `@arnilo/prism` names them: `AgentRunStateError`,
/// `CheckpointConflictError` and the six `AgentDecisionError` codes (`crates/core/src/run/approval.rs`,
/// `lib/approval.js`, `lib/checkpoints.js`), and this package's seventh: an approval whose bound
/// tool name or arguments hash no longer matches the checkpoint (`lib/approval-integrity.js`); and the
/// two `AgentRunStateError` codes of a refused resume (`crates/core/src/run/approval.rs`): the run moved
/// on (stale), or a claimed call has no known outcome (reconcile).
pub const APPROVAL_CODES: [&str; 11] = [
    "ERR_PRISM_AGENT_RUN_STATE",
    "ERR_PRISM_AGENT_RUN_STALE",
    "ERR_PRISM_AGENT_RUN_RECONCILE",
    "ERR_PRISM_CHECKPOINT_CONFLICT",
    "ERR_PRISM_DECISION_STALE",
    "ERR_PRISM_DECISION_UNKNOWN",
    "ERR_PRISM_DECISION_DUPLICATE",
    "ERR_PRISM_DECISION_SCOPE",
    "ERR_PRISM_DECISION_INVALID",
    "ERR_PRISM_DECISION_LIMIT",
    "ERR_PRISM_DECISION_BINDING",
];

/// Codes of a run's budget and loop, as `@arnilo/prism` names them: `RunLimitError`
/// (`lib/run-limits.js`), and a custom loop strategy asked to run durably (`lib/agent-loop.js`).
pub const RUN_CODES: [&str; 2] = ["ERR_PRISM_RUN_LIMIT", "ERR_PRISM_LOOP_NOT_DURABLE"];

/// Codes of a provider request: more tools than the provider takes (its `maxTools`), thrown by the
/// OpenAI-compatible request builder (`lib/providers/tools.js`) and by a run whose turn could not be
/// brought under the cap (`lib/agent-tool-policy.js`).
pub const PROVIDER_CODES: [&str; 1] = ["ERR_PRISM_TOOL_CAP"];

/// Codes of the embedding model of hybrid tool search (`prism-tools-native/embeddings`,
/// `lib/embeddings.js`): the model package or its addon is not installed (the message names the
/// package), a model file is not the one the addon pins, and a failed embedding.
pub const EMBEDDING_CODES: [&str; 3] = [
    "ERR_PRISM_EMBEDDINGS_UNAVAILABLE",
    "ERR_PRISM_EMBEDDINGS_MODEL_INVALID",
    "ERR_PRISM_EMBEDDINGS_FAILED",
];

/// Which JS constructor the error is thrown as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Error,
    TypeError,
    RangeError,
}

/// An error bound for JS: the binding throws it as `new <kind>(message)` with `code` set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PrismError {
    pub kind: Kind,
    pub code: Code,
    pub message: Cow<'static, str>,
}

impl PrismError {
    pub fn new(kind: Kind, code: Code, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            kind,
            code,
            message: message.into(),
        }
    }
    /// A `TypeError` with `ERR_PRISM_INVALID_OPTION`: the usual misuse of an option.
    pub fn invalid_option(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(Kind::TypeError, Code::InvalidOption, message)
    }
    /// A `RangeError` with `ERR_PRISM_INVALID_OPTION`: a number outside its documented range.
    pub fn out_of_range(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(Kind::RangeError, Code::InvalidOption, message)
    }
    pub fn internal(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(Kind::Error, Code::Internal, message)
    }
    pub fn reentrant(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(Kind::Error, Code::Reentrant, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_the_public_strings() {
        assert_eq!(Code::InvalidOption.as_str(), "ERR_PRISM_INVALID_OPTION");
        assert_eq!(Code::Aborted.as_str(), "ERR_PRISM_ABORTED");
        let e = PrismError::out_of_range("limit must be ≤ 10");
        assert_eq!(e.to_string(), "limit must be ≤ 10");
        assert_eq!((e.kind, e.code), (Kind::RangeError, Code::InvalidOption));
    }
}
