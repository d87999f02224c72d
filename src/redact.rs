//! Secret redaction of text: every non-empty known secret becomes `[REDACTED]`.
//!
//! One Aho-Corasick automaton (leftmost-longest) finds all secrets in a single pass whatever their
//! number, so a secret that contains another is replaced whole. The walk over JS values that
//! applies this to strings and keys lives in `js::redact`.

use std::borrow::Cow;
use std::collections::HashSet;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

pub const REDACTED: &str = "[REDACTED]";
pub const MAX_DEPTH_MARK: &str = "[MaxDepth]";
pub const CIRCULAR_MARK: &str = "[Circular]";
/// Containers nested deeper than this become `[MaxDepth]`.
pub const MAX_DEPTH: usize = 32;

#[derive(Debug, Default, Clone)]
pub struct Secrets {
    list: Vec<String>,
    matcher: Option<AhoCorasick>,
    /// Every secret as it appears inside JSON text (raw, and escaped when escaping changes it).
    json_matcher: Option<AhoCorasick>,
}

impl Secrets {
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let mut seen = HashSet::new();
        let list: Vec<String> = secrets
            .into_iter()
            .map(Into::into)
            .filter(|s| !s.is_empty() && seen.insert(s.clone()))
            .collect();
        let matcher = if list.is_empty() {
            None
        } else {
            AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&list)
                .ok()
        };
        let mut forms = list.clone();
        for s in &list {
            if let Ok(quoted) = serde_json::to_string(s) {
                let inner = &quoted[1..quoted.len() - 1];
                if inner != s {
                    forms.push(inner.to_owned());
                }
            }
        }
        let json_matcher = if forms.is_empty() {
            None
        } else {
            AhoCorasick::new(&forms).ok()
        };
        Secrets {
            list,
            matcher,
            json_matcher,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn list(&self) -> &[String] {
        &self.list
    }

    /// The union of two secret sets.

    /// Whether JSON text (of a value) may contain a secret. `true` errs on the safe side: a secret
    /// that spans JSON punctuation only costs a full redaction walk.
    pub fn in_json_text(&self, text: &str) -> bool {
        match &self.json_matcher {
            Some(m) => m.is_match(text),
            None => !self.list.is_empty(),
        }
    }

    #[inline]
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match &self.matcher {
            Some(m) if m.is_match(text) => {
                Cow::Owned(m.replace_all(text, &vec![REDACTED; self.list.len()]))
            }
            _ => Cow::Borrowed(text),
        }
    }
}

/// A key for a redacted object that does not collide with one already taken: `key`, then
/// `key__2`, `key__3`, …
pub fn unique_key(taken: &HashSet<String>, key: &str) -> String {
    if !taken.contains(key) {
        return key.to_owned();
    }
    let mut n = 2usize;
    loop {
        let candidate = format!("{key}__{n}");
        if !taken.contains(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn truncate_utf8(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_every_occurrence_of_every_secret() {
        let s = Secrets::new(["sk-123", "hunter2"]);
        assert_eq!(
            s.redact("key sk-123 and sk-123, pw hunter2"),
            "key [REDACTED] and [REDACTED], pw [REDACTED]"
        );
        assert!(matches!(s.redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn empty_secrets_are_ignored_and_overlaps_redact_whole() {
        let s = Secrets::new(["", "abc", "abcdef"]);
        assert_eq!(s.list(), &["abc".to_string(), "abcdef".to_string()]);
        assert_eq!(s.redact("xabcdefx abc"), "x[REDACTED]x [REDACTED]");
        assert!(Secrets::new([""]).is_empty());
    }

    #[test]
    fn finds_secrets_in_json_text_raw_or_escaped() {
        let s = Secrets::new(["plain", "has\"quote", "tab\there"]);
        assert!(s.in_json_text(r#"{"a":"x plain y"}"#));
        assert!(s.in_json_text(
            &serde_json::to_string(&serde_json::json!({ "k": "has\"quote" })).unwrap()
        ));
        assert!(s.in_json_text(&serde_json::to_string(&serde_json::json!(["tab\there"])).unwrap()));
        assert!(!s.in_json_text(r#"{"a":"nothing"}"#));
        assert!(!Secrets::default().in_json_text("plain"));
    }

    #[test]
    fn unicode_secrets() {
        let s = Secrets::new(["пароль🔑"]);
        assert_eq!(s.redact("a пароль🔑 b"), "a [REDACTED] b");
    }

    #[test]
    fn colliding_keys_get_suffixes() {
        let mut taken = HashSet::new();
        taken.insert("[REDACTED]".to_string());
        assert_eq!(unique_key(&taken, "[REDACTED]"), "[REDACTED]__2");
        taken.insert("[REDACTED]__2".to_string());
        assert_eq!(unique_key(&taken, "[REDACTED]"), "[REDACTED]__3");
        assert_eq!(unique_key(&taken, "other"), "other");
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        assert_eq!(truncate_utf8("héllo", 2), "h");
        assert_eq!(truncate_utf8("héllo", 3), "hé");
        assert_eq!(truncate_utf8("abc", 10), "abc");
    }
}
