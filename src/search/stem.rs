//! Stemming: conflates inflected forms so `calculates`, `calculated` and `calculation` meet.
//! Two stemmers were measured (docs/search.md): a light plural stripper written here and the
//! Snowball English (Porter2) stemmer from the `rust-stemmers` crate. Neither improved recall on
//! the held-out set (both lowered it), so the shipped scoring does not stem; Porter2 is a
//! dev-dependency so the measurement stays reproducible.

#[cfg(test)]
use std::sync::OnceLock;

#[cfg(test)]
use rust_stemmers::{Algorithm, Stemmer};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stem {
    None,
    /// Plural stripping only (`-ies` → `-y`, `-es` after a sibilant, `-s`); measured in tests only.
    #[cfg(test)]
    Light,
    /// Snowball English (Porter2); measured in tests only.
    #[cfg(test)]
    Porter2,
}

#[cfg(test)]
fn porter2() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// The stem of a lower-cased token. Tokens that are not ASCII letters are returned unchanged.
#[cfg_attr(not(test), allow(unused_variables, clippy::ptr_arg))]
pub fn stem<'a>(kind: Stem, token: &'a str, buf: &'a mut String) -> &'a str {
    if kind == Stem::None || token.len() <= 3 || !token.bytes().all(|b| b.is_ascii_lowercase()) {
        return token;
    }
    match kind {
        Stem::None => token,
        #[cfg(test)]
        Stem::Light => light(token, buf),
        #[cfg(test)]
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
