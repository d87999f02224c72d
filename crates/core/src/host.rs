//! A host value read once, owned (docs/boundary.md). The binding's one reader
//! (`crates/node/src/host.rs`) turns a JS value into a [`Host`] tree with one answer for every kind
//! of value, and the consumers work from the tree: canonical JSON and the arguments hash
//! (`effects::canonical::write_host`) and redaction (`redact::redact_host`).
//!
//! `H` is the binding's handle to a value that was read. This crate never looks into it; it is kept
//! where a consumer may hand the original back (an unchanged string, a `Date`, a function) or
//! rethrow what a read threw.

/// What the reader reads, per consumer.
#[derive(Clone, Copy, Debug)]
pub struct ReadPolicy {
    /// A container at this depth (the root is 0) is not read: [`Host::TooDeep`].
    pub max_depth: usize,
    /// Whether a container that is already open on the path from the root reads as
    /// [`Host::Circular`]; without the check (it costs a comparison per ancestor) a cycle reads
    /// down to `max_depth`.
    pub cycles: bool,
}

#[derive(Debug)]
pub enum Host<H> {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    /// The text, and the handle of the JS string it was read from (`None` once the text changed).
    String(String, Option<H>),
    /// A function: not data.
    Function(H),
    /// A symbol or a bigint: not JSON data.
    Other(H),
    /// A `Date`, a `RegExp` or a typed array: kept whole, not walked.
    Opaque(H),
    Array(Vec<Host<H>>),
    /// An array index with no element.
    Hole,
    /// An object's own enumerable string-keyed properties, in the host's order.
    Object(ObjectKind<H>, Vec<(Key<H>, Host<H>)>),
    /// A `Map`'s entries, each key as `String(key)` gives it.
    Map(Vec<(Key<H>, Host<H>)>),
    /// A `Set`'s values.
    Set(Vec<Host<H>>),
    /// A container already open on the path from the root.
    Circular,
    /// A container at the policy's `max_depth`, not read.
    TooDeep,
    /// A read that threw (a getter, a proxy trap): the thrown value.
    Threw(H),
}

/// A property key: its text, and the handle of the JS string it was read from where the text may
/// not say it (a lone surrogate reads as U+FFFD), so redaction can match on its code units and a
/// key left as it was is written back as it was.
#[derive(Debug)]
pub struct Key<H> {
    pub text: String,
    pub handle: Option<H>,
}

impl<H> Key<H> {
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl<H> std::ops::Deref for Key<H> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.text
    }
}

impl<H> From<String> for Key<H> {
    fn from(text: String) -> Self {
        Key { text, handle: None }
    }
}

impl<H> From<&str> for Key<H> {
    fn from(text: &str) -> Self {
        Key::from(text.to_owned())
    }
}

