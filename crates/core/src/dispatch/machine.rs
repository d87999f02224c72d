//! The dispatch state machine (SPEC section 3) as plain Rust: it holds no host value and performs no
//! I/O. The binding tells it what the host answered (`Answer`) and performs the `Command` it
//! returns: calling a hook, the tool or a store, writing an event or a row, settling the call.
//! Host values (the call, the tool, the result, a thrown value) stay with the binding; the machine
//! names them by role.

use super::guard::{GuardCommand, GuardRun, Stage};
use super::reasons::{self, BlockedReason};
use crate::effects::declaration::EffectPlan;
use crate::effects::error::{EffectErrorCode, STORE_FAILURE_CODE};

pub use super::protocol::*;

mod effects;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    CallMiddleware,
    InputGuardrails,
    Lookup,
    Identity,
    Trust,
    Permission,
    Validate,
    EffectDeclaration,
    EffectKey,
    EffectBegin,
    BeforeExecute,
    Signal,
    EmitStarted,
    AppendStarted,
    MarkDispatched,
    Execute,
    ResultMiddleware,
    OutputGuardrails,
    Redact,
    Complete,
    /// In the terminal sequence.
    Ending(End),
}

/// The terminal sequence: settle the claim, the event, the row, then resolve or reject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    SetError,
    Settle,
    SettleAfterGet,
    Event,
    Row,
    Settled,
    Gone,
}

#[derive(Debug, Clone)]
struct Claim {
    token: String,
    version: f64,
    attempted: bool,
    dispatched: bool,
    completed: bool,
}

/// One dispatch.
pub struct Dispatch {
    setup: Setup,
    call: CallFacts,
    step: Step,
    terminal: Option<Terminal>,
    error: Option<ErrorSpec>,
    reject: Option<Rejection>,
    plan: Option<EffectPlan>,
    claim: Option<Claim>,
    guard: Option<GuardRun>,
    /// `beforeExecute` paused the run (`Some(retryable)`): the call settles its claim and rejects
    /// with the thrown value, without a terminal event or row — it did not end, the run stopped.
    paused: Option<bool>,
    /// The pre-execute signal check rides on the next command instead of costing a command (a
    /// Node-API crossing) of its own: set at the signal step, cleared by the answer to the command
    /// it gates.
    gated: bool,
}

impl Dispatch {
    pub fn new(setup: Setup, call: CallFacts) -> Dispatch {
        Dispatch {
            setup,
            call,
            step: Step::CallMiddleware,
            terminal: None,
            error: None,
            reject: None,
            plan: None,
            claim: None,
            guard: None,
            paused: None,
            gated: false,
        }
    }

    /// Whether the command just issued runs only if the caller's signal is not aborted: the host
    /// checks the signal first and, if it is aborted, answers `SignalAborted` without running it.
    /// It gates the first of the started event, the started row, `markDispatched` and the tool.
    pub fn signal_gated(&self) -> bool {
        self.gated
    }

    /// The call's name as the messages use it.
    pub fn name(&self) -> &str {
        self.call.name.as_deref().unwrap_or("")
    }

    #[cfg(test)]
    pub fn terminal(&self) -> Option<Terminal> {
        self.terminal
    }

    /// The first command.
    pub fn start(&mut self) -> Command {
        self.run()
    }

    /// Hands the answer to the last command over and returns the next one.
    pub fn step(&mut self, answer: Answer) -> Command {
        if let Step::Ending(end) = self.step {
            return self.ending_answer(end, answer);
        }
        match self.answer(answer) {
            Some(cmd) => cmd,
            None => self.run(),
        }
    }

    // ----- the forward path -------------------------------------------------------------------

    /// Runs the steps that need no host until one does.
    fn run(&mut self) -> Command {
        loop {
            if let Step::Ending(end) = self.step {
                return self.ending(end);
            }
            if let Some(cmd) = self.enter() {
                return cmd;
            }
        }
    }

