//! The acceptance plan: a compiled schema restated, when it only uses keywords whose meaning is
//! plain comparisons, as a small JSON document the JS side turns into closures that answer
//! "certainly valid" for a live argument object without serializing it (lib/validation-plan.js).
//!
//! Serializing ~100 KB of arguments to JSON text costs more than validating them, so for warm
//! schemas the JS side first asks the plan. The plan only ever accepts: anything it is unsure of
//! (a keyword outside the list below, a value JSON.stringify would change, a bound near its limit)
//! sends the call down the text path, which decides and words every refusal. Which keywords are
//! safe to restate is decided here, once, next to the validator whose verdicts it must never
//! contradict; the differential tests in `__test__/properties/validation-plan.test.ts` hold the two together.

//!
//! The same plan also answers in Rust (`Node::accepts`, over parsed and bounded argument text):
//! a schema that has one is compiled by the `jsonschema` crate only when a verdict needs its words
//! (`super::Compiled`), so a schema used once with valid arguments, the common cold case, is never
//! compiled at all.

use jsonschema::Draft;
use serde::Serialize;
use serde_json::Value;

use super::limits::Limits;

/// Bits of the `t` field: which JSON types a node admits (0: any type). The JS walk that runs a plan
/// (`lib/validation-plan.js`) reads them from here at load (`jsonSchemaTypeBits()`).
pub const T_NULL: u64 = 1;
pub const T_BOOLEAN: u64 = 2;
pub const T_INTEGER: u64 = 4;
pub const T_NUMBER: u64 = 8;
pub const T_STRING: u64 = 16;
pub const T_ARRAY: u64 = 32;
pub const T_OBJECT: u64 = 64;

/// Keywords that never change a verdict (annotations, and definitions only a `$ref` can reach —
/// a `$ref` makes the schema plan-less).
const ANNOTATIONS: [&str; 12] = [
    "$schema",
    "$id",
    "$comment",
    "$anchor",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
];

/// `additionalProperties`: `true`/`false`, or a node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Additional {
    Allowed(bool),
    Node(Box<Node>),
}

/// One node, as it crosses (`lib/validation-plan.js` reads these names): `t` type bits, `p`
/// [[name, node]…], `r` required names, `a` additionalProperties, `i` items node, `ni`/`xi`
/// min/max items, `nl`/`xl` min/max length, `min`/`max`/`emin`/`emax` numeric bounds, `e` the
/// admitted primitive values (enum/const), `all`/`any`/`one` the branches of `allOf`/`anyOf`/`oneOf`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Node {
    #[serde(rename = "t", skip_serializing_if = "Option::is_none")]
    types: Option<u64>,
    #[serde(rename = "p", skip_serializing_if = "Option::is_none")]
    properties: Option<Vec<(String, Node)>>,
    #[serde(rename = "r", skip_serializing_if = "Option::is_none")]
    required: Option<Vec<String>>,
    #[serde(rename = "a", skip_serializing_if = "Option::is_none")]
    additional: Option<Additional>,
    #[serde(rename = "i", skip_serializing_if = "Option::is_none")]
    items: Option<Box<Node>>,
    #[serde(rename = "ni", skip_serializing_if = "Option::is_none")]
    min_items: Option<u64>,
    #[serde(rename = "xi", skip_serializing_if = "Option::is_none")]
    max_items: Option<u64>,
    #[serde(rename = "nl", skip_serializing_if = "Option::is_none")]
    min_length: Option<u64>,
    #[serde(rename = "xl", skip_serializing_if = "Option::is_none")]
    max_length: Option<u64>,
    #[serde(rename = "min", skip_serializing_if = "Option::is_none")]
    minimum: Option<f64>,
    #[serde(rename = "max", skip_serializing_if = "Option::is_none")]
    maximum: Option<f64>,
    #[serde(rename = "emin", skip_serializing_if = "Option::is_none")]
    exclusive_minimum: Option<f64>,
    #[serde(rename = "emax", skip_serializing_if = "Option::is_none")]
    exclusive_maximum: Option<f64>,
    #[serde(rename = "e", skip_serializing_if = "Option::is_none")]
    values: Option<Vec<Value>>,
    #[serde(rename = "all", skip_serializing_if = "Option::is_none")]
    all_of: Option<Vec<Node>>,
    #[serde(rename = "any", skip_serializing_if = "Option::is_none")]
    any_of: Option<Vec<Node>>,
    #[serde(rename = "one", skip_serializing_if = "Option::is_none")]
    one_of: Option<Vec<Node>>,
}

#[derive(Serialize)]
struct Plan<'a> {
    limits: [usize; 4],
    root: &'a Node,
}

