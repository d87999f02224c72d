//! Bounds checks over JSON text and parsed values, for schemas and for arguments.
//!
//! Nothing here recurses deeper than the depth the text scan has already allowed (at most 128),
//! so hostile input cannot exhaust the stack; every violation is an [`Issue`] naming the limit.

use serde_json::{Map, Value};

use super::limits::Limits;
use super::Issue;

/// The key the JS side puts in place of a value JSON text cannot carry (a `Map`, a class
/// instance, `NaN`, a function…): `{ "\u0000prism:nonjson": "<what it was>" }`.
pub const NON_JSON_TAG: &str = "\u{0}prism:nonjson";

/// Keys that must never appear in a schema or in arguments (prototype pollution).
pub const FORBIDDEN_KEYS: [&str; 3] = ["__proto__", "prototype", "constructor"];

/// JSON text nests deeper than the limit it was scanned against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep;

/// The nesting depth of the JSON text (`1` for `{}`), or `Err(TooDeep)` as soon as it passes `limit`.
/// A linear byte scan that skips string contents; it never allocates.
pub fn scan_depth(text: &str, limit: usize) -> Result<usize, TooDeep> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut i = 0;
    let n = bytes.len();
    while i < n {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < n {
                    match bytes[i] {
                        b'\\' => i += 2,
                        b'"' => break,
                        _ => i += 1,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Err(TooDeep);
                }
                if depth > max {
                    max = depth;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    Ok(max)
}

/// Parses JSON text whose depth `scan_depth` has already bounded.
pub fn parse_scanned(text: &str) -> Result<Value, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut de)?;
    de.end()?;
    Ok(value)
}

/// Why [`parse_bounded`] refused a text.
#[derive(Debug)]
pub enum ParseFailure {
    /// The text nests deeper than the limit (what [`scan_depth`] would have said first).
    TooDeep,
    /// The text is not valid JSON.
    Syntax(serde_json::Error),
}

/// Parses JSON text in one pass, refusing it as soon as it nests deeper than `limit`: the same
/// verdict as [`scan_depth`] followed by [`parse_scanned`], without a separate pass over the text.
/// The depth is counted by the parser itself, so recursion is bounded by `limit` (at most 128).
/// A text that is both too deep and invalid is reported as too deep, as the scan would.
pub fn parse_bounded(text: &str, limit: usize) -> Result<Value, ParseFailure> {
    let too_deep = std::cell::Cell::new(false);
    let mut de = serde_json::Deserializer::from_str(text);
    de.disable_recursion_limit();
    let parsed = serde::de::DeserializeSeed::deserialize(
        Bounded {
            left: limit,
            too_deep: &too_deep,
        },
        &mut de,
    )
    .and_then(|v| de.end().map(|()| v));
    match parsed {
        Ok(v) => Ok(v),
        Err(_) if too_deep.get() => Err(ParseFailure::TooDeep),
        // The scan looks at the whole text: a syntax error before a too-deep part still reads
        // as "too deep", as it did when the scan ran first.
        Err(_) if scan_depth(text, limit).is_err() => Err(ParseFailure::TooDeep),
        Err(e) => Err(ParseFailure::Syntax(e)),
    }
}

/// A `Value` seed that allows `left` more levels of arrays and objects.
#[derive(Clone, Copy)]
struct Bounded<'c> {
    left: usize,
    too_deep: &'c std::cell::Cell<bool>,
}

impl Bounded<'_> {
    fn enter<E: serde::de::Error>(self) -> Result<Self, E> {
        if self.left == 0 {
            self.too_deep.set(true);
            return Err(E::custom("nested too deep"));
        }
        Ok(Bounded {
            left: self.left - 1,
            too_deep: self.too_deep,
        })
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(inner)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let inner = self.enter()?;
        let mut out = Map::new();
        // A repeated key keeps its last value, as `JSON.parse` and serde_json's `Value` do.
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(inner)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// The largest integer a JS number holds exactly (2^53).
pub const JS_EXACT: u64 = 1 << 53;

/// Makes every number the value JS will hold: an integer past 2^53 becomes the nearest double, as
/// `JSON.parse` gives it to the tool (`9007199254740993` is `9007199254740992` there), so
/// `uniqueItems`, `const`, `enum`, `not` and the bounds judge what the tool receives. Floats are
/// parsed with correct rounding (serde_json's `float_roundtrip`), as `JSON.parse` does.
pub fn numbers_as_js(value: &mut Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) => {
                let wide = match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) if u > JS_EXACT => Some(u as f64),
                    (None, Some(i)) if i.unsigned_abs() > JS_EXACT => Some(i as f64),
                    _ => None,
                };
                if let Some(n2) = wide.and_then(serde_json::Number::from_f64) {
                    *n = n2;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
}