#[derive(Debug)]
pub enum ObjectKind<H> {
    /// `Object.prototype` (this realm's or another realm's) or no prototype: JSON data.
    Plain,
    /// An `Error`: its `name` and `message` where they are strings (not enumerable, so not among
    /// the properties), read before them.
    Error(Vec<(&'static str, Host<H>)>),
    /// An instance of any other class.
    Instance,
}

impl<H> Host<H> {
    /// A string made here (a mark, a redacted text): no host handle stands for it.
    pub fn text(s: impl Into<String>) -> Self {
        Host::String(s.into(), None)
    }

    /// A value that is already JSON (parsed by serde_json, whose parser bounds nesting at 128), as
    /// the tree the consumers read: so JSON text and host values have one canonical writer.
    pub fn from_json(value: &serde_json::Value) -> Self {
        use serde_json::Value;
        match value {
            Value::Null => Host::Null,
            Value::Bool(b) => Host::Bool(*b),
            // serde_json's numbers are finite; one outside f64's range reads as NaN and is refused.
            Value::Number(n) => Host::Number(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => Host::text(s.as_str()),
            Value::Array(items) => Host::Array(items.iter().map(Host::from_json).collect()),
            Value::Object(map) => Host::Object(
                ObjectKind::Plain,
                map.iter()
                    .map(|(k, v)| (Key::from(k.as_str()), Host::from_json(v)))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    //! The consumers' answers for each kind the reader gives, on trees built by hand (the reader
    //! itself is exercised from JS: `__test__/host-reader.test.ts`).
    use super::*;
    use crate::effects::canonical::{host_canonical, Refusal};
    use crate::redact::{redact_host, Secrets};

    type T = Host<u32>;

    fn s(text: &str) -> T {
        Host::String(text.into(), Some(7))
    }
    fn obj(entries: Vec<(&str, T)>) -> T {
        Host::Object(
            ObjectKind::Plain,
            entries
                .into_iter()
                .map(|(k, v)| (Key::from(k), v))
                .collect(),
        )
    }

    #[test]
    fn canonical_sorts_keys_writes_holes_as_null_and_refuses_what_is_not_json() {
        let v = obj(vec![
            (
                "b",
                Host::Array(vec![Host::Number(1.0), Host::Hole, Host::Null]),
            ),
            ("a", s("x")),
            ("10", Host::Bool(true)),
            ("2", Host::Number(-0.0)),
        ]);
        assert_eq!(
            host_canonical(&v).unwrap(),
            r#"{"2":0,"10":true,"a":"x","b":[1,null,null]}"#
        );
        for bad in [
            Host::Undefined,
            Host::Function(1),
            Host::Other(1),
            Host::Opaque(1),
            Host::Circular,
            Host::TooDeep,
            Host::Map(vec![]),
            Host::Set(vec![]),
            Host::Number(f64::NAN),
            Host::Object(ObjectKind::Instance, vec![]),
            Host::Object(ObjectKind::Error(vec![]), vec![]),
            obj(vec![("__proto__", Host::Null)]),
            Host::Array(vec![Host::Undefined]),
        ] {
            assert!(
                matches!(host_canonical(&bad), Err(Refusal::NotJson)),
                "{bad:?}"
            );
        }
        let threw = obj(vec![("a", Host::Threw(9))]);
        assert!(matches!(host_canonical(&threw), Err(Refusal::Threw(9))));
    }

    #[test]
    fn canonical_refuses_nesting_past_its_depth() {
        let mut v: T = Host::Null;
        for _ in 0..crate::effects::canonical::MAX_CANONICAL_DEPTH {
            v = Host::Array(vec![v]);
        }
        assert!(matches!(host_canonical(&v), Err(Refusal::NotJson)));
    }

    #[test]
    fn redaction_copies_with_marks_and_keeps_unchanged_handles() {
        let secrets = Secrets::new(["sk-1"]);
        let v = Host::Object(
            ObjectKind::Error(vec![("message", s("bad sk-1"))]),
            vec![
                ("message".into(), s("own")),
                ("sk-1".into(), s("keep")),
                ("[REDACTED]".into(), Host::Number(1.0)),
                ("f".into(), Host::Function(3)),
                ("m".into(), Host::Map(vec![("k".into(), Host::TooDeep)])),
                (
                    "l".into(),
                    Host::Set(vec![Host::Circular, Host::Threw(4), Host::Hole]),
                ),
                ("d".into(), Host::Opaque(5)),
            ],
        );
        let Host::Object(ObjectKind::Plain, out) = redact_host(&secrets, v) else {
            panic!("an object")
        };
        let keys: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "message",
                "message__2",
                "[REDACTED]",
                "[REDACTED]__2",
                "m",
                "l",
                "d"
            ]
        );
        assert!(matches!(&out[0].1, Host::String(t, None) if t == "bad [REDACTED]"));
        assert!(matches!(&out[1].1, Host::String(t, Some(7)) if t == "own"));
        assert!(
            matches!(&out[4].1, Host::Object(_, m) if matches!(&m[0].1, Host::String(t, None) if t == crate::redact::MAX_DEPTH_MARK))
        );
        let Host::Array(list) = &out[5].1 else {
            panic!("a Set becomes an array")
        };
        assert!(matches!(&list[0], Host::String(t, None) if t == crate::redact::CIRCULAR_MARK));
        assert!(matches!(&list[1], Host::String(t, None) if t == crate::redact::UNREADABLE_MARK));
        assert!(matches!(&list[2], Host::Undefined));
        assert!(matches!(&out[6].1, Host::Opaque(5)));
    }
}
