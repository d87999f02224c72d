//! The strict subset of JSON Schema a `strict: true` tool's `parameters` must be written in: the
//! schemas both OpenAI's and Anthropic's strict modes accept (docs/providers.md § Strict tools).
//! The schema is checked, never rewritten: the first thing outside the subset is answered as a
//! [`StrictProblem`] naming the keyword and its JSON pointer, for the registration error.

use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// OpenAI's strict limits: 10 levels of nesting, 5 000 properties in all.
pub const MAX_STRICT_DEPTH: usize = 10;
pub const MAX_STRICT_PROPERTIES: usize = 5000;

/// Keywords both strict modes accept; everything else is refused by name.
const KEYWORDS: [&str; 18] = [
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "minItems",
    "$schema",
    "$comment",
];

/// The `format` values both accept (OpenAI's list; Anthropic's adds `uri`).
pub const FORMATS: [&str; 9] = [
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Why a refused keyword is refused, where a hint helps.
fn hint(keyword: &str) -> &'static str {
    match keyword {
        "oneOf" => "write anyOf",
        "allOf" => "merge the branches into one schema",
        "default" => "strict mode sends every property; describe the default in `description`",
        "minLength" | "maxLength" => "Anthropic refuses string length bounds",
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf" => {
            "Anthropic refuses numeric bounds"
        }
        "maxItems" => "Anthropic takes only minItems 0 or 1",
        _ => "not in the strict subset",
    }
}

/// The first part of a schema outside the strict subset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictProblem {
    /// The keyword refused (`minLength`, `required`, …), or `parameters` / `type` at the root.
    pub keyword: String,
    /// JSON pointer of the schema holding it; empty at the root.
    pub path: String,
    /// Why, in words the registration error carries.
    pub reason: String,
    /// The root is not one object schema (the message says "needs" rather than "cannot take").
    pub root: bool,
}

fn problem(path: &str, keyword: &str, reason: impl Into<String>) -> StrictProblem {
    StrictProblem {
        keyword: keyword.to_owned(),
        path: path.to_owned(),
        reason: reason.into(),
        root: false,
    }
}

/// `None` when `schema` is in the strict subset, else the first problem met.
pub fn strict_schema_problem(schema: &Value) -> Option<StrictProblem> {
    let Some(root) = schema.as_object() else {
        return Some(StrictProblem {
            root: true,
            ..problem(
                "",
                "parameters",
                "strict mode needs `parameters`, an object schema",
            )
        });
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Some(StrictProblem {
            root: true,
            ..problem(
                "",
                "type",
                "strict mode needs `parameters` of `type: \"object\"` at the root",
            )
        });
    }
    let mut walk = Walk {
        root,
        properties: 0,
        refs: Vec::new(),
    };
    walk.node(schema, "", 0)
        .err()
        .or_else(|| walk.check_refs().err())
}

/// [`strict_schema_problem`] of a schema given as JSON text (what crosses from JS); text that is not
/// JSON, or nested past serde's limit, is a problem at the root.
pub fn strict_schema_text_problem(text: &str) -> Option<StrictProblem> {
    match serde_json::from_str::<Value>(text) {
        Ok(schema) => strict_schema_problem(&schema),
        Err(err) => Some(StrictProblem {
            root: true,
            ..problem(
                "",
                "parameters",
                format!("`parameters` is not a JSON schema ({err})"),
            )
        }),
    }
}

struct Walk<'a> {
    root: &'a Map<String, Value>,
    properties: usize,
    /// Every `$ref` met: its target text and the pointer of the schema holding it.
    refs: Vec<(String, String)>,
}

type Checked = Result<(), StrictProblem>;

