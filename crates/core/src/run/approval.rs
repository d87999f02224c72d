//! Human approval before side effects: the decisions of a durable run (docs/agent.md § Approval).
//!
//! Which calls of a round wait for a person, the redacted pending-decision records, the shape and
//! bounds of a resume, how a decision batch applies to the recorded pending set (atomic: any bad
//! entry refuses the whole batch), sticky `*_for_run` decisions, and the agent fingerprint a resume
//! must match. Plain Rust over `serde_json::Value`; `crates/node/src/approval.rs` is the napi side.

use serde_json::{json, Map, Value};

use crate::effects::canonical::{canonical_json, sha256_hex};

/// Pending decisions one suspension may hold by default.
pub const DEFAULT_MAX_PENDING: usize = 32;
/// Most entries a decision batch (or a pending set) may ever hold.
pub const HARD_MAX_PENDING: usize = 128;
/// Sticky decisions one run may hold by default.
pub const DEFAULT_MAX_STICKY: usize = 64;
/// Hard cap of sticky decisions.
pub const HARD_MAX_STICKY: usize = 256;
/// Most UTF-8 bytes of a decision reason.
pub const MAX_REASON_BYTES: usize = 2 * 1024;
/// Most UTF-8 bytes of a decision's JSON payload (`modifiedArguments`, `elicitation`).
pub const MAX_PAYLOAD_BYTES: usize = 16 * 1024;
/// Most characters of an approval id.
pub const MAX_APPROVAL_ID_CHARS: usize = 128;
/// Largest integer a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;
/// What the JS side writes in place of a value JSON cannot carry (function, symbol, bigint).
pub const NOT_JSON: &str = "\u{0}<not JSON>";

/// `AgentDecisionError`: one of upstream's six codes and a message that never carries arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionError {
    pub code: &'static str,
    pub message: String,
}

fn invalid(message: impl Into<String>) -> DecisionError {
    DecisionError {
        code: "ERR_PRISM_DECISION_INVALID",
        message: message.into(),
    }
}
fn limit(message: impl Into<String>) -> DecisionError {
    DecisionError {
        code: "ERR_PRISM_DECISION_LIMIT",
        message: message.into(),
    }
}
fn duplicate() -> DecisionError {
    DecisionError {
        code: "ERR_PRISM_DECISION_DUPLICATE",
        message: "Duplicate approval decision in batch".into(),
    }
}
fn unknown(message: &str) -> DecisionError {
    DecisionError {
        code: "ERR_PRISM_DECISION_UNKNOWN",
        message: message.into(),
    }
}
fn scope_error(message: &str) -> DecisionError {
    DecisionError {
        code: "ERR_PRISM_DECISION_SCOPE",
        message: message.into(),
    }
}

/// `AgentRunStateError` (`ERR_PRISM_AGENT_RUN_STATE`): a checkpoint that does not allow the resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError(pub String);

/// The outcomes of a batch entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    AllowOnce,
    AllowForRun,
    RejectOnce,
    RejectForRun,
}

impl Outcome {
    fn parse(v: &Value) -> Option<Outcome> {
        match v.as_str()? {
            "allow_once" => Some(Outcome::AllowOnce),
            "allow_for_run" => Some(Outcome::AllowForRun),
            "reject_once" => Some(Outcome::RejectOnce),
            "reject_for_run" => Some(Outcome::RejectForRun),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::AllowOnce => "allow_once",
            Outcome::AllowForRun => "allow_for_run",
            Outcome::RejectOnce => "reject_once",
            Outcome::RejectForRun => "reject_for_run",
        }
    }
    pub fn allows(self) -> bool {
        matches!(self, Outcome::AllowOnce | Outcome::AllowForRun)
    }
    fn sticky(self) -> bool {
        matches!(self, Outcome::AllowForRun | Outcome::RejectForRun)
    }
}

/// One validated batch entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub approval_id: String,
    pub outcome: Outcome,
    pub reason: Option<String>,
    pub modified_arguments: Option<Value>,
    pub elicitation: Option<Value>,
}

