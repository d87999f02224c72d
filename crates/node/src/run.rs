//! napi exports of the run rules (`crates/core/src/run`): simple types in, JSON text or strings out. Refused
//! options come back as `{"error":{kind,code,message}}` so the JS loop throws the documented error.

use napi_derive::napi;
use serde_json::{json, Value};

use prism_tools_core::run;

fn parse(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

fn refused(e: run::RunError) -> String {
    json!({ "error": { "kind": e.kind, "code": e.code, "message": e.message } }).to_string()
}

/// `{"indices":[..],"stored":[..]|null}` or `{"error":..}`. `registered` is the registered names, in
/// order (an array: a name may hold any character); `requested`/`stored` are JSON text.
#[napi(js_name = "runResolveGrant")]
pub fn run_resolve_grant(
    registered: Vec<String>,
    requested: Option<String>,
    stored: Option<String>,
) -> String {
    let requested = requested.map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t)));
    let stored = stored.map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t)));
    match run::resolve_grant(&registered, requested.as_ref(), stored.as_ref()) {
        Ok(g) => json!({ "indices": g.indices, "stored": g.stored }).to_string(),
        Err(e) => refused(e),
    }
}

/// `{"kept":[indices],"dropped":[names]}` or `{"error":..}`; `tool_ids` the run's tool names in
/// order, `returned` the callback's answer as JSON text.
#[napi(js_name = "runClampNarrowing")]
pub fn run_clamp_narrowing(tool_ids: Vec<String>, returned: Option<String>) -> String {
    match run::clamp_narrowing(&tool_ids, &parse(returned)) {
        Ok(n) => json!({ "kept": n.kept, "dropped": n.dropped }).to_string(),
        Err(e) => refused(e),
    }
}

/// The `idsHash` of the request's tool names, in order.
#[napi(js_name = "runToolIdsHash")]
pub fn run_tool_ids_hash(names: Vec<String>) -> String {
    run::ids_hash(names.iter().map(String::as_str))
}

/// `{"maxToolRounds","maxTurns","toolConcurrency"}` or `{"error":..}` from `limits` and `loop` JSON.
#[napi(js_name = "runResolveLimits")]
pub fn run_resolve_limits(limits: Option<String>, loop_options: Option<String>) -> String {
    let lim = match run::resolve_limits(&parse(limits)) {
        Ok(l) => l,
        Err(e) => return refused(e),
    };
    let lp = parse(loop_options);
    let strategy = match run::artifact::resolve_strategy(&lp) {
        Ok(s) => s,
        Err(e) => return refused(e),
    };
    let conc = match run::resolve_concurrency(lp.get("toolConcurrency")) {
        Ok(c) => c,
        Err(e) => return refused(e),
    };
    let mut out = json!({ "maxToolRounds": lim.max_tool_rounds, "maxTurns": lim.max_turns, "toolConcurrency": conc, "strategy": "single-shot" });
    if let run::artifact::Strategy::Artifact(a) = strategy {
        out["strategy"] = json!("generate-validate-revise");
        out["maxRevisions"] = json!(a.max_revisions);
        out["toolCalls"] = json!(match a.tool_calls {
            run::artifact::ToolCalls::Inert => "inert",
            run::artifact::ToolCalls::Bounded => "bounded",
        });
    }
    out.to_string()
}

fn artifact_loop(max_revisions: u32, bounded: bool) -> run::artifact::ArtifactLoop {
    run::artifact::ArtifactLoop {
        max_revisions,
        tool_calls: if bounded {
            run::artifact::ToolCalls::Bounded
        } else {
            run::artifact::ToolCalls::Inert
        },
    }
}

/// Artifact loop, after a response: `"candidate"`, `"tools"` or `"tool_round_limit"`.
#[napi(js_name = "runArtifactStep")]
pub fn run_artifact_step(
    bounded: bool,
    max_tool_rounds: u32,
    rounds_used: u32,
    host_calls: u32,
) -> &'static str {
    run::artifact::response_step(
        artifact_loop(0, bounded),
        max_tool_rounds,
        rounds_used,
        host_calls,
    )
    .as_str()
}

