//! The tape path must never call valid what the `Value` path refuses, nor lose a message: each
//! case is validated cold (the `Value` path alone) and then warm (through the tape), and the two
//! outcomes must be equal.

use super::*;
use serde_json::json;

/// The outcome of `args` cold, and warm on its third use (the second builds the tape validator).
fn both(schema: &Value, args: &str) -> (Outcome, Outcome) {
    let limits = Limits::default();
    let mut compiled = compile(&schema.to_string(), &limits)
        .unwrap_or_else(|e| panic!("{schema} does not compile: {e:?}"));
    let cold = compiled.validate(Input::Text(args), &limits);
    let _ = compiled.validate(Input::Text(args), &limits);
    assert!(
        compiled.tape.is_some(),
        "the second use builds the tape validator"
    );
    let warm = compiled.validate(Input::Text(args), &limits);
    (cold, warm)
}

fn agree(schema: Value, cases: &[(&str, bool)]) {
    for (args, valid) in cases {
        let (cold, warm) = both(&schema, args);
        assert_eq!(
            cold.is_ok(),
            *valid,
            "cold verdict on {args} against {schema}: {cold:?}"
        );
        assert_eq!(
            warm, cold,
            "warm and cold differ on {args} against {schema}"
        );
    }
}

#[test]
fn objects_arrays_and_scalars() {
    let schema = json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 0},
            "name": {"type": "string", "maxLength": 4},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": true},
            "score": {"type": "number", "exclusiveMaximum": 10},
            "kind": {"enum": ["a", 1, null, [1, 2], {"x": 1}]},
            "done": {"const": true}
        },
        "required": ["id"],
        "additionalProperties": false
    });
    agree(
        schema,
        &[
            (r#"{"id":1}"#, true),
            (r#"{"id":1.0}"#, true),
            (r#"{"id":1.5}"#, false),
            (r#"{"id":-1}"#, false),
            (r#"{"id":"1"}"#, false),
            (r#"{}"#, false),
            (r#"{"id":1,"extra":2}"#, false),
            (r#"{"id":1,"name":"abcd"}"#, true),
            (r#"{"id":1,"name":"abcde"}"#, false),
            // Four code points, eight UTF-16 units: maxLength counts code points.
            (r#"{"id":1,"name":"😀😀😀😀"}"#, true),
            (
                r#"{"id":1,"name":"\ud83d\ude00\ud83d\ude00\ud83d\ude00\ud83d\ude00x"}"#,
                false,
            ),
            (r#"{"id":1,"name":"a\"b"}"#, true),
            (r#"{"id":1,"tags":["x","y"]}"#, true),
            (r#"{"id":1,"tags":["x","x"]}"#, false),
            (r#"{"id":1,"tags":["x","y","z"]}"#, false),
            (r#"{"id":1,"score":9.99}"#, true),
            (r#"{"id":1,"score":10}"#, false),
            (r#"{"id":1,"kind":"a"}"#, true),
            (r#"{"id":1,"kind":1.0}"#, true),
            (r#"{"id":1,"kind":null}"#, true),
            (r#"{"id":1,"kind":[1,2]}"#, true),
            (r#"{"id":1,"kind":[2,1]}"#, false),
            (r#"{"id":1,"kind":{"x":1}}"#, true),
            (r#"{"id":1,"kind":{"x":2}}"#, false),
            (r#"{"id":1,"kind":"b"}"#, false),
            (r#"{"id":1,"done":true}"#, true),
            (r#"{"id":1,"done":false}"#, false),
        ],
    );
}

#[test]
fn what_the_tape_leaves_to_the_value_path() {
    let schema = json!({"type": "object"});
    agree(
        schema,
        &[
            // A repeated key: JSON.parse keeps the last.
            (r#"{"a":1,"a":2}"#, true),
            (r#"{"__proto__":{"x":1}}"#, false),
            (r#"{"constructor":1}"#, false),
            (r#"{"a":{"\u0000prism:nonjson":"a Map"}}"#, false),
            (r#"{"a":1"#, false),
            (r#"{"a":1} x"#, false),
            (r#"[1,2]"#, false),
        ],
    );
    // Limits: a long string, a long array, a deep value, many properties.
    let long = format!(r#"{{"s":"{}"}}"#, "x".repeat(1_000_001));
    let many: String = format!("[{}]", vec!["0"; 10_001].join(","));
    let deep = format!("{}{}", "[".repeat(70), "]".repeat(70));
    let wide = format!(
        "{{{}}}",
        (0..1001)
            .map(|i| format!(r#""k{i}":{i}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    for args in [long, many, deep, wide] {
        let (cold, warm) = both(&json!({}), &args);
        assert!(cold.is_err());
        assert_eq!(warm, cold);
    }
}

#[test]
fn large_objects_and_numbers_past_two_to_the_53() {
    // More members than the tape holds: still validated, by the Value path.
    let props: serde_json::Map<String, Value> = (0..100)
        .map(|i| (format!("k{i}"), json!({"type": "integer"})))
        .collect();
    let schema = json!({"type": "object", "properties": props, "additionalProperties": false});
    let good = format!(
        "{{{}}}",
        (0..100)
            .map(|i| format!(r#""k{i}":{i}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    let bad = good.replace(r#""k99":99"#, r#""k99":"x""#);
    agree(schema, &[(&good, true), (&bad, false)]);
    // 2^53 + 1 is the double 2^53 in JS: const 9007199254740992 matches it.
    agree(
        json!({"const": 9007199254740992u64}),
        &[
            ("9007199254740993", true),
            ("9007199254740992", true),
            ("9007199254740994", false),
        ],
    );
    agree(
        json!({"type": "array", "uniqueItems": true}),
        &[
            ("[9007199254740993, 9007199254740992]", false),
            ("[1, 1.0]", false),
            ("[1, 2]", true),
        ],
    );
}

#[test]
fn keywords_over_names_refs_and_formats() {
    agree(
        json!({
            "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "v": {"type": "integer"}}}},
            "type": "object",
            "properties": {"list": {"$ref": "#/$defs/node"}, "when": {"type": "string", "format": "date"}},
            "propertyNames": {"pattern": "^[a-z]+$"},
            "patternProperties": {"^x": {"type": "boolean"}},
            "dependentRequired": {"list": ["when"]}
        }),
        &[
            (
                r#"{"list":{"v":1,"next":{"v":2}},"when":"2026-12-03"}"#,
                true,
            ),
            (
                r#"{"list":{"v":1,"next":{"v":"2"}},"when":"2026-12-03"}"#,
                false,
            ),
            (r#"{"list":{"v":1},"when":"2026-13-03"}"#, false),
            (r#"{"list":{"v":1}}"#, false),
            (r#"{"xa":true}"#, true),
            (r#"{"xa":1}"#, false),
            (r#"{"Bad":1}"#, false),
        ],
    );
    // Draft 7: an integer is a number without a fraction, however it is written.
    agree(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer", "multipleOf": 2}),
        &[
            ("2", true),
            ("2.0", true),
            ("1e2", true),
            ("1.5", false),
            ("3", false),
        ],
    );
}

#[test]
fn the_tape_accepts_what_the_github_fixture_args_are() {
    // Every fixture schema against an empty object: the same verdict cold and warm.
    let path = format!(
        "{}/../../fixtures/github-mcp-tools.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let tools: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for tool in tools.as_array().unwrap() {
        let schema = &tool["parameters"];
        let (cold, warm) = both(schema, "{}");
        assert_eq!(warm, cold, "{}", tool["name"]);
    }
}