/// What a message is about: `arguments` (plural) or `schema`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    Arguments,
    Schema,
}

impl Subject {
    /// "arguments are" / "schema is".
    pub fn is(self) -> &'static str {
        match self {
            Subject::Arguments => "arguments are",
            Subject::Schema => "schema is",
        }
    }
    /// "arguments contain" / "schema contains".
    pub fn contains(self) -> &'static str {
        match self {
            Subject::Arguments => "arguments contain",
            Subject::Schema => "schema contains",
        }
    }
}

/// Turns a JSON parse error into a message a model can act on.
pub fn describe_parse_error(subject: Subject, err: &serde_json::Error) -> String {
    let text = err.to_string();
    if text.contains("surrogate") || text.contains("hex escape") {
        format!("{} a lone UTF-16 surrogate or a broken \\u escape, which is not valid Unicode ({text})", subject.contains())
    } else {
        format!("{} not valid JSON: {text}", subject.is())
    }
}

/// JSON Pointer of a path (RFC 6901 escaping).
pub fn pointer(segments: &[Segment<'_>]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        match s {
            Segment::Key(k) => {
                for c in k.chars() {
                    match c {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        c => out.push(c),
                    }
                }
            }
            Segment::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

#[derive(Clone, Copy, Debug)]
pub enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// What a tagged non-JSON value was, when `map` is such a tag.
pub fn non_json_tag(map: &Map<String, Value>) -> Option<&str> {
    if map.len() == 1 {
        if let Some(Value::String(kind)) = map.get(NON_JSON_TAG) {
            return Some(kind);
        }
    }
    None
}

/// Length of a string in UTF-16 code units (what JS `length` reports), computed only when the
/// UTF-8 length could exceed the limit (a string never has more UTF-16 units than UTF-8 bytes).
pub fn utf16_len_over(s: &str, limit: usize) -> Option<usize> {
    if s.len() <= limit {
        return None;
    }
    let n = s.encode_utf16().count();
    (n > limit).then_some(n)
}

struct ValueWalk<'l> {
    limits: &'l Limits,
}

/// Checks an argument value: depth (already bounded by the scan), properties per object,
/// string and array lengths, forbidden keys and values JSON cannot carry.
pub fn check_arguments(value: &Value, limits: &Limits) -> Result<(), Issue> {
    let mut walk = ValueWalk { limits };
    let mut path = Vec::new();
    walk.visit(value, &mut path, 0)
}

impl ValueWalk<'_> {
    fn visit<'v>(
        &mut self,
        value: &'v Value,
        path: &mut Vec<Segment<'v>>,
        depth: usize,
    ) -> Result<(), Issue> {
        let l = self.limits;
        match value {
            Value::String(s) => {
                if let Some(n) = utf16_len_over(s, l.max_string_length) {
                    return Err(Issue::at(
                        pointer(path),
                        format!(
                            "string exceeds maximum length {} (maxStringLength; found {n} characters)",
                            l.max_string_length
                        ),
                    ));
                }
            }
            Value::Array(items) => {
                if depth >= l.max_depth {
                    return Err(depth_issue(path, l.max_depth));
                }
                if items.len() > l.max_array_length {
                    return Err(Issue::at(
                        pointer(path),
                        format!(
                            "array exceeds maximum length {} (maxArrayLength; found {} items)",
                            l.max_array_length,
                            items.len()
                        ),
                    ));
                }
                for (i, item) in items.iter().enumerate() {
                    path.push(Segment::Index(i));
                    self.visit(item, path, depth + 1)?;
                    path.pop();
                }
            }
            Value::Object(map) => {
                if let Some(kind) = non_json_tag(map) {
                    return Err(Issue::at(
                        pointer(path),
                        format!("{kind} is not plain JSON"),
                    ));
                }
                if depth >= l.max_depth {
                    return Err(depth_issue(path, l.max_depth));
                }
                if map.len() > l.max_properties {
                    return Err(Issue::at(
                        pointer(path),
                        format!(
                            "object exceeds maximum properties {} (maxProperties; found {})",
                            l.max_properties,
                            map.len()
                        ),
                    ));
                }
                for (k, v) in map {
                    path.push(Segment::Key(k));
                    if FORBIDDEN_KEYS.contains(&k.as_str()) {
                        return Err(Issue::at(
                            pointer(path),
                            format!("forbidden property key \"{k}\""),
                        ));
                    }
                    if let Some(n) = utf16_len_over(k, l.max_string_length) {
                        return Err(Issue::at(
                            pointer(&path[..path.len() - 1]),
                            format!("a property name exceeds maximum length {} (maxStringLength; found {n} characters)", l.max_string_length),
                        ));
                    }
                    self.visit(v, path, depth + 1)?;
                    path.pop();
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn depth_issue(path: &[Segment<'_>], max: usize) -> Issue {
    Issue::at(
        pointer(path),
        format!("arguments exceed maximum depth {max} (maxDepth)"),
    )
}

/// What the schema walk learned, for the `$ref` checks that follow it.
#[derive(Default, Debug)]
pub struct SchemaFacts {
    /// Each `$ref` / `$dynamicRef` / `$recursiveRef`: the pointer of the schema holding it and
    /// the reference.
    pub refs: Vec<(String, String)>,
}

/// Keywords whose value is a map from names to subschemas: their keys are property names, not
/// keywords.
const NAME_MAPS: [&str; 6] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];
/// Keywords whose value is plain data: nothing below them is a keyword.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "examples", "required"];

/// Checks a parsed schema: keyword and property counts, `$ref` count and locality, forbidden
/// keys, values JSON cannot carry. Depth was bounded by the text scan.
pub fn check_schema(schema: &Value, limits: &Limits) -> Result<SchemaFacts, Issue> {
    match schema {
        Value::Object(_) | Value::Bool(_) => {}
        other => {
            return Err(Issue::whole(format!(
                "schema must be a JSON object or a boolean, found {}",
                super::messages::type_name(other)
            )))
        }
    }
    let mut facts = SchemaFacts::default();
    let mut keys = 0usize;
    // Iterative walk: (value, pointer, what the keys of this object are).
    #[derive(Clone, Copy, PartialEq)]
    enum Ctx {
        Schema,
        Names,
        Data,
    }
    // Pointers are built only when a message or a `$ref` needs one: each visited node records its
    // parent and its key (or index), and `ptr_of` spells the path from those.
    let mut nodes: Vec<(usize, Segment<'_>)> = vec![(usize::MAX, Segment::Index(0))];
    let mut stack: Vec<(&Value, usize, Ctx)> = vec![(schema, 0, Ctx::Schema)];
    while let Some((value, node, ctx)) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(kind) = non_json_tag(map) {
                    return Err(Issue::whole(format!(
                        "schema value at {} is not plain JSON: {kind}",
                        show_ptr(&ptr_of(&nodes, node))
                    )));
                }
                // `@arnilo/prism` counts every key of every object in the schema for both bounds,
                // so a host's bound means what it meant there: one count, two limits.
                keys += map.len();
                if keys > limits.max_schema_properties {
                    return Err(Issue::whole(format!(
                        "schema exceeds maximum properties {} (maxSchemaProperties, keys of the schema's objects)",
                        limits.max_schema_properties
                    )));
                }
                if keys > limits.max_schema_keywords {
                    return Err(Issue::whole(format!(
                        "schema exceeds maximum keywords {} (maxSchemaKeywords, keys of the schema's objects)",
                        limits.max_schema_keywords
                    )));
                }
                for (k, v) in map {
                    let child = nodes.len();
                    nodes.push((node, Segment::Key(k)));
                    if FORBIDDEN_KEYS.contains(&k.as_str()) {
                        return Err(Issue::whole(format!(
                            "schema uses forbidden JSON key \"{k}\" at {}",
                            show_ptr(&ptr_of(&nodes, child))
                        )));
                    }
                    let child_ctx = match ctx {
                        Ctx::Data => Ctx::Data,
                        Ctx::Names => Ctx::Schema,
                        Ctx::Schema => {
                            if matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef") {
                                if let Value::String(r) = v {
                                    facts.refs.push((ptr_of(&nodes, node), r.clone()));
                                    if facts.refs.len() > limits.max_schema_refs {
                                        return Err(Issue::whole(format!(
                                            "schema exceeds maximum refs {} (maxSchemaRefs)",
                                            limits.max_schema_refs
                                        )));
                                    }
                                    if !r.starts_with('#') {
                                        return Err(Issue::whole(format!(
                                            "schema $ref \"{}\" at {} is not a local reference (remote $ref is not allowed): only fragment references (\"#…\") are allowed, nothing is fetched",
                                            super::messages::clip(r, 120),
                                            show_ptr(&ptr_of(&nodes, node))
                                        )));
                                    }
                                }
                                Ctx::Data
                            } else if NAME_MAPS.contains(&k.as_str()) && v.is_object() {
                                Ctx::Names
                            } else if DATA_KEYWORDS.contains(&k.as_str()) {
                                Ctx::Data
                            } else {
                                Ctx::Schema
                            }
                        }
                    };
                    stack.push((v, child, child_ctx));
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let child = nodes.len();
                    nodes.push((node, Segment::Index(i)));
                    stack.push((
                        item,
                        child,
                        if ctx == Ctx::Data {
                            Ctx::Data
                        } else {
                            Ctx::Schema
                        },
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(facts)
}

/// The JSON Pointer of a node recorded by `check_schema` (`""` for the root).
fn ptr_of(nodes: &[(usize, Segment<'_>)], mut node: usize) -> String {
    let mut segments = Vec::new();
    while node != 0 {
        let (parent, segment) = nodes[node];
        segments.push(segment);
        node = parent;
    }
    segments.reverse();
    pointer(&segments)
}

/// A schema location for messages: `#` for the root, `#/properties/x` below it.
pub fn show_ptr(ptr: &str) -> String {
    format!("#{ptr}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scan_depth_skips_strings_and_stops_at_the_limit() {
        assert_eq!(scan_depth(r#"{"a":"[[[[\"{{"}"#, 10), Ok(1));
        assert_eq!(scan_depth("[[[]]]", 3), Ok(3));
        assert_eq!(scan_depth("[[[]]]", 2), Err(TooDeep));
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert_eq!(scan_depth(&deep, 128), Err(TooDeep));
    }

    #[test]
    fn parses_a_scanned_deep_value_without_the_parser_limit() {
        let text = "[".repeat(128) + &"]".repeat(128);
        assert_eq!(scan_depth(&text, 128), Ok(128));
        assert!(parse_scanned(&text).is_ok());
        assert!(parse_scanned("{} x").is_err());
    }

    #[test]
    fn parse_bounded_agrees_with_scan_then_parse() {
        let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
        let texts = [
            "{}".to_owned(),
            r#"{"a":[1,2,{"b":"[[[\"{{"}],"a":3}"#.to_owned(),
            deep(3),
            deep(4),
            deep(10_000),
            // too deep and invalid after the deep part, and invalid before it
            "[[[[[ ]]]]] x".to_owned(),
            "x [[[[[ ]]]]]".to_owned(),
            "[[[[[1,]]]]]".to_owned(),
            "[1,]".to_owned(),
            "{} x".to_owned(),
            r#"{"a":"\ud800"}"#.to_owned(),
            "1e400".to_owned(),
            "".to_owned(),
        ];
        for text in &texts {
            let old = match scan_depth(text, 4) {
                Err(TooDeep) => Err(None),
                Ok(_) => parse_scanned(text).map_err(|e| Some(e.to_string())),
            };
            let new = match parse_bounded(text, 4) {
                Ok(v) => Ok(v),
                Err(ParseFailure::TooDeep) => Err(None),
                Err(ParseFailure::Syntax(e)) => Err(Some(e.to_string())),
            };
            assert_eq!(old, new, "{text:?}");
        }
        // The last of repeated keys wins, as in JSON.parse.
        assert_eq!(
            parse_bounded(r#"{"a":1,"a":2}"#, 4).unwrap(),
            json!({"a": 2})
        );
        assert_eq!(
            parse_bounded("[1.5,-3,18446744073709551615,null,true]", 4).unwrap(),
            parse_scanned("[1.5,-3,18446744073709551615,null,true]").unwrap()
        );
    }

    #[test]
    fn numbers_become_what_js_holds() {
        let mut v = parse_scanned(
            r#"{"a":[9007199254740992,9007199254740993,-9007199254740993,18446744073709551617,7,0.1]}"#,
        )
        .unwrap();
        numbers_as_js(&mut v);
        let a = v["a"].as_array().unwrap();
        assert_eq!(a[0].as_f64(), a[1].as_f64());
        assert_eq!(a[1].as_f64(), Some(9_007_199_254_740_992.0));
        assert_eq!(a[2].as_f64(), Some(-9_007_199_254_740_992.0));
        assert_eq!(a[3].as_f64(), Some(18_446_744_073_709_551_616.0));
        assert_eq!(a[4].as_u64(), Some(7));
        assert_eq!(a[5].as_f64(), Some(0.1));
        // Correct rounding for a long decimal, as JSON.parse gives it.
        let v = parse_scanned("2.2250738585072011e-308").unwrap();
        assert_eq!(v.as_f64(), Some(2.225_073_858_507_201e-308));
    }

    #[test]
    fn lone_surrogates_are_named() {
        let err = parse_scanned(r#"{"a":"\ud800"}"#).unwrap_err();
        assert!(
            describe_parse_error(Subject::Arguments, &err).contains("lone UTF-16 surrogate"),
            "{err}"
        );
    }

    #[test]
    fn argument_bounds_name_path_and_limit() {
        let l = Limits {
            max_string_length: 3,
            max_array_length: 2,
            ..Limits::default()
        };
        let e = check_arguments(&json!({"a": {"b/c": "long"}}), &l).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("/a/b~1c"));
        assert_eq!(
            e.message,
            "string exceeds maximum length 3 (maxStringLength; found 4 characters)"
        );
        let e = check_arguments(&json!({"a": [1, 2, 3]}), &l).unwrap_err();
        assert_eq!(
            e.message,
            "array exceeds maximum length 2 (maxArrayLength; found 3 items)"
        );
        let e = check_arguments(&json!({"x": {"__proto__": 1}}), &l).unwrap_err();
        assert_eq!(e.path.as_deref(), Some("/x/__proto__"));
        let e = check_arguments(&json!({"m": {NON_JSON_TAG: "Map"}}), &l).unwrap_err();
        assert_eq!(
            (e.path.as_deref(), e.message.as_str()),
            (Some("/m"), "Map is not plain JSON")
        );
        // UTF-16 length, as JS counts it: "é" is 2 UTF-8 bytes but 1 unit.
        assert!(check_arguments(&json!("ééé"), &l).is_ok());
    }

    #[test]
    fn schema_bounds() {
        let l = Limits::default();
        assert!(check_schema(
            &json!({"properties": {"constructor": {"type": "string"}}}),
            &l
        )
        .is_err());
        assert!(check_schema(&json!({"enum": [{"__proto__": 1}]}), &l).is_err());
        let f = check_schema(
            &json!({"$defs": {"a": {"type": "string"}}, "$ref": "#/$defs/a"}),
            &l,
        )
        .unwrap();
        assert_eq!(f.refs, vec![(String::new(), "#/$defs/a".to_owned())]);
        let e = check_schema(&json!({"$ref": "http://example.com/s.json"}), &l).unwrap_err();
        assert!(e.message.contains("not a local reference"), "{}", e.message);
        assert!(check_schema(&json!("string"), &l)
            .unwrap_err()
            .message
            .contains("found string"));
        // A property literally named "$ref" is a name, not a reference.
        assert!(check_schema(&json!({"properties": {"$ref": {"type": "string"}}}), &l).is_ok());
    }
}