    /// Enters the current step: a command for the host, or `None` having moved on.
    fn enter(&mut self) -> Option<Command> {
        let s = &self.setup;
        match self.step {
            Step::CallMiddleware if s.middleware => Some(Command::CallMiddleware),
            Step::InputGuardrails if s.input_guardrails > 0 => self.guard_start(Stage::Input),
            Step::Lookup => {
                if self.call.provider_hosted {
                    // The provider already executed it; the host never does.
                    let message = format!(
                        "Provider-hosted tool call is not dispatched: {}",
                        self.name()
                    );
                    return Some(self.named_block(
                        BlockedReason::ExecutionDenied,
                        "ToolDispatchError",
                        message,
                        reasons::CODE_PROVIDER_HOSTED,
                        None,
                    ));
                }
                if !self.call.name_is_string {
                    return Some(self.unknown_tool());
                }
                Some(Command::Lookup)
            }
            Step::Identity if s.identity => Some(Command::CheckIdentity),
            Step::Trust if s.trust => Some(Command::CheckTrust),
            Step::Permission if s.permission => Some(Command::CheckPermission),
            Step::Validate if s.validate => Some(Command::Validate),
            Step::EffectDeclaration => Some(Command::EffectDeclaration),
            Step::EffectKey => Some(Command::EffectKey),
            Step::EffectBegin => Some(Command::EffectBegin),
            Step::BeforeExecute if s.before_execute => Some(Command::BeforeExecute),
            Step::Signal => {
                self.gated = s.signal;
                self.advance();
                None
            }
            Step::EmitStarted if s.emit => Some(Command::EmitStarted),
            Step::AppendStarted if s.ledger => Some(Command::AppendStarted),
            Step::MarkDispatched => match self.claim.as_mut() {
                Some(c) => {
                    c.attempted = true;
                    Some(Command::MarkDispatched(ClaimRef {
                        token: c.token.clone(),
                        version: c.version,
                    }))
                }
                None => {
                    self.advance();
                    None
                }
            },
            Step::Execute => Some(Command::Execute),
            Step::ResultMiddleware if s.middleware => Some(Command::ResultMiddleware),
            Step::OutputGuardrails if s.output_guardrails > 0 => self.guard_start(Stage::Output),
            Step::Redact if s.redaction => Some(Command::RedactResult),
            Step::Complete => match self.claim.as_ref() {
                Some(c) if c.dispatched && !c.completed => {
                    Some(Command::EffectComplete(ClaimRef {
                        token: c.token.clone(),
                        version: c.version,
                    }))
                }
                _ => {
                    self.end(Terminal::Finished);
                    None
                }
            },
            Step::Ending(_) => None,
            _ => {
                self.advance();
                None
            }
        }
    }

    fn advance(&mut self) {
        self.step = match self.step {
            Step::CallMiddleware => Step::InputGuardrails,
            Step::InputGuardrails => Step::Lookup,
            Step::Lookup => Step::Identity,
            Step::Identity => Step::Trust,
            Step::Trust => Step::Permission,
            Step::Permission => Step::Validate,
            Step::Validate => Step::EffectDeclaration,
            Step::EffectDeclaration => Step::BeforeExecute,
            Step::EffectKey => Step::EffectBegin,
            Step::EffectBegin => Step::BeforeExecute,
            Step::BeforeExecute => Step::Signal,
            Step::Signal => Step::EmitStarted,
            Step::EmitStarted => Step::AppendStarted,
            Step::AppendStarted => Step::MarkDispatched,
            Step::MarkDispatched => Step::Execute,
            Step::Execute => Step::ResultMiddleware,
            Step::ResultMiddleware => Step::OutputGuardrails,
            Step::OutputGuardrails => Step::Redact,
            Step::Redact => Step::Complete,
            Step::Complete => Step::Ending(End::Settle),
            Step::Ending(e) => Step::Ending(e),
        };
    }

    /// True once the tool may have run.
    fn after_execute(&self) -> bool {
        matches!(
            self.step,
            Step::Execute
                | Step::ResultMiddleware
                | Step::OutputGuardrails
                | Step::Redact
                | Step::Complete
        )
    }

