//! The warm validation path: argument text parsed into one flat array of nodes (a "tape") that
//! borrows its strings from the text, validated through jsonschema's custom-representation seam.
//!
//! The `serde_json::Value` path allocates a `String` per key and per string and a `BTreeMap` per
//! object, then walks the tree three more times (bounds, numbers, validation) and frees it node
//! by node; for ~100 KB of arguments that is most of the time. The tape is one `Vec`, filled in
//! the same serde pass that checks every argument bound and makes numbers what JS holds.
//!
//! The tape only ever answers "valid". Anything unusual while building it (a bound exceeded, a
//! forbidden or repeated key, a non-JSON tag, a syntax error) gives up and the caller takes the
//! `Value` path, which words the refusal; so does an invalid verdict, so every message still
//! comes from one place. Its grammar is serde_json's own (the same deserializer drives both).

use std::borrow::Cow;
use std::cell::Cell;

use jsonschema::json::{Array, Json, Node, NodeIdentity, Object};
use jsonschema::JsonType;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use super::bounds::{utf16_len_over, FORBIDDEN_KEYS, JS_EXACT, NON_JSON_TAG};
use super::limits::Limits;

/// Members an object may have on the tape; a larger one takes the `Value` path (the repeated-key
/// check is a scan over the members before each key).
const MAX_TAPE_KEYS: usize = 64;

/// One node. Containers hold their member count and the index just past their subtree; an
/// object's members are a `Key` slot followed by the value's subtree.
#[derive(Debug)]
enum Slot<'t> {
    Null,
    Bool(bool),
    Num(Number),
    Str(Cow<'t, str>),
    Key(Cow<'t, str>),
    Arr { len: u32, end: u32 },
    Obj { len: u32, end: u32 },
}

/// A parsed argument text.
#[derive(Debug)]
pub struct Tape<'t> {
    slots: Vec<Slot<'t>>,
}

/// The representation jsonschema validates: nodes are (tape, index) handles.
pub struct TapeJson;

#[derive(Clone, Copy, Debug)]
pub struct TapeNode<'a> {
    tape: &'a Tape<'a>,
    at: u32,
}

impl<'t> Tape<'t> {
    /// Parses `text` within `limits`, or `None` when the `Value` path must decide.
    pub fn parse(text: &'t str, limits: &Limits) -> Option<Tape<'t>> {
        // A text this size holds at most one node per two bytes (`1,`), usually far fewer.
        let mut slots = Vec::with_capacity((text.len() / 8).clamp(4, 1 << 16));
        let gave_up = Cell::new(false);
        let mut de = serde_json::Deserializer::from_str(text);
        de.disable_recursion_limit();
        let seed = Build {
            slots: &mut slots,
            limits,
            left: limits.max_depth,
            gave_up: &gave_up,
        };
        seed.deserialize(&mut de).ok()?;
        de.end().ok()?;
        if gave_up.get() {
            return None;
        }
        Some(Tape { slots })
    }

    pub fn root(&self) -> TapeNode<'_> {
        TapeNode { tape: self, at: 0 }
    }
}

/// The seed that appends one value (and its subtree) to the tape.
struct Build<'s, 't> {
    slots: &'s mut Vec<Slot<'t>>,
    limits: &'s Limits,
    /// Array and object levels still allowed.
    left: usize,
    gave_up: &'s Cell<bool>,
}

impl Build<'_, '_> {
    fn give_up<E: serde::de::Error>(&self) -> E {
        self.gave_up.set(true);
        E::custom("left to the value path")
    }
    fn string_ok(&self, s: &str) -> bool {
        utf16_len_over(s, self.limits.max_string_length).is_none()
    }
}

