use super::*;

fn resume(v: Value) -> Result<Resume, DecisionError> {
    check_resume(&v)
}
fn code(r: Result<Resume, DecisionError>) -> &'static str {
    r.unwrap_err().code
}
fn call(name: &str, gated: bool, hash: &str) -> GateCall {
    GateCall {
        gated,
        tool_call_id: format!("c_{name}"),
        scope: Scope {
            tool_name: Some(name.into()),
            arguments_hash: Some(hash.into()),
            ..Scope::default()
        },
    }
}
fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("approval_{i}")).collect()
}

#[test]
fn resume_shape_is_checked_before_anything() {
    assert_eq!(code(resume(json!(null))), "ERR_PRISM_DECISION_INVALID");
    assert_eq!(code(resume(json!([]))), "ERR_PRISM_DECISION_INVALID");
    for v in [
        json!(0),
        json!(-1),
        json!(1.5),
        json!("1"),
        json!(9007199254740992u64),
    ] {
        assert_eq!(
            code(resume(
                json!({ "expectedVersion": v, "decision": "approve" })
            )),
            "ERR_PRISM_DECISION_INVALID"
        );
    }
    assert_eq!(
        code(resume(json!({ "expectedVersion": 1 }))),
        "ERR_PRISM_DECISION_INVALID"
    );
    assert_eq!(
        code(resume(
            json!({ "expectedVersion": 1, "decision": "sideways" })
        )),
        "ERR_PRISM_DECISION_INVALID"
    );
    assert_eq!(
        code(resume(
            json!({ "expectedVersion": 1, "decision": "approve", "decisions": [] })
        )),
        "ERR_PRISM_DECISION_INVALID"
    );
    assert_eq!(
        code(resume(json!({ "expectedVersion": 1, "decisions": [] }))),
        "ERR_PRISM_DECISION_INVALID"
    );
    assert_eq!(
        code(resume(json!({ "expectedVersion": 1, "decisions": [1] }))),
        "ERR_PRISM_DECISION_INVALID"
    );
    assert_eq!(
        code(resume(
            json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "a", "outcome": "maybe" }] })
        )),
        "ERR_PRISM_DECISION_INVALID"
    );
    assert_eq!(
        code(resume(
            json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "a", "outcome": "allow_once", "reason": NOT_JSON }] })
        )),
        "ERR_PRISM_DECISION_INVALID"
    );
    let ok = resume(json!({ "expectedVersion": 3, "decision": "deny" })).unwrap();
    assert_eq!(ok.legacy, Some(false));
    assert_eq!(ok.expected_version, 3);
}

#[test]
fn resume_bounds_and_duplicates() {
    let big = "x".repeat(MAX_REASON_BYTES + 1);
    assert_eq!(
        code(resume(
            json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "a", "outcome": "reject_once", "reason": big }] })
        )),
        "ERR_PRISM_DECISION_LIMIT"
    );
    let fits = "é".repeat(MAX_REASON_BYTES / 2);
    assert!(resume(json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "a", "outcome": "reject_once", "reason": fits }] })).is_ok());
    let payload = json!({ "v": "y".repeat(MAX_PAYLOAD_BYTES) });
    assert_eq!(
        code(resume(
            json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "a", "outcome": "allow_once", "modifiedArguments": payload }] })
        )),
        "ERR_PRISM_DECISION_LIMIT"
    );
    assert_eq!(
        code(resume(
            json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "a", "outcome": "allow_once", "modifiedArguments": [1] }] })
        )),
        "ERR_PRISM_DECISION_INVALID"
    );
    assert_eq!(
        code(resume(json!({ "expectedVersion": 1, "decisions": [
            { "approvalId": "a", "outcome": "allow_once" }, { "approvalId": "a", "outcome": "reject_once" }
        ] }))),
        "ERR_PRISM_DECISION_DUPLICATE"
    );
    let many: Vec<Value> = (0..=HARD_MAX_PENDING)
        .map(|i| json!({ "approvalId": format!("a{i}"), "outcome": "allow_once" }))
        .collect();
    assert_eq!(
        code(resume(json!({ "expectedVersion": 1, "decisions": many }))),
        "ERR_PRISM_DECISION_LIMIT"
    );
    let long_id = "i".repeat(MAX_APPROVAL_ID_CHARS + 1);
    assert_eq!(
        code(resume(
            json!({ "expectedVersion": 1, "decisions": [{ "approvalId": long_id, "outcome": "allow_once" }] })
        )),
        "ERR_PRISM_DECISION_INVALID"
    );
}

