//! The run machine: one agent run's state and decisions as a plain value, driven by the host's
//! loop (`lib/agent-turn-loop.js`) as `dispatch::machine` drives one call. The host performs the
//! I/O — the provider turn, the dispatch of calls, the clock, the checkpoint store — and tells the
//! machine what happened; the machine answers what comes next:
//!
//! - `begin_turn` → the turn is charged (`maxTurns`) and the tool choice it sends is fixed;
//! - `attempt(bytes)` / `response(bytes)` / `usage(..)` → a provider attempt, its events and its
//!   usage are charged;
//! - `after_turn(calls)` → `Finish(stop)`, `Finish(turn_limit)` or `Dispatch` with the calls the
//!   turn's `toolChoice` refuses (a blocked result each, reason `tool_choice_denied`);
//! - `begin_round` / `tool_call` → a round and each call it dispatches are charged;
//! - `clock(now)` → the wall-time deadline;
//! - `checkpoint(mono)` → what a suspended run saves (every counter, and `deadlineAt`);
//! - `end_status(status)` → the run's terminal status (a run a limit stopped fails).
//!
//! A resumed run opens the machine from its checkpoint's counters and deadline, so it goes on with
//! the same budget. Tool results pass one pipeline, in `RESULT_PIPELINE` order.

use serde_json::{json, Value};

use super::budget::{Breach, Budget, Charged, Counters, Limit, RunLimits, Usage};
use super::{next_step, Limits, RunError, Step};
use crate::text::utf8_prefix;

/// The stages a tool result (its value and its error message alike) passes, in order: redaction
/// (secrets and known tokens) before any cut, so no cut leaves part of a secret; the output
/// budget's cut; the fold summary (the summarizer reads redacted text, its answer is redacted, then
/// bounded); then the transcript, events, ledger rows and telemetry see the result.
pub const RESULT_PIPELINE: [&str; 4] = ["redact", "output_budget", "fold", "record"];

/// The blocked reason of a call the turn's `toolChoice` refuses.
pub const TOOL_CHOICE_DENIED: &str = "tool_choice_denied";

/// Longest tool name a refusal message quotes, in bytes.
const NAME_BYTES: usize = 128;

/// A run's `toolChoice`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// No choice given: the provider's default.
    #[default]
    Unset,
    Auto,
    None,
    Required,
    /// `{ type: "tool", name }`.
    Tool(String),
}

impl ToolChoice {
    /// The choice from its JSON form (`"auto"`, `"none"`, `"required"`, `{ type: "tool", name }`);
    /// the host has already refused anything else (`lib/providers/request-options.js`).
    pub fn from_json(value: &Value) -> ToolChoice {
        match value {
            Value::String(s) if s == "auto" => ToolChoice::Auto,
            Value::String(s) if s == "none" => ToolChoice::None,
            Value::String(s) if s == "required" => ToolChoice::Required,
            Value::Object(o) => match o.get("name").and_then(Value::as_str) {
                Some(n) => ToolChoice::Tool(n.to_string()),
                None => ToolChoice::Unset,
            },
            _ => ToolChoice::Unset,
        }
    }

    /// The choice as JSON text, a named one as `{"type":"tool","name":…}` in that order.
    pub fn to_text(&self) -> String {
        match self {
            ToolChoice::Tool(n) => {
                super::budget::object_text(&[("type", json!("tool")), ("name", json!(n))])
            }
            c => c.to_json().to_string(),
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            ToolChoice::Unset => Value::Null,
            ToolChoice::Auto => json!("auto"),
            ToolChoice::None => json!("none"),
            ToolChoice::Required => json!("required"),
            ToolChoice::Tool(n) => json!({ "type": "tool", "name": n }),
        }
    }
}

/// What the host does after a provider turn.
#[derive(Debug, Clone, PartialEq)]
pub enum AfterTurn {
    /// The run ends, succeeded, with this `finishReason` (`stop` or `turn_limit`).
    Finish(&'static str),
    /// A tool round: dispatch the host calls, except `refused` (index, message): each of those gets
    /// a blocked result with reason `tool_choice_denied` and is never run.
    Dispatch { refused: Vec<(u32, String)> },
}

/// One run's state.
#[derive(Debug, Clone)]
pub struct RunMachine {
    pub budget: Budget,
    /// The loop's round and turn limits (`run::resolve_limits`).
    loop_limits: Limits,
    choice: ToolChoice,
    /// The choice the current turn sent (`Unset` once a forcing choice has had its round).
    turn_choice: ToolChoice,
}

impl RunMachine {
    pub fn new(budget: Budget, loop_limits: Limits, choice: ToolChoice) -> RunMachine {
        RunMachine {
            budget,
            loop_limits,
            turn_choice: ToolChoice::Unset,
            choice,
        }
    }

    /// A machine over `limits`, opened at `now_ms` / `mono_ms`; a resumed run passes its
    /// checkpoint's `counters` and `deadline_ms`.
    pub fn open(
        limits: RunLimits,
        choice: ToolChoice,
        saved: Option<&Value>,
        deadline_ms: Option<f64>,
        now_ms: f64,
        mono_ms: f64,
    ) -> Result<RunMachine, RunError> {
        // Rounds past `maxToolRounds` end the run cleanly (`turn_limit`); turns are the budget's
        // (`maxTurns` is a breach), so the round rule never stops on turns.
        let loop_limits = Limits {
            max_tool_rounds: limits.max[Limit::ToolRounds as usize] as u32,
            max_turns: u32::MAX,
        };
        let saved = saved.map(Counters::from_json).transpose()?;
        let budget = Budget::open(limits, saved, deadline_ms, now_ms, mono_ms)?;
        Ok(RunMachine::new(budget, loop_limits, choice))
    }