impl<'de, 's> DeserializeSeed<'de> for Build<'s, 'de> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, 's> Visitor<'de> for Build<'s, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.slots.push(Slot::Bool(v));
        Ok(())
    }
    // Integers past 2^53 become the double JS holds, as `numbers_as_js` makes them.
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        let n = if v > JS_EXACT {
            Number::from_f64(v as f64).unwrap_or_else(|| v.into())
        } else {
            v.into()
        };
        self.slots.push(Slot::Num(n));
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        let n = if v.unsigned_abs() > JS_EXACT {
            Number::from_f64(v as f64).unwrap_or_else(|| v.into())
        } else {
            v.into()
        };
        self.slots.push(Slot::Num(n));
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        match Number::from_f64(v) {
            Some(n) => {
                self.slots.push(Slot::Num(n));
                Ok(())
            }
            None => Err(self.give_up()),
        }
    }
    fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<(), E> {
        if !self.string_ok(v) {
            return Err(self.give_up());
        }
        self.slots.push(Slot::Str(Cow::Borrowed(v)));
        Ok(())
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        if !self.string_ok(v) {
            return Err(self.give_up());
        }
        self.slots.push(Slot::Str(Cow::Owned(v.to_owned())));
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        self.slots.push(Slot::Null);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        if self.left == 0 {
            return Err(self.give_up());
        }
        let at = self.slots.len();
        self.slots.push(Slot::Arr { len: 0, end: 0 });
        let mut len = 0usize;
        loop {
            let inner = Build {
                slots: &mut *self.slots,
                limits: self.limits,
                left: self.left - 1,
                gave_up: self.gave_up,
            };
            if seq.next_element_seed(inner)?.is_none() {
                break;
            }
            len += 1;
            if len > self.limits.max_array_length {
                return Err(self.give_up());
            }
        }
        let end = self.slots.len();
        let (Ok(len), Ok(end)) = (u32::try_from(len), u32::try_from(end)) else {
            return Err(self.give_up());
        };
        self.slots[at] = Slot::Arr { len, end };
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if self.left == 0 {
            return Err(self.give_up());
        }
        let at = self.slots.len();
        self.slots.push(Slot::Obj { len: 0, end: 0 });
        let mut len = 0usize;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            // Forbidden keys, the replacer's non-JSON tag, an over-long name and a repeated key
            // (`JSON.parse` keeps the last) are all the value path's to word or decide. Objects
            // of more than `MAX_TAPE_KEYS` members are too: the repeat check scans the members
            // before this one.
            let k: &str = &key;
            len += 1;
            if FORBIDDEN_KEYS.contains(&k)
                || k == NON_JSON_TAG
                || !self.string_ok(k)
                || len > MAX_TAPE_KEYS
                || len > self.limits.max_properties
            {
                return Err(self.give_up());
            }
            let mut i = at + 1;
            while i < self.slots.len() {
                let Slot::Key(seen) = &self.slots[i] else {
                    break;
                };
                if seen.as_ref() == k {
                    return Err(self.give_up());
                }
                i = past(self.slots, i + 1);
            }
            self.slots.push(Slot::Key(key));
            map.next_value_seed(Build {
                slots: &mut *self.slots,
                limits: self.limits,
                left: self.left - 1,
                gave_up: self.gave_up,
            })?;
        }
        let end = self.slots.len();
        let (Ok(len), Ok(end)) = (u32::try_from(len), u32::try_from(end)) else {
            return Err(self.give_up());
        };
        self.slots[at] = Slot::Obj { len, end };
        Ok(())
    }
}

/// The index just past the subtree at `at`.
fn past(slots: &[Slot<'_>], at: usize) -> usize {
    match slots[at] {
        Slot::Arr { end, .. } | Slot::Obj { end, .. } => end as usize,
        _ => at + 1,
    }
}

impl<'a> TapeNode<'a> {
    fn slot(&self) -> &'a Slot<'a> {
        &self.tape.slots[self.at as usize]
    }
    /// The index just past this node's subtree.
    fn next(&self) -> u32 {
        past(&self.tape.slots, self.at as usize) as u32
    }
}

impl Json for TapeJson {
    type Node<'a> = TapeNode<'a>;
    type PreparedKey = Box<str>;
    type StringBuffer = Option<Tape<'static>>;
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> Box<str> {
        key.into()
    }

    fn with_string_node<T>(
        buffer: &mut Option<Tape<'static>>,
        string: &str,
        f: impl FnOnce(TapeNode<'_>) -> T,
    ) -> T {
        let tape = buffer.insert(Tape {
            slots: vec![Slot::Str(Cow::Owned(string.to_owned()))],
        });
        f(tape.root())
    }
}

impl<'a> Node<'a, TapeJson> for TapeNode<'a> {
    type Object = TapeObject<'a>;
    type Array = TapeArray<'a>;
    type Number = &'a Number;

    fn as_object(&self) -> Option<TapeObject<'a>> {
        match self.slot() {
            Slot::Obj { len, end } => Some(TapeObject {
                tape: self.tape,
                first: self.at + 1,
                len: *len,
                end: *end,
            }),
            _ => None,
        }
    }
    fn as_array(&self) -> Option<TapeArray<'a>> {
        match self.slot() {
            Slot::Arr { len, end } => Some(TapeArray {
                tape: self.tape,
                first: self.at + 1,
                len: *len,
                end: *end,
            }),
            _ => None,
        }
    }
    fn as_string(&self) -> Option<Cow<'a, str>> {
        match self.slot() {
            Slot::Str(s) => Some(Cow::Borrowed(s.as_ref())),
            _ => None,
        }
    }
    fn as_number(&self) -> Option<&'a Number> {
        match self.slot() {
            Slot::Num(n) => Some(n),
            _ => None,
        }
    }
    fn as_boolean(&self) -> Option<bool> {
        match self.slot() {
            Slot::Bool(b) => Some(*b),
            _ => None,
        }
    }
    fn is_null(&self) -> bool {
        matches!(self.slot(), Slot::Null)
    }
    fn json_type(&self) -> JsonType {
        match self.slot() {
            Slot::Null => JsonType::Null,
            Slot::Bool(_) => JsonType::Boolean,
            Slot::Num(_) => JsonType::Number,
            Slot::Str(_) | Slot::Key(_) => JsonType::String,
            Slot::Arr { .. } => JsonType::Array,
            Slot::Obj { .. } => JsonType::Object,
        }
    }
    fn string_length(&self) -> Option<u64> {
        self.as_string().map(|s| s.chars().count() as u64)
    }
    fn string_length_within(&self, min: u64, max: u64) -> Option<bool> {
        let Slot::Str(s) = self.slot() else {
            return None;
        };
        // A code point takes one to four bytes: the count lies in `ceil(bytes / 4)..=bytes`.
        let bytes = s.len() as u64;
        let fewest = bytes.div_ceil(4);
        if bytes < min || fewest > max {
            return Some(false);
        }
        if min <= fewest && bytes <= max {
            return Some(true);
        }
        Some((min..=max).contains(&(s.chars().count() as u64)))
    }
    fn equals_value(&self, expected: &Value) -> bool {
        // Scalars without building a `Value`; numbers compare mathematically, as `cmp` does.
        match (self.slot(), expected) {
            (Slot::Str(s), Value::String(e)) => s.as_ref() == e.as_str(),
            (Slot::Str(_), _) => false,
            (Slot::Bool(b), Value::Bool(e)) => b == e,
            (Slot::Null, Value::Null) => true,
            (Slot::Num(n), Value::Number(_)) => {
                jsonschema::json::cmp::equal(&Value::Number(n.clone()), expected)
            }
            (Slot::Bool(_) | Slot::Null | Slot::Num(_), _) => false,
            _ => jsonschema::json::cmp::equal(&self.to_value(), expected),
        }
    }
    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(self.build_value())
    }
    fn identity(&self) -> Option<NodeIdentity> {
        Some(NodeIdentity::tagged(
            std::ptr::from_ref(self.tape) as usize,
            self.at,
        ))
    }
}