impl Walk<'_> {
    fn node(&mut self, node: &Value, path: &str, depth: usize) -> Checked {
        let map = match node {
            Value::Object(map) => map,
            Value::Bool(_) => {
                return Err(problem(path, "boolean schema", "write an object schema"))
            }
            _ => return Err(problem(path, "schema", "a schema must be an object")),
        };
        if depth > MAX_STRICT_DEPTH {
            let why = format!("deeper than {MAX_STRICT_DEPTH} levels");
            return Err(problem(path, "nesting", why));
        }
        if let Some(key) = map.keys().find(|k| !KEYWORDS.contains(&k.as_str())) {
            return Err(problem(path, key, hint(key)));
        }
        self.scalars(map, path)?;
        let is_object = match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => false,
        } || map.contains_key("properties");
        if is_object {
            self.object(map, path, depth)?;
        } else if map.contains_key("additionalProperties") || map.contains_key("required") {
            let key = if map.contains_key("additionalProperties") {
                "additionalProperties"
            } else {
                "required"
            };
            return Err(problem(path, key, "only on a schema of `type: \"object\"`"));
        }
        if let Some(items) = map.get("items") {
            if !items.is_object() {
                return Err(problem(
                    path,
                    "items",
                    "one schema for every item (no tuples)",
                ));
            }
            self.node(items, &format!("{path}/items"), depth + 1)?;
        }
        self.any_of(map, path, depth)?;
        self.definitions(map, path)
    }

    /// `format`, `minItems`, `enum` and `$ref`: the keywords checked by their value alone.
    fn scalars(&mut self, map: &Map<String, Value>, path: &str) -> Checked {
        if let Some(format) = map.get("format") {
            if !format.as_str().is_some_and(|f| FORMATS.contains(&f)) {
                let shown = format
                    .as_str()
                    .map_or_else(|| format.to_string(), str::to_owned);
                let why = format!("\"{shown}\" is not one of {}", FORMATS.join(", "));
                return Err(problem(path, "format", why));
            }
        }
        if let Some(min) = map.get("minItems") {
            if min.as_u64().is_none_or(|n| n > 1) {
                return Err(problem(path, "minItems", "Anthropic takes only 0 or 1"));
            }
        }
        if let Some(values) = map.get("enum") {
            let Some(values) = values.as_array().filter(|v| !v.is_empty()) else {
                return Err(problem(path, "enum", "a non-empty array"));
            };
            if values.iter().any(|v| v.is_object() || v.is_array()) {
                return Err(problem(
                    path,
                    "enum",
                    "only strings, numbers, booleans and null",
                ));
            }
        }
        if let Some(reference) = map.get("$ref") {
            let text = reference
                .as_str()
                .map_or_else(|| reference.to_string(), str::to_owned);
            self.refs.push((text, path.to_owned()));
        }
        Ok(())
    }

    fn object(&mut self, map: &Map<String, Value>, path: &str, depth: usize) -> Checked {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            let why = "every object needs `additionalProperties: false`";
            return Err(problem(path, "additionalProperties", why));
        }
        let empty = Map::new();
        let properties = match map.get("properties") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => return Err(problem(path, "properties", "an object of schemas")),
        };
        self.properties += properties.len();
        if self.properties > MAX_STRICT_PROPERTIES {
            let why = format!("more than {MAX_STRICT_PROPERTIES} in all");
            return Err(problem(path, "properties", why));
        }
        let required: BTreeSet<&str> = match map.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => BTreeSet::new(),
        };
        for (key, sub) in properties {
            let at = format!("{path}/properties/{key}");
            if !required.contains(key.as_str()) {
                let why = "every property is required; write an optional one as required with a \"null\" type";
                return Err(problem(&at, "required", why));
            }
            self.node(sub, &at, depth + 1)?;
        }
        Ok(())
    }

    fn any_of(&mut self, map: &Map<String, Value>, path: &str, depth: usize) -> Checked {
        let Some(branches) = map.get("anyOf") else {
            return Ok(());
        };
        let Some(branches) = branches.as_array().filter(|b| !b.is_empty()) else {
            return Err(problem(path, "anyOf", "a non-empty array of schemas"));
        };
        if path.is_empty() {
            return Err(problem(path, "anyOf", "the root must be one object schema"));
        }
        for (i, sub) in branches.iter().enumerate() {
            self.node(sub, &format!("{path}/anyOf/{i}"), depth + 1)?;
        }
        Ok(())
    }

    fn definitions(&mut self, map: &Map<String, Value>, path: &str) -> Checked {
        for defs in ["$defs", "definitions"] {
            let Some(value) = map.get(defs) else { continue };
            if !path.is_empty() {
                return Err(problem(path, defs, "definitions go at the root"));
            }
            let Some(entries) = value.as_object() else {
                return Err(problem(path, defs, "an object of schemas"));
            };
            for (key, sub) in entries {
                self.node(sub, &format!("/{defs}/{key}"), 1)?;
            }
        }
        Ok(())
    }

    /// Every `$ref` points at a definition of the root, and no definition reaches itself (Anthropic
    /// refuses recursive schemas).
    fn check_refs(&self) -> Checked {
        let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (reference, path) in &self.refs {
            let Some(target) = self.target(reference) else {
                let why =
                    format!("\"{reference}\" is not a definition of this schema (#/$defs/<name>)");
                return Err(problem(path, "$ref", why));
            };
            if let Some(from) = definition_of(path) {
                edges.entry(from).or_default().push(target);
            }
        }
        let mut done = BTreeSet::new();
        for from in edges.keys() {
            let mut stack = Vec::new();
            reaches_itself(from, &edges, &mut stack, &mut done)?;
        }
        Ok(())
    }

    /// `#/$defs/<name>` (or `#/definitions/<name>`) naming a definition the root has, as a pointer.
    fn target(&self, reference: &str) -> Option<String> {
        let rest = reference.strip_prefix("#/")?;
        let (defs, name) = rest.split_once('/')?;
        if (defs != "$defs" && defs != "definitions") || name.contains('/') {
            return None;
        }
        let has = self.root.get(defs)?.as_object()?.contains_key(name);
        has.then(|| format!("/{defs}/{name}"))
    }
}

