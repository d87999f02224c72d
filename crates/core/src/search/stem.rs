//! Stemming: conflates inflected forms so `calculates`, `calculated` and `calculation` meet.
//! Two stemmers were measured (docs/search.md) on the tuning halves of three independent sets: a
//! light plural stripper written here (tests only) and the Snowball English (Porter2) stemmer of
//! the `rust-stemmers` crate, which the shipped scoring uses.

use std::cell::RefCell;
use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use super::hash::FxMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stem {
    None,
    /// Plural stripping only (`-ies` → `-y`, `-es` after a sibilant, `-s`); measured in tests only.
    #[cfg(test)]
    Light,
    /// Snowball English (Porter2).
    Porter2,
}

fn porter2() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Most stems kept per thread by `stem_cached`; a full cache starts over.
const CACHE_ENTRIES: usize = 1 << 16;

thread_local! {
    /// Porter2 stems of tokens already seen on this thread: an index built again over the same or
    /// similar tools (each run's snapshot, a changed tool list) stems only the words it has not seen.
    static PORTER2_CACHE: RefCell<FxMap<Box<str>, Box<str>>> = RefCell::new(FxMap::default());
}

/// `f` applied to the stem of `token`, as `stem` computes it, through a per-thread cache.
pub fn stem_cached<R>(kind: Stem, token: &str, buf: &mut String, f: impl FnOnce(&str) -> R) -> R {
    if kind != Stem::Porter2 || token.len() <= 3 || !token.bytes().all(|b| b.is_ascii_lowercase()) {
        return f(stem(kind, token, buf));
    }
    PORTER2_CACHE.with(|c| {
        let mut cache = c.borrow_mut();
        if let Some(s) = cache.get(token) {
            return f(s);
        }
        let s = stem(kind, token, buf);
        if cache.len() >= CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(token.into(), s.into());
        f(s)
    })
}

/// The stem of a lower-cased token. Tokens that are not ASCII letters are returned unchanged.
pub fn stem<'a>(kind: Stem, token: &'a str, buf: &'a mut String) -> &'a str {
    if kind == Stem::None || token.len() <= 3 || !token.bytes().all(|b| b.is_ascii_lowercase()) {
        return token;
    }
    match kind {
        Stem::None => token,
        #[cfg(test)]
        Stem::Light => light(token, buf),
        Stem::Porter2 => match porter2().stem(token) {
            std::borrow::Cow::Borrowed(s) => &token[..s.len()],
            std::borrow::Cow::Owned(s) => {
                *buf = s;
                buf.as_str()
            }
        },
    }
}

#[cfg(test)]
fn light<'a>(t: &'a str, buf: &'a mut String) -> &'a str {
    let n = t.len();
    if t.ends_with("ies") && n > 4 {
        buf.clear();
        buf.push_str(&t[..n - 3]);
        buf.push('y');
        return buf.as_str();
    }
    if t.ends_with("sses")
        || t.ends_with("ches")
        || t.ends_with("shes")
        || t.ends_with("xes")
        || t.ends_with("zes")
    {
        return &t[..n - 2];
    }
    if t.ends_with('s') && !t.ends_with("ss") && !t.ends_with("us") && !t.ends_with("is") {
        return &t[..n - 1];
    }
    t
}

#[cfg(test)]
mod tests {
    use super::{stem, Stem};

    fn s(kind: Stem, t: &str) -> String {
        let mut b = String::new();
        stem(kind, t, &mut b).to_owned()
    }

    #[test]
    fn light_strips_plurals_only() {
        assert_eq!(s(Stem::Light, "queries"), "query");
        assert_eq!(s(Stem::Light, "branches"), "branch");
        assert_eq!(s(Stem::Light, "tools"), "tool");
        assert_eq!(s(Stem::Light, "class"), "class");
        assert_eq!(s(Stem::Light, "status"), "status");
        assert_eq!(s(Stem::Light, "running"), "running");
    }

    #[test]
    fn porter2_conflates_inflections() {
        assert_eq!(
            s(Stem::Porter2, "calculates"),
            s(Stem::Porter2, "calculated")
        );
        assert_eq!(
            s(Stem::Porter2, "calculating"),
            s(Stem::Porter2, "calculate")
        );
        assert_eq!(s(Stem::Porter2, "größe"), "größe");
        assert_eq!(s(Stem::Porter2, "log10"), "log10");
    }
}
