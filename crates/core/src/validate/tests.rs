//! Engine tests over the real fixtures and the hostile-schema list.

use super::*;
use serde_json::json;

fn fixture(name: &str) -> Value {
    let path = format!("{}/../../fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn engine() -> Engine {
    Engine::new(Limits::default())
}

fn check(schema: &Value, args: &Value) -> Outcome {
    engine().validate(
        Input::Text(&schema.to_string()),
        Input::Text(&args.to_string()),
    )
}

fn first_message(o: Outcome) -> String {
    o.unwrap_err().remove(0).message
}

#[test]
fn every_github_mcp_schema_compiles() {
    let tools = fixture("github-mcp-tools.json");
    let mut e = engine();
    for tool in tools.as_array().unwrap() {
        let text = tool["parameters"].to_string();
        let id = e.schema_id(&text);
        assert!(
            e.cache.peek(&id).unwrap().compiled.is_ok(),
            "{}: {:?}",
            tool["name"],
            e.cache.peek(&id).unwrap().compiled.as_ref().err()
        );
    }
    let distinct: std::collections::HashSet<String> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["parameters"].to_string())
        .collect();
    assert_eq!(e.cached(), distinct.len(), "equal schemas share one entry");
}

#[test]
fn every_bfcl_schema_is_refused_with_a_clear_message() {
    let data = fixture("bfcl-tool-retrieval.json");
    let mut e = engine();
    for f in data["catalog"].as_array().unwrap() {
        let out = e.validate(Input::Text(&f["parameters"].to_string()), Input::Text("{}"));
        let issues = out.expect_err(f["name"].as_str().unwrap());
        assert_eq!(issues.len(), 1);
        assert!(
            issues[0].message.starts_with("schema keyword"),
            "{}",
            issues[0].message
        );
    }
}

