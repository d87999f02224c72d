//! Secret redaction of text: every non-empty known secret becomes `[REDACTED]`.
//!
//! One Aho-Corasick automaton (leftmost-longest) finds all secrets in a single pass whatever their
//! number, so a secret that contains another is replaced whole. The walk over JS values that
//! applies this to strings and keys lives in the binding crate (`crates/node/src/redact`).

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
        Secrets { list, matcher }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn list(&self) -> &[String] {
        &self.list
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
}
