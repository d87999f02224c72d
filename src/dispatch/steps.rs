//! The steps of one `dispatchToolCall`, in the order of SPEC section 3. The first step that blocks
//! ends the call; a step whose hook is absent is skipped without a boundary crossing.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Step {
    /// 1. `tool_call` middleware may rewrite the call.
    CallMiddleware,
    /// 2. `tool_input` guardrails.
    InputGuardrails,
    /// 3. Registry lookup (`unknown_tool`).
    Lookup,
    /// 4. Allow/deny filters (`tool_denied`).
    Filter,
    /// 5. `argumentsError` and object shape (`invalid_arguments`).
    Arguments,
    /// 6a. Identity: active and matching ownership (`permission_denied`).
    Identity,
    /// 6b. `trust.check` (`permission_denied`).
    Trust,
    /// 6c. `permission.check` (`permission_denied`).
    Permission,
    /// 7. Host validator (`validation_failed`).
    Validate,
    /// 8. Effect preparation (`execution_denied`).
    Effect,
    /// 9. `beforeExecute` (`execution_denied`).
    BeforeExecute,
    /// 10. `tool_execution_started` and the `started` row.
    Started,
    /// 11. `tool.execute`.
    Execute,
    /// 12a. `tool_result` middleware.
    ResultMiddleware,
    /// 12b. `tool_output` guardrails.
    OutputGuardrails,
    /// 13. Redaction, `tool_execution_finished`, the `finished` row.
    Finish,
}

impl Step {
    pub const ORDER: [Step; 16] = [
        Step::CallMiddleware,
        Step::InputGuardrails,
        Step::Lookup,
        Step::Filter,
        Step::Arguments,
        Step::Identity,
        Step::Trust,
        Step::Permission,
        Step::Validate,
        Step::Effect,
        Step::BeforeExecute,
        Step::Started,
        Step::Execute,
        Step::ResultMiddleware,
        Step::OutputGuardrails,
        Step::Finish,
    ];

    /// The step after this one, or `None` after `Finish`.
    pub fn next(self) -> Option<Step> {
        let i = Step::ORDER.iter().position(|s| *s == self)?;
        Step::ORDER.get(i + 1).copied()
    }

    /// True once the tool may have run: failures from here on are tool errors or output blocks,
    /// never pre-execution blocks.
    pub fn after_execute(self) -> bool {
        self >= Step::Execute
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_the_contracts_order() {
        let mut s = Step::CallMiddleware;
        let mut seen = vec![s];
        while let Some(n) = s.next() {
            seen.push(n);
            s = n;
        }
        assert_eq!(seen, Step::ORDER.to_vec());
        // Guardrails see the rewritten call before lookup; validation comes after every policy.
        assert!(
            Step::CallMiddleware < Step::InputGuardrails && Step::InputGuardrails < Step::Lookup
        );
        assert!(Step::Permission < Step::Validate && Step::Validate < Step::Effect);
        assert!(Step::BeforeExecute < Step::Started && Step::Started < Step::Execute);
        assert!(!Step::BeforeExecute.after_execute() && Step::Execute.after_execute());
    }
}