    /// Handles an answer. `Some(cmd)` when it ends in a command at once; `None` to run on.
    fn answer(&mut self, answer: Answer) -> Option<Command> {
        if std::mem::take(&mut self.gated) && answer == Answer::SignalAborted {
            // The gated command did not run: the call ends as it would have at the signal step.
            if let Some(c) = self.claim.as_mut() {
                c.attempted = false;
            }
            return Some(self.aborted_before_execution());
        }
        let answer = match answer {
            Answer::SignalAborted => Answer::Aborted,
            a => a,
        };
        let passes_abort = matches!(
            self.step,
            Step::MarkDispatched
                | Step::Complete
                | Step::InputGuardrails
                | Step::OutputGuardrails
                | Step::EmitStarted
                | Step::AppendStarted
        );
        if answer == Answer::Aborted && !passes_abort {
            if self.step == Step::Execute && self.effect_in_flight() {
                return Some(self.effect_unknown());
            }
            return Some(self.aborted());
        }
        match (self.step, answer) {
            (Step::CallMiddleware, Answer::Call(facts)) => {
                self.call = facts;
                self.advance();
            }
            (Step::CallMiddleware, Answer::Threw { .. }) => {
                // errorPolicy "throw": the call still gets its terminal row, then rejects.
                self.reject = Some(Rejection::Thrown);
                return Some(self.block(BlockedReason::ExecutionDenied, ErrorSpec::Thrown));
            }
            (Step::InputGuardrails | Step::OutputGuardrails, a) => return self.guard_answer(a),
            (Step::Lookup, Answer::Found(true)) => {
                if let Some(f) = &self.setup.filter {
                    if !f.permits(self.name()) {
                        let m = reasons::tool_denied(self.name());
                        return Some(self.block(BlockedReason::ToolDenied, ErrorSpec::Plain(m)));
                    }
                }
                match self.call.arguments {
                    ArgumentsShape::ProviderError => {
                        return Some(self.block(
                            BlockedReason::InvalidArguments,
                            ErrorSpec::ProviderArguments,
                        ))
                    }
                    ArgumentsShape::NotObject => {
                        let m = reasons::ARGUMENTS_NOT_OBJECT.to_owned();
                        return Some(
                            self.block(BlockedReason::InvalidArguments, ErrorSpec::Plain(m)),
                        );
                    }
                    ArgumentsShape::Object => self.advance(),
                }
            }
            (Step::Lookup, _) => return Some(self.unknown_tool()),
            (Step::Identity, Answer::Done) => self.advance(),
            (Step::Identity, _) => {
                return Some(self.block(BlockedReason::PermissionDenied, ErrorSpec::Thrown))
            }
            (Step::Trust, a) => {
                let default = reasons::untrusted(self.name());
                return self.policy_decision(a, default, Policy::Trust);
            }
            (Step::Permission, a) => {
                let default = reasons::permission_denied(self.name());
                return self.policy_decision(a, default, Policy::Permission);
            }
            (Step::Validate, a) => {
                let spec = match a {
                    Answer::Validated(Validation::Valid) => {
                        self.advance();
                        return None;
                    }
                    Answer::Validated(Validation::Message(m)) => ErrorSpec::Plain(m),
                    Answer::Validated(Validation::Info) => ErrorSpec::ValidatorInfo,
                    Answer::Validated(Validation::Other(ty)) => ErrorSpec::Plain(format!(
                        "Validation failed for tool {}: the validator returned {ty}",
                        self.name()
                    )),
                    // A throwing validator blocks too (upstream would reject the dispatch).
                    _ => ErrorSpec::Thrown,
                };
                return Some(self.block(BlockedReason::ValidationFailed, spec));
            }
            (Step::EffectDeclaration, a) => return self.effect_declaration(a),
            (Step::EffectKey, Answer::Done) => match self.plan {
                Some(EffectPlan::KeyOnly) => self.step = Step::BeforeExecute,
                _ if !self.setup.effect_store => {
                    if self.plan == Some(EffectPlan::ClaimRequired) {
                        let message = reasons::effect_store_missing(self.name());
                        return Some(self.effect_denied(EffectErrorCode::Required, message));
                    }
                    self.step = Step::BeforeExecute;
                }
                _ => self.advance(),
            },
            (Step::EffectKey, _) => {
                return Some(self.block(BlockedReason::ExecutionDenied, ErrorSpec::Thrown))
            }
            (Step::EffectBegin, a) => return self.effect_begun(a),
            (Step::BeforeExecute, Answer::Done) => self.advance(),
            (Step::BeforeExecute, Answer::Threw { code: Some(code) }) if pause(&code).is_some() => {
                self.paused = pause(&code);
                self.reject = Some(Rejection::Thrown);
                self.terminal = Some(Terminal::Error);
                return Some(self.ending(End::Settle));
            }
            (Step::BeforeExecute, _) => {
                return Some(self.block(BlockedReason::ExecutionDenied, ErrorSpec::Thrown))
            }
            // A failing observer never changes the call's outcome.
            (Step::EmitStarted | Step::AppendStarted, _) => self.advance(),
            (Step::MarkDispatched, a) => match a {
                Answer::Record {
                    version: Some(v), ..
                } => {
                    if let Some(c) = self.claim.as_mut() {
                        c.version = v;
                        c.dispatched = true;
                    }
                    self.advance();
                }
                _ => return Some(self.effect_unknown()),
            },
            (Step::Execute, a) => return self.executed(a),
            (Step::ResultMiddleware, Answer::Threw { .. }) => {
                self.reject = Some(Rejection::Thrown);
                return Some(self.fail(ErrorSpec::Thrown));
            }
            (Step::ResultMiddleware | Step::Redact, _) => self.advance(),
            (Step::Complete, a) => match a {
                Answer::Record { .. } => {
                    if let Some(c) = self.claim.as_mut() {
                        c.completed = true;
                    }
                    self.end(Terminal::Finished);
                }
                _ => return Some(self.effect_unknown()),
            },
            // `tool_call` middleware that answered nothing leaves the call as it was.
            _ => self.advance(),
        }
        None
    }

