//! The run budget, with `@arnilo/prism`'s names, defaults, hard caps, breach and messages: every
//! run of an agent is bounded (turns, provider attempts, tool rounds, tool calls, wall time,
//! request and response bytes, input / output / total tokens, and `maxCost` when the host sets
//! one). The budget counts what the run charges and records the first breach once; the host
//! measures (bytes, the clock) and raises the error. Nothing here reads a clock: times are given.

use serde_json::Value;

use super::RunError;

/// One limit of the budget. The first ten are counts; `Cost` is a decimal amount in a currency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Turns,
    ProviderAttempts,
    ToolRounds,
    ToolCalls,
    WallTimeMs,
    RequestBytes,
    ResponseBytes,
    InputTokens,
    OutputTokens,
    TotalTokens,
    Cost,
}

/// The counted limits, in upstream's order (the order of `DEFAULT_RUN_LIMITS`' keys).
pub const COUNTED: [Limit; 10] = [
    Limit::Turns,
    Limit::ProviderAttempts,
    Limit::ToolRounds,
    Limit::ToolCalls,
    Limit::WallTimeMs,
    Limit::RequestBytes,
    Limit::ResponseBytes,
    Limit::InputTokens,
    Limit::OutputTokens,
    Limit::TotalTokens,
];

/// Defaults of the counted limits, in `COUNTED` order.
pub const DEFAULT_RUN_LIMITS: [u64; 10] = [
    16,
    24,
    8,
    32,
    120_000,
    8 * 1024 * 1024,
    8 * 1024 * 1024,
    40_000,
    10_000,
    50_000,
];

/// Hard caps of the counted limits, in `COUNTED` order.
pub const HARD_RUN_LIMITS: [u64; 10] = [
    64,
    256,
    64,
    256,
    30 * 60_000,
    64 * 1024 * 1024,
    64 * 1024 * 1024,
    1_000_000,
    250_000,
    1_000_000,
];

/// Largest `maxCost.amount`.
pub const HARD_MAX_RUN_COST: f64 = 10_000.0;

/// `Number.MAX_SAFE_INTEGER`: counters are JS numbers on the host side.
pub const MAX_SAFE: u64 = (1 << 53) - 1;

impl Limit {
    /// The limit's option name (`maxTurns`, …, `maxCost`).
    pub const fn name(self) -> &'static str {
        match self {
            Limit::Turns => "maxTurns",
            Limit::ProviderAttempts => "maxProviderAttempts",
            Limit::ToolRounds => "maxToolRounds",
            Limit::ToolCalls => "maxToolCalls",
            Limit::WallTimeMs => "maxWallTimeMs",
            Limit::RequestBytes => "maxRequestBytes",
            Limit::ResponseBytes => "maxResponseBytes",
            Limit::InputTokens => "maxInputTokens",
            Limit::OutputTokens => "maxOutputTokens",
            Limit::TotalTokens => "maxTotalTokens",
            Limit::Cost => "maxCost",
        }
    }

    /// The counter's name in a snapshot and a checkpoint's `counters` (`turns`, …, `cost`).
    pub const fn counter(self) -> &'static str {
        match self {
            Limit::Turns => "turns",
            Limit::ProviderAttempts => "providerAttempts",
            Limit::ToolRounds => "toolRounds",
            Limit::ToolCalls => "toolCalls",
            Limit::WallTimeMs => "wallTimeMs",
            Limit::RequestBytes => "requestBytes",
            Limit::ResponseBytes => "responseBytes",
            Limit::InputTokens => "inputTokens",
            Limit::OutputTokens => "outputTokens",
            Limit::TotalTokens => "totalTokens",
            Limit::Cost => "cost",
        }
    }

    /// Index into `COUNTED` (and the tables); `Cost` has none.
    pub const fn index(self) -> Option<usize> {
        match self {
            Limit::Cost => None,
            l => Some(l as usize),
        }
    }

    /// The limit named `name` (`maxTurns`, …); `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<Limit> {
        COUNTED
            .iter()
            .copied()
            .chain(std::iter::once(Limit::Cost))
            .find(|l| l.name() == name)
    }

    /// The limit of code `code` (its position, `Cost` last), as the binding passes it.
    pub fn from_code(code: u32) -> Option<Limit> {
        match code {
            10 => Some(Limit::Cost),
            c => COUNTED.get(c as usize).copied(),
        }
    }
}

