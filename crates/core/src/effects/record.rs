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
///
/// The nine fields are kept end to end in one buffer: a memory store keeps one of these per record,
/// and one allocation holds what nine strings (nine allocations and their headers) held before.
#[derive(Clone, PartialEq, Eq)]
pub struct EffectKey {
    text: Box<str>,
    /// Where each field ends in `text`, in [`EffectKey::new`]'s order.
    ends: [u32; 9],
    /// Bit `i`: field `i` is absent (only the account and the user may be; absent is empty in `text`).
    absent: u16,
}

impl EffectKey {
    /// A key of its fields in the order of the store's columns (`row::COLUMNS`): tenant, account,
    /// user, effect key, session, run, tool call, tool name, arguments hash. `None` is an absent
    /// account or user.
    pub fn new(fields: [Option<&str>; 9]) -> Self {
        let mut text = String::with_capacity(fields.iter().flatten().map(|f| f.len()).sum());
        let mut ends = [0u32; 9];
        let mut absent = 0u16;
        for (i, field) in fields.into_iter().enumerate() {
            match field {
                Some(f) => text.push_str(f),
                None => absent |= 1 << i,
            }
            // Every field is bounded (kilobytes at most) before a key is made; saturate regardless.
            ends[i] = u32::try_from(text.len()).unwrap_or(u32::MAX);
        }
        Self {
            text: text.into_boxed_str(),
            ends,
            absent,
        }
    }

    /// Field `i` in [`EffectKey::new`]'s order (`None` when absent, or past the ninth).
    pub fn field(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p] as usize);
        (self.absent & (1 << i) == 0).then(|| self.text.get(start..end).unwrap_or(""))
    }

    fn text_field(&self, i: usize) -> &str {
        self.field(i).unwrap_or("")
    }

    pub fn tenant_id(&self) -> &str {
        self.text_field(0)
    }
    pub fn account_id(&self) -> Option<&str> {
        self.field(1)
    }
    pub fn user_id(&self) -> Option<&str> {
        self.field(2)
    }
    pub fn effect_key(&self) -> &str {
        self.text_field(3)
    }
    pub fn session_id(&self) -> &str {
        self.text_field(4)
    }
    pub fn run_id(&self) -> &str {
        self.text_field(5)
    }
    pub fn tool_call_id(&self) -> &str {
        self.text_field(6)
    }
    pub fn tool_name(&self) -> &str {
        self.text_field(7)
    }
    pub fn arguments_hash(&self) -> &str {
        self.text_field(8)
    }
}

impl std::fmt::Debug for EffectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..9).map(|i| self.field(i)))
            .finish()
    }
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
    /// Set instead of `result` when the result was larger than the store keeps. Boxed, as is
    /// `failure`: most records have neither, and a memory store keeps every record inline.
    pub result_omitted: Option<Box<ResultDigest>>,
    pub failure: Option<Box<Failure>>,
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
        let texts = self.key.text.len()
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
        write_json_string(k.tenant_id(), &mut o);
        if let Some(a) = k.account_id() {
            field(&mut o, "accountId", a);
        }
        if let Some(u) = k.user_id() {
            field(&mut o, "userId", u);
        }
        field(&mut o, "key", k.effect_key());
        field(&mut o, "sessionId", k.session_id());
        field(&mut o, "runId", k.run_id());
        field(&mut o, "toolCallId", k.tool_call_id());
        field(&mut o, "toolName", k.tool_name());
        field(&mut o, "argumentsHash", k.arguments_hash());
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

#[cfg(test)]
mod tests {
    use super::EffectKey;

    fn key(account: Option<&str>, user: Option<&str>) -> EffectKey {
        let call = ["s", "r", "call_1", "pay", "ab"].map(Some);
        let [session, run, tool_call, tool, hash] = call;
        EffectKey::new([
            Some("tenant é"),
            account,
            user,
            Some("pay:🦀:1"),
            session,
            run,
            tool_call,
            tool,
            hash,
        ])
    }

    #[test]
    fn a_key_answers_the_fields_it_was_made_from() {
        for (account, user) in [
            (None, None),
            (Some("acct"), None),
            (None, Some("ü")),
            (Some(""), Some("")),
        ] {
            let k = key(account, user);
            assert_eq!(k.tenant_id(), "tenant é");
            assert_eq!(k.account_id(), account);
            assert_eq!(k.user_id(), user);
            assert_eq!(k.effect_key(), "pay:🦀:1");
            assert_eq!(k.session_id(), "s");
            assert_eq!(k.run_id(), "r");
            assert_eq!(k.tool_call_id(), "call_1");
            assert_eq!(k.tool_name(), "pay");
            assert_eq!(k.arguments_hash(), "ab");
        }
    }

    #[test]
    fn keys_are_equal_only_when_every_field_is() {
        let base = key(Some("a"), None);
        assert_eq!(base, key(Some("a"), None));
        // An absent field is not an empty one.
        assert_ne!(key(None, None), key(Some(""), None));
        assert_ne!(key(None, None), key(None, Some("")));
        // The same text split differently between two fields is another key.
        let f = |i| base.field(i);
        let moved = EffectKey::new([
            f(0),
            f(1),
            f(2),
            f(3),
            Some("sr"),
            Some(""),
            f(6),
            f(7),
            f(8),
        ]);
        assert_ne!(base, moved);
        assert_eq!(moved.session_id(), "sr");
        assert_eq!(base.field(9), None);
    }
}