/// The definition (`/$defs/<name>`) a pointer lies in, if any.
fn definition_of(path: &str) -> Option<String> {
    let rest = path.strip_prefix('/')?;
    let mut parts = rest.splitn(3, '/');
    let defs = parts.next()?;
    let name = parts.next()?;
    (defs == "$defs" || defs == "definitions").then(|| format!("/{defs}/{name}"))
}

/// Depth-first over the definition graph; iterative depth is bounded by the number of definitions.
fn reaches_itself(
    node: &str,
    edges: &BTreeMap<String, Vec<String>>,
    stack: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Checked {
    if stack.iter().any(|s| s == node) {
        return Err(problem(
            node,
            "$ref",
            "recursive schemas are refused by Anthropic",
        ));
    }
    if done.contains(node) {
        return Ok(());
    }
    stack.push(node.to_owned());
    for next in edges.get(node).into_iter().flatten() {
        reaches_itself(next, edges, stack, done)?;
    }
    stack.pop();
    done.insert(node.to_owned());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keyword_at(schema: Value) -> Option<(String, String)> {
        strict_schema_problem(&schema).map(|p| (p.keyword, p.path))
    }

    fn closed(properties: Value) -> Value {
        let names: Vec<String> = properties.as_object().unwrap().keys().cloned().collect();
        json!({ "type": "object", "properties": properties, "required": names, "additionalProperties": false })
    }

    #[test]
    fn accepts_the_subset() {
        let schema = closed(json!({
            "city": { "type": "string", "description": "City" },
            "unit": { "type": ["string", "null"], "enum": ["c", "f", null] },
            "when": closed(json!({ "date": { "type": "string", "format": "date" } })),
            "tags": { "type": "array", "items": { "type": "string" }, "minItems": 1 },
            "pick": { "anyOf": [{ "type": "string" }, { "$ref": "#/$defs/n" }] },
        }));
        let mut schema = schema;
        schema["$defs"] = json!({ "n": { "type": "integer" } });
        assert_eq!(strict_schema_problem(&schema), None);
    }

    #[test]
    fn refuses_by_keyword_and_path() {
        let optional = json!({ "type": "object", "properties": { "q": { "type": "string" } }, "required": [], "additionalProperties": false });
        assert_eq!(
            keyword_at(optional),
            Some(("required".into(), "/properties/q".into()))
        );
        let bounded = closed(json!({ "q": { "type": "string", "minLength": 1 } }));
        assert_eq!(
            keyword_at(bounded),
            Some(("minLength".into(), "/properties/q".into()))
        );
        let open = json!({ "type": "object", "properties": {} });
        assert_eq!(
            keyword_at(open),
            Some(("additionalProperties".into(), String::new()))
        );
        let uri = closed(json!({ "u": { "type": "string", "format": "uri" } }));
        assert_eq!(
            keyword_at(uri),
            Some(("format".into(), "/properties/u".into()))
        );
        let many = closed(
            json!({ "a": { "type": "array", "items": { "type": "string" }, "minItems": 2 } }),
        );
        assert_eq!(
            keyword_at(many),
            Some(("minItems".into(), "/properties/a".into()))
        );
        let tuple = closed(json!({ "a": { "type": "array", "items": [{ "type": "string" }] } }));
        assert_eq!(
            keyword_at(tuple),
            Some(("items".into(), "/properties/a".into()))
        );
        let remote = closed(json!({ "x": { "$ref": "https://example.com/s.json" } }));
        assert_eq!(
            keyword_at(remote),
            Some(("$ref".into(), "/properties/x".into()))
        );
    }

    #[test]
    fn refuses_a_root_that_is_not_one_object() {
        for schema in [
            json!({ "anyOf": [{ "type": "object" }] }),
            json!(true),
            json!({ "type": "array" }),
        ] {
            assert!(strict_schema_problem(&schema).is_some_and(|p| p.root));
        }
    }

    #[test]
    fn refuses_recursion_and_depth() {
        let mut recursive = closed(json!({ "tree": { "$ref": "#/$defs/node" } }));
        recursive["$defs"] = json!({ "node": closed(json!({ "kids": { "type": "array", "items": { "$ref": "#/$defs/node" } } })) });
        assert_eq!(
            keyword_at(recursive),
            Some(("$ref".into(), "/$defs/node".into()))
        );
        let mut deep = json!({ "type": "string" });
        for _ in 0..12 {
            deep = closed(json!({ "x": deep }));
        }
        assert_eq!(
            strict_schema_problem(&deep).map(|p| p.keyword),
            Some("nesting".into())
        );
    }
}