/// `maxCost`: an amount in one currency.
#[derive(Debug, Clone, PartialEq)]
pub struct MaxCost {
    pub amount: f64,
    pub currency: String,
}

/// Resolved limits: every counted limit has a value.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLimits {
    pub max: [u64; 10],
    pub cost: Option<MaxCost>,
}

impl Default for RunLimits {
    fn default() -> Self {
        RunLimits {
            max: DEFAULT_RUN_LIMITS,
            cost: None,
        }
    }
}

impl RunLimits {
    pub fn get(&self, limit: Limit) -> Option<u64> {
        limit.index().map(|i| self.max[i])
    }

    /// The limits as upstream's resolved object, as JSON text in upstream's key order:
    /// `{ maxTurns, …, maxTotalTokens, maxCost? }`.
    pub fn to_text(&self) -> String {
        let mut pairs: Vec<(&str, Value)> = COUNTED
            .iter()
            .zip(self.max)
            .map(|(l, v)| (l.name(), Value::from(v)))
            .collect();
        if let Some(c) = &self.cost {
            let cost = object_text(&[
                ("amount", Value::from(c.amount)),
                ("currency", Value::from(c.currency.as_str())),
            ]);
            pairs.push((
                "maxCost",
                serde_json::from_str(&cost).unwrap_or(Value::Null),
            ));
        }
        object_text(&pairs)
    }
}

/// A JSON object's text with its members in the given order (a `serde_json::Map` sorts its keys,
/// and hosts see the order: upstream's objects list limits and counters in table order).
pub fn object_text(pairs: &[(&str, Value)]) -> String {
    let mut out = String::from("{");
    for (i, (key, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::from(*key).to_string());
        out.push(':');
        out.push_str(&value.to_string());
    }
    out.push('}');
    out
}

/// The names of `limits` in table order, with a value each from `value`, as ordered JSON text.
pub fn table_text(value: impl Fn(usize) -> Value) -> String {
    let pairs: Vec<(&str, Value)> = COUNTED
        .iter()
        .enumerate()
        .map(|(i, l)| (l.name(), value(i)))
        .collect();
    object_text(&pairs)
}

fn refused(message: impl Into<String>) -> RunError {
    RunError::type_error("invalid_run_limits", message)
}

/// A JSON number as the host sent it: the strings `NaN`, `Infinity` and `-Infinity` stand for the
/// numbers JSON cannot carry (see `lib/agent-values.js` `limitsJson`).
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == "NaN" => Some(f64::NAN),
        Value::String(s) if s == "Infinity" => Some(f64::INFINITY),
        Value::String(s) if s == "-Infinity" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

/// Whether a JSON value is truthy as JS reads it (the host's NaN arrives as `"NaN"`).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => false,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty() && s != "NaN",
        _ => true,
    }
}

/// Blank as `String.prototype.trim` sees it (White_Space, and U+FEFF).
fn blank(s: &str) -> bool {
    s.chars().all(|c| c.is_whitespace() || c == '\u{feff}')
}

/// The validated `maxCost` of a limits object, when truthy.
fn max_cost(value: Option<&Value>) -> Result<Option<MaxCost>, RunError> {
    let Some(v) = value.filter(|v| truthy(v)) else {
        return Ok(None);
    };
    let amount = v.get("amount").and_then(number);
    let currency = v.get("currency").and_then(Value::as_str);
    match (amount, currency) {
        (Some(a), Some(c))
            if a.is_finite() && (0.0..=HARD_MAX_RUN_COST).contains(&a) && !blank(c) =>
        {
            Ok(Some(MaxCost {
                amount: a,
                currency: c.to_string(),
            }))
        }
        _ => Err(refused(format!(
            "maxCost requires a finite amount from 0 through {HARD_MAX_RUN_COST} and currency"
        ))),
    }
}

