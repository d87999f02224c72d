//! `ToolEffectError` codes and the errors a store operation can end with.

use std::borrow::Cow;
use std::fmt;

/// The codes of `ToolEffectError` (exactly these strings): `@arnilo/prism`'s five, and `Exhausted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectErrorCode {
    Required,
    Conflict,
    Unknown,
    Completed,
    Limit,
    /// Every attempt of the key was claimed and none reached its side effect (the workers died after
    /// `begin`): no one holds it, and only an operator's `resolveUnknown` settles it.
    Exhausted,
}

impl EffectErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "ERR_PRISM_TOOL_EFFECT_REQUIRED",
            Self::Conflict => "ERR_PRISM_TOOL_EFFECT_CONFLICT",
            Self::Unknown => "ERR_PRISM_TOOL_EFFECT_UNKNOWN",
            Self::Completed => "ERR_PRISM_TOOL_EFFECT_COMPLETED",
            Self::Limit => "ERR_PRISM_TOOL_EFFECT_LIMIT",
            Self::Exhausted => "ERR_PRISM_TOOL_EFFECT_EXHAUSTED",
        }
    }
}

/// A `ToolEffectError`: a code and a message that never carries claim tokens, arguments or results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectError {
    pub code: EffectErrorCode,
    pub message: Cow<'static, str>,
}

impl EffectError {
    pub fn new(code: EffectErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
    pub fn conflict() -> Self {
        Self::new(EffectErrorCode::Conflict, "tool effect transition conflict")
    }
    pub fn limit(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(EffectErrorCode::Limit, message)
    }
}

impl fmt::Display for EffectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

/// Why an `AgentIdentity` was refused: `IdentityError` (`code` `ERR_PRISM_IDENTITY`) with this `reason`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityFailure {
    pub reason: &'static str,
    pub message: Cow<'static, str>,
}

impl IdentityFailure {
    pub fn new(reason: &'static str, message: impl Into<Cow<'static, str>>) -> Self {
        Self {
            reason,
            message: message.into(),
        }
    }
}

/// Everything a store operation can fail with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreError {
    /// A contract refusal: `ToolEffectError` with its code.
    Effect(EffectError),
    /// The identity given with the key is not active or does not own the key: `IdentityError`.
    Identity(IdentityFailure),
    /// The storage itself failed and wrote nothing (I/O, lock timeout, no connection, a corrupt row):
    /// a plain `Error` with code `ERR_PRISM_TOOL_EFFECT_STORE`; the operation is safe to retry. A
    /// write that may have committed (its commit answer was lost) is `Effect` with code `Unknown`.
    Storage(String),
}

impl From<EffectError> for StoreError {
    fn from(e: EffectError) -> Self {
        Self::Effect(e)
    }
}

impl From<IdentityFailure> for StoreError {
    fn from(e: IdentityFailure) -> Self {
        Self::Identity(e)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        Self::Storage(format!("tool effect store failed: {e}"))
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Effect(e) => e.fmt(f),
            Self::Identity(e) => write!(f, "ERR_PRISM_IDENTITY: {}", e.message),
            Self::Storage(m) => f.write_str(m),
        }
    }
}

/// Code of the plain `Error` thrown when storage fails.
pub const STORE_FAILURE_CODE: &str = "ERR_PRISM_TOOL_EFFECT_STORE";
/// Code of `IdentityError`.
pub const IDENTITY_ERROR_CODE: &str = "ERR_PRISM_IDENTITY";