/// The plan of a compiled schema as JSON text: `{"limits":[maxDepth, maxProperties,
/// maxStringLength, maxArrayLength],"root":node}`, or `None` when any part of the schema uses a
/// keyword the plan does not restate.
pub fn acceptance_plan(schema: &Value, draft: Draft, limits: &Limits) -> Option<String> {
    let root = Node::of(schema, draft)?;
    serde_json::to_string(&Plan {
        limits: [
            limits.max_depth,
            limits.max_properties,
            limits.max_string_length,
            limits.max_array_length,
        ],
        root: &root,
    })
    .ok()
}

/// Whether a schema with a plan may wait for its compilation: nothing in it the plan passes over
/// that compiling would still look at (definitions, an `$id`, embedded resources with their own
/// `$schema`), so its meta-schema check says all that compiling it could refuse.
pub fn compiles_as_planned(schema: &Value, root: bool) -> bool {
    let Value::Object(map) = schema else {
        return true;
    };
    map.iter().all(|(key, value)| match key.as_str() {
        // An `$id` is resolved as a URI reference when compiling (and refused if it is none),
        // which no meta-schema checks: a schema with one compiles at once.
        "$defs" | "definitions" | "$id" => false,
        "$schema" => root,
        "properties" => value
            .as_object()
            .is_some_and(|props| props.values().all(|sub| compiles_as_planned(sub, false))),
        "additionalProperties" | "items" => compiles_as_planned(value, false),
        "allOf" | "anyOf" | "oneOf" => value
            .as_array()
            .is_some_and(|branches| branches.iter().all(|sub| compiles_as_planned(sub, false))),
        _ => true,
    })
}

impl Node {
    /// The plan of a schema read in `draft`, `None` when any part of it uses a keyword the plan
    /// does not restate in that draft. Recursion is bounded by the schema depth limit checked
    /// before compiling.
    pub fn of(schema: &Value, draft: Draft) -> Option<Node> {
        let map = match schema {
            Value::Bool(true) => return Some(Node::default()),
            Value::Object(map) => map,
            _ => return None,
        };
        let mut out = Node::default();
        let mut values: Option<Vec<Value>> = None;
        for (key, value) in map {
            match key.as_str() {
                k if ANNOTATIONS.contains(&k) || k == "writeOnly" => {}
                "type" => out.types = Some(type_bits(value)?),
                "properties" => {
                    let props = value.as_object()?;
                    let mut list = Vec::with_capacity(props.len());
                    for (name, sub) in props {
                        list.push((name.clone(), Node::of(sub, draft)?));
                    }
                    out.properties = Some(list);
                }
                "required" => {
                    let names = value.as_array()?;
                    let names: Option<Vec<String>> = names
                        .iter()
                        .map(|n| n.as_str().map(str::to_owned))
                        .collect();
                    out.required = Some(names?);
                }
                "additionalProperties" => {
                    out.additional = Some(match value {
                        Value::Bool(b) => Additional::Allowed(*b),
                        sub => Additional::Node(Box::new(Node::of(sub, draft)?)),
                    });
                }
                // The array form of `items` (draft 6/7 tuples) is not restated.
                "items" if value.is_object() || value == &Value::Bool(true) => {
                    out.items = Some(Box::new(Node::of(value, draft)?));
                }
                "minItems" => out.min_items = Some(count(value)?),
                "maxItems" => out.max_items = Some(count(value)?),
                "minLength" => out.min_length = Some(count(value)?),
                "maxLength" => out.max_length = Some(count(value)?),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    let n = value.as_f64().filter(|n| n.is_finite())?;
                    *match key.as_str() {
                        "minimum" => &mut out.minimum,
                        "maximum" => &mut out.maximum,
                        "exclusiveMinimum" => &mut out.exclusive_minimum,
                        _ => &mut out.exclusive_maximum,
                    } = Some(n);
                }
                "enum" => {
                    let list = value.as_array()?;
                    values = Some(intersect(values, primitives(list)?));
                }
                // Draft-04 has no `const` (an unknown keyword there, ignored): not restated.
                "const" if draft != Draft::Draft4 => {
                    values = Some(intersect(values, primitives(std::slice::from_ref(value))?));
                }
                "uniqueItems" if value == &Value::Bool(false) => {}
                "allOf" => out.all_of = Some(branches(value, draft)?),
                "anyOf" => out.any_of = Some(branches(value, draft)?),
                "oneOf" => out.one_of = Some(branches(value, draft)?),
                _ => return None,
            }
        }
        out.values = values;
        Some(out)
    }

    fn admits(&self, bit: u64) -> bool {
        self.types.is_none_or(|t| t & bit != 0)
    }

    /// Whether the node has an `enum`/`const` and `v` is not among its values.
    fn outside_values(&self, v: &Value) -> bool {
        self.values
            .as_ref()
            .is_some_and(|values| !values.iter().any(|x| same_value(x, v)))
    }

    /// Whether `v` (parsed argument text, already within every argument bound) is certainly valid:
    /// the answer the JS acceptor gives for the same value, and never `true` where the compiled
    /// schema would refuse. Recursion follows the arguments' depth, bounded before parsing.
    pub fn accepts(&self, v: &Value) -> bool {
        if self.outside_values(v) || !self.branches_accept(v) {
            return false;
        }
        match v {
            Value::Null => self.admits(T_NULL),
            Value::Bool(_) => self.admits(T_BOOLEAN),
            Value::Number(n) => {
                let Some(x) = n.as_f64().filter(|x| x.is_finite()) else {
                    return false;
                };
                (self.admits(T_NUMBER) || (self.admits(T_INTEGER) && x.fract() == 0.0))
                    && self.minimum.is_none_or(|m| x >= m)
                    && self.maximum.is_none_or(|m| x <= m)
                    && self.exclusive_minimum.is_none_or(|m| x > m)
                    && self.exclusive_maximum.is_none_or(|m| x < m)
            }
            Value::String(s) => {
                if !self.admits(T_STRING) {
                    return false;
                }
                let n = s.chars().count() as u64;
                self.min_length.is_none_or(|m| n >= m) && self.max_length.is_none_or(|m| n <= m)
            }
            Value::Array(list) => {
                let n = list.len() as u64;
                self.admits(T_ARRAY)
                    && self.min_items.is_none_or(|m| n >= m)
                    && self.max_items.is_none_or(|m| n <= m)
                    && list
                        .iter()
                        .all(|x| self.items.as_deref().is_none_or(|i| i.accepts(x)))
            }
            Value::Object(map) => {
                if !self.admits(T_OBJECT) {
                    return false;
                }
                if let Some(required) = &self.required {
                    if !required.iter().all(|r| map.contains_key(r)) {
                        return false;
                    }
                }
                map.iter().all(|(k, x)| {
                    let declared = self
                        .properties
                        .as_ref()
                        .and_then(|p| p.iter().find(|(name, _)| name == k));
                    match (declared, &self.additional) {
                        (Some((_, node)), _) => node.accepts(x),
                        (None, None | Some(Additional::Allowed(true))) => true,
                        (None, Some(Additional::Allowed(false))) => false,
                        (None, Some(Additional::Node(node))) => node.accepts(x),
                    }
                })
            }
        }
    }
}