/// One layer of limits, checked: each given counted limit as an integer from 1 to its cap.
/// `Ok(None)` for a layer not given (JSON `null`, JS `undefined`).
fn layer(value: Option<&Value>) -> Result<Option<[Option<u64>; 10]>, RunError> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let obj = value
        .as_object()
        .ok_or_else(|| refused("Run limits must be an object"))?;
    let mut out = [None; 10];
    for (i, l) in COUNTED.iter().enumerate() {
        let Some(v) = obj.get(l.name()) else { continue };
        let cap = HARD_RUN_LIMITS[i];
        match number(v) {
            Some(n) if n.fract() == 0.0 && n >= 1.0 && n <= cap as f64 => out[i] = Some(n as u64),
            _ => {
                return Err(refused(format!(
                    "{} must be a positive safe integer at most {cap}",
                    l.name()
                )))
            }
        }
    }
    max_cost(obj.get("maxCost"))?;
    Ok(Some(out))
}

/// The limits of a run: the agent's layer, narrowed by the run's (a run's own value can only
/// lower the agent's); defaults for the rest. A refused layer is a TypeError `invalid_run_limits`.
pub fn resolve_run_limits(
    agent: Option<&Value>,
    run: Option<&Value>,
) -> Result<RunLimits, RunError> {
    let base = layer(agent)?;
    let over = layer(run)?;
    let mut max = DEFAULT_RUN_LIMITS;
    for i in 0..COUNTED.len() {
        let b = base.and_then(|b| b[i]);
        let o = over.and_then(|o| o[i]);
        max[i] = match (b, o) {
            (Some(b), Some(o)) => b.min(o),
            (Some(v), None) | (None, Some(v)) => v,
            (None, None) => max[i],
        };
    }
    fn given(v: Option<&Value>) -> Option<&Value> {
        v.filter(|v| !v.is_null()).and_then(|v| v.get("maxCost"))
    }
    let (base_cost, over_cost) = (given(agent), given(run));
    // As upstream's `override?.maxCost ?? base?.maxCost`: a run's falsy `maxCost` (0, false) wins.
    let chosen = over_cost.filter(|v| !v.is_null()).or(base_cost);
    let cost = if !chosen.is_some_and(truthy) {
        None
    } else {
        match (max_cost(base_cost)?, max_cost(over_cost)?) {
            (Some(b), Some(o)) => {
                if b.currency != o.currency {
                    return Err(refused("Run limit currencies must match when narrowed"));
                }
                Some(MaxCost {
                    amount: b.amount.min(o.amount),
                    currency: b.currency,
                })
            }
            (b, o) => o.or(b),
        }
    };
    Ok(RunLimits { max, cost })
}

/// The first breach of a run: which limit, its maximum, what was observed (`+∞` for a cost that
/// could not be counted), and the currency of a `maxCost` breach.
#[derive(Debug, Clone, PartialEq)]
pub struct Breach {
    pub limit: Limit,
    pub maximum: f64,
    pub observed: f64,
    pub currency: Option<String>,
}

/// What a charge answers. `first`: the breach was recorded by this charge (the host reports it
/// once); `raise`: the host throws `RunLimitError` with the recorded breach where it charged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Charged {
    pub first: bool,
    pub raise: bool,
}

impl Charged {
    pub const WITHIN: Charged = Charged {
        first: false,
        raise: false,
    };
    /// The answer as one small integer for the binding: bit 0 `first`, bit 1 `raise`.
    pub const fn code(self) -> u32 {
        (self.first as u32) | ((self.raise as u32) << 1)
    }
}

/// A provider turn's usage as the host read it. A field the host had but that was not a number
/// arrives as NaN, so it is refused like any other invalid value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub input_tokens: Option<f64>,
    pub output_tokens: Option<f64>,
    pub total_tokens: Option<f64>,
    pub cache_read_tokens: Option<f64>,
    pub cache_write_tokens: Option<f64>,
    pub cost: Option<f64>,
    pub currency: Option<String>,
}

fn safe_count(v: f64) -> bool {
    v.fract() == 0.0 && v >= 0.0 && v <= MAX_SAFE as f64
}

/// A run's counters: the ten counts and the summed cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Counters {
    pub n: [u64; 10],
    pub cost: f64,
}

