//! Secret redaction of text: every non-empty known secret becomes `[REDACTED]`.
//!
//! One leftmost-longest matcher (`crate::redact_match`) finds all secrets in a single pass whatever
//! their number, so a secret that contains another is replaced whole. Secrets and text are JS strings,
//! sequences of UTF-16 code units: a secret is found wherever its units are, a lone surrogate
//! included (`crate::redact_units`), so a text redacted in pieces cut anywhere joins to the
//! text redacted whole. [`redact_host`] applies it to a host value the binding's reader read
//! (`crate::host`); the binding writes the copy back.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::host::{Host, Key, ObjectKind, ReadPolicy};
use crate::redact_match::Matcher;
use crate::redact_units::{encode_units, is_surrogate, UnitCursor};

pub const REDACTED: &str = "[REDACTED]";
pub const MAX_DEPTH_MARK: &str = "[MaxDepth]";
pub const CIRCULAR_MARK: &str = "[Circular]";
/// A value whose read threw (a getter, a proxy trap).
pub const UNREADABLE_MARK: &str = "[Unreadable]";
/// Containers nested deeper than this become `[MaxDepth]`.
pub const MAX_DEPTH: usize = 32;

#[derive(Debug, Default, Clone)]
pub struct Secrets {
    /// The secrets as text (a lone surrogate shows as U+FFFD).
    list: Vec<String>,
    matcher: Option<Matcher>,
    /// Whether a secret holds a surrogate: only then can a character above U+FFFF in a text hold
    /// a match its UTF-8 does not show.
    surrogates: bool,
}

impl Secrets {
    pub fn new<I, S>(secrets: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::from_units(
            secrets
                .into_iter()
                .map(|s| s.into().encode_utf16().collect::<Vec<u16>>()),
        )
    }

