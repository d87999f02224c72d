//! Secret redaction of text: every non-empty known secret becomes `[REDACTED]`.
//!
//! One Aho-Corasick automaton (leftmost-longest) finds all secrets in a single pass whatever their
//! number, so a secret that contains another is replaced whole. [`redact_host`] applies it to a
//! host value the binding's reader read (`crate::host`); the binding writes the copy back.

use std::borrow::Cow;
use std::collections::HashSet;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::host::{Host, ObjectKind, ReadPolicy};

pub const REDACTED: &str = "[REDACTED]";
pub const MAX_DEPTH_MARK: &str = "[MaxDepth]";
pub const CIRCULAR_MARK: &str = "[Circular]";
/// A value whose read threw (a getter, a proxy trap).
pub const UNREADABLE_MARK: &str = "[Unreadable]";
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

/// What the reader reads for redaction: containers down to [`MAX_DEPTH`], cycles marked.
pub const HOST_POLICY: ReadPolicy = ReadPolicy {
    max_depth: MAX_DEPTH,
    cycles: true,
};

/// The redacted copy of a value read with [`HOST_POLICY`]: strings and keys lose every secret;
/// a `Map` becomes an object and a `Set` an array; an `Error` keeps its `name` and `message`; a
/// property holding a function is left out (a function is not data, and an own `toJSON` would
/// hand a serialiser whatever it returns, unredacted); a hole becomes `undefined`; what was not
/// read becomes `[MaxDepth]`, `[Circular]` or `[Unreadable]`. Everything else is handed back as
/// it was read (numbers, a `Date`, a function in an array).
pub fn redact_host<H>(secrets: &Secrets, value: Host<H>) -> Host<H> {
    match value {
        Host::String(s, handle) => {
            let changed = match secrets.redact(&s) {
                Cow::Owned(r) => Some(r),
                Cow::Borrowed(_) => None,
            };
            match changed {
                Some(r) => Host::text(r),
                None => Host::String(s, handle),
            }
        }
        Host::Hole => Host::Undefined,
        Host::TooDeep => Host::text(MAX_DEPTH_MARK),
        Host::Circular => Host::text(CIRCULAR_MARK),
        Host::Threw(_) => Host::text(UNREADABLE_MARK),
        Host::Array(items) | Host::Set(items) => {
            Host::Array(items.into_iter().map(|v| redact_host(secrets, v)).collect())
        }
        Host::Map(entries) => Host::Object(
            ObjectKind::Plain,
            redact_entries(secrets, Vec::new(), entries, false),
        ),
        Host::Object(kind, entries) => {
            let fixed = match kind {
                ObjectKind::Error(fields) => fields
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), redact_host(secrets, v)))
                    .collect(),
                _ => Vec::new(),
            };
            Host::Object(
                ObjectKind::Plain,
                redact_entries(secrets, fixed, entries, true),
            )
        }
        other => other,
    }
}

/// `entries` redacted after `fixed` (kept under their own keys), each key redacted and made unique
/// among the keys before it; with `drop_functions`, function values are left out.
fn redact_entries<H>(
    secrets: &Secrets,
    fixed: Vec<(String, Host<H>)>,
    entries: Vec<(String, Host<H>)>,
    drop_functions: bool,
) -> Vec<(String, Host<H>)> {
    let mut taken: HashSet<String> = fixed.iter().map(|(k, _)| k.clone()).collect();
    let mut out = fixed;
    out.reserve(entries.len());
    for (key, value) in entries {
        if drop_functions && matches!(value, Host::Function(_)) {
            continue;
        }
        let key = unique_key(&taken, &secrets.redact(&key));
        taken.insert(key.clone());
        out.push((key, redact_host(secrets, value)));
    }
    out
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