impl Decision {
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("approvalId".into(), json!(self.approval_id));
        m.insert("outcome".into(), json!(self.outcome.as_str()));
        if let Some(r) = &self.reason {
            m.insert("reason".into(), json!(r));
        }
        if let Some(a) = &self.modified_arguments {
            m.insert("modifiedArguments".into(), a.clone());
        }
        Value::Object(m)
    }
}

/// A resume input whose shape is valid (state-independent checks only).
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    pub expected_version: u64,
    /// `Some(true)` legacy `approve`, `Some(false)` legacy `deny`, `None` a batch.
    pub legacy: Option<bool>,
    pub decisions: Vec<Decision>,
}

/// True when a `NOT_JSON` marker sits anywhere in `v` (depth-bounded by the parser's own limit).
fn has_not_json(v: &Value, depth: usize) -> bool {
    if depth > 256 {
        return true;
    }
    match v {
        Value::String(s) => s == NOT_JSON,
        Value::Array(items) => items.iter().any(|i| has_not_json(i, depth + 1)),
        Value::Object(m) => m.values().any(|i| has_not_json(i, depth + 1)),
        _ => false,
    }
}

fn json_bytes(v: &Value) -> usize {
    serde_json::to_string(v)
        .map(|s| s.len())
        .unwrap_or(usize::MAX)
}

/// The shape of a whole resume input, before any checkpoint is read: a non-null object, a positive
/// safe-integer `expectedVersion`, exactly one of `decision` / `decisions`, a legacy decision of
/// exactly `approve` / `deny`, and a non-empty batch of at most 128 well-formed entries.
pub fn check_resume(resume: &Value) -> Result<Resume, DecisionError> {
    let obj = resume
        .as_object()
        .ok_or_else(|| invalid("Resume must be a non-null object"))?;
    if has_not_json(resume, 0) {
        return Err(invalid("Resume must be plain JSON data"));
    }
    let version = obj
        .get("expectedVersion")
        .and_then(Value::as_u64)
        .filter(|v| *v >= 1 && *v <= MAX_SAFE_INTEGER)
        .ok_or_else(|| invalid("Resume expectedVersion must be a positive safe integer"))?;
    let decision = obj.get("decision").filter(|v| !v.is_null());
    let decisions = obj.get("decisions").filter(|v| !v.is_null());
    match (decision, decisions) {
        (Some(_), Some(_)) => Err(invalid(
            "Resume accepts exactly one of decision or decisions",
        )),
        (None, None) => Err(invalid("Resume requires a decision or decisions")),
        (Some(d), None) => {
            let legacy = match d.as_str() {
                Some("approve") => true,
                Some("deny") => false,
                _ => return Err(invalid("Unknown legacy decision")),
            };
            Ok(Resume {
                expected_version: version,
                legacy: Some(legacy),
                decisions: Vec::new(),
            })
        }
        (None, Some(list)) => {
            let list = list
                .as_array()
                .ok_or_else(|| invalid("Decision batch must be an array"))?;
            if list.is_empty() {
                return Err(invalid("Decision batch must not be empty"));
            }
            if list.len() > HARD_MAX_PENDING {
                return Err(limit(format!(
                    "Decision batch exceeds {HARD_MAX_PENDING} entries"
                )));
            }
            let mut out: Vec<Decision> = Vec::with_capacity(list.len());
            for entry in list {
                let e = entry
                    .as_object()
                    .ok_or_else(|| invalid("Decision batch entries must be objects"))?;
                let id = e
                    .get("approvalId")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty() && s.chars().count() <= MAX_APPROVAL_ID_CHARS)
                    .ok_or_else(|| {
                        invalid("Decision approvalId must be a bounded non-empty string")
                    })?;
                if out.iter().any(|d| d.approval_id == id) {
                    return Err(duplicate());
                }
                let outcome = e
                    .get("outcome")
                    .and_then(Outcome::parse)
                    .ok_or_else(|| invalid("Unknown approval outcome"))?;
                let reason = match e.get("reason") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(s)) => {
                        if s.len() > MAX_REASON_BYTES {
                            return Err(limit(format!(
                                "Decision reason exceeds {MAX_REASON_BYTES} bytes"
                            )));
                        }
                        Some(s.clone())
                    }
                    Some(_) => return Err(invalid("Decision reason must be a string")),
                };
                let mut payloads = [None, None];
                for (slot, key) in payloads
                    .iter_mut()
                    .zip(["modifiedArguments", "elicitation"])
                {
                    match e.get(key) {
                        None => {}
                        Some(v @ Value::Object(_)) => {
                            if json_bytes(v) > MAX_PAYLOAD_BYTES {
                                return Err(limit(format!(
                                    "Decision {key} exceeds {MAX_PAYLOAD_BYTES} bytes"
                                )));
                            }
                            *slot = Some(v.clone());
                        }
                        Some(_) => {
                            return Err(invalid(format!("Decision {key} must be a JSON object")))
                        }
                    }
                }
                let [modified_arguments, elicitation] = payloads;
                out.push(Decision {
                    approval_id: id.to_string(),
                    outcome,
                    reason,
                    modified_arguments,
                    elicitation,
                });
            }
            Ok(Resume {
                expected_version: version,
                legacy: None,
                decisions: out,
            })
        }
    }
}

