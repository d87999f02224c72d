//! The run machine driven without Node: the host's loop is played by hand (a provider turn, its
//! usage, a tool round, a suspension, a resume), and the machine's answers are checked.

use serde_json::{json, Value};

use super::*;
use crate::run::budget::{resolve_run_limits, Charged, Usage, HARD_RUN_LIMITS};

const NOW: f64 = 1_700_000_000_000.0;

fn limits(v: Value) -> RunLimits {
    resolve_run_limits(None, Some(&v)).unwrap()
}

fn open(v: Value, choice: ToolChoice) -> RunMachine {
    RunMachine::open(limits(v), choice, None, None, NOW, 0.0).unwrap()
}

const RAISE: Charged = Charged {
    first: true,
    raise: true,
};

fn tokens(output: f64, cost: f64) -> Usage {
    Usage {
        input_tokens: Some(1.0),
        output_tokens: Some(output),
        cost: Some(cost),
        currency: Some("USD".into()),
        ..Usage::default()
    }
}

#[test]
fn limits_resolve_with_upstream_defaults_narrowing_and_messages() {
    let l = resolve_run_limits(None, None).unwrap();
    assert_eq!(l.max, crate::run::budget::DEFAULT_RUN_LIMITS);
    assert_eq!(l.cost, None);
    let agent = json!({ "maxTurns": 10, "maxCost": { "amount": 5, "currency": "USD" } });
    let l = resolve_run_limits(
        Some(&agent),
        Some(&json!({ "maxTurns": 20, "maxToolCalls": 3 })),
    )
    .unwrap();
    assert_eq!(l.get(Limit::Turns), Some(10)); // a run can only lower the agent's limit
    assert_eq!(l.get(Limit::ToolCalls), Some(3));
    assert_eq!(l.cost.as_ref().map(|c| c.amount), Some(5.0));
    let run_cost = json!({ "maxCost": { "amount": 2, "currency": "USD" } });
    let l = resolve_run_limits(Some(&agent), Some(&run_cost)).unwrap();
    assert_eq!(l.cost.unwrap().amount, 2.0);
    let e = resolve_run_limits(
        Some(&agent),
        Some(&json!({ "maxCost": { "amount": 2, "currency": "EUR" } })),
    )
    .unwrap_err();
    assert_eq!(e.message, "Run limit currencies must match when narrowed");
    for bad in [
        json!(0),
        json!(65),
        json!(1.5),
        json!("3"),
        json!(null),
        json!("NaN"),
    ] {
        let e = resolve_run_limits(None, Some(&json!({ "maxTurns": bad }))).unwrap_err();
        assert_eq!((e.kind, e.code), ("TypeError", "invalid_run_limits"));
        assert_eq!(
            e.message,
            "maxTurns must be a positive safe integer at most 64"
        );
    }
    let e = resolve_run_limits(None, Some(&json!([1]))).unwrap_err();
    assert_eq!(e.message, "Run limits must be an object");
    for bad in [
        json!({ "amount": -1, "currency": "USD" }),
        json!({ "amount": 10001, "currency": "USD" }),
        json!({ "amount": 1, "currency": " \u{feff}" }),
        json!({ "amount": 1 }),
        json!(true),
    ] {
        let e = resolve_run_limits(None, Some(&json!({ "maxCost": bad }))).unwrap_err();
        assert_eq!(
            e.message,
            "maxCost requires a finite amount from 0 through 10000 and currency"
        );
    }
    // A run's falsy maxCost wins over the agent's, as upstream's `??` does.
    assert_eq!(
        resolve_run_limits(Some(&agent), Some(&json!({ "maxCost": 0 })))
            .unwrap()
            .cost,
        None
    );
    assert_eq!(
        HARD_RUN_LIMITS[Limit::WallTimeMs as usize],
        30 * 60_000,
        "hard caps in upstream's order"
    );
}