    fn executed(&mut self, a: Answer) -> Option<Command> {
        if let Answer::TimedOut(ms) = a {
            // Blocked, not failed: the harness stopped waiting. A dispatched claim is settled
            // `unknown` by the terminal sequence, since the side effect may still happen.
            let m = reasons::tool_timed_out(self.name(), ms);
            return Some(self.named_block(
                BlockedReason::ToolTimeout,
                "ToolTimeoutError",
                m,
                reasons::CODE_TOOL_TIMEOUT,
                None,
            ));
        }
        if a == Answer::InvalidTimeout {
            // The tool never ran; a claim already marked dispatched is still settled `unknown`.
            let m = reasons::invalid_tool_timeout(self.name());
            return Some(self.named_fail("ToolDefinitionError", m, "invalid_tool"));
        }
        if self.effect_in_flight() {
            // After dispatch, a failure or an error result leaves the effect's outcome unknown.
            if !matches!(a, Answer::Returned(ToolReturn::Result { has_error: false })) {
                return Some(self.effect_unknown());
            }
        }
        match a {
            Answer::Returned(ToolReturn::Result { .. }) => {
                self.advance();
                None
            }
            Answer::OutputMismatch(issues) => {
                let m = reasons::output_mismatch(self.name(), &issues);
                Some(self.named_fail("ToolResultError", m, reasons::CODE_INVALID_OUTPUT))
            }
            Answer::Returned(ToolReturn::NotResult(ty)) => {
                let m = format!(
                    "Tool {} returned {ty} instead of a ToolResult object",
                    self.name()
                );
                Some(self.named_fail("ToolResultError", m, reasons::CODE_INVALID_RESULT))
            }
            Answer::NoExecute => {
                let m = format!("Tool {} has no execute function", self.name());
                Some(self.named_fail("ToolDefinitionError", m, "invalid_tool"))
            }

            _ => Some(self.fail(ErrorSpec::Thrown)),
        }
    }

    // ----- effects: machine/effects.rs ----------------------------------------------------------

    fn guard_start(&mut self, stage: Stage) -> Option<Command> {
        let n = match stage {
            Stage::Input => self.setup.input_guardrails,
            Stage::Output => self.setup.output_guardrails,
        };
        let mut run = GuardRun::new(stage, n, self.setup.guardrail_concurrency);
        let cmd = run.next_command();
        self.guard = Some(run);
        self.guard_command(cmd)
    }

    fn guard_answer(&mut self, a: Answer) -> Option<Command> {
        let mut run = self.guard.take()?;
        let cmd = run.answer(a, &self.setup.secrets);
        self.guard = Some(run);
        self.guard_command(cmd)
    }