    pub fn turns(&self) -> u64 {
        self.budget.counters.n[Limit::Turns as usize]
    }

    pub fn rounds(&self) -> u64 {
        self.budget.counters.n[Limit::ToolRounds as usize]
    }

    pub fn breach(&self) -> Option<&Breach> {
        self.budget.breach()
    }

    /// The `toolChoice` a turn sends when `rounds` tool rounds have run: a forcing choice
    /// (`required`, a named tool) holds until the run's first tool round, then the turn sends none
    /// (the provider's default), so the model can answer after its forced call; `none` and `auto`
    /// hold for the whole run.
    pub fn choice_for(&self, rounds: u64) -> ToolChoice {
        match &self.choice {
            ToolChoice::Required | ToolChoice::Tool(_) if rounds > 0 => ToolChoice::Unset,
            c => c.clone(),
        }
    }

    /// A provider turn starts: it is charged, and the tool choice it sends is fixed.
    pub fn begin_turn(&mut self) -> Charged {
        self.turn_choice = self.choice_for(self.rounds());
        self.charge(Limit::Turns, 1)
    }

    /// The tool choice of the current turn.
    pub fn turn_choice(&self) -> &ToolChoice {
        &self.turn_choice
    }

    /// A provider attempt with a request of `request_bytes` JSON bytes.
    pub fn attempt(&mut self, request_bytes: u64) -> Charged {
        let c = self.charge(Limit::ProviderAttempts, 1);
        if c.raise {
            return c;
        }
        let r = self.charge(Limit::RequestBytes, request_bytes);
        Charged {
            first: c.first || r.first,
            raise: r.raise,
        }
    }

    /// A provider event of `bytes` JSON bytes.
    pub fn response(&mut self, bytes: u64) -> Charged {
        self.charge(Limit::ResponseBytes, bytes)
    }

    pub fn usage(&mut self, usage: Option<&Usage>) -> Result<Charged, RunError> {
        self.budget.record_usage(usage)
    }

    fn charge(&mut self, limit: Limit, delta: u64) -> Charged {
        // Deltas the machine itself passes are safe integers by construction.
        self.budget
            .charge(limit, delta.min(super::budget::MAX_SAFE) as f64)
            .unwrap_or(Charged::WITHIN)
    }

    /// After a provider turn that asked for `calls` (each a tool name, `None` for a call the
    /// provider hosts): done, the round limit, or a round with the calls `toolChoice` refuses.
    pub fn after_turn(&self, calls: &[Option<&str>]) -> AfterTurn {
        let host_calls = calls.iter().filter(|c| c.is_some()).count() as u32;
        let turns = self.turns().min(u32::MAX as u64) as u32;
        let rounds = self.rounds().min(u32::MAX as u64) as u32;
        match next_step(self.loop_limits, rounds, turns, host_calls) {
            Step::Done => AfterTurn::Finish("stop"),
            Step::TurnLimit => AfterTurn::Finish("turn_limit"),
            Step::Execute => AfterTurn::Dispatch {
                refused: self.refusals(calls),
            },
        }
    }

    /// The host calls the current turn's choice refuses: every call under `none`, every call to
    /// another tool under a named choice. `auto`, `required` and no choice refuse nothing.
    pub fn refusals(&self, calls: &[Option<&str>]) -> Vec<(u32, String)> {
        let mut out = Vec::new();
        for (i, call) in calls.iter().enumerate() {
            let Some(name) = call else { continue };
            let quoted = utf8_prefix(name, NAME_BYTES);
            let message = match &self.turn_choice {
                ToolChoice::None => {
                    format!("Tool call {quoted} refused: toolChoice is \"none\"")
                }
                ToolChoice::Tool(only) if only != name => format!(
                    "Tool call {quoted} refused: toolChoice names tool \"{}\"",
                    utf8_prefix(only, NAME_BYTES)
                ),
                _ => continue,
            };
            out.push((i as u32, message));
        }
        out
    }

    /// A tool round starts (charged).
    pub fn begin_round(&mut self) -> Charged {
        self.charge(Limit::ToolRounds, 1)
    }

    /// A call of the round is dispatched (charged; refused calls are not).
    pub fn tool_call(&mut self) -> Charged {
        self.charge(Limit::ToolCalls, 1)
    }

    /// The clock's answer (`now_ms` since the epoch).
    pub fn clock(&mut self, now_ms: f64) -> Charged {
        self.budget.clock(now_ms)
    }

    /// What a suspended run's checkpoint carries, as JSON text: `{ counters, deadlineMs }` (the
    /// host writes `deadlineAt` as an ISO time, as upstream does).
    pub fn checkpoint(&self, mono_ms: f64) -> String {
        format!(
            "{{\"counters\":{},\"deadlineMs\":{}}}",
            self.budget.snapshot(mono_ms),
            Value::from(self.budget.deadline_ms)
        )
    }

    /// The run's terminal status from how it ended: a run a limit stopped fails (its abort was the
    /// breach's), as upstream's does; every other status stands.
    pub fn end_status<'s>(&self, status: &'s str) -> &'s str {
        if status == "aborted" && self.breach().is_some() {
            "failed"
        } else {
            status
        }
    }
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