/// The redacted match scope of a pending or sticky decision. Absent fields of a sticky scope
/// match anything (a sticky decided with modified arguments keeps no arguments hash).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Scope {
    pub tool_name: Option<String>,
    pub effect_kind: Option<String>,
    pub identity: Option<String>,
    pub arguments_hash: Option<String>,
}

fn opt_str(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Scope {
    pub fn from_json(v: &Value) -> Scope {
        Scope {
            tool_name: opt_str(v, "toolName"),
            effect_kind: opt_str(v, "effectKind"),
            identity: opt_str(v, "identity"),
            arguments_hash: opt_str(v, "argumentsHash"),
        }
    }
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        for (k, v) in [
            ("toolName", &self.tool_name),
            ("effectKind", &self.effect_kind),
            ("identity", &self.identity),
            ("argumentsHash", &self.arguments_hash),
        ] {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        }
        Value::Object(m)
    }
    /// Does this (sticky) scope cover `call`? Every field it records must be equal.
    fn covers(&self, call: &Scope) -> bool {
        let eq = |a: &Option<String>, b: &Option<String>| a.is_none() || a == b;
        eq(&self.tool_name, &call.tool_name)
            && eq(&self.effect_kind, &call.effect_kind)
            && eq(&self.identity, &call.identity)
            && eq(&self.arguments_hash, &call.arguments_hash)
    }
}

/// A run-scoped `*_for_run` decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sticky {
    pub scope: Scope,
    pub allow: bool,
    pub reason: Option<String>,
    pub decided_at: String,
}

impl Sticky {
    pub fn from_json(v: &Value) -> Option<Sticky> {
        let allow = match v.get("outcome")?.as_str()? {
            "allow_for_run" => true,
            "reject_for_run" => false,
            _ => return None,
        };
        Some(Sticky {
            scope: Scope::from_json(v.get("scope")?),
            allow,
            reason: opt_str(v, "reason"),
            decided_at: opt_str(v, "decidedAt").unwrap_or_default(),
        })
    }
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("scope".into(), self.scope.to_json());
        m.insert(
            "outcome".into(),
            json!(if self.allow {
                "allow_for_run"
            } else {
                "reject_for_run"
            }),
        );
        if let Some(r) = &self.reason {
            m.insert("reason".into(), json!(r));
        }
        m.insert("decidedAt".into(), json!(self.decided_at));
        Value::Object(m)
    }
}

