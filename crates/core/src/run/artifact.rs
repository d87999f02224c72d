//! The `generate-validate-revise` artifact loop (seed page "Artifact-loop tools"): which strategy a
//! run uses, the artifact options, what happens after each provider response, and what a parse or
//! validation outcome means for the run (accept, ask for a revision, or fail). `lib/agent.js`
//! awaits the parser, the validator and the dispatches; every decision comes from here.

use serde_json::Value;

use super::{count, RunError};

/// `loop.maxRevisions` when none is given.
pub const DEFAULT_MAX_REVISIONS: u32 = 2;
/// Hard cap of `loop.maxRevisions` (larger values clamp).
pub const MAX_REVISIONS: u32 = 16;
/// Longest rejection message carried into a revision request or an event, in bytes.
pub const MAX_REJECTION_BYTES: usize = 2048;
/// The rejection message when a validator gives no text (`false`, or an answer with no message).
pub const DEFAULT_REJECTION: &str = "the artifact was rejected by the validator";

/// What the artifact loop does with tool calls in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCalls {
    /// Calls are never dispatched; the response is a candidate artifact.
    Inert,
    /// A response with calls dispatches them sequentially and consumes one shared round.
    Bounded,
}

/// The run's loop strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    SingleShot,
    Artifact(ArtifactLoop),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArtifactLoop {
    pub max_revisions: u32,
    pub tool_calls: ToolCalls,
}

fn invalid(message: impl Into<String>) -> RunError {
    RunError {
        kind: "TypeError",
        code: "invalid_loop_options",
        message: message.into(),
    }
}

/// Resolves `loop` (JSON; `parser` and `validator` arrive as their `typeof`, functions not being JSON).
/// Absent or `"single-shot"` strategy → single-shot; `"generate-validate-revise"` → the artifact
/// loop; anything else fails closed with `unsupported_loop_strategy`.
pub fn resolve_strategy(lp: &Value) -> Result<Strategy, RunError> {
    match lp.get("strategy") {
        None | Some(Value::Null) => return Ok(Strategy::SingleShot),
        Some(Value::String(s)) if s == "single-shot" => return Ok(Strategy::SingleShot),
        Some(Value::String(s)) if s == "generate-validate-revise" => {}
        Some(other) => {
            return Err(RunError {
                kind: "RangeError",
                code: "unsupported_loop_strategy",
                message: format!(
                    "loop.strategy {other} is not supported (only \"single-shot\" or \"generate-validate-revise\")"
                ),
            })
        }
    }
    for key in ["parser", "validator", "repairer"] {
        match lp.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::String(t)) if t == "function" || t == "undefined" => {}
            Some(_) => return Err(invalid(format!("loop.{key} must be a function"))),
        }
    }
    let tool_calls = match lp.get("toolCalls") {
        None | Some(Value::Null) => ToolCalls::Inert,
        Some(Value::String(s)) if s == "inert" => ToolCalls::Inert,
        Some(Value::String(s)) if s == "bounded" => ToolCalls::Bounded,
        Some(_) => return Err(invalid("loop.toolCalls must be \"inert\" or \"bounded\"")),
    };
    let max_revisions = count(
        lp.get("maxRevisions"),
        "loop.maxRevisions",
        DEFAULT_MAX_REVISIONS,
        MAX_REVISIONS,
        0,
    )?;
    Ok(Strategy::Artifact(ArtifactLoop {
        max_revisions,
        tool_calls,
    }))
}

/// What the artifact loop does with a provider response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseStep {
    /// Parse and validate the response text. Host calls in it (inert mode) are not dispatched.
    Candidate,
    /// `"bounded"`: dispatch the calls sequentially (one round consumed), skip parsing, ask again.
    Tools,
    /// `"bounded"`: calls past `maxToolRounds`: nothing executes, the run fails `tool_round_limit`.
    ToolRoundLimit,
}

impl ResponseStep {
    pub fn as_str(self) -> &'static str {
        match self {
            ResponseStep::Candidate => "candidate",
            ResponseStep::Tools => "tools",
            ResponseStep::ToolRoundLimit => "tool_round_limit",
        }
    }
}

/// After a response with `host_calls` host (not provider-hosted) calls, `rounds_used` tool rounds
/// done. Revisions play no part: tool rounds and revisions are separate budgets.
pub fn response_step(
    lp: ArtifactLoop,
    max_tool_rounds: u32,
    rounds_used: u32,
    host_calls: u32,
) -> ResponseStep {
    match lp.tool_calls {
        _ if host_calls == 0 => ResponseStep::Candidate,
        ToolCalls::Inert => ResponseStep::Candidate,
        ToolCalls::Bounded if rounds_used >= max_tool_rounds => ResponseStep::ToolRoundLimit,
        ToolCalls::Bounded => ResponseStep::Tools,
    }
}