#[test]
fn gate_collects_one_pending_per_gated_call_and_honours_stickies() {
    let calls = [
        call("pay", true, "h1"),
        call("read", false, "h2"),
        call("pay", true, "h3"),
    ];
    let out = gate_round(&calls, &[], &ids(3), DEFAULT_MAX_PENDING).unwrap();
    assert!(matches!(out[0], GateAction::Pending(_)));
    assert_eq!(out[1], GateAction::Run);
    let GateAction::Pending(p) = &out[2] else {
        panic!("pending")
    };
    assert_eq!(p["approvalId"], "approval_2");
    assert_eq!(p["scope"]["argumentsHash"], "h3");
    assert!(p.get("arguments").is_none());

    let allow = Sticky {
        scope: calls[0].scope.clone(),
        allow: true,
        reason: None,
        decided_at: String::new(),
    };
    let out = gate_round(&calls, std::slice::from_ref(&allow), &ids(3), 32).unwrap();
    assert_eq!(out[0], GateAction::Run);
    assert!(
        matches!(out[2], GateAction::Pending(_)),
        "other arguments are not covered"
    );

    let reject_all = Sticky {
        scope: Scope {
            tool_name: Some("pay".into()),
            ..Scope::default()
        },
        allow: false,
        reason: Some("no payments".into()),
        decided_at: String::new(),
    };
    let out = gate_round(&calls, &[allow, reject_all], &ids(3), 32).unwrap();
    assert_eq!(out[0], GateAction::Reject("no payments".into()));
    assert_eq!(out[2], GateAction::Reject("no payments".into()));
}

#[test]
fn gate_refuses_too_many_pending() {
    let calls: Vec<GateCall> = (0..33).map(|i| call(&format!("t{i}"), true, "h")).collect();
    let e = gate_round(&calls, &[], &ids(33), DEFAULT_MAX_PENDING).unwrap_err();
    assert_eq!(e.code, "ERR_PRISM_DECISION_LIMIT");
    assert!(gate_round(&calls[..32], &[], &ids(32), DEFAULT_MAX_PENDING).is_ok());
    // A host limit above the hard cap is clamped to it.
    let calls: Vec<GateCall> = (0..129)
        .map(|i| call(&format!("t{i}"), true, "h"))
        .collect();
    assert!(gate_round(&calls, &[], &ids(129), 1000).is_err());
}

fn pending_set() -> Vec<Value> {
    let calls = [call("pay", true, "h1"), call("send", true, "h2")];
    gate_round(&calls, &[], &ids(2), 32)
        .unwrap()
        .into_iter()
        .map(|a| match a {
            GateAction::Pending(p) => p,
            _ => unreachable!(),
        })
        .collect()
}

#[test]
fn resolve_partial_batch_sticky_and_errors() {
    let pending = pending_set();
    let r = resume(json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "approval_1", "outcome": "reject_for_run", "reason": "no" }] })).unwrap();
    let out = resolve(&pending, &[], &r, "t", DEFAULT_MAX_STICKY).unwrap();
    assert_eq!(out.remaining.len(), 1);
    assert_eq!(out.remaining[0]["approvalId"], "approval_0");
    assert_eq!(out.stickies.len(), 1);
    assert!(!out.stickies[0].allow);
    assert_eq!(out.stickies[0].scope.arguments_hash.as_deref(), Some("h2"));

    let foreign = resume(json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "approval_from_elsewhere", "outcome": "allow_once" }] })).unwrap();
    assert_eq!(
        resolve(&pending, &[], &foreign, "t", 64).unwrap_err().code,
        "ERR_PRISM_DECISION_UNKNOWN"
    );
    let elicit = resume(json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "approval_0", "outcome": "allow_once", "elicitation": {} }] })).unwrap();
    assert_eq!(
        resolve(&pending, &[], &elicit, "t", 64).unwrap_err().code,
        "ERR_PRISM_DECISION_SCOPE"
    );
    let modified = resume(json!({ "expectedVersion": 1, "decisions": [{ "approvalId": "approval_0", "outcome": "allow_for_run", "modifiedArguments": { "a": 1 } }] })).unwrap();
    let out = resolve(&pending, &[], &modified, "t", 64).unwrap();
    assert_eq!(out.stickies[0].scope.arguments_hash, None);

    let full: Vec<Sticky> = (0..DEFAULT_MAX_STICKY)
        .map(|_| out.stickies[0].clone())
        .collect();
    assert_eq!(
        resolve(&pending, &full, &modified, "t", DEFAULT_MAX_STICKY)
            .unwrap_err()
            .code,
        "ERR_PRISM_DECISION_LIMIT"
    );
    assert_eq!(
        resolve(&[], &[], &modified, "t", 64).unwrap_err().code,
        "ERR_PRISM_DECISION_UNKNOWN"
    );
}

