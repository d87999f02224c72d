//! The integers that cross between the dispatch loop (`lib/dispatch-*.js`) and the binding. `lib/dispatch-codes.js`
//! reads this one table at load (`dispatchCodes()`), so the two sides cannot disagree.

// Setup flags.
pub const F_MIDDLEWARE: u32 = 1;
pub const F_IDENTITY: u32 = 1 << 1;
pub const F_TRUST: u32 = 1 << 2;
pub const F_PERMISSION: u32 = 1 << 3;
pub const F_VALIDATE: u32 = 1 << 4;
pub const F_EFFECT_STORE: u32 = 1 << 5;
pub const F_BEFORE_EXECUTE: u32 = 1 << 6;
pub const F_EMIT: u32 = 1 << 7;
pub const F_LEDGER: u32 = 1 << 8;
pub const F_SIGNAL: u32 = 1 << 9;
pub const F_REDACTION: u32 = 1 << 10;

// Call facts.
pub const C_ARGS_MASK: u32 = 3;
pub const C_ARGS_NOT_OBJECT: u32 = 1;
pub const C_ARGS_PROVIDER_ERROR: u32 = 2;
pub const C_PROVIDER_HOSTED: u32 = 4;
pub const C_NAME_NOT_STRING: u32 = 8;

// Record statuses.
pub const S_CLAIMED: u32 = 0;
pub const S_DISPATCHED: u32 = 1;
pub const S_COMPLETED: u32 = 2;
pub const S_UNKNOWN: u32 = 3;
pub const S_FAILED_RETRYABLE: u32 = 4;

// Answers.
pub const A_DONE: u32 = 0;
pub const A_THREW: u32 = 1;
pub const A_ABORTED: u32 = 2;
pub const A_CALL: u32 = 3;
pub const A_FOUND: u32 = 4;
pub const A_DECISION: u32 = 5;
pub const A_MISSING: u32 = 6;
pub const A_VALID: u32 = 7;
pub const A_INVALID_MESSAGE: u32 = 8;
pub const A_INVALID_INFO: u32 = 9;
pub const A_INVALID_OTHER: u32 = 10;
pub const A_DECLARATION: u32 = 11;
pub const A_ACQUIRED: u32 = 12;
pub const A_EXISTING: u32 = 13;
pub const A_MALFORMED: u32 = 14;
pub const A_RECORD: u32 = 15;
pub const A_STORED: u32 = 16;
pub const A_NO_EXECUTE: u32 = 17;
pub const A_RETURNED: u32 = 18;
pub const A_GUARD_STARTED: u32 = 19;
pub const A_GUARD_INVALID: u32 = 20;
pub const A_GUARD_MALFORMED: u32 = 21;
pub const A_GUARD: u32 = 22;
/// The gated command did not run: the caller's signal was already aborted.
pub const A_SIGNAL_ABORTED: u32 = 23;
pub const A_GUARD_FAILED: u32 = 24;
/// The tool did not settle within its deadline; the number is the deadline in milliseconds.
pub const A_TIMED_OUT: u32 = 25;
/// The tool's `timeoutMs` is not an integer from 1 to `MAX_TOOL_TIMEOUT_MS`; it was not run.
pub const A_INVALID_TIMEOUT: u32 = 26;
/// The longest deadline a tool or dispatcher may set (what `setTimeout` can wait).
pub const MAX_TOOL_TIMEOUT_MS: u32 = prism_tools_core::dispatch::reasons::MAX_TOOL_TIMEOUT_MS;
/// The tool's result does not match its `outputSchema`; the text is the validator's issues.
pub const A_OUTPUT_MISMATCH: u32 = 27;

