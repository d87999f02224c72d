//! The stored effect record and its JSON form (`ToolEffectRecord`).

use super::canonical::write_json_string;
use super::time::format_iso;
use std::sync::Arc;

/// `ToolEffectStatus`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Dispatched,
    Completed,
    FailedRetryable,
    FailedTerminal,
    Unknown,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Dispatched => "dispatched",
            Self::Completed => "completed",
            Self::FailedRetryable => "failed_retryable",
            Self::FailedTerminal => "failed_terminal",
            Self::Unknown => "unknown",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "pending" => Self::Pending,
            "dispatched" => Self::Dispatched,
            "completed" => Self::Completed,
            "failed_retryable" => Self::FailedRetryable,
            "failed_terminal" => Self::FailedTerminal,
            "unknown" => Self::Unknown,
            _ => return None,
        })
    }
    /// Records that `cleanup` may delete.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::FailedTerminal)
    }
}

/// `{ code, reference? }` of a failed or unknown record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: String,
    pub reference: Option<String>,
}

/// What a completed record keeps of a result larger than its store keeps (`resultOmitted`): the
/// result's `JSON.stringify` byte length and its SHA-256 (hex), so an operator can tell which value
/// the call returned without the store holding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultDigest {
    pub bytes: u64,
    pub sha256: String,
}

/// The validated fields of a `ToolEffectKey`: the exact ownership, the effect key, and the call it
/// belongs to. A record is created with its key's fields and answers only a key with the same ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectKey {
    pub tenant_id: String,
    pub account_id: Option<String>,
    pub user_id: Option<String>,
    pub effect_key: String,
    pub session_id: String,
    pub run_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub arguments_hash: String,
}

/// One effect record. Times are epoch milliseconds; `result` is the stored `ToolResult` as JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectRecord {
    /// The key's fields, never changed once the record is made (shared with the key that made it).
    pub key: Arc<EffectKey>,
    pub status: Status,
    pub attempt: u32,
    pub version: u64,
    pub claim_token: Option<String>,
    pub result: Option<String>,
    pub result_ref: Option<String>,
    /// Set instead of `result` when the result was larger than the store keeps.
    pub result_omitted: Option<ResultDigest>,
    pub failure: Option<Failure>,
    pub created_at: i64,
    pub updated_at: i64,
    pub expires_at: Option<i64>,
}

impl EffectRecord {
    /// The record as `ToolEffectRecord` JSON (absent optional fields are left out).
    pub fn to_json(&self) -> String {
        self.to_json_with(true)
    }

    /// An upper bound of `to_json().len()`, computed without writing it: every string at its worst
    /// escaping (6 bytes per byte) plus the field names, numbers and timestamps.
    pub fn json_len_bound(&self) -> usize {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        let k = &self.key;
        let texts = k.tenant_id.len()
            + opt(&k.account_id)
            + opt(&k.user_id)
            + k.effect_key.len()
            + k.session_id.len()
            + k.run_id.len()
            + k.tool_call_id.len()
            + k.tool_name.len()
            + k.arguments_hash.len()
            + opt(&self.claim_token)
            + opt(&self.result_ref)
            + self.result_omitted.as_ref().map_or(0, |d| d.sha256.len())
            + self
                .failure
                .as_ref()
                .map_or(0, |f| f.code.len() + opt(&f.reference));
        texts * 6 + opt(&self.result) + 1024
    }

    /// The record as JSON, with or without its claim token (a caller that did not acquire the claim
    /// never sees it).
    pub fn to_json_with(&self, claim_token: bool) -> String {
        let mut o = String::with_capacity(512 + self.result.as_ref().map_or(0, String::len));
        let field = |o: &mut String, name: &str, value: &str| {
            o.push_str(",\"");
            o.push_str(name);
            o.push_str("\":");
            write_json_string(value, o);
        };
        let k = &self.key;
        o.push_str("{\"tenantId\":");
        write_json_string(&k.tenant_id, &mut o);
        if let Some(a) = &k.account_id {
            field(&mut o, "accountId", a);
        }
        if let Some(u) = &k.user_id {
            field(&mut o, "userId", u);
        }
        field(&mut o, "key", &k.effect_key);
        field(&mut o, "sessionId", &k.session_id);
        field(&mut o, "runId", &k.run_id);
        field(&mut o, "toolCallId", &k.tool_call_id);
        field(&mut o, "toolName", &k.tool_name);
        field(&mut o, "argumentsHash", &k.arguments_hash);
        field(&mut o, "status", self.status.as_str());
        o.push_str(&format!(
            ",\"attempt\":{},\"version\":{}",
            self.attempt, self.version
        ));
        if let Some(t) = self.claim_token.as_ref().filter(|_| claim_token) {
            field(&mut o, "claimToken", t);
        }
        if let Some(r) = &self.result {
            o.push_str(",\"result\":");
            o.push_str(r);
        }
        if let Some(r) = &self.result_ref {
            field(&mut o, "resultRef", r);
        }
        if let Some(d) = &self.result_omitted {
            o.push_str(&format!(
                ",\"resultOmitted\":{{\"bytes\":{},\"sha256\":",
                d.bytes
            ));
            write_json_string(&d.sha256, &mut o);
            o.push('}');
        }
        if let Some(f) = &self.failure {
            o.push_str(",\"failure\":{\"code\":");
            write_json_string(&f.code, &mut o);
            if let Some(r) = &f.reference {
                field(&mut o, "reference", r);
            }
            o.push('}');
        }
        field(&mut o, "createdAt", &format_iso(self.created_at));
        field(&mut o, "updatedAt", &format_iso(self.updated_at));
        if let Some(e) = self.expires_at {
            field(&mut o, "expiresAt", &format_iso(e));
        }
        o.push('}');
        o
    }

    /// The record without its claim (what `begin` returns to a caller that did not acquire it).
    pub fn without_claim_token(&self) -> Self {
        Self {
            claim_token: None,
            ..self.clone()
        }
    }
}