/// Artifact loop, after a candidate: `outcome` is `"parse_error"` (`detail`: the thrown message),
/// `"validated"` (`detail`: the validator's answer as JSON text, absent for `undefined`) or
/// `"validator_error"`. Answers `{"action":"accept"}`, `{"action":"revise",revision,reason,message,request}`
/// or `{"action":"fail",reason,message,rejection:{reason,message}|null}`.
#[napi(js_name = "runArtifactVerdict")]
pub fn run_artifact_verdict(
    max_revisions: u32,
    revisions_used: u32,
    outcome: String,
    detail: Option<String>,
) -> String {
    use run::artifact::{verdict, Outcome};
    let outcome = match outcome.as_str() {
        "parse_error" => Outcome::ParseError(detail.unwrap_or_default()),
        "validated" => {
            Outcome::Validated(detail.map(|t| serde_json::from_str(&t).unwrap_or(Value::Null)))
        }
        _ => Outcome::ValidatorError,
    };
    verdict_json(verdict(
        artifact_loop(max_revisions, false),
        revisions_used,
        &outcome,
    ))
}

fn verdict_json(v: run::artifact::Verdict) -> String {
    use run::artifact::Verdict;
    match v {
        Verdict::Accept => json!({ "action": "accept" }),
        Verdict::Revise { revision, reason, message, request } => {
            json!({ "action": "revise", "revision": revision, "reason": reason.as_str(), "message": message, "request": request })
        }
        Verdict::Fail { reason, message, rejection } => json!({
            "action": "fail",
            "reason": reason.as_str(),
            "message": message,
            "rejection": rejection.map(|(r, m)| json!({ "reason": r.as_str(), "message": m })),
        }),
    }
    .to_string()
}

/// The `{"action":"fail","reason":"tool_round_limit",..}` verdict of a response past `maxToolRounds`.
#[napi(js_name = "runArtifactToolRoundLimit")]
pub fn run_artifact_tool_round_limit(max_tool_rounds: u32) -> String {
    verdict_json(run::artifact::tool_round_limit(max_tool_rounds))
}

/// `"done"`, `"execute"` or `"turn_limit"` after a provider turn.
#[napi(js_name = "runNextStep")]
pub fn run_next_step(
    max_tool_rounds: u32,
    max_turns: u32,
    rounds_used: u32,
    turns_used: u32,
    host_calls: u32,
) -> &'static str {
    run::next_step(
        run::Limits {
            max_tool_rounds,
            max_turns,
        },
        rounds_used,
        turns_used,
        host_calls,
    )
    .as_str()
}

/// The plan of a turn's calls: `[concurrency, ...indices to dispatch]`.
#[napi(js_name = "runPlanBatch")]
pub fn run_plan_batch(concurrency: u32, hosted: Vec<bool>, exclusive: Vec<bool>) -> Vec<u32> {
    let b = run::plan_batch(concurrency, &hosted, &exclusive);
    let mut out = Vec::with_capacity(b.dispatch.len() + 1);
    out.push(b.concurrency);
    out.extend(b.dispatch);
    out
}

/// The message of a `tool_call_not_dispatched` row.
#[napi(js_name = "runNotDispatchedMessage")]
pub fn run_not_dispatched_message(name: String, why: String) -> String {
    run::not_dispatched_message(&name, &why)
}

/// `{ maxToolRounds, defaultMaxToolRounds, maxToolConcurrency, maxGrantNames, defaultMaxRevisions, maxRevisions }`.
#[napi(js_name = "runLimitsTable")]
pub fn run_limits_table() -> String {
    json!({
        "defaultMaxToolRounds": run::DEFAULT_MAX_TOOL_ROUNDS,
        "maxToolRounds": run::MAX_TOOL_ROUNDS,
        "maxToolConcurrency": run::MAX_TOOL_CONCURRENCY,
        "maxGrantNames": run::MAX_GRANT_NAMES,
        "defaultMaxRevisions": run::artifact::DEFAULT_MAX_REVISIONS,
        "maxRevisions": run::artifact::MAX_REVISIONS,
    })
    .to_string()
}
