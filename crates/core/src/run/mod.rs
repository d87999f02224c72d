//! The run-level rules of the agent tool loop (SPEC.md section 8), as plain Rust:
//! the per-run grant, per-turn narrowing, the tools metadata hash, round and turn limits, and
//! the plan of a parallel batch. The JS loop (`lib/agent.js`) asks these functions and follows
//! their answers; nothing here knows about napi.

use std::collections::HashSet;

use serde_json::Value;
use sha2::{Digest, Sha256};

pub mod approval;
pub mod artifact;
pub mod budget;
pub mod checkpoint;
pub mod checkpoint_memory;
pub mod checkpoint_postgres;
pub mod checkpoint_sqlite;
pub mod machine;

/// Most names a `toolNames` grant may list.
pub const MAX_GRANT_NAMES: usize = 1024;
/// `limits.maxToolRounds` when none is given.
pub const DEFAULT_MAX_TOOL_ROUNDS: u32 = 8;
/// Hard cap of `limits.maxToolRounds`.
pub const MAX_TOOL_ROUNDS: u32 = 64;
/// Hard cap of `loop.toolConcurrency`.
pub const MAX_TOOL_CONCURRENCY: u32 = 64;

/// A refused run option: a message and a stable code. `kind` is the JS error class to throw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    pub kind: &'static str,
    pub code: &'static str,
    pub message: String,
}

impl RunError {
    pub fn type_error(code: &'static str, message: impl Into<String>) -> Self {
        RunError {
            kind: "TypeError",
            code,
            message: message.into(),
        }
    }
    pub fn range_error(code: &'static str, message: impl Into<String>) -> Self {
        RunError {
            kind: "RangeError",
            code,
            message: message.into(),
        }
    }
}

/// A name list given as JSON: an array of strings, else `None`.
fn string_array(value: &Value) -> Option<Vec<&str>> {
    value.as_array()?.iter().map(Value::as_str).collect()
}

/// An optional tool-name list (the request's and the stored grant's are read alike): absent or
/// `null` is `None` (no restriction), an array of strings its names, anything else the
/// `invalid_tool_names` TypeError with `message`.
fn optional_names<'v>(
    value: Option<&'v Value>,
    message: &'static str,
) -> Result<Option<Vec<&'v str>>, RunError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => string_array(v)
            .map(Some)
            .ok_or_else(|| RunError::type_error("invalid_tool_names", message)),
    }
}

/// The run's grant, resolved once before any provider turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Indices into the registered list of the tools the run may use, in registry order.
    pub indices: Vec<u32>,
    /// The names to persist in `session.state().toolNames` (`None`: no restriction).
    pub stored: Option<Vec<String>>,
}

/// Resolves the grant of a run.
///
/// - `requested` (`RunOptions.toolNames`): `None` (omitted) grants every registered tool, `[]` none;
///   a name that is not registered fails closed with `Unknown run tool: <names>` — unless the run
///   resumes a stored grant, where the request can only narrow it.
/// - `stored` (`session.state().toolNames` of an earlier run): the result is never wider than it;
///   stored names missing from the current registry are dropped.
pub fn resolve_grant(
    registered: &[String],
    requested: Option<&Value>,
    stored: Option<&Value>,
) -> Result<Grant, RunError> {
    let requested = optional_names(requested, "toolNames must be an array of tool names")?;
    let stored = optional_names(stored, "state.toolNames must be an array of tool names")?;
    if let Some(names) = &requested {
        if names.len() > MAX_GRANT_NAMES {
            return Err(RunError::range_error(
                "tool_names_limit",
                format!(
                    "toolNames exceeds {MAX_GRANT_NAMES} names ({} given)",
                    names.len()
                ),
            ));
        }
        if stored.is_none() {
            let known: HashSet<&str> = registered.iter().map(String::as_str).collect();
            let mut unknown: Vec<&str> = Vec::new();
            for name in names {
                if !known.contains(name) && !unknown.contains(name) {
                    unknown.push(name);
                }
            }
            if !unknown.is_empty() {
                return Err(RunError::range_error(
                    "unknown_run_tool",
                    format!("Unknown run tool: {}", unknown.join(", ")),
                ));
            }
        }
    }
    // The names the run may use: the request within the stored grant.
    let allowed: Option<Vec<&str>> = match (&requested, &stored) {
        (None, None) => None,
        (Some(r), None) => Some(r.clone()),
        (None, Some(s)) => Some(s.clone()),
        (Some(r), Some(s)) => {
            let s: HashSet<&str> = s.iter().copied().collect();
            Some(r.iter().copied().filter(|n| s.contains(n)).collect())
        }
    };
    let allowed_set: Option<HashSet<&str>> = allowed.as_ref().map(|a| a.iter().copied().collect());
    let mut indices = Vec::new();
    let mut seen: HashSet<&str> = HashSet::with_capacity(registered.len());
    for (i, name) in registered.iter().enumerate() {
        let granted = allowed_set
            .as_ref()
            .is_none_or(|a| a.contains(name.as_str()));
        // A registry lists a name once; a plain array may repeat it: the first wins, as in dispatch.
        if granted && seen.insert(name.as_str()) {
            indices.push(i as u32);
        }
    }
    let stored = allowed.map(|a| {
        let mut once: HashSet<&str> = HashSet::with_capacity(a.len());
        a.into_iter()
            .filter(|n| once.insert(n))
            .map(str::to_string)
            .collect()
    });
    Ok(Grant { indices, stored })
}