impl Node {
    /// `allOf`: every branch accepts. `anyOf`: one does. `oneOf`: exactly one is valid, which
    /// the plan knows only when one branch accepts and every other one certainly refuses
    /// (`refuses`); a value two branches might both take is left to the compiled schema.
    fn branches_accept(&self, v: &Value) -> bool {
        if let Some(all) = &self.all_of {
            if !all.iter().all(|b| b.accepts(v)) {
                return false;
            }
        }
        if let Some(any) = &self.any_of {
            if !any.iter().any(|b| b.accepts(v)) {
                return false;
            }
        }
        if let Some(one) = &self.one_of {
            let mut accepted = 0;
            for b in one {
                if b.accepts(v) {
                    accepted += 1;
                } else if !b.refuses(v) {
                    return false;
                }
            }
            if accepted != 1 {
                return false;
            }
        }
        true
    }

    /// Whether `v` is certainly invalid against this node, by an assertion that holds whatever
    /// else the node says: a type it does not admit, a value outside its `enum`/`const`, or an
    /// object without one of its required keys. `false` means "not known", never "valid".
    pub fn refuses(&self, v: &Value) -> bool {
        if self.outside_values(v) {
            return true;
        }
        let admitted = match v {
            Value::Null => self.admits(T_NULL),
            Value::Bool(_) => self.admits(T_BOOLEAN),
            Value::Number(n) => match n.as_f64().filter(|x| x.is_finite()) {
                Some(x) if x.fract() == 0.0 => self.admits(T_INTEGER),
                Some(_) => self.admits(T_NUMBER),
                None => true, // not a double JS has: no verdict from its type
            },
            Value::String(_) => self.admits(T_STRING),
            Value::Array(_) => self.admits(T_ARRAY),
            Value::Object(_) => self.admits(T_OBJECT),
        };
        if !admitted {
            return true;
        }
        match (v, &self.required) {
            (Value::Object(map), Some(required)) => required.iter().any(|r| !map.contains_key(r)),
            _ => false,
        }
    }
}