// Commands.
pub const K_CALL_MIDDLEWARE: u32 = 0;
pub const K_START_GUARDRAIL: u32 = 1;
pub const K_AWAIT_GUARDRAIL: u32 = 2;
pub const K_GUARDRAIL_RECORD: u32 = 3;
pub const K_ABORT_GUARDRAILS: u32 = 4;
pub const K_LOOKUP: u32 = 5;
pub const K_CHECK_IDENTITY: u32 = 6;
pub const K_CHECK_TRUST: u32 = 7;
pub const K_CHECK_PERMISSION: u32 = 8;
pub const K_VALIDATE: u32 = 9;
pub const K_EFFECT_DECLARATION: u32 = 10;
pub const K_EFFECT_KEY: u32 = 11;
pub const K_EFFECT_BEGIN: u32 = 12;
pub const K_REPLAY: u32 = 13;
pub const K_BEFORE_EXECUTE: u32 = 14;
/// Added to a command's code when it is gated by the caller's signal (`Dispatch::signal_gated`):
/// the loop checks `signal.aborted` first and answers `A_SIGNAL_ABORTED` instead of running it.
pub const K_GATED: u32 = 64;
pub const K_EMIT_STARTED: u32 = 16;
pub const K_APPEND_STARTED: u32 = 17;
pub const K_MARK_DISPATCHED: u32 = 18;
pub const K_EXECUTE: u32 = 19;
pub const K_RESULT_MIDDLEWARE: u32 = 20;
pub const K_REDACT_RESULT: u32 = 21;
pub const K_EFFECT_COMPLETE: u32 = 22;
pub const K_SET_ERROR: u32 = 24;
pub const K_MARK_UNKNOWN: u32 = 25;
pub const K_EFFECT_GET: u32 = 26;
pub const K_RELEASE_CLAIM: u32 = 27;
/// `+ 0` finished, `+ 1` error, `+ 2` blocked.
pub const K_EMIT_FINISHED: u32 = 28;
pub const K_APPEND_FINISHED: u32 = 31;
pub const K_RESOLVE: u32 = 34;
pub const K_REJECT_THROWN: u32 = 35;
pub const K_REJECT_GUARDRAIL: u32 = 36;
pub const K_RELEASE_RETRYABLE: u32 = 37;

/// The status of a record that is none of the four above.
pub const S_OTHER: u32 = 9;

/// `dispatchBegin` answers `id * ID_STRIDE + command`; commands are below it.
pub const ID_STRIDE: u32 = 128;

// Guardrail actions: the number of an `A_GUARD` answer.
pub const G_ALLOW: u32 = 0;
pub const G_BLOCK: u32 = 1;
pub const G_TRIPWIRE: u32 = 2;
pub const G_INTERRUPT: u32 = 3;

// Value types: the number of an `A_INVALID_OTHER` answer (and of `A_RETURNED`, plus 2).
pub const T_UNDEFINED: u32 = 0;
pub const T_NULL: u32 = 1;
pub const T_BOOLEAN: u32 = 2;
pub const T_NUMBER: u32 = 3;
pub const T_STRING: u32 = 4;
pub const T_SYMBOL: u32 = 5;
pub const T_BIGINT: u32 = 6;
pub const T_FUNCTION: u32 = 7;
pub const T_ARRAY: u32 = 8;
pub const T_OBJECT: u32 = 9;

// Error kinds in `dispatchDetail` of `SetError`.
pub const E_PLAIN: u32 = 0;
pub const E_NAMED: u32 = 1;
pub const E_THROWN: u32 = 2;
pub const E_PROVIDER_ARGUMENTS: u32 = 3;
pub const E_VALIDATOR_INFO: u32 = 4;

