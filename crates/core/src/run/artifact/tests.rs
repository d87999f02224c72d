use super::*;
use serde_json::json;

fn lp(max_revisions: u32, tool_calls: ToolCalls) -> ArtifactLoop {
    ArtifactLoop {
        max_revisions,
        tool_calls,
    }
}

#[test]
fn strategy_resolution() {
    assert_eq!(
        resolve_strategy(&json!(null)).unwrap(),
        Strategy::SingleShot
    );
    assert_eq!(
        resolve_strategy(&json!({ "strategy": "single-shot" })).unwrap(),
        Strategy::SingleShot
    );
    assert_eq!(
        resolve_strategy(&json!({ "strategy": "generate-validate-revise", "parser": "function" }))
            .unwrap(),
        Strategy::Artifact(lp(DEFAULT_MAX_REVISIONS, ToolCalls::Inert))
    );
    assert_eq!(
        resolve_strategy(&json!({ "strategy": "generate-validate-revise", "maxRevisions": 99, "toolCalls": "bounded" })).unwrap(),
        Strategy::Artifact(lp(MAX_REVISIONS, ToolCalls::Bounded))
    );
    let e = resolve_strategy(&json!({ "strategy": "tree" })).unwrap_err();
    assert_eq!(e.code, "unsupported_loop_strategy");
    let gvr = |extra: Value| {
        let mut v = json!({ "strategy": "generate-validate-revise" });
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        resolve_strategy(&v)
    };
    assert_eq!(
        gvr(json!({ "toolCalls": "all" })).unwrap_err().code,
        "invalid_loop_options"
    );
    assert_eq!(
        gvr(json!({ "validator": "string" })).unwrap_err().code,
        "invalid_loop_options"
    );
    assert_eq!(
        gvr(json!({ "maxRevisions": -1 })).unwrap_err().code,
        "invalid_run_limits"
    );
    assert_eq!(
        gvr(json!({ "maxRevisions": 0 })).unwrap(),
        Strategy::Artifact(lp(0, ToolCalls::Inert))
    );
}

#[test]
fn response_steps() {
    let inert = lp(2, ToolCalls::Inert);
    let bounded = lp(2, ToolCalls::Bounded);
    assert_eq!(response_step(inert, 8, 0, 0), ResponseStep::Candidate);
    assert_eq!(response_step(inert, 8, 0, 3), ResponseStep::Candidate);
    assert_eq!(response_step(bounded, 8, 0, 0), ResponseStep::Candidate);
    assert_eq!(response_step(bounded, 2, 1, 3), ResponseStep::Tools);
    assert_eq!(
        response_step(bounded, 2, 2, 1),
        ResponseStep::ToolRoundLimit
    );
    assert_eq!(
        response_step(bounded, 0, 0, 1),
        ResponseStep::ToolRoundLimit
    );
    match tool_round_limit(2) {
        Verdict::Fail {
            reason,
            message,
            rejection: None,
        } => {
            assert_eq!(reason.as_str(), "tool_round_limit");
            assert!(message.contains("tool round limit (2)"));
        }
        v => panic!("{v:?}"),
    }
}

#[test]
fn validator_answers() {
    assert_eq!(rejection_of(None), None);
    assert_eq!(rejection_of(Some(&json!(true))), None);
    assert_eq!(
        rejection_of(Some(&json!(false))).as_deref(),
        Some(DEFAULT_REJECTION)
    );
    assert_eq!(
        rejection_of(Some(&json!("too short"))).as_deref(),
        Some("too short")
    );
    assert_eq!(
        rejection_of(Some(&json!({ "message": "bad field" }))).as_deref(),
        Some("bad field")
    );
    assert_eq!(
        rejection_of(Some(&json!({}))).as_deref(),
        Some(DEFAULT_REJECTION)
    );
    assert_eq!(
        rejection_of(Some(&json!(null))).as_deref(),
        Some(DEFAULT_REJECTION)
    );
    assert_eq!(
        rejection_of(Some(&json!(""))).as_deref(),
        Some(DEFAULT_REJECTION)
    );
    // `@arnilo/prism`'s ArtifactValidation: `{ ok: true }` accepts, errors are joined one per line.
    assert_eq!(rejection_of(Some(&json!({ "ok": true }))), None);
    assert_eq!(
        rejection_of(Some(
            &json!({ "ok": false, "errors": [{ "message": "err1" }, { "message": "err2" }] })
        ))
        .as_deref(),
        Some("err1\nerr2")
    );
    assert_eq!(
        rejection_of(Some(&json!({ "ok": false }))).as_deref(),
        Some(INVALID_ARTIFACT)
    );
    let long = "é".repeat(MAX_REJECTION_BYTES);
    let m = rejection_of(Some(&json!(long))).unwrap();
    assert!(m.len() <= MAX_REJECTION_BYTES + "…".len() && m.ends_with('…'));
}

#[test]
fn verdicts_count_revisions() {
    let l = lp(2, ToolCalls::Inert);
    assert_eq!(verdict(l, 0, &Outcome::Validated(None)), Verdict::Accept);
    match verdict(l, 0, &Outcome::Validated(Some(json!("no title")))) {
        Verdict::Revise {
            revision,
            reason,
            message,
            request,
        } => {
            assert_eq!(
                (revision, reason, message.as_str()),
                (1, Rejection::ValidationFailed, "no title")
            );
            // The request is the rejection itself, as `@arnilo/prism`'s default repairer writes it.
            assert_eq!(request, "no title");
        }
        v => panic!("{v:?}"),
    }
    match verdict(l, 1, &Outcome::ParseError("Unexpected token".into())) {
        Verdict::Revise {
            revision,
            reason,
            request,
            ..
        } => {
            assert_eq!((revision, reason), (2, Rejection::ParseError));
            assert_eq!(request, "Unexpected token");
        }
        v => panic!("{v:?}"),
    }
    match verdict(l, 2, &Outcome::Validated(Some(json!(false)))) {
        Verdict::Fail {
            reason,
            message,
            rejection,
        } => {
            assert_eq!(reason, FailReason::MaxRevisions);
            assert_eq!(
                message,
                format!("The artifact was not accepted after 2 revisions: {DEFAULT_REJECTION}")
            );
            assert_eq!(
                rejection,
                Some((Rejection::ValidationFailed, DEFAULT_REJECTION.to_string()))
            );
        }
        v => panic!("{v:?}"),
    }
    // maxRevisions 0: the first rejection ends the run; an acceptance still wins at the cap.
    assert!(matches!(
        verdict(
            lp(0, ToolCalls::Inert),
            0,
            &Outcome::ParseError(String::new())
        ),
        Verdict::Fail {
            reason: FailReason::MaxRevisions,
            ..
        }
    ));
    assert_eq!(
        verdict(
            lp(0, ToolCalls::Inert),
            0,
            &Outcome::Validated(Some(json!(true)))
        ),
        Verdict::Accept
    );
    assert!(matches!(
        verdict(l, 0, &Outcome::ValidatorError),
        Verdict::Fail {
            reason: FailReason::ValidatorError,
            rejection: None,
            ..
        }
    ));
}