/// The stickies of a checkpoint; a malformed list is a state error (never silently widened).
pub fn stickies_of(v: Option<&Value>) -> Result<Vec<Sticky>, StateError> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) if items.len() <= HARD_MAX_STICKY => items
            .iter()
            .map(|i| Sticky::from_json(i).ok_or(()))
            .collect::<Result<_, _>>()
            .map_err(|_| StateError("Malformed agent run sticky decisions".into())),
        Some(_) => Err(StateError("Malformed agent run sticky decisions".into())),
    }
}

/// One call of a round as the gate sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateCall {
    /// `interruptBeforeTool`, or the tool's `needsApproval` (its predicate already evaluated).
    pub gated: bool,
    pub tool_call_id: String,
    pub scope: Scope,
}

/// What happens to one call of the round.
#[derive(Debug, Clone, PartialEq)]
pub enum GateAction {
    /// Dispatch now (not gated, or covered by a sticky allow).
    Run,
    /// Blocked by a sticky reject: the blocked result carries this reason.
    Reject(String),
    /// Wait for a decision: the pending record.
    Pending(Value),
}

/// Default text of a pending tool approval.
pub const PENDING_REASON: &str = "Tool side effect requires approval";
/// Default text of a sticky rejection's blocked result.
pub const REJECTED_FOR_RUN_REASON: &str = "Rejected for this run";

/// The gate of one round: each call runs, is blocked by a sticky rejection, or becomes a pending
/// decision. `ids[i]` is the approval id the pending record of call `i` takes (fresh, unguessable
/// ids made by the caller). More than `max_pending` pending decisions refuse the round.
pub fn gate_round(
    calls: &[GateCall],
    stickies: &[Sticky],
    ids: &[String],
    max_pending: usize,
) -> Result<Vec<GateAction>, DecisionError> {
    let mut out = Vec::with_capacity(calls.len());
    let mut pending = 0usize;
    for (i, call) in calls.iter().enumerate() {
        if !call.gated {
            out.push(GateAction::Run);
            continue;
        }
        // The latest matching sticky wins (a later decision overrides an earlier one).
        if let Some(s) = stickies.iter().rev().find(|s| s.scope.covers(&call.scope)) {
            out.push(if s.allow {
                GateAction::Run
            } else {
                GateAction::Reject(
                    s.reason
                        .clone()
                        .unwrap_or_else(|| REJECTED_FOR_RUN_REASON.into()),
                )
            });
            continue;
        }
        pending += 1;
        if pending > max_pending.min(HARD_MAX_PENDING) {
            return Err(limit(format!(
                "Pending decisions exceed {} per run",
                max_pending.min(HARD_MAX_PENDING)
            )));
        }
        let id = ids
            .get(i)
            .cloned()
            .ok_or_else(|| invalid("Missing approval id"))?;
        out.push(GateAction::Pending(json!({
            "approvalId": id,
            "kind": "tool_approval",
            "toolCallId": call.tool_call_id,
            "scope": call.scope.to_json(),
            "reason": PENDING_REASON,
        })));
    }
    Ok(out)
}

/// The redacted interruption of a suspension over its pending records.
pub fn interruption(pending: &[Value], remaining: bool) -> Value {
    let mut m = Map::new();
    m.insert("kind".into(), json!("tool_approval"));
    let reason = if pending.len() == 1 && !remaining {
        PENDING_REASON.to_string()
    } else if remaining {
        format!("{} approval request(s) remain", pending.len())
    } else {
        format!("{} tool side effects require approval", pending.len())
    };
    m.insert("reason".into(), json!(reason));
    if pending.len() == 1 {
        if let Some(id) = pending[0].get("toolCallId") {
            m.insert("toolCallId".into(), id.clone());
        }
        if let Some(n) = pending[0].get("scope").and_then(|s| s.get("toolName")) {
            m.insert("toolName".into(), n.clone());
        }
    }
    m.insert("pendingDecisions".into(), Value::Array(pending.to_vec()));
    Value::Object(m)
}

