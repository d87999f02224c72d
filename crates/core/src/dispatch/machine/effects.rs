//! The effect steps of a dispatch: the tool's declaration, the claim's outcome, and the two ways a
//! claim ends badly (denied before dispatch, unknown after it). `machine.rs` calls them.

use super::*;

impl Dispatch {
    pub(super) fn effect_declaration(&mut self, a: Answer) -> Option<Command> {
        match a {
            Answer::EffectPlan { plan: None, .. }
            | Answer::EffectPlan {
                plan: Some(EffectPlan::Unmanaged),
                ..
            } => {
                self.step = Step::BeforeExecute;
                None
            }
            Answer::EffectPlan {
                plan: Some(plan),
                idempotency_unsupported,
            } => {
                if !self.setup.identity {
                    if idempotency_unsupported {
                        self.step = Step::BeforeExecute;
                        return None;
                    }
                    let store_missing =
                        plan == EffectPlan::ClaimRequired && !self.setup.effect_store;
                    let message = reasons::effect_identity_missing(self.name(), store_missing);
                    return Some(self.effect_denied(EffectErrorCode::Conflict, message));
                }
                self.plan = Some(plan);
                self.step = Step::EffectKey;
                None
            }
            _ => Some(self.block(BlockedReason::ExecutionDenied, ErrorSpec::Thrown)),
        }
    }

    pub(super) fn effect_begun(&mut self, a: Answer) -> Option<Command> {
        match a {
            Answer::Begun(Begun::Acquired { token, version }) => {
                self.claim = Some(Claim {
                    token,
                    version,
                    attempted: false,
                    dispatched: false,
                    completed: false,
                });
                self.advance();
                None
            }
            Answer::Begun(Begun::Existing {
                status,
                result_is_object,
            }) => Some(match status {
                RecordStatus::Completed if result_is_object => {
                    self.end(Terminal::Finished);
                    Command::Replay
                }
                RecordStatus::Completed => self.effect_denied(
                    EffectErrorCode::Completed,
                    "tool effect already completed without replayable result",
                ),
                // A dispatched or unknown record is never re-executed.
                RecordStatus::Dispatched | RecordStatus::Unknown => self.effect_denied(
                    EffectErrorCode::Unknown,
                    "tool effect outcome requires reconciliation",
                ),
                // `begin` claims a retryable record while attempts remain; one it did not claim has
                // used them all (each worker died after its claim). Nobody holds it: an operator's
                // `resolveUnknown` settles it.
                RecordStatus::FailedRetryable => self.effect_denied(
                    EffectErrorCode::Exhausted,
                    "tool effect attempts are exhausted",
                ),
                _ => {
                    self.effect_denied(EffectErrorCode::Conflict, "tool effect is not dispatchable")
                }
            }),
            Answer::Threw { code: Some(code) } if is_effect_code(&code) => {
                Some(self.block(BlockedReason::ExecutionDenied, ErrorSpec::Thrown))
            }
            // The store failed before its write (no connection, a lock timeout): nothing was claimed
            // and the call may simply be retried. Its error says why. (A write whose commit answer
            // was lost comes as `ERR_PRISM_TOOL_EFFECT_UNKNOWN`, above.)
            Answer::Threw { code: Some(code) } if code == STORE_FAILURE_CODE => {
                Some(self.block(BlockedReason::ExecutionDenied, ErrorSpec::Thrown))
            }
            _ => Some(self.effect_denied(
                EffectErrorCode::Unknown,
                "tool effect claim outcome is unknown",
            )),
        }
    }

    pub(super) fn effect_in_flight(&self) -> bool {
        self.claim
            .as_ref()
            .is_some_and(|c| c.attempted && !c.completed)
    }

    pub(super) fn effect_denied(
        &mut self,
        code: EffectErrorCode,
        message: impl Into<String>,
    ) -> Command {
        self.named_block(
            BlockedReason::ExecutionDenied,
            "ToolEffectError",
            message.into(),
            code.as_str(),
            None,
        )
    }

    /// Ends the call with `ERR_PRISM_TOOL_EFFECT_UNKNOWN`; the settle phase marks the record unknown.
    pub(super) fn effect_unknown(&mut self) -> Command {
        let code = EffectErrorCode::Unknown.as_str();
        self.named_fail(
            "ToolEffectError",
            "tool effect outcome requires reconciliation".to_owned(),
            code,
        )
    }

    // ----- guardrails ---------------------------------------------------------------------------
}