    /// Secrets as JS holds them: UTF-16 code units, lone surrogates kept. Empty ones are ignored,
    /// repeated ones kept once.
    pub fn from_units<I>(secrets: I) -> Self
    where
        I: IntoIterator<Item = Vec<u16>>,
    {
        let mut seen = HashSet::new();
        let mut list = Vec::new();
        let mut patterns = Vec::new();
        let mut surrogates = false;
        for units in secrets {
            if units.is_empty() || seen.contains(&units) {
                continue;
            }
            surrogates |= units.iter().any(|&c| is_surrogate(c));
            let mut bytes = Vec::new();
            encode_units(&units, &mut bytes);
            patterns.push(bytes);
            list.push(String::from_utf16_lossy(&units));
            seen.insert(units);
        }
        Secrets {
            matcher: Matcher::new(patterns),
            list,
            surrogates,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub fn list(&self) -> &[String] {
        &self.list
    }

    /// Whether a secret holds a surrogate code unit.
    pub fn has_surrogates(&self) -> bool {
        self.surrogates
    }

    /// `text` with every secret replaced. Where a secret holding half of a surrogate pair splits a
    /// pair of `text`, the half left shows as U+FFFD ([`Secrets::redact_units`] keeps it).
    #[inline]
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Some(m) = &self.matcher else {
            return Cow::Borrowed(text);
        };
        // Text with no character above U+FFFF (4-byte UTF-8) is its own encoded form, and so is
        // any text when no secret holds a surrogate (no match can touch such a character).
        if !self.surrogates || !text.bytes().any(|b| b >= 0xF0) {
            let mut out: Option<Vec<u8>> = None;
            let mut last = 0;
            for (start, end) in m.find_iter(text.as_bytes()) {
                let o = out.get_or_insert_with(|| Vec::with_capacity(text.len()));
                o.extend_from_slice(&text.as_bytes()[last..start]);
                o.extend_from_slice(REDACTED.as_bytes());
                last = end;
            }
            let Some(mut out) = out else {
                return Cow::Borrowed(text);
            };
            out.extend_from_slice(&text.as_bytes()[last..]);
            // Matches begin and end on character boundaries (`crate::redact_units`), so this is
            // always UTF-8; lossy rather than a panic all the same.
            return Cow::Owned(
                String::from_utf8(out)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            );
        }
        let units: Vec<u16> = text.encode_utf16().collect();
        match self.redact_units(&units) {
            Some(out) => Cow::Owned(String::from_utf16_lossy(&out)),
            None => Cow::Borrowed(text),
        }
    }

    /// The code units of `units` with every secret replaced, or `None` when none occurs.
    pub fn redact_units(&self, units: &[u16]) -> Option<Vec<u16>> {
        let m = self.matcher.as_ref()?;
        let mut bytes = Vec::new();
        encode_units(units, &mut bytes);
        let mut cursor = UnitCursor::new(&bytes);
        let mut out: Option<Vec<u16>> = None;
        let mut last = 0;
        for (start, end) in m.find_iter(&bytes) {
            let start = cursor.unit_at(start);
            let end = cursor.unit_at(end);
            let o = out.get_or_insert_with(|| Vec::with_capacity(units.len()));
            o.extend_from_slice(&units[last..start]);
            o.extend(REDACTED.encode_utf16());
            last = end;
        }
        let mut out = out?;
        out.extend_from_slice(&units[last..]);
        Some(out)
    }
}

/// The binding's access to a host string's UTF-16 code units, which a `String` cannot hold when
/// the string has a lone surrogate (the reader reads one as U+FFFD).
pub trait HostText<H> {
    /// The code units of the string `handle` stands for.
    fn units(&self, handle: &H) -> Option<Vec<u16>>;
    /// A host string of `units` (a redacted text that keeps a lone surrogate).
    fn string(&self, units: &[u16]) -> Option<H>;
}

/// No host strings: text is what the `String`s hold.
pub struct NoHostText;

impl<H> HostText<H> for NoHostText {
    fn units(&self, _: &H) -> Option<Vec<u16>> {
        None
    }
    fn string(&self, _: &[u16]) -> Option<H> {
        None
    }
}

/// A host string redacted on its code units: the string as it was when no secret occurs.
fn redact_string<H>(
    secrets: &Secrets,
    text: String,
    handle: Option<H>,
    host: &dyn HostText<H>,
) -> Host<H> {
    let (text, handle) = redact_text(secrets, text, handle, host);
    Host::String(text, handle)
}

/// The text of a host string (a value or a key) with every secret replaced, and the handle that
/// stands for it where the text cannot say it: the original when nothing changed, a new host
/// string when the result keeps a lone surrogate, none otherwise.
fn redact_text<H>(
    secrets: &Secrets,
    text: String,
    handle: Option<H>,
    host: &dyn HostText<H>,
) -> (String, Option<H>) {
    // U+FFFD in the text read may stand for a lone surrogate of the host string; a secret holding
    // a surrogate may split a pair of a character above U+FFFF, leaving a half no `String` holds.
    let lossy = handle.is_some() && text.contains('\u{FFFD}');
    let astral = secrets.has_surrogates() && text.bytes().any(|b| b >= 0xF0);
    if !lossy && !astral {
        return match secrets.redact(&text) {
            Cow::Owned(r) => (r, None),
            Cow::Borrowed(_) => (text, handle),
        };
    }
    let units = match (&handle, lossy) {
        (Some(h), true) => host.units(h),
        _ => None,
    }
    .unwrap_or_else(|| text.encode_utf16().collect());
    units_result(secrets.redact_units(&units), text, handle, host)
}

fn units_result<H>(
    redacted: Option<Vec<u16>>,
    text: String,
    handle: Option<H>,
    host: &dyn HostText<H>,
) -> (String, Option<H>) {
    let Some(out) = redacted else {
        return (text, handle);
    };
    match String::from_utf16(&out) {
        Ok(t) => (t, None),
        Err(_) => (String::from_utf16_lossy(&out), host.string(&out)),
    }
}

/// A key of a redacted object: redacted as a string is (on its code units), then made unique
/// among the keys before it (`taken`, by text). A renamed key that keeps a lone surrogate gets a
/// host string of its units and the suffix.
fn redact_key<H>(
    secrets: &Secrets,
    key: Key<H>,
    taken: &mut HashSet<String>,
    host: &dyn HostText<H>,
) -> Key<H> {
    let (text, handle) = redact_text(secrets, key.text, key.handle, host);
    let name = unique_key(taken, &text);
    taken.insert(name.clone());
    if name == text {
        return Key { text, handle };
    }
    let handle = handle.and_then(|h| {
        let mut units = host.units(&h)?;
        units.extend(name[text.len()..].encode_utf16());
        host.string(&units)
    });
    Key { text: name, handle }
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
    redact_host_with(secrets, value, &NoHostText)
}

/// [`redact_host`] with the host's strings matched on their code units (`host`), so a lone
/// surrogate is kept and found as JS would.
pub fn redact_host_with<H>(secrets: &Secrets, value: Host<H>, host: &dyn HostText<H>) -> Host<H> {
    match value {
        Host::String(s, handle) => redact_string(secrets, s, handle, host),
        Host::Hole => Host::Undefined,
        Host::TooDeep => Host::text(MAX_DEPTH_MARK),
        Host::Circular => Host::text(CIRCULAR_MARK),
        Host::Threw(_) => Host::text(UNREADABLE_MARK),
        Host::Array(items) | Host::Set(items) => Host::Array(
            items
                .into_iter()
                .map(|v| redact_host_with(secrets, v, host))
                .collect(),
        ),
        Host::Map(entries) => Host::Object(
            ObjectKind::Plain,
            redact_entries(secrets, Vec::new(), entries, false, host),
        ),
        Host::Object(kind, entries) => {
            let fixed = match kind {
                ObjectKind::Error(fields) => fields
                    .into_iter()
                    .map(|(k, v)| (Key::from(k), redact_host_with(secrets, v, host)))
                    .collect(),
                _ => Vec::new(),
            };
            Host::Object(
                ObjectKind::Plain,
                redact_entries(secrets, fixed, entries, true, host),
            )
        }
        other => other,
    }
}

/// `entries` redacted after `fixed` (kept under their own keys), each key redacted and made unique
/// among the keys before it; with `drop_functions`, function values are left out.
fn redact_entries<H>(
    secrets: &Secrets,
    fixed: Vec<(Key<H>, Host<H>)>,
    entries: Vec<(Key<H>, Host<H>)>,
    drop_functions: bool,
    host: &dyn HostText<H>,
) -> Vec<(Key<H>, Host<H>)> {
    let mut taken: HashSet<String> = fixed.iter().map(|(k, _)| k.text.clone()).collect();
    let mut out = fixed;
    out.reserve(entries.len());
    for (key, value) in entries {
        if drop_functions && matches!(value, Host::Function(_)) {
            continue;
        }
        let key = redact_key(secrets, key, &mut taken, host);
        out.push((key, redact_host_with(secrets, value, host)));
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
    fn a_long_periodic_secret_builds_in_linear_time() {
        // The default DFA took about forty minutes for this secret (quadratic failure walks).
        let secret = "x".repeat(1 << 20);
        let s = Secrets::new([secret.clone(), "ab".repeat(1 << 19)]);
        let text = format!("a{secret}xb");
        assert_eq!(s.redact(&text), "a[REDACTED]xb");
    }

    fn units(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    #[test]
    fn secrets_are_found_on_code_units() {
        // A lone surrogate in the text is kept, and a secret holding one is found where JS finds it.
        let s = Secrets::new(["ab"]);
        let lone = [0xD83D, b'a' as u16, b'b' as u16];
        assert_eq!(
            s.redact_units(&lone).unwrap(),
            [&[0xD83D][..], &units(REDACTED)].concat()
        );
        assert_eq!(s.redact_units(&[0xD83D, 0xDE00]), None);
        let half = Secrets::from_units([vec![0xDE00, b'!' as u16]]);
        assert!(half.has_surrogates());
        assert_eq!(
            half.redact_units(&units("x😀!y")).unwrap(),
            [&units("x")[..], &[0xD83D], &units(REDACTED), &units("y")].concat()
        );
        // Rust text cannot keep the half left: it shows as U+FFFD.
        assert_eq!(half.redact("x😀!y"), "x\u{FFFD}[REDACTED]y");
        // U+FFFD is not a surrogate: a secret of it does not match one.
        let fffd = Secrets::new(["\u{FFFD}"]);
        assert_eq!(fffd.redact_units(&[0xD800]), None);
        assert_eq!(fffd.redact("a\u{FFFD}"), "a[REDACTED]");
    }

    /// Host strings as code units, the handle being an index into `strings`.
    struct Units(std::cell::RefCell<Vec<Vec<u16>>>);

    impl HostText<usize> for Units {
        fn units(&self, h: &usize) -> Option<Vec<u16>> {
            self.0.borrow().get(*h).cloned()
        }
        fn string(&self, units: &[u16]) -> Option<usize> {
            self.0.borrow_mut().push(units.to_vec());
            Some(self.0.borrow().len() - 1)
        }
    }

    #[test]
    fn host_strings_keep_lone_surrogates() {
        let s = Secrets::new(["ab"]);
        let host = Units(std::cell::RefCell::new(vec![
            vec![0xDE00, 97, 98],
            vec![0xDE00],
        ]));
        // Read as "\u{FFFD}ab": the units are asked for and the lone half is kept.
        let out = redact_host_with(&s, Host::String("\u{FFFD}ab".into(), Some(0)), &host);
        let Host::String(_, Some(h)) = out else {
            panic!("{out:?}")
        };
        assert_eq!(
            host.0.borrow()[h],
            [&[0xDE00][..], &units(REDACTED)].concat()
        );
        // No secret: the string as it was, handle and all.
        let out = redact_host_with(&s, Host::String("\u{FFFD}".into(), Some(1)), &host);
        assert!(matches!(out, Host::String(_, Some(1))));
        // Well-formed text needs no units.
        let out = redact_host_with(&s, Host::String("ab 😀".into(), Some(9)), &host);
        assert!(matches!(out, Host::String(t, None) if t == "[REDACTED] 😀"));
    }

    #[test]
    fn keys_are_matched_on_their_code_units() {
        // A secret holding a lone surrogate, as a key: read as "a\u{FFFD}b", it was not found.
        let s = Secrets::from_units([vec![97, 0xD800, 98], units("ab")]);
        let host = Units(std::cell::RefCell::new(vec![
            vec![97, 0xD800, 98],
            vec![0xDC00],
            [&[0xD800][..], &units(REDACTED)].concat(),
            vec![0xD800, 97, 98],
        ]));
        let key = |text: &str, h| Key {
            text: text.into(),
            handle: Some(h),
        };
        let v = Host::Object(
            ObjectKind::Plain,
            vec![
                (key("a\u{FFFD}b", 0), Host::Null),
                (key("\u{FFFD}", 1), Host::Null),
                (key("\u{FFFD}[REDACTED]", 2), Host::Null),
                (key("\u{FFFD}ab", 3), Host::Null),
            ],
        );
        let Host::Object(_, out) = redact_host_with(&s, v, &host) else {
            panic!("an object")
        };
        let keys: Vec<(&str, Option<Vec<u16>>)> = out
            .iter()
            .map(|(k, _)| (k.as_str(), k.handle.map(|h| host.0.borrow()[h].clone())))
            .collect();
        assert_eq!(keys[0], ("[REDACTED]", None));
        // No secret: the key as it was, lone surrogate and all.
        assert_eq!(keys[1], ("\u{FFFD}", Some(vec![0xDC00])));
        assert_eq!(keys[2].0, "\u{FFFD}[REDACTED]");
        // Redacted to the text of the key before it: renamed, keeping its lone surrogate.
        assert_eq!(
            keys[3],
            (
                "\u{FFFD}[REDACTED]__2",
                Some([&[0xD800][..], &units("[REDACTED]__2")].concat())
            )
        );
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