/// The branches of `allOf`/`anyOf`/`oneOf`: a non-empty list, each with a plan.
fn branches(value: &Value, draft: Draft) -> Option<Vec<Node>> {
    let list = value.as_array().filter(|l| !l.is_empty())?;
    list.iter().map(|sub| Node::of(sub, draft)).collect()
}

/// `enum`/`const` equality as the validator has it for primitives: numbers by value (`1` is `1.0`).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn type_bits(value: &Value) -> Option<u64> {
    let one = |v: &Value| -> Option<u64> {
        Some(match v.as_str()? {
            "null" => T_NULL,
            "boolean" => T_BOOLEAN,
            "integer" => T_INTEGER,
            "number" => T_NUMBER | T_INTEGER,
            "string" => T_STRING,
            "array" => T_ARRAY,
            "object" => T_OBJECT,
            _ => return None,
        })
    };
    match value {
        Value::Array(list) if !list.is_empty() => {
            list.iter().try_fold(0, |bits, v| Some(bits | one(v)?))
        }
        Value::String(_) => one(value),
        _ => None,
    }
}

/// A non-negative integer count (`5` or `5.0`).
fn count(value: &Value) -> Option<u64> {
    let n = value.as_f64()?;
    (n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_992.0).then_some(n as u64)
}

/// The values of an `enum`/`const` when every one is a primitive JS compares with `===` as the
/// validator compares them (strings, finite numbers, booleans, null).
fn primitives(list: &[Value]) -> Option<Vec<Value>> {
    list.iter()
        .map(|v| match v {
            Value::Null | Value::Bool(_) | Value::String(_) => Some(v.clone()),
            Value::Number(n) => n.as_f64().filter(|f| f.is_finite()).map(Value::from),
            _ => None,
        })
        .collect()
}

/// `enum` and `const` in one node both apply: a value must be in both lists.
fn intersect(seen: Option<Vec<Value>>, next: Vec<Value>) -> Vec<Value> {
    match seen {
        None => next,
        Some(prev) => prev.into_iter().filter(|v| next.contains(v)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plan(schema: Value) -> Option<Value> {
        let text = acceptance_plan(&schema, Draft::Draft202012, &Limits::default())?;
        serde_json::from_str::<Value>(&text)
            .ok()
            .map(|v| v["root"].clone())
    }

    #[test]
    fn restates_the_plain_keywords() {
        let p = plan(json!({
            "type": "object",
            "description": "x",
            "properties": {"n": {"type": "integer", "minimum": 0}, "s": {"type": ["string", "null"], "maxLength": 4}},
            "required": ["n"],
            "additionalProperties": false
        }))
        .unwrap();
        assert_eq!(p["t"], json!(T_OBJECT));
        assert_eq!(p["p"][0], json!(["n", {"t": T_INTEGER, "min": 0.0}]));
        assert_eq!(p["p"][1], json!(["s", {"t": T_STRING | T_NULL, "xl": 4}]));
        assert_eq!(p["r"], json!(["n"]));
        assert_eq!(p["a"], json!(false));
    }

    #[test]
    fn any_other_keyword_anywhere_means_no_plan() {
        for schema in [
            json!({"type": "object", "properties": {"s": {"type": "string", "pattern": "^a"}}}),
            json!({"type": "string", "format": "email"}),
            json!({"$ref": "#/$defs/a", "$defs": {"a": {}}}),
            json!({"anyOf": [{"type": "string", "pattern": "^a"}]}),
            json!({"oneOf": []}),
            json!({"allOf": {"type": "string"}}),
            json!({"type": "array", "items": [{"type": "string"}]}),
            json!({"type": "array", "uniqueItems": true}),
            json!({"type": "number", "multipleOf": 0.1}),
            json!({"enum": [{"a": 1}]}),
            json!({"properties": {"x": false}}),
            json!({"type": "object", "x-vendor": 1}),
            json!({"type": "decimal"}),
            json!({"type": []}),
            json!({"minLength": -1}),
            json!({"maxItems": 1.5}),
            json!(false),
        ] {
            assert_eq!(plan(schema.clone()), None, "{schema}");
        }
    }

    #[test]
    fn enum_and_const_together_admit_their_intersection() {
        let p = plan(json!({"enum": ["a", "b", 1], "const": "b"})).unwrap();
        assert_eq!(p["e"], json!(["b"]));
        assert_eq!(plan(json!(true)).unwrap(), json!({}));
    }
}
