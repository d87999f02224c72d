//! napi export of the strict-subset check of a `strict: true` tool's `parameters`
//! (`prism_tools_core::tool_contract`), called once per tool at registration by lib/tool-contract.js.
//! The schema crosses as JSON text (docs/boundary.md, family 4); the answer is a typed object.

use napi_derive::napi;
use prism_tools_core::tool_contract::strict_schema_text_problem;

/// The first part of a schema outside the strict subset.
#[napi(object)]
pub struct StrictSchemaProblem {
    /// The keyword refused, or `parameters` / `type` when the root is not one object schema.
    pub keyword: String,
    /// JSON pointer of the schema holding it; empty at the root.
    pub path: String,
    pub reason: String,
    /// The root is not one object schema.
    pub root: bool,
}

/// `toolStrictSchemaProblem(schemaText)`: `null` when the schema is in the strict subset both
/// OpenAI's and Anthropic's strict modes accept, else the first problem met.
#[napi(js_name = "toolStrictSchemaProblem")]
pub fn tool_strict_schema_problem(schema_text: String) -> Option<StrictSchemaProblem> {
    strict_schema_text_problem(&schema_text).map(|p| StrictSchemaProblem {
        keyword: p.keyword,
        path: p.path,
        reason: p.reason,
        root: p.root,
    })
}

/// `toolSchemaDialectProblem(valueText)`: `null` when the JSON value of a tool's `parameters.$schema`
/// names a dialect the validator reads, else the validator's own message. Called at registration,
/// so an unknown dialect is an error that names the tool instead of a refusal at every call.
#[napi(js_name = "toolSchemaDialectProblem")]
pub fn tool_schema_dialect_problem(value_text: String) -> Option<String> {
    let value: serde_json::Value =
        serde_json::from_str(&value_text).unwrap_or(serde_json::Value::Null);
    let mut schema = serde_json::Map::new();
    schema.insert("$schema".to_string(), value);
    prism_tools_core::validate::draft_of(&serde_json::Value::Object(schema))
        .err()
        .map(|issue| issue.message)
}