#[test]
fn equal_schemas_share_one_entry_and_the_lru_evicts() {
    let mut e = Engine::new(Limits {
        max_compiled_schemas: 2,
        ..Limits::default()
    });
    let a = e.schema_id(r#"{"type":"object"}"#);
    assert_eq!(a, e.schema_id(r#"{"type":"object"}"#));
    let b = e.schema_id(r#"{"type":"string"}"#);
    let c = e.schema_id(r#"{"type":"number"}"#);
    assert_eq!(e.cached(), 2);
    assert!(
        e.validate_id(a, Input::Text("{}")).is_none(),
        "a was least recently used"
    );
    assert!(e.validate_id(b, Input::Text("\"x\"")).unwrap().is_ok());
    assert!(e.validate_id(c, Input::Text("1")).unwrap().is_ok());
    assert_ne!(
        a,
        e.schema_id(r#"{"type":"object"}"#),
        "an evicted schema compiles again under a new id"
    );
}

#[test]
fn drafts_are_chosen_by_dollar_schema() {
    // `items` as an array is a tuple in draft 7, an error in 2020-12 (it must be a schema).
    let s7 = json!({"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]});
    assert!(check(&s7, &json!(["a", 1])).is_ok());
    let s2020 = json!({"items": [{"type": "string"}]});
    assert!(first_message(check(&s2020, &json!([]))).contains("\"items\""));
    let s6 = json!({"$schema": "http://json-schema.org/draft-06/schema#", "type": "string"});
    assert!(check(&s6, &json!("x")).is_ok());
    let s2019 =
        json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "type": "string"});
    assert!(check(&s2019, &json!(1)).is_err());
    let s3 = json!({"$schema": "http://json-schema.org/draft-03/schema#"});
    assert_eq!(
        first_message(check(&s3, &json!(1))),
        "schema keyword \"$schema\" names an unsupported dialect \"http://json-schema.org/draft-03/schema\": use draft 2020-12 (the default), 2019-09, 07, 06 or 04"
    );
}

const DRAFT4: &str = "http://json-schema.org/draft-04/schema#";

#[test]
fn draft_04_is_read_by_its_own_rules() {
    // A boolean exclusiveMinimum makes `minimum` exclusive; a number there is refused.
    let s = json!({"$schema": DRAFT4, "minimum": 3, "exclusiveMinimum": true});
    assert!(check(&s, &json!(3)).is_err());
    assert!(check(&s, &json!(4)).is_ok());
    let s = json!({"$schema": DRAFT4, "exclusiveMinimum": 3});
    assert!(first_message(check(&s, &json!(4))).contains("exclusiveMinimum"));
    // No boolean schemas, and `required` must not be empty.
    assert!(check(
        &json!({"$schema": DRAFT4, "properties": {"a": true}}),
        &json!({})
    )
    .is_err());
    assert!(check(&json!({"$schema": DRAFT4, "required": []}), &json!({})).is_err());
    // `const`, `contains` and `propertyNames` are unknown keywords, ignored.
    for s in [
        json!({"$schema": DRAFT4, "const": 1}),
        json!({"$schema": DRAFT4, "contains": {"type": "string"}}),
        json!({"$schema": DRAFT4, "propertyNames": {"maxLength": 1}}),
    ] {
        assert!(check(&s, &json!({"abc": 2})).is_ok(), "{s}");
        assert!(check(&s, &json!([1])).is_ok(), "{s}");
    }
    // `id: "#name"` is a plain-name anchor a `$ref` reaches.
    let s = json!({"$schema": DRAFT4, "definitions": {"a": {"id": "#num", "type": "integer"}}, "properties": {"n": {"$ref": "#num"}}});
    assert!(check(&s, &json!({"n": 1})).is_ok());
    assert!(check(&s, &json!({"n": "x"})).is_err());
}

#[test]
fn defs_and_definitions_resolve_in_every_dialect() {
    for dialect in [
        "https://json-schema.org/draft/2020-12/schema",
        "https://json-schema.org/draft/2019-09/schema",
        "http://json-schema.org/draft-07/schema#",
        "http://json-schema.org/draft-06/schema#",
        DRAFT4,
    ] {
        for defs in ["$defs", "definitions"] {
            let s = json!({"$schema": dialect, defs: {"n": {"type": "integer"}}, "properties": {"n": {"$ref": format!("#/{defs}/n")}}});
            assert!(check(&s, &json!({"n": 1})).is_ok(), "{s}");
            assert_eq!(
                check(&s, &json!({"n": "x"})).unwrap_err()[0]
                    .path
                    .as_deref(),
                Some("/n"),
                "{s}"
            );
            let missing = json!({"$schema": dialect, defs: {}, "$ref": format!("#/{defs}/gone")});
            assert!(first_message(check(&missing, &json!(1))).contains("points to nothing"));
        }
    }
}

#[test]
fn remote_and_relative_refs_are_refused_before_compiling() {
    for r in [
        "http://example.com/s.json",
        "https://example.com/s.json#/a",
        "file:///etc/passwd",
        "other.json#",
        "other.json",
    ] {
        let m = first_message(check(&json!({"$ref": r}), &json!({})));
        assert!(m.contains("not a local reference"), "{r}: {m}");
    }
}

#[test]
fn hostile_schemas() {
    let big = json!({"description": "x".repeat(1_100_000)});
    assert!(first_message(check(&big, &json!({}))).contains("maximum bytes 262144 (maxSchemaBytes"));
    let mut deep = json!({"type": "string"});
    for _ in 0..200 {
        deep = json!({"properties": {"a": deep}});
    }
    assert!(first_message(check(&deep, &json!({})))
        .contains("maximum schema depth 64 (maxSchemaDepth)"));
    let mut props = serde_json::Map::new();
    for i in 0..20_000 {
        props.insert(format!("p{i}"), json!({}));
    }
    assert!(
        first_message(check(&json!({"properties": props}), &json!({})))
            .contains("maximum properties 10000 (maxSchemaProperties")
    );
    let mut kws = serde_json::Map::new();
    for i in 0..20_000 {
        kws.insert(format!("x-{i}"), json!(1));
    }
    // Both bounds count every key of the schema's objects, so the properties bound (checked
    // first, with the same default) is the one that speaks.
    assert!(first_message(check(&Value::Object(kws), &json!({})))
        .contains("maximum properties 10000 (maxSchemaProperties"));
    let refs: Vec<Value> = (0..2_000).map(|_| json!({"$ref": "#/$defs/a"})).collect();
    let many = json!({"$defs": {"a": {"type": "string"}}, "anyOf": refs});
    assert!(first_message(check(&many, &json!({}))).contains("maximum refs 128 (maxSchemaRefs)"));
    for bad in [
        json!("string"),
        json!(42),
        json!(null),
        json!([{"type": "string"}]),
    ] {
        assert!(
            first_message(check(&bad, &json!({}))).contains("must be a JSON object or a boolean")
        );
    }
    let m = first_message(check(
        &json!({"$defs": {"a": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}),
        &json!({}),
    ));
    assert!(m.contains("cycle"), "{m}");
    let thrown = engine().validate(
        Input::Thrown {
            name: "TypeError",
            message: "Converting circular structure to JSON",
        },
        Input::Text("{}"),
    );
    assert_eq!(
        first_message(thrown),
        "schema contains a cycle, which is not plain JSON"
    );
}

#[test]
fn hostile_arguments() {
    let s = json!({"type": "object"});
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    let m = engine()
        .validate(Input::Text(&s.to_string()), Input::Text(&deep))
        .unwrap_err();
    assert_eq!(m[0].message, "arguments exceed maximum depth 64 (maxDepth)");
    let long = json!({"s": "x".repeat(10_000_000)});
    assert_eq!(
        check(&s, &long).unwrap_err()[0],
        Issue::at(
            "/s".into(),
            "string exceeds maximum length 1000000 (maxStringLength; found 10000000 characters)"
                .into()
        )
    );
    let arr = json!({"a": vec![0; 200_000]});
    assert!(first_message(check(&s, &arr)).contains("maximum length 10000 (maxArrayLength"));
    let m = engine()
        .validate(
            Input::Text(&s.to_string()),
            Input::Text(r#"{"a":"\udc00"}"#),
        )
        .unwrap_err();
    assert!(
        m[0].message.contains("lone UTF-16 surrogate"),
        "{}",
        m[0].message
    );
}

#[test]
fn max_errors_bounds_the_list() {
    let s = json!({"type": "object", "additionalProperties": false});
    let mut args = serde_json::Map::new();
    for i in 0..100 {
        args.insert(format!("k{i}"), json!(1));
    }
    let issues = check(&s, &Value::Object(args)).unwrap_err();
    assert_eq!(issues.len(), 8, "{issues:?}");
}

#[test]
fn joined_and_json_forms() {
    let issues = vec![
        Issue::at("/a".into(), "x".into()),
        Issue::whole("y".into()),
        Issue::at(String::new(), "z".into()),
    ];
    assert_eq!(join_issues(&issues), "/a: x; y; z");
    assert_eq!(
        issues_json(&issues[..2]),
        r#"[{"path":"/a","message":"x"},{"message":"y"}]"#
    );
}

#[test]
fn schema_numbers_past_2_53_compare_as_the_doubles_js_holds() {
    // A JS schema `{ const: 576500000003000000 }` holds the nearest double; the same literal in
    // the arguments must match it, written as an integer or with an exponent.
    let schema = r#"{"properties":{"n":{"const":576500000003000000}}}"#;
    for args in [r#"{"n":5765000.00003e11}"#, r#"{"n":576500000003000000}"#] {
        assert!(
            engine()
                .validate(Input::Text(schema), Input::Text(args))
                .is_ok(),
            "{args}"
        );
    }
    let e = r#"{"properties":{"n":{"enum":[-576500000003000001]}}}"#;
    assert!(engine()
        .validate(Input::Text(e), Input::Text(r#"{"n":-5.76500000003e17}"#))
        .is_ok());
}

#[test]
fn pattern_follows_ecmascript_with_the_u_flag() {
    let s =
        |p: &str| json!({"type": "object", "properties": {"s": {"type": "string", "pattern": p}}});
    // Rust syntax is not ECMAScript: refused at compile, naming the keyword and where it sits.
    let m = first_message(check(&s("(?i)abc"), &json!({"s": "ABC"})));
    assert!(
        m.starts_with("schema keyword \"pattern\" at #/properties/s/pattern has a pattern \"(?i)abc\" that is refused: it is not a valid ECMAScript regular expression with the u flag"),
        "{m}"
    );
    // `\b` is ASCII: no boundary before a lone "é".
    assert_eq!(
        first_message(check(&s("\\bé"), &json!({"s": "é"}))),
        "expected a string matching the pattern \"\\\\bé\", found string \"é\""
    );
    assert!(check(&s("^[^]$"), &json!({"s": "\n"})).is_ok());
    assert!(check(&s("^(?<n>a)\\k<n>$"), &json!({"s": "aa"})).is_ok());
    assert!(check(&s("^(?<n>a)\\k<n>$"), &json!({"s": "ab"})).is_err());
    // propertyNames runs the same keyword.
    let names = json!({"propertyNames": {"pattern": "^\\w+$"}});
    assert!(check(&names, &json!({"é": 1})).is_err());
    assert!(check(&names, &json!({"a_1": 1})).is_ok());
    // The regex format accepts what `new RegExp(v, "u")` accepts and the keyword runs.
    let f = json!({"properties": {"r": {"type": "string", "format": "regex"}}});
    assert!(check(&f, &json!({"r": "[^]"})).is_ok());
    assert!(check(&f, &json!({"r": "(?i)abc"})).is_err());
}

#[test]
fn a_catastrophic_pattern_is_refused_at_the_step_limit_on_both_paths() {
    let schema =
        json!({"properties": {"s": {"type": "string", "pattern": "^(?:(?=a)a+)+$"}}}).to_string();
    let args = json!({"s": format!("{}!", "a".repeat(5000))}).to_string();
    let mut e = engine();
    for _ in 0..3 {
        let m = first_message(e.validate(Input::Text(&schema), Input::Text(&args)));
        assert!(m.contains("backtracking limit of 100000 steps"), "{m}");
    }
}

#[test]
fn pattern_properties_match_with_the_ecmascript_meaning() {
    let schema = json!({
        "patternProperties": {"^\\d+$": {"type": "integer"}, "^x-": true},
        "additionalProperties": false
    });
    assert!(check(&schema, &json!({"12": 1, "x-a": "s"})).is_ok());
    // `\d` is ASCII: an Arabic-Indic digit is no digit, so the name is additional.
    assert!(check(&schema, &json!({"٣": 1})).is_err());
    let m = first_message(check(&schema, &json!({"12": "a"})));
    assert!(m.contains("expected integer"), "{m}");
    let eval =
        json!({"allOf": [{"patternProperties": {"^\\w$": true}}], "unevaluatedProperties": false});
    assert!(check(&eval, &json!({"a": 1})).is_ok());
    assert!(check(&eval, &json!({"é": 1})).is_err());
    let m = first_message(check(
        &json!({"patternProperties": {"(a)\\1": true}}),
        &json!({}),
    ));
    assert!(
        m.starts_with("schema keyword \"patternProperties\" at #/patternProperties has a pattern"),
        "{m}"
    );
    let m = first_message(check(
        &json!({"patternProperties": {"(?i)a": true}}),
        &json!({}),
    ));
    assert!(
        m.contains("not a valid ECMAScript regular expression"),
        "{m}"
    );
}

#[test]
fn idn_formats_are_asserted() {
    let s = json!({"properties": {"h": {"format": "idn-hostname"}, "e": {"format": "idn-email"}}});
    assert!(check(&s, &json!({"h": "münchen.de", "e": "jörg@münchen.de"})).is_ok());
    for bad in [
        json!({"h": ""}),
        json!({"h": "-> $1.00 <--"}),
        json!({"e": "nope"}),
    ] {
        let m = first_message(check(&s, &bad));
        assert!(
            m.contains("expected a string in format \"idn-"),
            "{bad}: {m}"
        );
    }
}

/// Schemas a plan restates whole, meta-valid or not: a deferred compilation must refuse exactly what
/// compiling at once refuses, with the same words, and build later without a new refusal.
fn planned_schemas() -> Vec<Value> {
    let mut out: Vec<Value> = fixture("github-mcp-tools.json")
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["parameters"].clone())
        .collect();
    out.extend([
        json!({"type": "object", "required": ["a", "a"]}),
        json!({"minimum": "1"}),
        json!({"enum": []}),
        json!({"const": null, "type": "null"}),
        json!({"properties": {"a": {"type": "strin"}}}),
        json!({"required": "a"}),
        json!({"additionalProperties": {"type": "integr"}}),
        json!({"items": {"minItems": 2, "maxItems": 1}}),
        json!({"type": ["string", "string"]}),
        json!({"minLength": 3, "maxLength": 2}),
        json!({"exclusiveMinimum": 5, "exclusiveMaximum": 5}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "exclusiveMinimum": true}),
        json!({"$schema": "http://json-schema.org/draft-06/schema#", "type": "object", "properties": {"n": {"type": "integer"}}}),
        json!({"$schema": "https://json-schema.org/draft/2019-09/schema", "required": []}),
        json!({"$schema": DRAFT4, "type": "object", "required": []}),
        json!({"$schema": DRAFT4, "type": "object", "properties": {"a": true}}),
        json!({"$schema": DRAFT4, "type": "number", "exclusiveMinimum": 1}),
        json!({"$schema": DRAFT4, "type": "number", "minimum": 1, "exclusiveMinimum": true}),
        json!({"$schema": DRAFT4, "type": "object", "properties": {"a": {"const": 1}, "b": {"type": "integer", "maximum": 2}}, "required": ["b"]}),
        json!({"$defs": {"x": {"pattern": "("}}, "type": "object"}),
        json!({"properties": {"a": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}}}),
        json!({"properties": {"a": {"$id": "https://example.com/a", "type": "string"}}}),
        json!({"title": 5}),
        json!({"description": ["x"], "type": "object"}),
        json!({"deprecated": "yes"}),
        json!(true),
        json!({}),
        // Combinators the plan restates, and ones it must not defer or must refuse as compiling does.
        json!({"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}),
        json!({"oneOf": [{"type": "string"}, {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}]}),
        json!({"oneOf": [
            {"type": "object", "required": ["a"], "additionalProperties": false, "properties": {"a": {}}},
            {"type": "object", "required": ["x"], "additionalProperties": false, "properties": {"x": {"type": "integer"}}}
        ]}),
        json!({"oneOf": [{"type": "number"}, {"type": "integer"}]}),
        json!({"oneOf": [{"enum": ["x", 1]}, {"const": 1}]}),
        json!({"allOf": [{"type": "object", "required": ["a"]}, {"properties": {"a": {"type": "string"}}}]}),
        json!({"type": "object", "properties": {"a": {"type": "array", "items": {"anyOf": [{"type": "integer"}, {"type": "string", "maxLength": 1}]}}}}),
        json!({"anyOf": [{"$id": "https://example.com/a", "type": "string"}]}),
        json!({"oneOf": [{"type": "strin"}]}),
        json!({"anyOf": []}),
        json!({"allOf": [{"minLength": -1}]}),
    ]);
    out
}

#[test]
fn a_planned_schema_waits_to_compile_and_refuses_what_compiling_refuses() {
    let limits = Limits::default();
    let mut deferred_count = 0;
    for schema in planned_schemas().into_iter().chain(keyword_mutations()) {
        let text = schema.to_string();
        let eager = compile_with(&text, &limits, false);
        let deferred = compile_with(&text, &limits, true);
        match (eager, deferred) {
            (Ok(_), Ok(mut d)) => {
                deferred_count += usize::from(d.value.is_none());
                assert!(
                    d.value_validator(&limits).is_ok(),
                    "{text}: a deferred compilation failed later"
                );
            }
            (Err(a), Err(b)) => assert_eq!(a, b, "{text}"),
            (a, b) => panic!("{text}: at once {:?}, deferred {:?}", a.err(), b.err()),
        }
    }
    assert!(
        deferred_count >= 110,
        "only {deferred_count} schemas waited"
    );
}

#[test]
fn a_plan_accepts_only_what_the_compiled_schema_accepts() {
    let limits = Limits::default();
    let palette = [
        json!(""),
        json!("x"),
        json!("é".repeat(40)),
        json!(0),
        json!(1),
        json!(-1),
        json!(1.5),
        json!(1e10),
        json!(true),
        json!(false),
        json!(null),
        json!([]),
        json!(["x"]),
        json!([1, 2]),
        json!({}),
        json!({"a": 1}),
    ];
    let (mut accepted, mut valid) = (0, 0);
    for schema in planned_schemas().into_iter().chain(keyword_mutations()) {
        let text = schema.to_string();
        let Ok(mut compiled) = compile_with(&text, &limits, true) else {
            continue;
        };
        let Some(plan) = compiled.plan.clone() else {
            continue;
        };
        let validator = compiled.value_validator(&limits).unwrap();
        let props: Vec<(String, Value)> = schema["properties"]
            .as_object()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        let required: Vec<String> = schema["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let mut base = serde_json::Map::new();
        for name in &required {
            let sample = props
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, s)| s["enum"].get(0).cloned())
                .unwrap_or(json!("x"));
            base.insert(name.clone(), sample);
        }
        let mut instances = vec![json!({}), Value::Object(base.clone())];
        instances.extend(palette.iter().cloned());
        for (name, sub) in &props {
            let mut values: Vec<Value> = palette.to_vec();
            if let Some(list) = sub["enum"].as_array() {
                values.extend(list.iter().cloned());
            }
            for v in values {
                let mut o = base.clone();
                o.insert(name.clone(), v);
                instances.push(Value::Object(o));
            }
        }
        let mut extra = base.clone();
        extra.insert("not_declared".into(), json!(1));
        instances.push(Value::Object(extra));
        for v in instances {
            let is_valid = validator.is_valid(&v);
            valid += usize::from(is_valid);
            if plan.accepts(&v) {
                accepted += 1;
                assert!(
                    is_valid,
                    "{text}: the plan accepted {v}, the schema refuses it"
                );
            } else {
                assert!(!is_valid, "{text}: the plan refused {v}, which the schema accepts (a compile it need not wait for)");
            }
        }
    }
    // Not vacuous: plenty of the instances are valid, and each was accepted without compiling.
    assert!(
        accepted > 1000 && accepted == valid,
        "accepted {accepted}, valid {valid}"
    );
}

#[test]
fn a_one_of_whose_branches_may_overlap_is_accepted_only_when_the_others_certainly_refuse() {
    // Two string branches: a string one refuses by length is not a certain refusal, so the plan
    // leaves it to the compiled schema (a needless refusal, never a wrong accept).
    let limits = Limits::default();
    let schema = json!({"oneOf": [{"type": "string", "minLength": 2}, {"type": "string", "maxLength": 1}, {"type": "object", "required": ["k"]}]});
    let mut compiled = compile_with(&schema.to_string(), &limits, true).unwrap();
    let plan = compiled.plan.clone().expect("a plan");
    let validator = compiled.value_validator(&limits).unwrap();
    for (v, accepted) in [
        (json!("x"), false),
        (json!("xy"), false),
        (json!({"k": 1}), true),
        (json!({}), false),
        (json!(1), false),
    ] {
        assert_eq!(plan.accepts(&v), accepted, "{v}");
        if accepted {
            assert!(validator.is_valid(&v), "{v}");
        }
    }
    assert!(validator.is_valid(&json!("x")) && validator.is_valid(&json!("xy")));
    // A branch that is valid without its plan accepting it: the outer oneOf must not count it out.
    let nested = json!({"oneOf": [{"type": "string", "maxLength": 3}, {"oneOf": [{"type": "string", "minLength": 2}, {"type": "string", "maxLength": 1}]}]});
    let mut compiled = compile_with(&nested.to_string(), &limits, true).unwrap();
    let plan = compiled.plan.clone().expect("a plan");
    let validator = compiled.value_validator(&limits).unwrap();
    assert!(!validator.is_valid(&json!("xy")) && !plan.accepts(&json!("xy")));
    // Valid (only the second branch), but the first refuses by length only: left to the validator.
    assert!(validator.is_valid(&json!("xyzw")) && !plan.accepts(&json!("xyzw")));
}

/// Every schema of the JSON-Schema-Test-Suite's files (all five drafts), and every value below
/// them (most are no schema at all: the property below must hold for any value).
fn test_suite_values() -> Vec<Value> {
    let mut out = Vec::new();
    for draft in ["draft4", "draft6", "draft7", "draft2019-09", "draft2020-12"] {
        let dir = format!(
            "{}/../../fixtures/json-schema-test-suite/tests/{draft}",
            env!("CARGO_MANIFEST_DIR")
        );
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let cases: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for case in cases.as_array().unwrap() {
                let mut stack = vec![case["schema"].clone()];
                while let Some(v) = stack.pop() {
                    match &v {
                        Value::Object(m) => stack.extend(m.values().cloned()),
                        Value::Array(a) => stack.extend(a.iter().cloned()),
                        _ => {}
                    }
                    out.push(v);
                }
            }
        }
    }
    out
}

/// Each keyword the subset meta-schema allows, with values right and wrong for it, at the root and
/// below `properties`, `items`, `additionalProperties` and each combinator.
fn keyword_mutations() -> Vec<Value> {
    let keywords = [
        "type",
        "properties",
        "additionalProperties",
        "items",
        "required",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "enum",
        "const",
        "uniqueItems",
        "allOf",
        "anyOf",
        "oneOf",
        "title",
        "description",
        "default",
        "examples",
        "$schema",
        "$id",
        "$comment",
        "readOnly",
        "writeOnly",
        "deprecated",
    ];
    let values = [
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-1),
        json!(1.5),
        json!(1.0),
        json!(-0.0),
        json!(1e300),
        json!(""),
        json!("string"),
        json!("integer"),
        json!("strin"),
        json!("#"),
        json!("not a uri"),
        json!("http://json-schema.org/draft-07/schema#"),
        json!([]),
        json!([1]),
        json!([1, 1]),
        json!([1, 1.0]),
        json!(["a"]),
        json!(["a", "a"]),
        json!(["string", "null"]),
        json!(["string", "string"]),
        json!(["strin"]),
        json!([{}]),
        json!([true]),
        json!([{"type": "strin"}]),
        json!([{"minLength": -1}]),
        json!({}),
        json!({"type": "string"}),
        json!({"a": {}}),
        json!({"a": 5}),
        json!({"a": {"type": "strin"}}),
        json!({"a": {"enum": []}}),
        json!({"$ref": "#"}),
    ];
    let mut out = Vec::new();
    for k in keywords {
        for v in &values {
            let node = json!({ k: v });
            out.push(node.clone());
            out.push(json!({"type": "object", "properties": {"a": node.clone()}}));
            out.push(json!({"items": node.clone()}));
            out.push(json!({"additionalProperties": node.clone()}));
            for c in ["allOf", "anyOf", "oneOf"] {
                out.push(json!({ c: [node.clone()] }));
            }
        }
    }
    out
}

#[test]
fn the_subset_meta_schema_accepts_only_what_every_draft_accepts() {
    let mut corpus = planned_schemas();
    corpus.extend(test_suite_values());
    corpus.extend(keyword_mutations());
    let drafts = [
        Draft::Draft6,
        Draft::Draft7,
        Draft::Draft201909,
        Draft::Draft202012,
    ];
    let mut accepted = 0;
    let mut refused_by_a_draft = 0;
    for schema in &corpus {
        let by_drafts: Vec<bool> = drafts
            .iter()
            .map(|&d| meta::draft_meta_check(d, schema).is_ok())
            .collect();
        if meta::subset_accepts(schema) {
            accepted += 1;
            assert!(
                by_drafts.iter().all(|ok| *ok),
                "{schema}: the subset accepts, the drafts say {by_drafts:?}"
            );
        } else if by_drafts.contains(&false) {
            refused_by_a_draft += 1;
        }
    }
    // The property is not vacuous: both verdicts occur often in the corpus.
    assert!(
        accepted > 1_000 && refused_by_a_draft > 1_000,
        "accepted {accepted}, refused {refused_by_a_draft}"
    );
}

#[test]
fn every_github_mcp_schema_takes_the_subset_meta_schema() {
    for tool in fixture("github-mcp-tools.json").as_array().unwrap() {
        assert!(
            meta::subset_accepts(&tool["parameters"]),
            "{}",
            tool["name"]
        );
    }
    // And a schema outside it still gets its draft's words.
    let refused = meta::meta_check(Draft::Draft202012, &json!({"deprecated": "yes"})).unwrap_err();
    assert!(
        refused.message.contains("deprecated") || refused.message.contains("boolean"),
        "{}",
        refused.message
    );
    assert!(meta::meta_check(Draft::Draft7, &json!({"deprecated": "yes"})).is_ok());
}