/// A decision batch applied to the recorded pending set.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// Decided entries, in batch order.
    pub decided: Vec<Decision>,
    /// The run's stickies after this batch.
    pub stickies: Vec<Sticky>,
    /// Pending records left undecided, in recorded order.
    pub remaining: Vec<Value>,
    /// Legacy `deny`: the run ends `denied`.
    pub deny: bool,
}

/// Applies a valid-shaped resume to the checkpoint's pending records and stickies. Atomic: an
/// unknown or foreign id (one non-enumerating error), a duplicate, a payload for the wrong kind, or
/// too many stickies refuse the whole batch. `decided_at` stamps new stickies.
pub fn resolve(
    pending: &[Value],
    stickies: &[Sticky],
    resume: &Resume,
    decided_at: &str,
    max_sticky: usize,
) -> Result<Resolved, DecisionError> {
    if pending.is_empty() {
        return Err(unknown("No pending approval decisions for this run"));
    }
    let id_of = |p: &Value| {
        p.get("approvalId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let decisions: Vec<Decision> = match resume.legacy {
        Some(false) => {
            return Ok(Resolved {
                decided: Vec::new(),
                stickies: stickies.to_vec(),
                remaining: Vec::new(),
                deny: true,
            })
        }
        Some(true) => pending
            .iter()
            .map(|p| Decision {
                approval_id: id_of(p),
                outcome: Outcome::AllowOnce,
                reason: None,
                modified_arguments: None,
                elicitation: None,
            })
            .collect(),
        None => resume.decisions.clone(),
    };
    let mut seen: Vec<&str> = Vec::with_capacity(decisions.len());
    let mut new_stickies = stickies.to_vec();
    for d in &decisions {
        if seen.contains(&d.approval_id.as_str()) {
            return Err(duplicate());
        }
        seen.push(&d.approval_id);
        let target = pending
            .iter()
            .find(|p| id_of(p) == d.approval_id)
            .ok_or_else(|| unknown("Unknown approval decision"))?;
        let kind = target.get("kind").and_then(Value::as_str).unwrap_or("");
        if d.modified_arguments.is_some() && kind != "tool_approval" {
            return Err(scope_error(
                "Modified arguments apply only to tool approvals",
            ));
        }
        if d.elicitation.is_some() && kind != "elicitation" {
            return Err(scope_error(
                "Elicitation payload applies only to elicitation decisions",
            ));
        }
        if d.outcome.sticky() {
            let mut scope = Scope::from_json(target.get("scope").unwrap_or(&Value::Null));
            if d.modified_arguments.is_some() {
                // The modification is one-off: the sticky must not bind the original arguments.
                scope.arguments_hash = None;
            }
            new_stickies.push(Sticky {
                scope,
                allow: d.outcome.allows(),
                reason: d.reason.clone(),
                decided_at: decided_at.to_string(),
            });
        }
    }
    let cap = max_sticky.min(HARD_MAX_STICKY);
    if new_stickies.len() > cap {
        return Err(limit(format!("Sticky decisions exceed {cap} per run")));
    }
    let remaining = pending
        .iter()
        .filter(|p| !seen.contains(&id_of(p).as_str()))
        .cloned()
        .collect();
    Ok(Resolved {
        decided: decisions,
        stickies: new_stickies,
        remaining,
        deny: false,
    })
}

/// `AgentRunStateError` code of a resume that lost its race: the checkpoint moved on since the caller
/// read it (another resume or decision saved a newer version). Read the run again.
pub const RUN_STALE_CODE: &str = "ERR_PRISM_AGENT_RUN_STALE";
/// `AgentRunStateError` code of a run whose claimed tool calls have no known outcome (`dispatched`):
/// a worker claimed them and is still running them or died. No resume runs them; an operator
/// reconciles.
pub const RUN_RECONCILE_CODE: &str = "ERR_PRISM_AGENT_RUN_RECONCILE";
/// `AgentRunStateError`'s general code.
pub const RUN_STATE_CODE: &str = "ERR_PRISM_AGENT_RUN_STATE";

/// A refused resume: `AgentRunStateError` with this code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumeRefused {
    pub code: &'static str,
    pub message: String,
}