    fn guard_command(&mut self, cmd: GuardCommand) -> Option<Command> {
        match cmd {
            GuardCommand::Host(c) => Some(c),
            GuardCommand::Allow => {
                self.guard = None;
                self.advance();
                None
            }
            GuardCommand::Block { message } => {
                self.guard = None;
                if self.effect_in_flight() {
                    return Some(self.effect_unknown());
                }
                let m = self.setup.secrets.redact(&message).into_owned();
                Some(self.block(BlockedReason::GuardrailBlocked, ErrorSpec::Plain(m)))
            }
            GuardCommand::Tripwire { message, interrupt } => {
                let stage = self.guard.take().map(|g| g.stage());
                self.reject = Some(if interrupt {
                    Rejection::Guardrail {
                        message: reasons::guardrail_interrupt_unavailable(
                            stage.unwrap_or(Stage::Input).as_str(),
                        ),
                        code: reasons::CODE_GUARDRAIL_INTERRUPT_UNAVAILABLE,
                    }
                } else {
                    Rejection::Guardrail {
                        message: reasons::GUARDRAIL_TRIPPED.to_owned(),
                        code: reasons::CODE_GUARDRAIL_BLOCKED,
                    }
                });
                let m = self.setup.secrets.redact(&message).into_owned();
                Some(self.block(BlockedReason::GuardrailBlocked, ErrorSpec::Plain(m)))
            }
        }
    }

    // ----- ends ---------------------------------------------------------------------------------

    fn unknown_tool(&mut self) -> Command {
        let m = reasons::unknown_tool(self.name());
        self.block(BlockedReason::UnknownTool, ErrorSpec::Plain(m))
    }

    fn aborted(&mut self) -> Command {
        if self.after_execute() {
            let message = format!("Tool call aborted: {}", self.name());
            self.named_fail("AbortError", message, reasons::CODE_ABORTED)
        } else {
            self.aborted_before_execution()
        }
    }

    fn aborted_before_execution(&mut self) -> Command {
        let message = format!("Tool call aborted before execution: {}", self.name());
        self.named_block(
            BlockedReason::ExecutionDenied,
            "AbortError",
            message,
            reasons::CODE_ABORTED,
            None,
        )
    }

    fn redacted(&self, s: String) -> String {
        match self.setup.secrets.redact(&s) {
            std::borrow::Cow::Borrowed(_) => s,
            std::borrow::Cow::Owned(r) => r,
        }
    }

    fn named(
        &self,
        name: &'static str,
        message: String,
        code: &'static str,
        cause: Option<Cause>,
    ) -> ErrorSpec {
        let cause = cause.map(|c| match c {
            Cause::Text(t) => Cause::Text(self.redacted(t)),
            other => other,
        });
        ErrorSpec::Named {
            name,
            message: self.redacted(message),
            code,
            cause,
        }
    }

    /// A trust or permission policy's answer, as `@arnilo/prism` reads it: granted advances; a
    /// refusal's reason is the message (`default` when it gives none); a policy that throws gives the
    /// thrown value's own ErrorInfo.
    fn policy_decision(&mut self, a: Answer, default: String, policy: Policy) -> Option<Command> {
        let (message, cause) = match a {
            Answer::Decision { granted: true, .. } => {
                self.advance();
                return None;
            }
            Answer::Decision { reason, .. } => {
                (reason.filter(|r| !r.is_empty()).unwrap_or(default), None)
            }
            Answer::Missing => (default, Some(Cause::Text(policy.missing_check().into()))),
            Answer::Threw { .. } => {
                return Some(self.block(BlockedReason::PermissionDenied, ErrorSpec::Thrown))
            }
            _ => (default, Some(Cause::ThrownMessage)),
        };
        let (name, code) = match policy {
            Policy::Trust => ("TrustDeniedError", reasons::CODE_UNTRUSTED),
            Policy::Permission => ("PermissionDeniedError", reasons::CODE_PERMISSION_DENIED),
        };
        Some(self.named_block(BlockedReason::PermissionDenied, name, message, code, cause))
    }

    fn named_block(
        &mut self,
        reason: BlockedReason,
        name: &'static str,
        message: String,
        code: &'static str,
        cause: Option<Cause>,
    ) -> Command {
        let spec = self.named(name, message, code, cause);
        self.block(reason, spec)
    }

    fn named_fail(&mut self, name: &'static str, message: String, code: &'static str) -> Command {
        let spec = self.named(name, message, code, None);
        self.fail(spec)
    }

    fn block(&mut self, reason: BlockedReason, spec: ErrorSpec) -> Command {
        let spec = match spec {
            ErrorSpec::Plain(m) => ErrorSpec::Plain(self.redacted(m)),
            other => other,
        };
        self.error = Some(spec);
        self.end(Terminal::Blocked(reason));
        self.ending(End::SetError)
    }

