//! napi exports of the approval decisions (`crates/core/src/run/approval.rs`): JSON text in, JSON text out.
//! A refusal comes back as `{"error":{"kind","code","message"}}` so `lib/approval.js` throws the
//! documented error class.

// napi registers these exports; a `cargo test` build sees no caller.
#![cfg_attr(test, allow(dead_code))]

use napi_derive::napi;
use serde_json::{json, Value};

use prism_tools_core::run::approval as ap;

pub(crate) fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::String(ap::NOT_JSON.into()))
}

fn decision_error(e: ap::DecisionError) -> String {
    json!({ "error": { "kind": "decision", "code": e.code, "message": e.message } }).to_string()
}

fn state_error(e: ap::StateError) -> String {
    json!({ "error": { "kind": "state", "code": "ERR_PRISM_AGENT_RUN_STATE", "message": e.0 } })
        .to_string()
}

fn list_of(text: &str) -> Vec<Value> {
    match parse(text) {
        Value::Array(a) => a,
        _ => Vec::new(),
    }
}

/// The approval bounds, as JSON.
#[napi(js_name = "approvalLimits")]
pub fn approval_limits() -> String {
    json!({
        "DEFAULT_MAX_PENDING_DECISIONS": ap::DEFAULT_MAX_PENDING,
        "HARD_MAX_PENDING_DECISIONS": ap::HARD_MAX_PENDING,
        "DEFAULT_MAX_STICKY_DECISIONS": ap::DEFAULT_MAX_STICKY,
        "HARD_MAX_STICKY_DECISIONS": ap::HARD_MAX_STICKY,
        "MAX_DECISION_REASON_BYTES": ap::MAX_REASON_BYTES,
        "MAX_DECISION_PAYLOAD_BYTES": ap::MAX_PAYLOAD_BYTES,
        "NOT_JSON": ap::NOT_JSON,
    })
    .to_string()
}

/// `{"ok":true}` or a decision error: the shape of a resume input.
#[napi(js_name = "approvalCheckResume")]
pub fn approval_check_resume(resume: String) -> String {
    match ap::check_resume(&parse(&resume)) {
        Ok(_) => json!({ "ok": true }).to_string(),
        Err(e) => decision_error(e),
    }
}

/// The gate of one round. `calls`: `[{gated, toolCallId, scope}]`; `stickies`: the run's sticky
/// records; `ids`: one fresh approval id per call. Answers `{"actions":[..]}`, each
/// `{"action":"run"}`, `{"action":"reject","reason"}` or `{"action":"pending","pending":{..}}`.
#[napi(js_name = "approvalGateRound")]
pub fn approval_gate_round(
    calls: String,
    stickies: String,
    ids: String,
    max_pending: u32,
) -> String {
    let calls: Vec<ap::GateCall> = list_of(&calls)
        .iter()
        .map(|c| ap::GateCall {
            gated: c.get("gated").and_then(Value::as_bool).unwrap_or(true),
            tool_call_id: c
                .get("toolCallId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            scope: ap::Scope::from_json(c.get("scope").unwrap_or(&Value::Null)),
        })
        .collect();
    let stickies = match ap::stickies_of(Some(&parse(&stickies))) {
        Ok(s) => s,
        Err(e) => return state_error(e),
    };
    let ids: Vec<String> = list_of(&ids)
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect();
    match ap::gate_round(&calls, &stickies, &ids, max_pending as usize) {
        Ok(actions) => {
            let actions: Vec<Value> = actions
                .into_iter()
                .map(|a| match a {
                    ap::GateAction::Run => json!({ "action": "run" }),
                    ap::GateAction::Reject(reason) => {
                        json!({ "action": "reject", "reason": reason })
                    }
                    ap::GateAction::Pending(p) => json!({ "action": "pending", "pending": p }),
                })
                .collect();
            json!({ "actions": actions }).to_string()
        }
        Err(e) => decision_error(e),
    }
}

/// The redacted interruption over pending records (`remaining`: after a partial batch).
#[napi(js_name = "approvalInterruption")]
pub fn approval_interruption(pending: String, remaining: bool) -> String {
    ap::interruption(&list_of(&pending), remaining).to_string()
}

/// A decision batch applied to the recorded pending set and stickies:
/// `{"decided":[..],"stickies":[..],"remaining":[..],"deny":bool}` or a decision error.
#[napi(js_name = "approvalResolve")]
pub fn approval_resolve(
    pending: String,
    stickies: String,
    resume: String,
    decided_at: String,
    max_sticky: u32,
) -> String {
    let resume = match ap::check_resume(&parse(&resume)) {
        Ok(r) => r,
        Err(e) => return decision_error(e),
    };
    let stickies = match ap::stickies_of(Some(&parse(&stickies))) {
        Ok(s) => s,
        Err(e) => return state_error(e),
    };
    match ap::resolve(
        &list_of(&pending),
        &stickies,
        &resume,
        &decided_at,
        max_sticky as usize,
    ) {
        Ok(r) => json!({
            "decided": r.decided.iter().map(ap::Decision::to_json).collect::<Vec<_>>(),
            "stickies": r.stickies.iter().map(ap::Sticky::to_json).collect::<Vec<_>>(),
            "remaining": r.remaining,
            "deny": r.deny,
        })
        .to_string(),
        Err(e) => decision_error(e),
    }
}

/// `{"ok":true}` or a state error: may this checkpoint be resumed by this agent at this version?
#[napi(js_name = "approvalCheckResumable")]
pub fn approval_check_resumable(
    state: String,
    record_version: f64,
    expected_version: f64,
    agent_id: String,
    definition_revision: String,
    fingerprint: String,
    session_id: Option<String>,
) -> String {
    let as_u64 = |f: f64| {
        if f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f < 9.007_199_254_740_992e15 {
            f as u64
        } else {
            u64::MAX
        }
    };
    match ap::check_resumable(
        &parse(&state),
        as_u64(record_version),
        as_u64(expected_version),
        &agent_id,
        &definition_revision,
        &fingerprint,
        session_id.as_deref(),
    ) {
        Ok(()) => json!({ "ok": true }).to_string(),
        Err(e) => json!({ "error": { "kind": "state", "code": e.code, "message": e.message } })
            .to_string(),
    }
}

/// `{"fingerprint":"sha256:.."}` or a state error, over the agent's definition as JSON.
#[napi(js_name = "approvalFingerprint")]
pub fn approval_fingerprint(material: String) -> String {
    match ap::fingerprint(&parse(&material)) {
        Ok(f) => json!({ "fingerprint": f }).to_string(),
        Err(e) => state_error(e),
    }
}