impl Counters {
    /// Counters from a snapshot or a checkpoint's `counters` object: each given value a finite,
    /// non-negative number (an integer, except `cost`); missing ones are zero.
    pub fn from_json(value: &Value) -> Result<Counters, RunError> {
        let bad = || {
            RunError::type_error(
                "invalid_run_limits",
                "Run limit snapshot must contain finite non-negative counters",
            )
        };
        let obj = value.as_object().ok_or_else(bad)?;
        let mut out = Counters::default();
        for (key, v) in obj {
            let n = number(v).ok_or_else(bad)?;
            if !n.is_finite() || n < 0.0 {
                return Err(bad());
            }
            if key == "cost" {
                out.cost = n;
                continue;
            }
            if !safe_count(n) {
                return Err(bad());
            }
            if let Some(i) = COUNTED.iter().position(|l| l.counter() == key) {
                out.n[i] = n as u64;
            }
        }
        Ok(out)
    }

    /// `{ turns, …, cost }` in upstream's order, with `wallTimeMs` as given (the time the run has
    /// been open), as JSON text.
    pub fn to_text(&self, wall_time_ms: u64) -> String {
        let mut pairs: Vec<(&str, Value)> = COUNTED
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let v = if *l == Limit::WallTimeMs {
                    wall_time_ms
                } else {
                    self.n[i]
                };
                (l.counter(), Value::from(v))
            })
            .collect();
        pairs.push(("cost", Value::from(self.cost)));
        object_text(&pairs)
    }
}

/// A run's budget: its limits, what it has used, its deadline and its first breach.
#[derive(Debug, Clone)]
pub struct Budget {
    pub limits: RunLimits,
    pub counters: Counters,
    /// The wall-time deadline, in milliseconds since the epoch.
    pub deadline_ms: f64,
    /// The host's monotonic clock when the budget was opened (for `wallTimeMs`).
    started_ms: f64,
    breach: Option<Breach>,
}

impl Budget {
    /// A budget opened at `now_ms` (epoch) / `mono_ms` (monotonic), going on from `saved`
    /// counters and `deadline_ms` when a run resumes. An invalid deadline is a TypeError.
    pub fn open(
        limits: RunLimits,
        saved: Option<Counters>,
        deadline_ms: Option<f64>,
        now_ms: f64,
        mono_ms: f64,
    ) -> Result<Budget, RunError> {
        let deadline_ms =
            deadline_ms.unwrap_or(now_ms + limits.max[Limit::WallTimeMs as usize] as f64);
        if !deadline_ms.is_finite() {
            return Err(RunError::type_error(
                "invalid_run_limits",
                "Run limit deadlineAt is invalid",
            ));
        }
        let mut budget = Budget {
            limits,
            counters: saved.unwrap_or_default(),
            deadline_ms,
            started_ms: mono_ms,
            breach: None,
        };
        budget.clock(now_ms);
        Ok(budget)
    }

    pub fn breach(&self) -> Option<&Breach> {
        self.breach.as_ref()
    }

    /// Milliseconds left before the deadline at `now_ms` (0 once it has passed).
    pub fn remaining_ms(&self, now_ms: f64) -> f64 {
        (self.deadline_ms - now_ms).max(0.0)
    }

    /// The clock's answer: at or past the deadline, the wall-time limit is breached (never raised:
    /// the host aborts the run instead).
    pub fn clock(&mut self, now_ms: f64) -> Charged {
        if self.remaining_ms(now_ms) > 0.0 {
            return Charged::WITHIN;
        }
        let max = self.limits.max[Limit::WallTimeMs as usize] as f64;
        self.exceed(Limit::WallTimeMs, max)
    }

    /// The counters with `wallTimeMs` the time since the budget opened, at most its limit, as
    /// JSON text.
    pub fn snapshot(&self, mono_ms: f64) -> String {
        let max = self.limits.max[Limit::WallTimeMs as usize];
        let open = (mono_ms - self.started_ms).max(0.0).ceil();
        self.counters.to_text((open as u64).min(max))
    }