/// Every code by name, for `dispatchCodes()`.
pub const ALL: &[(&str, u32)] = &[
    ("F_MIDDLEWARE", F_MIDDLEWARE),
    ("F_IDENTITY", F_IDENTITY),
    ("F_TRUST", F_TRUST),
    ("F_PERMISSION", F_PERMISSION),
    ("F_VALIDATE", F_VALIDATE),
    ("F_EFFECT_STORE", F_EFFECT_STORE),
    ("F_BEFORE_EXECUTE", F_BEFORE_EXECUTE),
    ("F_EMIT", F_EMIT),
    ("F_LEDGER", F_LEDGER),
    ("F_SIGNAL", F_SIGNAL),
    ("F_REDACTION", F_REDACTION),
    ("C_ARGS_MASK", C_ARGS_MASK),
    ("C_ARGS_NOT_OBJECT", C_ARGS_NOT_OBJECT),
    ("C_ARGS_PROVIDER_ERROR", C_ARGS_PROVIDER_ERROR),
    ("C_PROVIDER_HOSTED", C_PROVIDER_HOSTED),
    ("C_NAME_NOT_STRING", C_NAME_NOT_STRING),
    ("S_CLAIMED", S_CLAIMED),
    ("S_DISPATCHED", S_DISPATCHED),
    ("S_COMPLETED", S_COMPLETED),
    ("S_UNKNOWN", S_UNKNOWN),
    ("S_FAILED_RETRYABLE", S_FAILED_RETRYABLE),
    ("S_OTHER", S_OTHER),
    ("ID_STRIDE", ID_STRIDE),
    ("G_ALLOW", G_ALLOW),
    ("G_BLOCK", G_BLOCK),
    ("G_TRIPWIRE", G_TRIPWIRE),
    ("G_INTERRUPT", G_INTERRUPT),
    ("T_UNDEFINED", T_UNDEFINED),
    ("T_NULL", T_NULL),
    ("T_BOOLEAN", T_BOOLEAN),
    ("T_NUMBER", T_NUMBER),
    ("T_STRING", T_STRING),
    ("T_SYMBOL", T_SYMBOL),
    ("T_BIGINT", T_BIGINT),
    ("T_FUNCTION", T_FUNCTION),
    ("T_ARRAY", T_ARRAY),
    ("T_OBJECT", T_OBJECT),
    ("A_DONE", A_DONE),
    ("A_THREW", A_THREW),
    ("A_ABORTED", A_ABORTED),
    ("A_SIGNAL_ABORTED", A_SIGNAL_ABORTED),
    ("A_CALL", A_CALL),
    ("A_FOUND", A_FOUND),
    ("A_DECISION", A_DECISION),
    ("A_MISSING", A_MISSING),
    ("A_VALID", A_VALID),
    ("A_INVALID_MESSAGE", A_INVALID_MESSAGE),
    ("A_INVALID_INFO", A_INVALID_INFO),
    ("A_INVALID_OTHER", A_INVALID_OTHER),
    ("A_DECLARATION", A_DECLARATION),
    ("A_ACQUIRED", A_ACQUIRED),
    ("A_EXISTING", A_EXISTING),
    ("A_MALFORMED", A_MALFORMED),
    ("A_RECORD", A_RECORD),
    ("A_STORED", A_STORED),
    ("A_NO_EXECUTE", A_NO_EXECUTE),
    ("A_RETURNED", A_RETURNED),
    ("A_GUARD_STARTED", A_GUARD_STARTED),
    ("A_GUARD_INVALID", A_GUARD_INVALID),
    ("A_GUARD_MALFORMED", A_GUARD_MALFORMED),
    ("A_GUARD", A_GUARD),
    ("A_GUARD_FAILED", A_GUARD_FAILED),
    ("A_TIMED_OUT", A_TIMED_OUT),
    ("A_INVALID_TIMEOUT", A_INVALID_TIMEOUT),
    ("MAX_TOOL_TIMEOUT_MS", MAX_TOOL_TIMEOUT_MS),
    ("A_OUTPUT_MISMATCH", A_OUTPUT_MISMATCH),
    ("K_CALL_MIDDLEWARE", K_CALL_MIDDLEWARE),
    ("K_START_GUARDRAIL", K_START_GUARDRAIL),
    ("K_AWAIT_GUARDRAIL", K_AWAIT_GUARDRAIL),
    ("K_GUARDRAIL_RECORD", K_GUARDRAIL_RECORD),
    ("K_ABORT_GUARDRAILS", K_ABORT_GUARDRAILS),
    ("K_LOOKUP", K_LOOKUP),
    ("K_CHECK_IDENTITY", K_CHECK_IDENTITY),
    ("K_CHECK_TRUST", K_CHECK_TRUST),
    ("K_CHECK_PERMISSION", K_CHECK_PERMISSION),
    ("K_VALIDATE", K_VALIDATE),
    ("K_EFFECT_DECLARATION", K_EFFECT_DECLARATION),
    ("K_EFFECT_KEY", K_EFFECT_KEY),
    ("K_EFFECT_BEGIN", K_EFFECT_BEGIN),
    ("K_REPLAY", K_REPLAY),
    ("K_BEFORE_EXECUTE", K_BEFORE_EXECUTE),
    ("K_GATED", K_GATED),
    ("K_EMIT_STARTED", K_EMIT_STARTED),
    ("K_APPEND_STARTED", K_APPEND_STARTED),
    ("K_MARK_DISPATCHED", K_MARK_DISPATCHED),
    ("K_EXECUTE", K_EXECUTE),
    ("K_RESULT_MIDDLEWARE", K_RESULT_MIDDLEWARE),
    ("K_REDACT_RESULT", K_REDACT_RESULT),
    ("K_EFFECT_COMPLETE", K_EFFECT_COMPLETE),
    ("K_SET_ERROR", K_SET_ERROR),
    ("K_MARK_UNKNOWN", K_MARK_UNKNOWN),
    ("K_EFFECT_GET", K_EFFECT_GET),
    ("K_RELEASE_CLAIM", K_RELEASE_CLAIM),
    ("K_RELEASE_RETRYABLE", K_RELEASE_RETRYABLE),
    ("K_EMIT_FINISHED", K_EMIT_FINISHED),
    ("K_APPEND_FINISHED", K_APPEND_FINISHED),
    ("K_RESOLVE", K_RESOLVE),
    ("K_REJECT_THROWN", K_REJECT_THROWN),
    ("K_REJECT_GUARDRAIL", K_REJECT_GUARDRAIL),
    ("E_PLAIN", E_PLAIN),
    ("E_NAMED", E_NAMED),
    ("E_THROWN", E_THROWN),
    ("E_PROVIDER_ARGUMENTS", E_PROVIDER_ARGUMENTS),
    ("E_VALIDATOR_INFO", E_VALIDATOR_INFO),
];
