//! napi exports of the run rules (`src/run`): simple types in, JSON text or strings out. Refused
//! options come back as `{"error":{kind,code,message}}` so the JS loop throws the documented error.

use napi_derive::napi;
use serde_json::{json, Value};

use crate::run;

fn parse(text: Option<String>) -> Value {
    text.and_then(|t| serde_json::from_str(&t).ok()).unwrap_or(Value::Null)
}

fn refused(e: run::RunError) -> String {
    json!({ "error": { "kind": e.kind, "code": e.code, "message": e.message } }).to_string()
}

/// Names crossing as one string joined by NUL (one napi string instead of one per name).
fn split_names(joined: &str, count: u32) -> Vec<String> {
    if count == 0 {
        Vec::new()
    } else {
        joined.split('\0').map(str::to_string).collect()
    }
}

/// `{"indices":[..],"stored":[..]|null}` or `{"error":..}`. `registered` is the registered names
/// joined by NUL; `requested`/`stored` are JSON text.
#[napi(js_name = "runResolveGrant")]
pub fn run_resolve_grant(registered: String, count: u32, requested: Option<String>, stored: Option<String>) -> String {
    let registered = split_names(&registered, count);
    let requested = requested.map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t)));
    let stored = stored.map(|t| serde_json::from_str(&t).unwrap_or(Value::String(t)));
    match run::resolve_grant(&registered, requested.as_ref(), stored.as_ref()) {
        Ok(g) => json!({ "indices": g.indices, "stored": g.stored }).to_string(),
        Err(e) => refused(e),
    }
}

/// `{"kept":[indices],"dropped":[names]}` or `{"error":..}`; `tool_ids` joined by NUL, `returned`
/// the callback's answer as JSON text.
#[napi(js_name = "runClampNarrowing")]
pub fn run_clamp_narrowing(tool_ids: String, count: u32, returned: Option<String>) -> String {
    let tool_ids = split_names(&tool_ids, count);
    match run::clamp_narrowing(&tool_ids, &parse(returned)) {
        Ok(n) => json!({ "kept": n.kept, "dropped": n.dropped }).to_string(),
        Err(e) => refused(e),
    }
}

/// The `idsHash` of names joined by NUL (the request's tool names in order).
#[napi(js_name = "runToolIdsHash")]
pub fn run_tool_ids_hash(joined: String, count: u32) -> String {
    if count == 0 {
        run::ids_hash(std::iter::empty())
    } else {
        run::ids_hash(joined.split('\0'))
    }
}

/// `{"maxToolRounds","maxTurns","toolConcurrency"}` or `{"error":..}` from `limits` and `loop` JSON.
#[napi(js_name = "runResolveLimits")]
pub fn run_resolve_limits(limits: Option<String>, loop_options: Option<String>) -> String {
    let lim = match run::resolve_limits(&parse(limits)) {
        Ok(l) => l,
        Err(e) => return refused(e),
    };
    let lp = parse(loop_options);
    match lp.get("strategy") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s == "single-shot" => {}
        Some(other) => {
            return refused(run::RunError {
                kind: "RangeError",
                code: "unsupported_loop_strategy",
                message: format!("loop.strategy {other} is not supported (only \"single-shot\")"),
            })
        }
    }
    let conc = match run::resolve_concurrency(lp.get("toolConcurrency")) {
        Ok(c) => c,
        Err(e) => return refused(e),
    };
    json!({ "maxToolRounds": lim.max_tool_rounds, "maxTurns": lim.max_turns, "toolConcurrency": conc }).to_string()
}

/// `"done"`, `"execute"` or `"turn_limit"` after a provider turn.
#[napi(js_name = "runNextStep")]
pub fn run_next_step(max_tool_rounds: u32, max_turns: u32, rounds_used: u32, turns_used: u32, host_calls: u32) -> &'static str {
    run::next_step(run::Limits { max_tool_rounds, max_turns }, rounds_used, turns_used, host_calls).as_str()
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

/// `{ maxToolRounds, defaultMaxToolRounds, maxToolConcurrency, maxGrantNames }`.
#[napi(js_name = "runLimitsTable")]
pub fn run_limits_table() -> String {
    json!({
        "defaultMaxToolRounds": run::DEFAULT_MAX_TOOL_ROUNDS,
        "maxToolRounds": run::MAX_TOOL_ROUNDS,
        "maxToolConcurrency": run::MAX_TOOL_CONCURRENCY,
        "maxGrantNames": run::MAX_GRANT_NAMES,
    })
    .to_string()
}
