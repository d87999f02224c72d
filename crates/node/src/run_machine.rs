//! napi exports of the run machine (`crates/core/src/run/machine.rs`) and its budget
//! (`crates/core/src/run/budget.rs`): a `RunMachine` class per run, driven by `lib/run-limits.js`
//! and the agent loop. Charges answer one integer (bit 0: a breach was recorded now, bit 1: raise
//! `RunLimitError`); refused input throws the core's TypeError with its code.

use napi::{Env, Error, Result, Status};
use napi_derive::napi;
use serde_json::{json, Value};

use prism_tools_core::run::budget::{
    self, Limit, Usage, DEFAULT_RUN_LIMITS, HARD_MAX_RUN_COST, HARD_RUN_LIMITS,
};
use prism_tools_core::run::machine::{self, AfterTurn, RunMachine as Machine, ToolChoice};
use prism_tools_core::run::RunError;

fn throw<T>(env: &Env, e: RunError) -> Result<T> {
    match e.kind {
        "RangeError" => env.throw_range_error(&e.message, Some(e.code))?,
        _ => env.throw_type_error(&e.message, Some(e.code))?,
    }
    Err(Error::from_status(Status::PendingException))
}

fn parse(text: Option<&str>) -> Option<Value> {
    text.map(|t| serde_json::from_str(t).unwrap_or(Value::String(t.to_string())))
}

/// `{ defaults, hard, hardMaxCost, pipeline, toolChoiceDenied }`: the budget's tables (in
/// upstream's key order), read once by `lib/run-limits.js`.
#[napi(js_name = "runBudgetTables")]
pub fn run_budget_tables() -> String {
    let defaults = budget::table_text(|i| Value::from(DEFAULT_RUN_LIMITS[i]));
    let hard = budget::table_text(|i| Value::from(HARD_RUN_LIMITS[i]));
    let rest = json!({
        "hardMaxCost": HARD_MAX_RUN_COST,
        "pipeline": machine::RESULT_PIPELINE,
        "toolChoiceDenied": machine::TOOL_CHOICE_DENIED,
    })
    .to_string();
    format!(r#"{{"defaults":{defaults},"hard":{hard},{}"#, &rest[1..])
}

/// The resolved limits of a run as JSON (`{ maxTurns, …, maxCost? }`): the agent's layer narrowed
/// by the run's, both given as JSON text (`undefined` for a layer not given). Refused: throws.
#[napi(js_name = "runResolveBudget")]
pub fn run_resolve_budget(env: Env, agent: Option<String>, run: Option<String>) -> Result<String> {
    let (agent, run) = (parse(agent.as_deref()), parse(run.as_deref()));
    match budget::resolve_run_limits(agent.as_ref(), run.as_ref()) {
        Ok(l) => Ok(l.to_text()),
        Err(e) => throw(&env, e),
    }
}

/// A first breach, as `RunLimitBreach` reads it (`currency` only for `maxCost`).
#[napi(object)]
pub struct RunBreach {
    pub limit: String,
    pub maximum: f64,
    pub observed: f64,
    pub currency: Option<String>,
}

/// What follows a provider turn: `finish` (`stop` / `turn_limit`), or a round in which the calls
/// at `refused` (indices, with `messages`) are blocked by the turn's `toolChoice`.
#[napi(object)]
pub struct RunAfterTurn {
    pub finish: Option<String>,
    pub refused: Vec<u32>,
    pub messages: Vec<String>,
}

/// The calls of a round the turn's `toolChoice` refuses: indices, with their messages.
#[napi(object)]
pub struct RunRefusals {
    pub refused: Vec<u32>,
    pub messages: Vec<String>,
}

/// One run's machine.
#[napi]
pub struct RunMachine {
    inner: Machine,
}

/// Opens a run's machine over resolved limits (JSON), its `toolChoice` (JSON, when set), and —
/// for a resumed run — its checkpoint's counters (JSON) and deadline (epoch ms). `now_ms` is the
/// epoch clock, `mono_ms` the monotonic one (`performance.now()`).
#[napi(js_name = "runMachineOpen")]
pub fn run_machine_open(
    env: Env,
    limits: String,
    choice: Option<String>,
    saved: Option<String>,
    deadline_ms: Option<f64>,
    now_ms: f64,
    mono_ms: f64,
) -> Result<RunMachine> {
    let limits_value = parse(Some(&limits));
    let limits = match budget::resolve_run_limits(None, limits_value.as_ref()) {
        Ok(l) => l,
        Err(e) => return throw(&env, e),
    };
    let choice = parse(choice.as_deref()).map_or(ToolChoice::Unset, |c| ToolChoice::from_json(&c));
    let saved = parse(saved.as_deref());
    match Machine::open(limits, choice, saved.as_ref(), deadline_ms, now_ms, mono_ms) {
        Ok(inner) => Ok(RunMachine { inner }),
        Err(e) => throw(&env, e),
    }
}

fn usage_of(
    input: Option<f64>,
    output: Option<f64>,
    total: Option<f64>,
    cache: (Option<f64>, Option<f64>),
    cost: Option<f64>,
    currency: Option<String>,
) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: output,
        total_tokens: total,
        cache_read_tokens: cache.0,
        cache_write_tokens: cache.1,
        cost,
        currency,
    }
}