impl From<StateError> for ResumeRefused {
    fn from(e: StateError) -> Self {
        Self {
            code: RUN_STATE_CODE,
            message: e.0,
        }
    }
}

/// What a stored checkpoint must match for a resume: its agent, revision and fingerprint, then its
/// version (`…_STALE`), then no claimed call of unknown outcome (`…_RECONCILE`) and a `suspended`
/// status. Checked after the resume's shape, before anything is written.
pub fn check_resumable(
    state: &Value,
    record_version: u64,
    expected_version: u64,
    agent_id: &str,
    definition_revision: &str,
    fingerprint: &str,
    session_id: Option<&str>,
) -> Result<(), ResumeRefused> {
    let s = |k: &str| state.get(k).and_then(Value::as_str);
    if state.get("schemaVersion").and_then(Value::as_u64) != Some(1) {
        return Err(StateError(format!(
            "Unsupported agent run state schemaVersion {}",
            state.get("schemaVersion").unwrap_or(&Value::Null)
        ))
        .into());
    }
    if let Some(sid) = session_id {
        if s("sessionId") != Some(sid) {
            return Err(StateError("Agent run session mismatch".into()).into());
        }
    }
    if s("definitionRevision") != Some(definition_revision)
        || s("agentId") != Some(agent_id)
        || s("fingerprint") != Some(fingerprint)
    {
        return Err(StateError(
            "Agent definition revision or fingerprint mismatch on resume".into(),
        )
        .into());
    }
    // The caller read an older version: another resume or decision saved since (it lost the race).
    // Reading the run again says what it is now, and a run stuck on a claimed call answers
    // `…_RECONCILE` to that caller.
    if record_version != expected_version {
        return Err(ResumeRefused {
            code: RUN_STALE_CODE,
            message: "Stale or non-suspended agent run resume".into(),
        });
    }
    // A suspended run's checkpoint carries its budget (every counter and the deadline), as
    // upstream's does; one written before the budget was saved cannot resume with its budget.
    let counters = state.get("counters").and_then(Value::as_object);
    if counters.is_none() || s("deadlineAt").is_none_or(str::is_empty) {
        return Err(StateError("Malformed agent run state".into()).into());
    }
    let calls = state.get("pendingCalls").and_then(Value::as_array);
    let dispatched = calls.is_some_and(|c| {
        c.iter()
            .any(|e| e.get("status").and_then(Value::as_str) == Some("dispatched"))
    });
    if dispatched && s("status") == Some("running") {
        return Err(ResumeRefused {
            code: RUN_RECONCILE_CODE,
            message: "Agent run needs reconciliation: a dispatched tool call has no known outcome (a worker claimed it and is still running it or died); resume refused".into(),
        });
    }
    if s("status") != Some("suspended") {
        return Err(StateError("Stale or non-suspended agent run resume".into()).into());
    }
    if calls.is_none_or(|c| c.len() > HARD_MAX_PENDING) {
        return Err(StateError("Malformed agent run pending calls".into()).into());
    }
    if dispatched {
        return Err(ResumeRefused {
            code: RUN_RECONCILE_CODE,
            message: "Ambiguous dispatched tool requires operator resolution".into(),
        });
    }
    Ok(())
}

/// The agent fingerprint: `sha256:` + SHA-256 hex of the canonical JSON of what defines the agent
/// (id/name, definition revision, model, instructions, tool definitions, guardrails, loop), made by
/// the caller into one JSON value. Canonical: key order of the caller's objects does not matter.
pub fn fingerprint(material: &Value) -> Result<String, StateError> {
    let text = canonical_json(material)
        .map_err(|_| StateError("Agent definition is not fingerprintable JSON".into()))?;
    Ok(format!("sha256:{}", sha256_hex(&text)))
}

#[cfg(test)]
#[path = "approval_tests.rs"]
mod tests;
