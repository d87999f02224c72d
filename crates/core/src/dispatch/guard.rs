//! `tool_input` / `tool_output` guardrails inside the dispatch machine: started in declaration order
//! with up to `maxConcurrency` in flight, decided in declaration order; the first decision that is
//! not `allow` stops the rest. Every decision becomes a bounded, redacted record.

use super::machine::{Answer, Command, GuardAction, GuardFacts};
use super::reasons;
use crate::redact::Secrets;
use crate::text::utf8_prefix;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Input,
    Output,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Input => "tool_input",
            Stage::Output => "tool_output",
        }
    }
}

/// The most a guardrail's name and reason take in a record, in bytes.
pub const NAME_BYTES: usize = 128;
pub const REASON_BYTES: usize = 4 * 1024;
pub const MAX_CONCURRENCY: u32 = 16;
/// The record name of a guardrail without a usable name (as `runGuardrails` writes it).
const UNNAMED: &str = "invalid";

/// What the guardrail run asks of the machine.
#[derive(Debug, Clone, PartialEq)]
pub enum GuardCommand {
    Host(Command),
    Allow,
    Block {
        message: String,
    },
    /// A tripwire, or an `interrupt` (which a tool stage cannot honour): the run is rejected.
    Tripwire {
        message: String,
        interrupt: bool,
    },
}

#[derive(Debug)]
enum Phase {
    Starting,
    Awaiting,
    /// The record of the current guardrail is being written.
    Recording,
    /// The rest are being aborted before the stage ends.
    Aborting,
}

#[derive(Debug)]
pub struct GuardRun {
    stage: Stage,
    count: u32,
    max: u32,
    next_start: u32,
    next_process: u32,
    phase: Phase,
    /// The decision that stops the stage (its action, not `allow`) and the blocked call's message.
    stop: Option<(&'static str, String)>,
}

impl GuardRun {
    pub fn new(stage: Stage, count: u32, max: u32) -> GuardRun {
        GuardRun {
            stage,
            count,
            max: max.clamp(1, MAX_CONCURRENCY),
            next_start: 0,
            next_process: 0,
            phase: Phase::Starting,
            stop: None,
        }
    }

    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// Starts what may start, else waits for the next in order.
    pub fn next_command(&mut self) -> GuardCommand {
        if self.next_process >= self.count {
            return GuardCommand::Allow;
        }
        if self.next_start < self.count && self.next_start < self.next_process + self.max {
            let index = self.next_start;
            self.next_start += 1;
            self.phase = Phase::Starting;
            return GuardCommand::Host(Command::StartGuardrail {
                stage: self.stage,
                index,
            });
        }
        self.phase = Phase::Awaiting;
        GuardCommand::Host(Command::AwaitGuardrail {
            stage: self.stage,
            index: self.next_process,
        })
    }

    pub fn answer(&mut self, a: Answer, secrets: &Secrets) -> GuardCommand {
        match self.phase {
            // A start's answer is held by the host until its turn.
            Phase::Starting => self.next_command(),
            Phase::Awaiting => {
                let (action, reason, metadata, facts) = match a {
                    Answer::Guard(d, facts) => {
                        let action = match d.action {
                            GuardAction::Allow => "allow",
                            GuardAction::Block => "block",
                            GuardAction::Tripwire => "tripwire",
                            GuardAction::Interrupt => "interrupt",
                        };
                        (action, d.reason, d.metadata, facts)
                    }
                    Answer::GuardInvalid(facts) => (
                        "tripwire",
                        Some("guardrail_invalid".to_owned()),
                        false,
                        facts,
                    ),
                    Answer::GuardMalformed(facts) => (
                        "tripwire",
                        Some("guardrail_invalid_decision".to_owned()),
                        false,
                        facts,
                    ),
                    Answer::GuardFailed(facts) => (
                        "tripwire",
                        Some("guardrail_failed".to_owned()),
                        false,
                        facts,
                    ),
                    // Any other answer (an abort) trips the wire too.
                    _ => (
                        "tripwire",
                        Some("guardrail_failed".to_owned()),
                        false,
                        GuardFacts::default(),
                    ),
                };
                self.stop =
                    (action != "allow").then(|| (action, self.message(&facts, reason.as_deref())));
                let name = facts
                    .name
                    .as_deref()
                    .filter(|n| !n.is_empty())
                    .unwrap_or(UNNAMED);
                let guardrail = secrets.redact(utf8_prefix(name, NAME_BYTES)).into_owned();
                let reason =
                    reason.map(|r| secrets.redact(utf8_prefix(&r, REASON_BYTES)).into_owned());
                self.phase = Phase::Recording;
                GuardCommand::Host(Command::GuardrailRecord {
                    stage: self.stage,
                    guardrail,
                    action,
                    reason,
                    metadata,
                })
            }
            Phase::Recording => {
                self.next_process += 1;
                if self.stop.is_some() {
                    self.phase = Phase::Aborting;
                    return GuardCommand::Host(Command::AbortGuardrails);
                }
                self.next_command()
            }
            Phase::Aborting => match self.stop.take() {
                Some(("block", message)) => GuardCommand::Block { message },
                Some((action, message)) => GuardCommand::Tripwire {
                    message,
                    interrupt: action == "interrupt",
                },
                None => GuardCommand::Allow,
            },
        }
    }

    fn message(&self, facts: &GuardFacts, reason: Option<&str>) -> String {
        match (&facts.pack, &facts.rule) {
            (Some(p), Some(r)) => reasons::rule_pack_message(p, r, reason),
            _ => match self.stage {
                Stage::Input => reasons::INPUT_GUARDRAIL_BLOCKED.to_owned(),
                Stage::Output => reasons::OUTPUT_GUARDRAIL_BLOCKED.to_owned(),
            },
        }
    }
}