/// How a candidate fared, as the JS loop reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The parser threw: the message of what it threw.
    ParseError(String),
    /// The validator answered (JSON of the answer; `None` for `undefined`).
    Validated(Option<Value>),
    /// The validator threw: a host failure, not a rejection.
    ValidatorError,
}

/// Why a candidate was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    ParseError,
    ValidationFailed,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::ParseError => "parse_error",
            Rejection::ValidationFailed => "validation_failed",
        }
    }
}

/// Why the artifact loop failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    MaxRevisions,
    ToolRoundLimit,
    ValidatorError,
}

impl FailReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FailReason::MaxRevisions => "max_revisions",
            FailReason::ToolRoundLimit => "tool_round_limit",
            FailReason::ValidatorError => "validator_error",
        }
    }
}

/// The loop's answer to a candidate's outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Accept,
    /// Ask again: `revision` is the 1-based revision now requested, `request` the user message text.
    Revise {
        revision: u32,
        reason: Rejection,
        message: String,
        request: String,
    },
    /// The run fails: `message` is the run error's message; `rejection` the last rejection, if any.
    Fail {
        reason: FailReason,
        message: String,
        rejection: Option<(Rejection, String)>,
    },
}

fn bounded(message: &str) -> String {
    if message.len() <= MAX_REJECTION_BYTES {
        return message.to_string();
    }
    format!(
        "{}…",
        crate::text::utf8_prefix(message, MAX_REJECTION_BYTES)
    )
}

/// The message of an `ArtifactValidation` without errors (`{ ok: false }`), as `@arnilo/prism` words it.
pub const INVALID_ARTIFACT: &str = "invalid artifact";

/// The rejection message of a validator answer, or `None` when the answer accepts:
/// `undefined`, `true` and `{ ok: true }` accept; `{ ok: false, errors }` rejects with the errors'
/// messages, one per line (`invalid artifact` without errors); a string, `{ message }` or `false`
/// reject (an empty or missing message gives [`DEFAULT_REJECTION`]); any other answer rejects too
/// (fail closed).
pub fn rejection_of(answer: Option<&Value>) -> Option<String> {
    let text = match answer {
        None | Some(Value::Bool(true)) => return None,
        Some(Value::Object(o)) if o.get("ok") == Some(&Value::Bool(true)) => return None,
        Some(Value::Object(o)) if o.get("ok") == Some(&Value::Bool(false)) => {
            let lines: Vec<&str> = match o.get("errors").and_then(Value::as_array) {
                Some(errors) => errors
                    .iter()
                    .filter_map(|e| e.get("message").and_then(Value::as_str))
                    .collect(),
                None => Vec::new(),
            };
            let text = lines.join("\n");
            return Some(if text.trim().is_empty() {
                INVALID_ARTIFACT.to_string()
            } else {
                bounded(&text)
            });
        }
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Object(o)) => o.get("message").and_then(Value::as_str).unwrap_or(""),
        Some(_) => "",
    };
    Some(if text.trim().is_empty() {
        DEFAULT_REJECTION.to_string()
    } else {
        bounded(text)
    })
}

/// The text of the user message that asks for a revision: the rejection itself, as
/// `@arnilo/prism`'s default repairer writes it (so a model sees the same words under either).
pub fn revision_request(message: &str) -> String {
    message.to_string()
}

/// Decides what a candidate's outcome means after `revisions_used` revisions.
pub fn verdict(lp: ArtifactLoop, revisions_used: u32, outcome: &Outcome) -> Verdict {
    let (reason, message) = match outcome {
        Outcome::ValidatorError => {
            return Verdict::Fail {
                reason: FailReason::ValidatorError,
                message: "The artifact validator threw".to_string(),
                rejection: None,
            }
        }
        Outcome::ParseError(m) => (
            Rejection::ParseError,
            if m.trim().is_empty() {
                "the parser threw".to_string()
            } else {
                bounded(m)
            },
        ),
        Outcome::Validated(answer) => match rejection_of(answer.as_ref()) {
            None => return Verdict::Accept,
            Some(m) => (Rejection::ValidationFailed, m),
        },
    };
    if revisions_used >= lp.max_revisions {
        return Verdict::Fail {
            reason: FailReason::MaxRevisions,
            message: format!(
                "The artifact was not accepted after {revisions_used} revision{}: {message}",
                if revisions_used == 1 { "" } else { "s" }
            ),
            rejection: Some((reason, message)),
        };
    }
    let revision = revisions_used + 1;
    let request = revision_request(&message);
    Verdict::Revise {
        revision,
        reason,
        message,
        request,
    }
}

/// The verdict when a response asks for calls past `maxToolRounds` ([`ResponseStep::ToolRoundLimit`]).
pub fn tool_round_limit(max_tool_rounds: u32) -> Verdict {
    Verdict::Fail {
        reason: FailReason::ToolRoundLimit,
        message: format!("The artifact loop reached its tool round limit ({max_tool_rounds}) before an artifact was accepted"),
        rejection: None,
    }
}

#[cfg(test)]
mod tests;