impl TapeNode<'_> {
    /// The node as a `Value` (cold paths: `const`/`enum` on containers, `uniqueItems`, errors).
    /// Depth is bounded by the tape's own (at most `maxDepth`, 128).
    fn build_value(&self) -> Value {
        match self.slot() {
            Slot::Null => Value::Null,
            Slot::Bool(b) => Value::Bool(*b),
            Slot::Num(n) => Value::Number(n.clone()),
            Slot::Str(s) | Slot::Key(s) => Value::String(s.as_ref().to_owned()),
            Slot::Arr { .. } => Value::Array(
                self.as_array()
                    .map(|a| a.elements().map(|e| e.build_value()).collect())
                    .unwrap_or_default(),
            ),
            Slot::Obj { .. } => Value::Object(
                self.as_object()
                    .map(|o| {
                        o.members()
                            .map(|(k, v)| (k.to_owned(), v.build_value()))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
        }
    }
}

#[derive(Clone, Copy)]
pub struct TapeObject<'a> {
    tape: &'a Tape<'a>,
    first: u32,
    len: u32,
    end: u32,
}

pub struct TapeMembers<'a> {
    tape: &'a Tape<'a>,
    at: u32,
    end: u32,
}

impl<'a> Iterator for TapeMembers<'a> {
    type Item = (&'a str, TapeNode<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        if self.at >= self.end {
            return None;
        }
        let Slot::Key(k) = &self.tape.slots[self.at as usize] else {
            return None;
        };
        let value = TapeNode {
            tape: self.tape,
            at: self.at + 1,
        };
        self.at = value.next();
        Some((k.as_ref(), value))
    }
}

impl<'a> Object<'a, TapeJson> for TapeObject<'a> {
    type Node = TapeNode<'a>;
    type MemberName = &'a str;
    type MembersIter = TapeMembers<'a>;

    fn len(&self) -> usize {
        self.len as usize
    }
    fn get(&self, key: &Box<str>) -> Option<TapeNode<'a>> {
        self.members()
            .find(|(k, _)| *k == key.as_ref())
            .map(|(_, v)| v)
    }
    fn members(&self) -> TapeMembers<'a> {
        TapeMembers {
            tape: self.tape,
            at: self.first,
            end: self.end,
        }
    }
}

#[derive(Clone, Copy)]
pub struct TapeArray<'a> {
    tape: &'a Tape<'a>,
    first: u32,
    len: u32,
    end: u32,
}

pub struct TapeElements<'a> {
    tape: &'a Tape<'a>,
    at: u32,
    end: u32,
}

impl<'a> Iterator for TapeElements<'a> {
    type Item = TapeNode<'a>;
    fn next(&mut self) -> Option<TapeNode<'a>> {
        if self.at >= self.end {
            return None;
        }
        let node = TapeNode {
            tape: self.tape,
            at: self.at,
        };
        self.at = node.next();
        Some(node)
    }
}

impl<'a> Array<'a, TapeJson> for TapeArray<'a> {
    type Node = TapeNode<'a>;
    type ElementsIter = TapeElements<'a>;

    fn len(&self) -> usize {
        self.len as usize
    }
    fn elements(&self) -> TapeElements<'a> {
        TapeElements {
            tape: self.tape,
            at: self.first,
            end: self.end,
        }
    }
}