    fn fail(&mut self, spec: ErrorSpec) -> Command {
        self.error = Some(spec);
        self.end(Terminal::Error);
        self.ending(End::SetError)
    }

    fn end(&mut self, kind: Terminal) {
        self.terminal = Some(kind);
        self.step = Step::Ending(if kind == Terminal::Finished {
            End::Settle
        } else {
            End::SetError
        });
    }

    /// The command of a terminal phase, moving past phases with nothing to do.
    fn ending(&mut self, mut end: End) -> Command {
        loop {
            self.step = Step::Ending(end);
            match end {
                End::SetError => {
                    if let Some(spec) = self.error.take() {
                        self.step = Step::Ending(End::Settle);
                        return Command::SetError(spec);
                    }
                    end = End::Settle;
                }
                End::Settle => match self.claim.as_ref() {
                    Some(c) if !c.completed => {
                        let r = ClaimRef {
                            token: c.token.clone(),
                            version: c.version,
                        };
                        if c.dispatched {
                            self.step = Step::Ending(End::Event);
                            return Command::MarkUnknown(r);
                        } else if c.attempted {
                            self.step = Step::Ending(End::SettleAfterGet);
                            return Command::EffectGet;
                        } else {
                            self.step = Step::Ending(End::Event);
                            return match self.paused {
                                Some(true) => Command::ReleaseRetryable(r),
                                _ => Command::ReleaseClaim(r),
                            };
                        }
                    }
                    _ => end = End::Event,
                },
                End::SettleAfterGet => end = End::Event,
                End::Event => {
                    if self.setup.emit && self.paused.is_none() {
                        self.step = Step::Ending(End::Row);
                        return Command::EmitTerminal(self.terminal.unwrap_or(Terminal::Error));
                    }
                    end = End::Row;
                }
                End::Row => {
                    if self.setup.ledger && self.paused.is_none() {
                        self.step = Step::Ending(End::Settled);
                        return Command::AppendTerminal(self.terminal.unwrap_or(Terminal::Error));
                    }
                    end = End::Settled;
                }
                End::Settled => {
                    self.step = Step::Ending(End::Gone);
                    return match self.reject.take() {
                        Some(r) => Command::Reject(r),
                        None => Command::Resolve,
                    };
                }
                End::Gone => return Command::Resolve,
            }
        }
    }

    /// Answers in the terminal sequence: store and observer failures are swallowed there, the
    /// outcome is already what the result says.
    fn ending_answer(&mut self, end: End, answer: Answer) -> Command {
        if end == End::SettleAfterGet {
            if let Answer::Stored {
                status: RecordStatus::Dispatched,
                token: Some(token),
                version: Some(version),
            } = answer
            {
                if let Some(c) = self.claim.as_mut() {
                    c.token = token.clone();
                    c.version = version;
                }
                self.step = Step::Ending(End::Event);
                return Command::MarkUnknown(ClaimRef { token, version });
            }
            return self.ending(End::Event);
        }
        self.ending(end)
    }
}

/// Whether a code thrown by `beforeExecute` pauses the run instead of blocking the call, as
/// `@arnilo/prism` treats it: `Some(true)` for a durable suspension (the claim stays retryable for
/// the resume), `Some(false)` for a nested run's suspension or a loop-state error.
/// Which of the two host policies answered.
#[derive(Clone, Copy)]
enum Policy {
    Trust,
    Permission,
}

impl Policy {
    fn missing_check(self) -> &'static str {
        match self {
            Policy::Trust => "trust policy has no check function",
            Policy::Permission => "permission policy has no check function",
        }
    }
}

fn pause(code: &str) -> Option<bool> {
    match code {
        "ERR_PRISM_AGENT_RUN_SUSPENDED" => Some(true),
        "ERR_PRISM_DELEGATION_SUSPENDED" => Some(false),
        c if c.starts_with("ERR_PRISM_LOOP_") => Some(false),
        _ => None,
    }
}

/// A `ToolEffectError`'s code, which dispatch reports as is.
fn is_effect_code(code: &str) -> bool {
    code.starts_with("ERR_PRISM_TOOL_EFFECT_") && code != "ERR_PRISM_TOOL_EFFECT_STORE"
}

#[cfg(test)]
#[path = "machine_tests.rs"]
mod tests;
