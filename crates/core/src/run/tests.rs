use super::*;
use serde_json::json;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn omitted_grant_is_every_tool_and_empty_is_none() {
    let reg = names(&["a", "b", "c"]);
    let g = resolve_grant(&reg, None, None).unwrap();
    assert_eq!(g.indices, vec![0, 1, 2]);
    assert_eq!(g.stored, None);
    let g = resolve_grant(&reg, Some(&json!([])), None).unwrap();
    assert!(g.indices.is_empty());
    assert_eq!(g.stored, Some(vec![]));
}

#[test]
fn grant_keeps_registry_order_and_names_unknowns() {
    let reg = names(&["a", "b", "c"]);
    let g = resolve_grant(&reg, Some(&json!(["c", "a", "c"])), None).unwrap();
    assert_eq!(g.indices, vec![0, 2]);
    assert_eq!(g.stored, Some(names(&["c", "a"])));
    let e = resolve_grant(&reg, Some(&json!(["a", "x", "y", "x"])), None).unwrap_err();
    assert_eq!(e.message, "Unknown run tool: x, y");
    assert_eq!(e.code, "unknown_run_tool");
    let e = resolve_grant(&reg, Some(&json!("a")), None).unwrap_err();
    assert_eq!((e.kind, e.code), ("TypeError", "invalid_tool_names"));
    let e = resolve_grant(&reg, Some(&json!(["a", 1])), None).unwrap_err();
    assert_eq!(e.code, "invalid_tool_names");
    let many: Vec<String> = (0..1025).map(|i| format!("t{i}")).collect();
    let e = resolve_grant(&reg, Some(&json!(many)), None).unwrap_err();
    assert!(e.message.contains("exceeds"));
}

#[test]
fn resume_never_widens() {
    let current = names(&["echo", "late"]);
    let g = resolve_grant(&current, None, Some(&json!(["echo", "secret"]))).unwrap();
    assert_eq!(g.indices, vec![0]);
    assert_eq!(g.stored, Some(names(&["echo", "secret"])));
    // A request on resume narrows within the stored grant and never fails on missing names.
    let g = resolve_grant(
        &current,
        Some(&json!(["late", "echo"])),
        Some(&json!(["echo"])),
    )
    .unwrap();
    assert_eq!(g.indices, vec![0]);
    assert_eq!(g.stored, Some(names(&["echo"])));
}

#[test]
fn narrowing_keeps_run_order_and_reports_dropped() {
    let ids = names(&["a", "b", "c"]);
    let n = clamp_narrowing(&ids, &json!(["c", "zz", "a", 3])).unwrap();
    assert_eq!(n.kept, vec![0, 2]);
    assert_eq!(n.dropped, names(&["zz", "3"]));
    assert!(clamp_narrowing(&ids, &json!({})).is_err());
}

#[test]
fn ids_hash_depends_on_names_and_order_only() {
    let a = ids_hash(["x", "y"]);
    assert_eq!(a, ids_hash(["x", "y"]));
    assert_ne!(a, ids_hash(["y", "x"]));
    assert_ne!(ids_hash(["xy"]), ids_hash(["x", "y"]));
    assert!(a.starts_with("sha256:") && a.len() == 71);
}

#[test]
fn limits_default_clamp_and_refuse() {
    let l = resolve_limits(&json!(null)).unwrap();
    assert_eq!(
        l,
        Limits {
            max_tool_rounds: 8,
            max_turns: 9
        }
    );
    let l = resolve_limits(&json!({ "maxToolRounds": 1000 })).unwrap();
    assert_eq!(l.max_tool_rounds, 64);
    assert!(resolve_limits(&json!({ "maxToolRounds": -1 })).is_err());
    assert!(resolve_limits(&json!({ "maxToolRounds": 1.5 })).is_err());
    assert!(resolve_limits(&json!({ "maxToolRounds": "2" })).is_err());
    // NaN arrives as "NaN" (JSON has none) and is refused like 0.5.
    assert_eq!(
        resolve_limits(&json!({ "maxToolRounds": "NaN" }))
            .unwrap_err()
            .code,
        "invalid_run_limits"
    );
    assert_eq!(
        resolve_limits(&json!({ "maxTurns": "NaN" }))
            .unwrap_err()
            .kind,
        "RangeError"
    );
    // Infinity is no integer either.
    assert_eq!(
        resolve_limits(&json!({ "maxToolRounds": "Infinity" }))
            .unwrap_err()
            .code,
        "invalid_run_limits"
    );
}

#[test]
fn steps() {
    let l = Limits {
        max_tool_rounds: 1,
        max_turns: 2,
    };
    assert_eq!(next_step(l, 0, 1, 0), Step::Done);
    assert_eq!(next_step(l, 0, 1, 2), Step::Execute);
    assert_eq!(next_step(l, 1, 2, 1), Step::TurnLimit);
    let l = Limits {
        max_tool_rounds: 0,
        max_turns: 1,
    };
    assert_eq!(next_step(l, 0, 1, 1), Step::TurnLimit);
}

#[test]
fn batches() {
    let b = plan_batch(
        4,
        &[false, true, false, false],
        &[false, false, false, false],
    );
    assert_eq!(
        b,
        Batch {
            dispatch: vec![0, 2, 3],
            concurrency: 3
        }
    );
    let b = plan_batch(4, &[false, false], &[false, true]);
    assert_eq!(b.concurrency, 1);
    // An exclusive provider-hosted call does not force a sequential turn.
    let b = plan_batch(4, &[true, false, false], &[true, false, false]);
    assert_eq!(b.concurrency, 2);
    assert_eq!(resolve_concurrency(None).unwrap(), 1);
    assert_eq!(resolve_concurrency(Some(&json!(500))).unwrap(), 64);
    assert!(resolve_concurrency(Some(&json!(0))).is_err());
}

#[test]
fn not_dispatched_messages_name_the_call_and_the_cause() {
    assert_eq!(
        not_dispatched_message("x", "aborted"),
        "Tool call x was not dispatched: the run was aborted"
    );
    assert_eq!(
        not_dispatched_message("x", "turn_limit"),
        "Tool call x was not dispatched: the run reached its tool round limit"
    );
    assert_eq!(
        not_dispatched_message("x", "inert"),
        "Tool call x was not dispatched: tools are inert in the generate-validate-revise loop"
    );
    assert_eq!(
        not_dispatched_message("x", "failed"),
        "Tool call x was not dispatched: the batch stopped before it started"
    );
}
