//! The meta-schema check of a schema whose compilation waits (see `compile_with`), and its fast
//! path.
//!
//! The drafts' own meta-schemas (2019-09 and 2020-12 are an `allOf` of seven vocabularies, each
//! reached through a dynamic reference at every subschema) were a fifth of a cold compile. Most tool
//! schemas use a dozen keywords, so a schema is first checked against [`SUBSET`]: a meta-schema of
//! those keywords alone, at least as strict as each supported draft's on every one of them, and
//! refusing every other keyword. A schema it accepts is valid against its draft's meta-schema; any
//! other schema (a keyword outside the subset, or a value the subset refuses) is checked against
//! the draft's own meta-schema as before, which decides and words the refusal. The unit tests
//! compare the two on the fixtures, the JSON-Schema-Test-Suite's schemas and a list of mutations.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;

use jsonschema::{Draft, Validator};
use serde_json::Value;

use super::{messages, Issue};

/// The subset meta-schema. For each keyword it allows, why it is at least as strict as drafts 6,
/// 7, 2019-09 and 2020-12 (draft-04 schemas skip it, see [`meta_check`]):
///
/// - `type`, `properties`, `additionalProperties`, `items` (a schema, not the array form),
///   `required`, the four numeric bounds, the four counts, `const`, `uniqueItems`, `allOf`,
///   `anyOf`, `oneOf`, `title`, `description`, `default`, `examples`: the same constraint in every
///   one of those drafts;
/// - `enum`: an array with at least one item and no repeats, stricter than the drafts (an empty or
///   repeating `enum` takes its draft's check).
///
/// Every other keyword (`$schema`, `$id`, `$comment`, `readOnly`, `deprecated`, `pattern`, …) is
/// refused here, and the draft's own meta-schema decides.
const SUBSET: &str = r##"{
  "$defs": {
    "node": {
      "type": ["object", "boolean"],
      "properties": {
        "type": {
          "anyOf": [
            { "$ref": "#/$defs/simpleType" },
            { "type": "array", "items": { "$ref": "#/$defs/simpleType" }, "minItems": 1, "uniqueItems": true }
          ]
        },
        "properties": { "type": "object", "additionalProperties": { "$ref": "#/$defs/node" } },
        "additionalProperties": { "$ref": "#/$defs/node" },
        "items": { "$ref": "#/$defs/node" },
        "required": { "type": "array", "items": { "type": "string" }, "uniqueItems": true },
        "minimum": { "type": "number" },
        "maximum": { "type": "number" },
        "exclusiveMinimum": { "type": "number" },
        "exclusiveMaximum": { "type": "number" },
        "minLength": { "$ref": "#/$defs/count" },
        "maxLength": { "$ref": "#/$defs/count" },
        "minItems": { "$ref": "#/$defs/count" },
        "maxItems": { "$ref": "#/$defs/count" },
        "enum": { "type": "array", "minItems": 1, "uniqueItems": true },
        "const": true,
        "uniqueItems": { "type": "boolean" },
        "allOf": { "$ref": "#/$defs/nodes" },
        "anyOf": { "$ref": "#/$defs/nodes" },
        "oneOf": { "$ref": "#/$defs/nodes" },
        "title": { "type": "string" },
        "description": { "type": "string" },
        "default": true,
        "examples": { "type": "array" }
      },
      "additionalProperties": false
    },
    "nodes": { "type": "array", "minItems": 1, "items": { "$ref": "#/$defs/node" } },
    "count": { "type": "integer", "minimum": 0 },
    "simpleType": { "enum": ["array", "boolean", "integer", "null", "number", "object", "string"] }
  },
  "$ref": "#/$defs/node"
}"##;

/// The subset meta-schema compiled once; `None` if it could not be (then every schema takes its
/// draft's meta-schema).
fn subset() -> Option<&'static Validator> {
    static SUBSET_VALIDATOR: OnceLock<Option<Validator>> = OnceLock::new();
    SUBSET_VALIDATOR
        .get_or_init(|| {
            let schema: Value = serde_json::from_str(SUBSET).ok()?;
            jsonschema::options()
                .with_draft(Draft::Draft202012)
                .offline()
                .build(&schema)
                .ok()
        })
        .as_ref()
}

/// Whether the subset meta-schema accepts `schema` (and so its draft's meta-schema does too).
pub fn subset_accepts(schema: &Value) -> bool {
    subset().is_some_and(|v| v.is_valid(schema))
}

/// The schema against its draft's meta-schema, with the subset first (not for draft-04, whose
/// meta-schema is stricter than the subset: no boolean schemas, boolean `exclusiveMaximum`, a
/// non-empty `required`; it is small, so its own check costs little).
pub fn meta_check(draft: Draft, schema: &Value) -> Result<(), Issue> {
    // A panic in the subset's check is no verdict: the draft's meta-schema decides.
    if draft != Draft::Draft4
        && catch_unwind(AssertUnwindSafe(|| subset_accepts(schema))).unwrap_or(false)
    {
        return Ok(());
    }
    draft_meta_check(draft, schema)
}

/// The schema against its draft's own meta-schema: what the subset defers to, and what the tests
/// hold it to.
pub fn draft_meta_check(draft: Draft, schema: &Value) -> Result<(), Issue> {
    let meta = match draft {
        Draft::Draft4 => jsonschema::draft4::meta::validator(),
        Draft::Draft6 => jsonschema::draft6::meta::validator(),
        Draft::Draft7 => jsonschema::draft7::meta::validator(),
        Draft::Draft201909 => jsonschema::draft201909::meta::validator(),
        _ => jsonschema::draft202012::meta::validator(),
    };
    // `is_valid` first: it tracks no error locations, and almost every schema passes.
    match catch_unwind(AssertUnwindSafe(|| {
        if meta.is_valid(schema) {
            return Ok(());
        }
        meta.validate(schema)
            .map_err(|e| messages::schema_issue(&e))
    })) {
        Ok(outcome) => outcome,
        Err(_) => Err(Issue::whole("schema could not be compiled".to_owned())),
    }
}
