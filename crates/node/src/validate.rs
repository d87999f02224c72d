//! napi exports of the JSON Schema validator. The engine (limits + compiled LRU) lives in an
//! `External` the JS facade keeps per validator; schemas and arguments cross as JSON text.
//! These functions are the private surface `lib/validation.js` calls; users see the factories.

use napi::bindgen_prelude::{Either, External};
use napi::{Env, Error, Result, Status};
use napi_derive::napi;

use prism_tools_core::validate::{issues_json, join_issues, Engine, Input, Limits, Outcome};

/// The exception a value raised while being serialized on the JS side.
#[napi(object)]
pub struct SerializeFailure {
    pub name: String,
    pub message: String,
}

fn input(v: &Either<String, SerializeFailure>) -> Input<'_> {
    match v {
        Either::A(text) => Input::Text(text),
        Either::B(f) => Input::Thrown {
            name: &f.name,
            message: &f.message,
        },
    }
}

fn throw_range(env: &Env, message: &str) -> Error {
    match env.throw_range_error(message, None) {
        Ok(()) => Error::from_status(Status::PendingException),
        Err(e) => e,
    }
}

/// Creates an engine from the options as JSON text (`undefined` → defaults). Throws
/// `RangeError` naming the option and its cap when one is out of range.
#[napi(js_name = "jsonSchemaEngineCreate")]
pub fn json_schema_engine_create(
    env: Env,
    options_json: Option<String>,
) -> Result<External<Engine>> {
    let options = match options_json.as_deref() {
        None => serde_json::Map::new(),
        Some(text) => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(serde_json::Value::Object(m)) => m,
            Ok(serde_json::Value::Null) => serde_json::Map::new(),
            _ => return Err(Error::new(Status::InvalidArg, "options must be an object")),
        },
    };
    let limits = Limits::from_options(&options).map_err(|e| throw_range(&env, &e.to_string()))?;
    Ok(External::new(Engine::new(limits)))
}

fn outcome_to_js(outcome: Outcome, joined: bool) -> Option<String> {
    match outcome {
        Ok(()) => None,
        Err(issues) if joined => Some(join_issues(&issues)),
        Err(issues) => Some(issues_json(&issues)),
    }
}

/// The cache id of a schema text (compiling it when needed). Ids are positive integers.
#[napi(js_name = "jsonSchemaSchemaId")]
pub fn json_schema_schema_id(engine: &mut External<Engine>, schema_text: String) -> f64 {
    engine.schema_id(&schema_text) as f64
}

/// The bits of a plan node's `t` field, one per JSON type (`integer` is an integer-valued number,
/// which `number` admits too).
#[napi(object)]
pub struct JsonTypeBits {
    pub null: u32,
    pub boolean: u32,
    pub integer: u32,
    pub number: u32,
    pub string: u32,
    pub array: u32,
    pub object: u32,
}

/// `jsonSchemaTypeBits()`: the type bits acceptance plans are written with
/// (`crates/core/src/validate/plan.rs`), for the JS walk that runs a plan.
#[napi(js_name = "jsonSchemaTypeBits")]
pub fn json_schema_type_bits() -> JsonTypeBits {
    use prism_tools_core::validate::plan as p;
    // The bits are below 2^7: the narrowing cannot lose one.
    let bit = |b: u64| b as u32;
    JsonTypeBits {
        null: bit(p::T_NULL),
        boolean: bit(p::T_BOOLEAN),
        integer: bit(p::T_INTEGER),
        number: bit(p::T_NUMBER),
        string: bit(p::T_STRING),
        array: bit(p::T_ARRAY),
        object: bit(p::T_OBJECT),
    }
}

/// The acceptance plan of a cached schema as JSON text (`crates/core/src/validate/plan.rs`); `null` when the
/// schema has none, `false` when the id is no longer cached.
#[napi(js_name = "jsonSchemaAcceptancePlan")]
pub fn json_schema_acceptance_plan(
    engine: &mut External<Engine>,
    id: f64,
) -> Either<Option<String>, bool> {
    match engine.acceptance_plan(id as u64) {
        None => Either::B(false),
        Some(plan) => Either::A(plan),
    }
}

/// Validates argument text against a cached schema: `undefined` when valid, the issues (joined
/// `path: message; …` or as JSON text) when not, `false` when the id is no longer cached.
#[napi(js_name = "jsonSchemaValidateId")]
pub fn json_schema_validate_id(
    engine: &mut External<Engine>,
    id: f64,
    args: Either<String, SerializeFailure>,
    joined: bool,
) -> Option<Either<String, bool>> {
    match engine.validate_id(id as u64, input(&args)) {
        None => Some(Either::B(false)),
        Some(outcome) => outcome_to_js(outcome, joined).map(Either::A),
    }
}

/// Validates arguments against a schema, both as text (or the failure serializing them).
#[napi(js_name = "jsonSchemaValidate")]
pub fn json_schema_validate(
    engine: &mut External<Engine>,
    schema: Either<String, SerializeFailure>,
    args: Either<String, SerializeFailure>,
    joined: bool,
) -> Option<String> {
    let outcome = engine.validate(input(&schema), input(&args));
    outcome_to_js(outcome, joined)
}

/// How many schemas the engine's cache holds (compiled or refused).
#[napi(js_name = "jsonSchemaCachedCount")]
pub fn json_schema_cached_count(engine: &External<Engine>) -> u32 {
    engine.cached() as u32
}