#[test]
fn legacy_decisions() {
    let pending = pending_set();
    let approve = resume(json!({ "expectedVersion": 1, "decision": "approve" })).unwrap();
    let out = resolve(&pending, &[], &approve, "t", 64).unwrap();
    assert_eq!(out.decided.len(), 2);
    assert!(out.decided.iter().all(|d| d.outcome == Outcome::AllowOnce));
    assert!(out.remaining.is_empty());
    let deny = resume(json!({ "expectedVersion": 1, "decision": "deny" })).unwrap();
    assert!(resolve(&pending, &[], &deny, "t", 64).unwrap().deny);
}

#[test]
fn resumable_checks_fingerprint_version_and_ambiguity() {
    let state = json!({
        "schemaVersion": 1, "agentId": "a", "definitionRevision": "r1", "fingerprint": "sha256:f",
        "sessionId": "s", "status": "suspended",
        "pendingCalls": [{ "approvalId": "x", "status": "ready" }],
        "counters": { "turns": 1, "toolRounds": 1 }, "deadlineAt": "2026-01-01T00:00:00.000Z",
    });
    assert!(check_resumable(&state, 2, 2, "a", "r1", "sha256:f", Some("s")).is_ok());
    // A checkpoint written before the budget was saved (`counters: { rounds, turns }`, no
    // `deadlineAt`) is refused rather than resumed with a fresh budget.
    let mut before = state.clone();
    before["counters"] = json!({ "rounds": 1, "turns": 1 });
    before.as_object_mut().unwrap().remove("deadlineAt");
    let e = check_resumable(&before, 2, 2, "a", "r1", "sha256:f", None).unwrap_err();
    assert_eq!(e.message, "Malformed agent run state");
    // A state that is no longer suspended is stale first, whatever it carries.
    let e = check_resumable(&before, 2, 1, "a", "r1", "sha256:f", None).unwrap_err();
    assert_eq!(e.message, "Stale or non-suspended agent run resume");
    let e = check_resumable(&state, 2, 1, "a", "r1", "sha256:f", None).unwrap_err();
    assert_eq!(e.message, "Stale or non-suspended agent run resume");
    assert_eq!(e.code, "ERR_PRISM_AGENT_RUN_STALE");
    let e = check_resumable(&state, 2, 2, "a", "r1", "sha256:g", None).unwrap_err();
    assert!(e.message.contains("fingerprint"));
    assert_eq!(e.code, "ERR_PRISM_AGENT_RUN_STATE");
    assert!(check_resumable(&state, 2, 2, "a", "r2", "sha256:f", None).is_err());
    assert!(check_resumable(&state, 2, 2, "a", "r1", "sha256:f", Some("t")).is_err());
    let mut dispatched = state.clone();
    dispatched["pendingCalls"][0]["status"] = json!("dispatched");
    let e = check_resumable(&dispatched, 2, 2, "a", "r1", "sha256:f", None).unwrap_err();
    assert!(e.message.contains("Ambiguous"));
    assert_eq!(e.code, "ERR_PRISM_AGENT_RUN_RECONCILE");
    // A run claimed by a worker (running, a call dispatched): a caller holding an older version lost
    // the race (stale); one holding the current version is told the run needs reconciliation.
    let mut claimed = dispatched.clone();
    claimed["status"] = json!("running");
    let e = check_resumable(&claimed, 3, 2, "a", "r1", "sha256:f", None).unwrap_err();
    assert_eq!(e.code, "ERR_PRISM_AGENT_RUN_STALE");
    let e = check_resumable(&claimed, 3, 3, "a", "r1", "sha256:f", None).unwrap_err();
    assert_eq!(e.code, "ERR_PRISM_AGENT_RUN_RECONCILE");
    assert!(e.message.starts_with("Agent run needs reconciliation"));
    let mut done = state.clone();
    done["status"] = json!("completed");
    let e = check_resumable(&done, 2, 2, "a", "r1", "sha256:f", None).unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (
            "ERR_PRISM_AGENT_RUN_STATE",
            "Stale or non-suspended agent run resume"
        )
    );
}

#[test]
fn every_decision_code_is_declared() {
    let errors = [
        invalid("x"),
        limit("x"),
        duplicate(),
        unknown("x"),
        scope_error("x"),
    ];
    for e in errors {
        assert!(crate::error::APPROVAL_CODES.contains(&e.code), "{}", e.code);
    }
}

#[test]
fn fingerprint_is_canonical_and_sensitive() {
    let a = fingerprint(
        &json!({ "id": "a", "tools": [{ "name": "t", "parameters": { "x": 1, "y": 2 } }] }),
    )
    .unwrap();
    let b = fingerprint(
        &json!({ "tools": [{ "parameters": { "y": 2, "x": 1 }, "name": "t" }], "id": "a" }),
    )
    .unwrap();
    let c = fingerprint(
        &json!({ "id": "a", "tools": [{ "name": "t", "parameters": { "x": 1, "y": 3 } }] }),
    )
    .unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert!(a.starts_with("sha256:") && a.len() == 7 + 64);
}
