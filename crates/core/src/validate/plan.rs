//! The acceptance plan: a compiled schema restated, when it only uses keywords whose meaning is
//! plain comparisons, as a small JSON document the JS side turns into closures that answer
//! "certainly valid" for a live argument object without serializing it (lib/validation-plan.js).
//!
//! Serializing ~100 KB of arguments to JSON text costs more than validating them, so for warm
//! schemas the JS side first asks the plan. The plan only ever accepts: anything it is unsure of
//! (a keyword outside the list below, a value JSON.stringify would change, a bound near its limit)
//! sends the call down the text path, which decides and words every refusal. Which keywords are
//! safe to restate is decided here, once, next to the validator whose verdicts it must never
//! contradict; the differential tests in `__test__/validation-plan.test.ts` hold the two together.

use serde_json::{json, Map, Value};

use super::limits::Limits;

/// Bits of the `t` field: which JSON types a node admits (0: any type).
const T_NULL: u64 = 1;
const T_BOOLEAN: u64 = 2;
const T_INTEGER: u64 = 4;
const T_NUMBER: u64 = 8;
const T_STRING: u64 = 16;
const T_ARRAY: u64 = 32;
const T_OBJECT: u64 = 64;

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

/// The plan of a compiled schema as JSON text: `{"limits":[maxDepth, maxProperties,
/// maxStringLength, maxArrayLength],"root":node}`, or `None` when any part of the schema uses a
/// keyword the plan does not restate.
pub fn acceptance_plan(schema: &Value, limits: &Limits) -> Option<String> {
    let root = node(schema)?;
    let plan = json!({
        "limits": [limits.max_depth, limits.max_properties, limits.max_string_length, limits.max_array_length],
        "root": root,
    });
    serde_json::to_string(&plan).ok()
}

/// One node: `t` type bits, `p` [[name, node]…], `r` required names, `a` additionalProperties
/// (true, false or a node), `i` items node, `ni`/`xi` min/max items, `nl`/`xl` min/max length,
/// `min`/`max`/`emin`/`emax` numeric bounds, `e` the admitted primitive values (enum/const).
/// Recursion is bounded by the schema depth limit checked before compiling.
fn node(schema: &Value) -> Option<Value> {
    let map = match schema {
        Value::Bool(true) => return Some(Value::Object(Map::new())),
        Value::Object(map) => map,
        _ => return None,
    };
    let mut out = Map::new();
    let mut values: Option<Vec<Value>> = None;
    for (key, value) in map {
        match key.as_str() {
            k if ANNOTATIONS.contains(&k) || k == "writeOnly" => {}
            "type" => {
                out.insert("t".into(), Value::from(type_bits(value)?));
            }
            "properties" => {
                let props = value.as_object()?;
                let mut list = Vec::with_capacity(props.len());
                for (name, sub) in props {
                    list.push(json!([name, node(sub)?]));
                }
                out.insert("p".into(), Value::Array(list));
            }
            "required" => {
                let names = value.as_array()?;
                if !names.iter().all(Value::is_string) {
                    return None;
                }
                out.insert("r".into(), value.clone());
            }
            "additionalProperties" => {
                let add = match value {
                    Value::Bool(b) => Value::Bool(*b),
                    sub => node(sub)?,
                };
                out.insert("a".into(), add);
            }
            // The array form of `items` (draft 6/7 tuples) is not restated.
            "items" if value.is_object() || value == &Value::Bool(true) => {
                out.insert("i".into(), node(value)?);
            }
            "minItems" => {
                out.insert("ni".into(), count(value)?);
            }
            "maxItems" => {
                out.insert("xi".into(), count(value)?);
            }
            "minLength" => {
                out.insert("nl".into(), count(value)?);
            }
            "maxLength" => {
                out.insert("xl".into(), count(value)?);
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                let n = value.as_f64().filter(|n| n.is_finite())?;
                let name = match key.as_str() {
                    "minimum" => "min",
                    "maximum" => "max",
                    "exclusiveMinimum" => "emin",
                    _ => "emax",
                };
                out.insert(name.into(), Value::from(n));
            }
            "enum" => {
                let list = value.as_array()?;
                values = Some(intersect(values, primitives(list)?));
            }
            "const" => {
                values = Some(intersect(values, primitives(std::slice::from_ref(value))?));
            }
            "uniqueItems" if value == &Value::Bool(false) => {}
            _ => return None,
        }
    }
    if let Some(values) = values {
        out.insert("e".into(), Value::Array(values));
    }
    Some(Value::Object(out))
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
fn count(value: &Value) -> Option<Value> {
    let n = value.as_f64()?;
    (n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_992.0).then(|| Value::from(n as u64))
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

    fn plan(schema: Value) -> Option<Value> {
        let text = acceptance_plan(&schema, &Limits::default())?;
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
            json!({"anyOf": [{"type": "string"}]}),
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