#[napi]
impl RunMachine {
    /// Charges `delta` to the limit of code `code` (its place in `DEFAULT_RUN_LIMITS`' keys).
    #[napi]
    pub fn charge(&mut self, env: Env, code: u32, delta: f64) -> Result<u32> {
        let Some(limit) = Limit::from_code(code) else {
            return throw(
                &env,
                RunError::type_error("invalid_run_limits", "Unknown run limit"),
            );
        };
        match self.inner.budget.charge(limit, delta) {
            Ok(c) => Ok(c.code()),
            Err(e) => throw(&env, e),
        }
    }

    /// A provider turn's usage (`present` false: the turn reported none). A field the host had but
    /// that is not a number is passed as NaN.
    #[allow(clippy::too_many_arguments)]
    #[napi(js_name = "recordUsage")]
    pub fn record_usage(
        &mut self,
        env: Env,
        present: bool,
        input: Option<f64>,
        output: Option<f64>,
        total: Option<f64>,
        cache_read: Option<f64>,
        cache_write: Option<f64>,
        cost: Option<f64>,
        currency: Option<String>,
    ) -> Result<u32> {
        let usage = present.then(|| {
            usage_of(
                input,
                output,
                total,
                (cache_read, cache_write),
                cost,
                currency,
            )
        });
        match self.inner.usage(usage.as_ref()) {
            Ok(c) => Ok(c.code()),
            Err(e) => throw(&env, e),
        }
    }

    /// A provider turn starts.
    #[napi(js_name = "beginTurn")]
    pub fn begin_turn(&mut self) -> u32 {
        self.inner.begin_turn().code()
    }

    /// A provider attempt whose request is `bytes` JSON bytes.
    #[napi]
    pub fn attempt(&mut self, bytes: f64) -> u32 {
        self.inner.attempt(bytes.max(0.0) as u64).code()
    }

    /// A provider event of `bytes` JSON bytes.
    #[napi]
    pub fn response(&mut self, bytes: f64) -> u32 {
        self.inner.response(bytes.max(0.0) as u64).code()
    }

    #[napi(js_name = "beginRound")]
    pub fn begin_round(&mut self) -> u32 {
        self.inner.begin_round().code()
    }

    #[napi(js_name = "toolCall")]
    pub fn tool_call(&mut self) -> u32 {
        self.inner.tool_call().code()
    }

    /// The clock: `now_ms` since the epoch.
    #[napi]
    pub fn clock(&mut self, now_ms: f64) -> u32 {
        self.inner.clock(now_ms).code()
    }

    #[napi(js_name = "remainingMs")]
    pub fn remaining_ms(&self, now_ms: f64) -> f64 {
        self.inner.budget.remaining_ms(now_ms)
    }

    #[napi(getter, js_name = "deadlineMs")]
    pub fn deadline_ms(&self) -> f64 {
        self.inner.budget.deadline_ms
    }

    #[napi(getter)]
    pub fn turns(&self) -> f64 {
        self.inner.turns() as f64
    }

    #[napi(getter)]
    pub fn rounds(&self) -> f64 {
        self.inner.rounds() as f64
    }

    /// The run's resolved limits as JSON.
    #[napi(js_name = "limitsJson")]
    pub fn limits_json(&self) -> String {
        self.inner.budget.limits.to_text()
    }

    /// The counters as JSON, `wallTimeMs` at `mono_ms`.
    #[napi]
    pub fn snapshot(&self, mono_ms: f64) -> String {
        self.inner.budget.snapshot(mono_ms)
    }

    /// The first breach, once there is one.
    #[napi]
    pub fn breach(&self) -> Option<RunBreach> {
        self.inner.breach().map(|b| RunBreach {
            limit: b.limit.name().to_string(),
            maximum: b.maximum,
            observed: b.observed,
            currency: b.currency.clone(),
        })
    }

    /// The `toolChoice` the current turn sends, as JSON (`undefined`: none).
    #[napi(js_name = "turnChoice")]
    pub fn turn_choice(&self) -> Option<String> {
        match self.inner.turn_choice() {
            ToolChoice::Unset => None,
            c => Some(c.to_text()),
        }
    }

    /// After a provider turn: `calls` are the tool names asked for (`null` for a call the provider
    /// hosts).
    #[napi(js_name = "afterTurn")]
    pub fn after_turn(&self, calls: Vec<Option<String>>) -> RunAfterTurn {
        let names: Vec<Option<&str>> = calls.iter().map(|c| c.as_deref()).collect();
        match self.inner.after_turn(&names) {
            AfterTurn::Finish(reason) => RunAfterTurn {
                finish: Some(reason.to_string()),
                refused: Vec::new(),
                messages: Vec::new(),
            },
            AfterTurn::Dispatch { refused } => {
                let (refused, messages) = refused.into_iter().unzip();
                RunAfterTurn {
                    finish: None,
                    refused,
                    messages,
                }
            }
        }
    }

    /// The calls (names, `null` for a provider-hosted call) the current turn's `toolChoice`
    /// refuses, for the rounds that do not go through `afterTurn` (the artifact loop's tool round,
    /// a custom strategy's `ctx.dispatchToolCall`).
    #[napi]
    pub fn refusals(&self, calls: Vec<Option<String>>) -> RunRefusals {
        let names: Vec<Option<&str>> = calls.iter().map(|c| c.as_deref()).collect();
        let (refused, messages) = self.inner.refusals(&names).into_iter().unzip();
        RunRefusals { refused, messages }
    }

    /// The run's terminal status from how it ended.
    #[napi(js_name = "endStatus")]
    pub fn end_status(&self, status: String) -> String {
        self.inner.end_status(&status).to_string()
    }
}