    fn exceed(&mut self, limit: Limit, observed: f64) -> Charged {
        let first = self.breach.is_none();
        if first {
            let maximum = match limit.index() {
                Some(i) => self.limits.max[i] as f64,
                None => self.limits.cost.as_ref().map_or(0.0, |c| c.amount),
            };
            let currency = match (limit, &self.limits.cost) {
                (Limit::Cost, Some(c)) => Some(c.currency.clone()),
                _ => None,
            };
            self.breach = Some(Breach {
                limit,
                maximum,
                observed,
                currency,
            });
        }
        Charged {
            first,
            raise: limit != Limit::WallTimeMs,
        }
    }

    /// Adds `delta` to the counter of `limit` (a counted limit). Past the limit (or past a safe
    /// integer) that is a breach. A delta that is not a non-negative safe integer is a TypeError.
    pub fn charge(&mut self, limit: Limit, delta: f64) -> Result<Charged, RunError> {
        let Some(i) = limit.index() else {
            return Err(RunError::type_error(
                "invalid_run_limits",
                "maxCost is charged through recordUsage",
            ));
        };
        if !safe_count(delta) {
            return Err(RunError::type_error(
                "invalid_run_limits",
                "Run limit delta must be a non-negative safe integer",
            ));
        }
        Ok(self.add(limit, i, delta as u64))
    }

    fn add(&mut self, limit: Limit, i: usize, delta: u64) -> Charged {
        let observed = self.counters.n[i] + delta;
        if observed > MAX_SAFE {
            let c = self.exceed(limit, (MAX_SAFE + 1) as f64);
            if c.raise {
                return c;
            }
        }
        self.counters.n[i] = observed;
        if observed > self.limits.max[i] {
            return self.exceed(limit, observed as f64);
        }
        Charged::WITHIN
    }

    /// One provider turn's usage: tokens always, cost when `maxCost` is set (a turn without usage,
    /// without a cost or in another currency breaches it). Stops at the first raised breach.
    pub fn record_usage(&mut self, usage: Option<&Usage>) -> Result<Charged, RunError> {
        let Some(u) = usage else {
            return Ok(if self.limits.cost.is_some() {
                self.exceed(Limit::Cost, f64::INFINITY)
            } else {
                Charged::WITHIN
            });
        };
        let fields = [
            ("inputTokens", u.input_tokens),
            ("outputTokens", u.output_tokens),
            ("totalTokens", u.total_tokens),
            ("cacheReadTokens", u.cache_read_tokens),
            ("cacheWriteTokens", u.cache_write_tokens),
        ];
        for (name, v) in fields {
            if v.is_some_and(|v| !safe_count(v)) {
                return Err(RunError::type_error(
                    "invalid_run_limits",
                    format!("Provider usage {name} must be a non-negative safe integer"),
                ));
            }
        }
        let input = u.input_tokens.unwrap_or(0.0);
        let output = u.output_tokens.unwrap_or(0.0);
        let total = u.total_tokens.unwrap_or(input + output);
        if !safe_count(total) {
            return Err(RunError::type_error(
                "invalid_run_limits",
                "Provider usage totalTokens is invalid",
            ));
        }
        let mut answer = Charged::WITHIN;
        for (limit, delta) in [
            (Limit::InputTokens, input),
            (Limit::OutputTokens, output),
            (Limit::TotalTokens, total),
        ] {
            let c = self.add(limit, limit as usize, delta as u64);
            answer.first |= c.first;
            if c.raise {
                answer.raise = true;
                return Ok(answer);
            }
        }
        if u.cost.is_some_and(|c| !c.is_finite() || c < 0.0) {
            return Err(RunError::type_error(
                "invalid_run_limits",
                "Provider usage cost must be finite and non-negative",
            ));
        }
        let Some(max) = self.limits.cost.clone() else {
            return Ok(answer);
        };
        let cost = match u.cost {
            Some(c) if u.currency.as_deref() == Some(max.currency.as_str()) => c,
            _ => {
                let c = self.exceed(Limit::Cost, f64::INFINITY);
                answer.first |= c.first;
                answer.raise = true;
                return Ok(answer);
            }
        };
        self.counters.cost += cost;
        if self.counters.cost > max.amount {
            let c = self.exceed(Limit::Cost, self.counters.cost);
            answer.first |= c.first;
            answer.raise = true;
        }
        Ok(answer)
    }
}