/// The answer of a `toolNarrowing` callback, clamped to the run's tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Narrowed {
    /// Indices into `tool_ids` of the tools kept, in run order (never the callback's order).
    pub kept: Vec<u32>,
    /// Names the callback returned that are not run tools, in the callback's order
    /// (a non-string entry is reported as its JSON text).
    pub dropped: Vec<String>,
}

/// Clamps a narrowing answer to `tool_ids`. Not an array → error (the turn fails).
pub fn clamp_narrowing(tool_ids: &[String], returned: &Value) -> Result<Narrowed, RunError> {
    let list = returned.as_array().ok_or_else(|| {
        RunError::type_error(
            "invalid_tool_narrowing",
            "toolNarrowing must return an array of tool names",
        )
    })?;
    let ids: HashSet<&str> = tool_ids.iter().map(String::as_str).collect();
    let mut wanted: HashSet<&str> = HashSet::with_capacity(list.len());
    let mut dropped: Vec<String> = Vec::new();
    for entry in list {
        match entry.as_str() {
            Some(name) if ids.contains(name) => {
                wanted.insert(name);
            }
            Some(name) => {
                if !dropped.iter().any(|d| d == name) {
                    dropped.push(name.to_string())
                }
            }
            None => dropped.push(entry.to_string()),
        }
    }
    let kept = tool_ids
        .iter()
        .enumerate()
        .filter(|(_, id)| wanted.contains(id.as_str()))
        .map(|(i, _)| i as u32)
        .collect();
    Ok(Narrowed { kept, dropped })
}

/// `metadata.tools.idsHash`: `sha256:` and the hex SHA-256 of the names in request order, each
/// followed by a newline (names cannot be confused across boundaries: a name has no newline in
/// practice, and the count is recorded beside it). No arguments or schemas enter it.
pub fn ids_hash<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut h = Sha256::new();
    for n in names {
        h.update(n.as_bytes());
        h.update(b"\n");
    }
    let digest = h.finalize();
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in digest.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Resolved run limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_tool_rounds: u32,
    /// Provider turns: `maxTurns`, default `maxToolRounds + 1`, never above `maxToolRounds + 1`.
    pub max_turns: u32,
}

pub(crate) fn count(
    value: Option<&Value>,
    name: &str,
    default: u32,
    cap: u32,
    min: u32,
) -> Result<u32, RunError> {
    match value {
        None | Some(Value::Null) => Ok(default),
        Some(v) => {
            // JSON has no NaN or infinities: the JS side sends them as the strings "NaN", "Infinity"
            // and "-Infinity" so that they are refused here (not integers) instead of becoming `null`.
            let n = match v {
                Value::String(s) if s == "NaN" => f64::NAN,
                Value::String(s) if s == "Infinity" => f64::INFINITY,
                Value::String(s) if s == "-Infinity" => f64::NEG_INFINITY,
                _ => v.as_f64().ok_or_else(|| {
                    RunError::type_error("invalid_run_limits", format!("{name} must be a number"))
                })?,
            };
            if n.is_nan() || n < min as f64 || n.fract() != 0.0 {
                return Err(RunError::range_error(
                    "invalid_run_limits",
                    format!("{name} must be an integer of at least {min}"),
                ));
            }
            Ok(if n > cap as f64 { cap } else { n as u32 })
        }
    }
}

