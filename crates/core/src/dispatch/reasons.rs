//! Blocked reasons and the public strings and codes that go with them (SPEC sections 3 and 6).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockedReason {
    UnknownTool,
    ToolDenied,
    InvalidArguments,
    PermissionDenied,
    ValidationFailed,
    ExecutionDenied,
    GuardrailBlocked,
    /// The tool did not settle within its `timeoutMs` (or the dispatcher's `toolTimeoutMs`).
    ToolTimeout,
}

impl BlockedReason {
    pub fn as_str(self) -> &'static str {
        match self {
            BlockedReason::UnknownTool => "unknown_tool",
            BlockedReason::ToolDenied => "tool_denied",
            BlockedReason::InvalidArguments => "invalid_arguments",
            BlockedReason::PermissionDenied => "permission_denied",
            BlockedReason::ValidationFailed => "validation_failed",
            BlockedReason::ExecutionDenied => "execution_denied",
            BlockedReason::GuardrailBlocked => "guardrail_blocked",
            BlockedReason::ToolTimeout => "tool_timeout",
        }
    }
}

pub fn unknown_tool(name: &str) -> String {
    format!("Unknown tool: {name}")
}
pub fn tool_denied(name: &str) -> String {
    format!("Tool denied: {name}")
}
pub const ARGUMENTS_NOT_OBJECT: &str = "Tool arguments must be a JSON object";
pub fn permission_denied(name: &str) -> String {
    format!("Permission denied for tool:{name}:execute")
}
pub fn untrusted(name: &str) -> String {
    format!("Untrusted tool: {name}")
}
pub const INPUT_GUARDRAIL_BLOCKED: &str = "Tool call blocked by guardrail";
pub const OUTPUT_GUARDRAIL_BLOCKED: &str = "Tool result blocked by guardrail";
/// The message of the `GuardrailError` a tripwire rejects with, as `@arnilo/prism` words it.
pub const GUARDRAIL_TRIPPED: &str = "Guardrail blocked run";
pub const CODE_GUARDRAIL_BLOCKED: &str = "ERR_PRISM_GUARDRAIL_BLOCKED";
pub const CODE_GUARDRAIL_INTERRUPT_UNAVAILABLE: &str = "ERR_PRISM_GUARDRAIL_INTERRUPT_UNAVAILABLE";

/// The message of the `GuardrailError` an `interrupt` at a tool stage rejects with: only the input
/// stage of a durable run can suspend.
pub fn guardrail_interrupt_unavailable(stage: &str) -> String {
    format!(
        "Guardrail interruption is unavailable at stage \"{stage}\"; interrupt suspends only at the input stage of durable runs"
    )
}
/// The most a guardrail's block message may take, in bytes.
pub const GUARDRAIL_MESSAGE_BYTES: usize = 200;

/// `Blocked by guardrail rule pack:<pack>/<rule>` plus `: <reason>`, cut to 200 bytes.
pub fn rule_pack_message(pack: &str, rule: &str, reason: Option<&str>) -> String {
    let mut m = format!("Blocked by guardrail rule pack:{pack}/{rule}");
    if let Some(r) = reason.filter(|r| !r.is_empty()) {
        m.push_str(": ");
        m.push_str(r);
    }
    crate::text::utf8_prefix(&m, GUARDRAIL_MESSAGE_BYTES).to_owned()
}

pub const CODE_PERMISSION_DENIED: &str = "ERR_PRISM_PERMISSION_DENIED";
pub const CODE_UNTRUSTED: &str = "ERR_PRISM_UNTRUSTED";
pub const CODE_ABORTED: &str = "ERR_PRISM_ABORTED";
pub const CODE_TOOL_TIMEOUT: &str = crate::error::Code::ToolTimeout.as_str();
/// The most a tool's deadline may be: what `setTimeout` can wait (2^31 - 1 ms, about 24.8 days).
pub const MAX_TOOL_TIMEOUT_MS: u32 = 2_147_483_647;

/// `Tool call timed out after <ms> ms: <name>`.
pub fn tool_timed_out(name: &str, ms: u32) -> String {
    format!("Tool call timed out after {ms} ms: {name}")
}