#[test]
fn limits_and_counters_keep_upstreams_key_order() {
    let l = resolve_run_limits(
        None,
        Some(&json!({ "maxCost": { "amount": 1, "currency": "USD" } })),
    )
    .unwrap();
    let text = l.to_text();
    assert!(text.starts_with(r#"{"maxTurns":16,"maxProviderAttempts":24,"maxToolRounds":8,"#));
    assert!(text.ends_with(r#""maxTotalTokens":50000,"maxCost":{"amount":1.0,"currency":"USD"}}"#));
    let m = open(json!({}), ToolChoice::Unset);
    let snap = m.budget.snapshot(0.0);
    assert!(snap.starts_with(
        r#"{"turns":0,"providerAttempts":0,"toolRounds":0,"toolCalls":0,"wallTimeMs":0,"#
    ));
    assert!(snap.ends_with(r#""totalTokens":0,"cost":0.0}"#));
}

#[test]
fn the_first_breach_is_recorded_once_and_raised_where_it_is_charged() {
    let mut m = open(json!({ "maxToolCalls": 2 }), ToolChoice::Unset);
    assert_eq!(m.tool_call(), Charged::WITHIN);
    assert_eq!(m.tool_call(), Charged::WITHIN);
    assert_eq!(m.tool_call(), RAISE);
    let b = m.breach().unwrap();
    assert_eq!(
        (b.limit, b.maximum, b.observed),
        (Limit::ToolCalls, 2.0, 3.0)
    );
    // A later breach raises the first one again; it is not recorded twice.
    assert_eq!(
        m.tool_call(),
        Charged {
            first: false,
            raise: true
        }
    );
    assert_eq!(m.breach().unwrap().observed, 3.0);
    // Within another limit, a later charge passes.
    assert_eq!(m.response(10), Charged::WITHIN);
    let e = m.budget.charge(Limit::Turns, -1.0).unwrap_err();
    assert_eq!(
        e.message,
        "Run limit delta must be a non-negative safe integer"
    );
    let e = m.budget.charge(Limit::Turns, 2f64.powi(53)).unwrap_err();
    assert_eq!(e.code, "invalid_run_limits");
}

#[test]
fn usage_charges_tokens_then_cost_and_stops_at_the_first_raise() {
    let mut m = open(
        json!({ "maxOutputTokens": 10, "maxCost": { "amount": 1, "currency": "USD" } }),
        ToolChoice::Unset,
    );
    assert_eq!(m.usage(Some(&tokens(6.0, 0.4))).unwrap(), Charged::WITHIN);
    assert_eq!(m.usage(Some(&tokens(6.0, 0.4))).unwrap(), RAISE);
    let b = m.breach().unwrap();
    assert_eq!((b.limit, b.observed), (Limit::OutputTokens, 12.0));
    // The raise stopped the charge before the total and the cost.
    let snap: Value = serde_json::from_str(&m.budget.snapshot(0.0)).unwrap();
    assert_eq!(snap["totalTokens"], json!(7));
    assert_eq!(snap["cost"], json!(0.4));

    let mut m = open(
        json!({ "maxCost": { "amount": 1, "currency": "USD" } }),
        ToolChoice::Unset,
    );
    assert_eq!(m.usage(None).unwrap(), RAISE);
    let b = m.breach().unwrap();
    assert_eq!(
        (b.limit, b.maximum, b.observed, b.currency.as_deref()),
        (Limit::Cost, 1.0, f64::INFINITY, Some("USD"))
    );
    let mut m = open(json!({}), ToolChoice::Unset);
    assert_eq!(m.usage(None).unwrap(), Charged::WITHIN);
    let bad = Usage {
        output_tokens: Some(f64::NAN),
        ..Usage::default()
    };
    assert_eq!(
        m.usage(Some(&bad)).unwrap_err().message,
        "Provider usage outputTokens must be a non-negative safe integer"
    );
    let bad = Usage {
        cost: Some(-1.0),
        ..Usage::default()
    };
    assert_eq!(
        m.usage(Some(&bad)).unwrap_err().message,
        "Provider usage cost must be finite and non-negative"
    );
}

#[test]
fn the_wall_clock_breaches_at_the_deadline_without_raising() {
    let mut m = open(json!({ "maxWallTimeMs": 1000 }), ToolChoice::Unset);
    assert_eq!(m.budget.remaining_ms(NOW + 400.0), 600.0);
    assert_eq!(m.clock(NOW + 999.0), Charged::WITHIN);
    assert_eq!(
        m.clock(NOW + 1000.0),
        Charged {
            first: true,
            raise: false
        }
    );
    assert_eq!(m.breach().unwrap().limit, Limit::WallTimeMs);
    assert_eq!(m.end_status("aborted"), "failed");
    assert_eq!(m.end_status("suspended"), "suspended");
    let quiet = open(json!({}), ToolChoice::Unset);
    assert_eq!(quiet.end_status("aborted"), "aborted");
}

/// One turn of the approval scenario: the provider asks for one call, which runs, and reports
/// 2 output tokens costing 0.2 USD; then the run suspends on the next gated call. Answers the
/// first raised breach of the turn.
fn approval_turn(m: &mut RunMachine) -> Option<Limit> {
    let raised = |c: Charged, m: &RunMachine| c.raise.then(|| m.breach().unwrap().limit);
    if let Some(l) = raised(m.begin_turn(), m) {
        return Some(l);
    }
    if let Some(l) = raised(m.attempt(100), m) {
        return Some(l);
    }
    if let Some(l) = raised(m.usage(Some(&tokens(2.0, 0.2))).unwrap(), m) {
        return Some(l);
    }
    assert!(
        matches!(m.after_turn(&[Some("gated")]), AfterTurn::Dispatch { ref refused } if refused.is_empty())
    );
    if let Some(l) = raised(m.begin_round(), m) {
        return Some(l);
    }
    raised(m.tool_call(), m)
}

#[test]
fn a_resumed_run_goes_on_with_the_same_budget_and_breaches_where_one_run_would() {
    let scenario = json!({ "maxToolCalls": 3, "maxOutputTokens": 10, "maxCost": { "amount": 1, "currency": "USD" } });
    // One run that never suspends: the fourth tool call breaches.
    let mut whole = open(scenario.clone(), ToolChoice::Unset);
    let mut breached = None;
    for _ in 0..6 {
        breached = approval_turn(&mut whole);
        if breached.is_some() {
            break;
        }
    }
    assert_eq!(breached, Some(Limit::ToolCalls));
    assert_eq!(whole.turns(), 4);

    // The same run suspended after every turn and resumed from its checkpoint (as JSON, as the
    // store keeps it): the same breach on the same turn.
    let mut m = open(scenario.clone(), ToolChoice::Unset);
    let mut resumes = 0;
    let outcome = loop {
        if let Some(l) = approval_turn(&mut m) {
            break l;
        }
        let saved: Value = serde_json::from_str(&m.checkpoint(50.0)).expect("checkpoint is JSON");
        assert_eq!(saved["counters"].as_object().unwrap().len(), 11);
        resumes += 1;
        m = RunMachine::open(
            limits(scenario.clone()),
            ToolChoice::Unset,
            Some(&saved["counters"]),
            saved["deadlineMs"].as_f64(),
            NOW + 1.0,
            0.0,
        )
        .unwrap();
    };
    assert_eq!(outcome, Limit::ToolCalls);
    assert_eq!(resumes, 3);
    assert_eq!(m.turns(), 4);
    // Four turns of 2 output tokens and 0.2 each were spent, as in the run that never suspended.
    assert_eq!(m.budget.counters.n[Limit::OutputTokens as usize], 8);
    assert_eq!(
        m.budget.counters.n[Limit::OutputTokens as usize],
        whole.budget.counters.n[Limit::OutputTokens as usize]
    );
    assert!((m.budget.counters.cost - 0.8).abs() < 1e-9);
}

#[test]
fn a_resumed_run_keeps_its_deadline_and_bad_checkpoints_are_refused() {
    let m = open(json!({ "maxWallTimeMs": 1000 }), ToolChoice::Unset);
    let saved: Value = serde_json::from_str(&m.checkpoint(0.0)).unwrap();
    let deadline = saved["deadlineMs"].as_f64().unwrap();
    assert_eq!(deadline, NOW + 1000.0);
    // Resumed after its deadline: breached at once, not given a fresh wall-time budget.
    let late = RunMachine::open(
        limits(json!({ "maxWallTimeMs": 1000 })),
        ToolChoice::Unset,
        Some(&saved["counters"]),
        Some(deadline),
        NOW + 5000.0,
        0.0,
    )
    .unwrap();
    assert_eq!(late.breach().unwrap().limit, Limit::WallTimeMs);
    for bad in [
        json!({ "turns": -1 }),
        json!({ "turns": 1.5 }),
        json!({ "cost": "NaN" }),
        json!([]),
    ] {
        let e = RunMachine::open(
            limits(json!({})),
            ToolChoice::Unset,
            Some(&bad),
            None,
            NOW,
            0.0,
        )
        .unwrap_err();
        assert_eq!(
            e.message,
            "Run limit snapshot must contain finite non-negative counters"
        );
    }
    let e = RunMachine::open(
        limits(json!({})),
        ToolChoice::Unset,
        None,
        Some(f64::NAN),
        NOW,
        0.0,
    )
    .unwrap_err();
    assert_eq!(e.message, "Run limit deadlineAt is invalid");
}

#[test]
fn rounds_past_the_limit_end_the_run_with_turn_limit() {
    let mut m = open(json!({ "maxToolRounds": 1 }), ToolChoice::Unset);
    m.begin_turn();
    assert_eq!(m.after_turn(&[]), AfterTurn::Finish("stop"));
    assert_eq!(m.after_turn(&[None]), AfterTurn::Finish("stop")); // provider-hosted only
    assert!(matches!(
        m.after_turn(&[Some("a")]),
        AfterTurn::Dispatch { .. }
    ));
    m.begin_round();
    m.begin_turn();
    assert_eq!(m.after_turn(&[Some("a")]), AfterTurn::Finish("turn_limit"));
}

#[test]
fn tool_choice_none_refuses_every_call_and_a_named_choice_every_other_tool() {
    let mut m = open(json!({}), ToolChoice::None);
    for _ in 0..3 {
        m.begin_turn();
        let AfterTurn::Dispatch { refused } = m.after_turn(&[Some("wipe"), None, Some("read")])
        else {
            panic!("a round")
        };
        assert_eq!(
            refused,
            vec![
                (
                    0,
                    "Tool call wipe refused: toolChoice is \"none\"".to_string()
                ),
                (
                    2,
                    "Tool call read refused: toolChoice is \"none\"".to_string()
                ),
            ]
        );
        m.begin_round();
    }

    let mut m = open(json!({}), ToolChoice::Tool("read".into()));
    m.begin_turn();
    assert_eq!(m.turn_choice(), &ToolChoice::Tool("read".into()));
    let AfterTurn::Dispatch { refused } = m.after_turn(&[Some("read"), Some("wipe")]) else {
        panic!("a round")
    };
    assert_eq!(
        refused,
        vec![(
            1,
            "Tool call wipe refused: toolChoice names tool \"read\"".to_string()
        )]
    );
    // A forcing choice holds until the first round; the next turn sends none and refuses nothing.
    m.begin_round();
    m.begin_turn();
    assert_eq!(m.turn_choice(), &ToolChoice::Unset);
    assert_eq!(m.refusals(&[Some("wipe")]), vec![]);

    let mut m = open(json!({}), ToolChoice::Required);
    m.begin_turn();
    assert_eq!(m.refusals(&[Some("wipe")]), vec![]);
    // A hostile name is quoted at most 128 bytes, never cut inside a character.
    let mut m = open(json!({}), ToolChoice::None);
    m.begin_turn();
    let long = "é".repeat(200);
    let refused = m.refusals(&[Some(&long)]);
    assert!(refused[0]
        .1
        .starts_with(&format!("Tool call {} refused", "é".repeat(64))));
}

#[test]
fn tool_choice_reads_its_json_forms() {
    assert_eq!(ToolChoice::from_json(&json!("none")), ToolChoice::None);
    assert_eq!(ToolChoice::from_json(&json!("auto")), ToolChoice::Auto);
    assert_eq!(
        ToolChoice::from_json(&json!("required")),
        ToolChoice::Required
    );
    let named = ToolChoice::from_json(&json!({ "type": "tool", "name": "read" }));
    assert_eq!(named, ToolChoice::Tool("read".into()));
    assert_eq!(named.to_json(), json!({ "type": "tool", "name": "read" }));
    assert_eq!(named.to_text(), r#"{"type":"tool","name":"read"}"#);
    assert_eq!(ToolChoice::from_json(&json!(7)), ToolChoice::Unset);
}

#[test]
fn the_result_pipeline_redacts_before_any_cut() {
    let at = |stage: &str| RESULT_PIPELINE.iter().position(|s| *s == stage).unwrap();
    assert!(at("redact") < at("output_budget"));
    assert!(at("output_budget") < at("fold"));
    assert!(at("fold") < at("record"));
}