/// `limits` (a JSON object, or null): `maxToolRounds` default 8, clamped to 64; `maxTurns`.
pub fn resolve_limits(limits: &Value) -> Result<Limits, RunError> {
    let get = |k: &str| limits.get(k);
    let max_tool_rounds = count(
        get("maxToolRounds"),
        "limits.maxToolRounds",
        DEFAULT_MAX_TOOL_ROUNDS,
        MAX_TOOL_ROUNDS,
        0,
    )?;
    let max_turns = count(
        get("maxTurns"),
        "limits.maxTurns",
        max_tool_rounds + 1,
        max_tool_rounds + 1,
        1,
    )?;
    Ok(Limits {
        max_tool_rounds,
        max_turns,
    })
}

/// What the loop does after a provider turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// No host calls: the run is done.
    Done,
    /// Dispatch the calls; this consumes one round.
    Execute,
    /// The turn asks for calls past `maxToolRounds` (or there is no provider turn left to
    /// read their results): nothing executes, the run ends with `turn_limit`.
    TurnLimit,
}

impl Step {
    pub fn as_str(self) -> &'static str {
        match self {
            Step::Done => "done",
            Step::Execute => "execute",
            Step::TurnLimit => "turn_limit",
        }
    }
}

/// `rounds_used` rounds done and `turns_used` provider turns made (this one included).
pub fn next_step(limits: Limits, rounds_used: u32, turns_used: u32, host_calls: u32) -> Step {
    if host_calls == 0 {
        Step::Done
    } else if rounds_used >= limits.max_tool_rounds || turns_used >= limits.max_turns {
        Step::TurnLimit
    } else {
        Step::Execute
    }
}

/// The plan of one turn's calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Indices of the calls to dispatch, in call order (provider-hosted calls are left out).
    pub dispatch: Vec<u32>,
    /// How many run at once: 1 when any dispatched call names an exclusive tool.
    pub concurrency: u32,
}

/// `loop.toolConcurrency`: default 1, an integer ≥ 1, clamped to 64.
pub fn resolve_concurrency(value: Option<&Value>) -> Result<u32, RunError> {
    count(value, "loop.toolConcurrency", 1, MAX_TOOL_CONCURRENCY, 1)
}

/// Plans a turn: `hosted[i]` marks provider-hosted calls, `exclusive[i]` calls of exclusive tools.
pub fn plan_batch(concurrency: u32, hosted: &[bool], exclusive: &[bool]) -> Batch {
    let dispatch: Vec<u32> = (0..hosted.len())
        .filter(|&i| !hosted[i])
        .map(|i| i as u32)
        .collect();
    let any_exclusive = dispatch
        .iter()
        .any(|&i| exclusive.get(i as usize).copied().unwrap_or(false));
    let concurrency = if any_exclusive {
        1
    } else {
        concurrency
            .clamp(1, MAX_TOOL_CONCURRENCY)
            .min(dispatch.len().max(1) as u32)
    };
    Batch {
        dispatch,
        concurrency,
    }
}

/// The error message of a call the run never started: `why` is `"aborted"` (the run was
/// aborted), `"turn_limit"` (the call came past `maxToolRounds`), `"inert"` (an artifact loop
/// that does not dispatch calls), anything else a batch that
/// stopped on a failure.
pub fn not_dispatched_message(name: &str, why: &str) -> String {
    let because = match why {
        "aborted" => "the run was aborted",
        "turn_limit" => "the run reached its tool round limit",
        "inert" => "tools are inert in the generate-validate-revise loop",
        _ => "the batch stopped before it started",
    };
    format!("Tool call {name} was not dispatched: {because}")
}

#[cfg(test)]
mod tests;