/// A tool's `timeoutMs` that is not a whole number of milliseconds from 1 to the maximum.
pub fn invalid_tool_timeout(name: &str) -> String {
    format!("Tool {name} timeoutMs must be an integer from 1 to {MAX_TOOL_TIMEOUT_MS}")
}
pub const CODE_INVALID_RESULT: &str = "invalid_tool_result";
pub const CODE_INVALID_OUTPUT: &str = crate::error::Code::InvalidOutput.as_str();

/// A result whose `value` (its structured content) does not match the tool's `outputSchema`, in
/// the words the MCP server and bridge use for the same refusal.
pub fn output_mismatch(name: &str, issues: &str) -> String {
    format!("Tool {name} result does not match its outputSchema: {issues}")
}
pub const CODE_PROVIDER_HOSTED: &str = "ERR_PRISM_PROVIDER_HOSTED";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_strings() {
        assert_eq!(unknown_tool("x"), "Unknown tool: x");
        assert_eq!(tool_denied("x"), "Tool denied: x");
        assert_eq!(
            permission_denied("x"),
            "Permission denied for tool:x:execute"
        );
        assert_eq!(untrusted("x"), "Untrusted tool: x");
        assert_eq!(
            output_mismatch("x", "/n: expected integer"),
            "Tool x result does not match its outputSchema: /n: expected integer"
        );
        assert_eq!(
            BlockedReason::GuardrailBlocked.as_str(),
            "guardrail_blocked"
        );
        assert_eq!(BlockedReason::ToolTimeout.as_str(), "tool_timeout");
        assert_eq!(
            tool_timed_out("slow", 250),
            "Tool call timed out after 250 ms: slow"
        );
        assert_eq!(CODE_TOOL_TIMEOUT, "ERR_PRISM_TOOL_TIMEOUT");
    }

    #[test]
    fn rule_pack_messages_are_bounded() {
        assert_eq!(
            rule_pack_message("pii", "email", None),
            "Blocked by guardrail rule pack:pii/email"
        );
        assert_eq!(
            rule_pack_message("pii", "email", Some("looks like an address")),
            "Blocked by guardrail rule pack:pii/email: looks like an address"
        );
        let long = "é".repeat(300);
        let m = rule_pack_message("p", "r", Some(&long));
        assert!(m.len() <= GUARDRAIL_MESSAGE_BYTES);
        assert!(m.starts_with("Blocked by guardrail rule pack:p/r: é"));
    }
}

/// Upstream's message for a durable effect without a verified identity, kept as the prefix so a host
/// that matches it still does.
pub const EFFECT_IDENTITY_REQUIRED: &str =
    "verified identity is required for a durable tool effect";
/// Upstream's message for a `required` effect without a store, kept as the prefix.
pub const EFFECT_STORE_REQUIRED: &str = "durable tool effect store is required";
const LOCAL_IDENTITY_FIX: &str = "pass `identity` (a single-process program: localIdentity() from \"prism-tools-native/ai-sdk\" or \"prism-tools-native/openai-agents\")";
const STORE_FIX: &str = "pass `effectStore` (createMemoryToolEffectStore() or createSqliteToolEffectStore(path) from \"prism-tools-native\")";

/// A durable effect without a verified identity: what is missing and the fix. `store_missing` is
/// set when the declaration also needs a store the dispatch lacks, so one error names both.
pub fn effect_identity_missing(name: &str, store_missing: bool) -> String {
    if store_missing {
        format!(
            "{EFFECT_IDENTITY_REQUIRED}: tool {name} declares idempotency \"required\" but the call has neither an identity nor an effect store; {LOCAL_IDENTITY_FIX} and {STORE_FIX}"
        )
    } else {
        format!(
            "{EFFECT_IDENTITY_REQUIRED}: tool {name} declares a durable effect but the call has no identity; {LOCAL_IDENTITY_FIX}"
        )
    }
}

/// A `required` effect with an identity and no store.
pub fn effect_store_missing(name: &str) -> String {
    format!(
        "{EFFECT_STORE_REQUIRED}: tool {name} declares idempotency \"required\" but the dispatch has no effect store; {STORE_FIX}"
    )
}
