//! Bounded JSON Schema validation of tool arguments (docs/spec.md section 6), in plain Rust.
//!
//! An [`Engine`] holds the limits and an LRU of compiled schemas keyed by schema text. Schemas
//! and arguments both arrive as JSON text (the JS side serializes once, or hands over the
//! provider's own text); each is bounded before anything else looks at it:
//!
//! - schema: bytes, depth (a byte scan before parsing), keywords, declared properties, `$ref`
//!   count, only fragment-local references, no in-place reference cycle, no forbidden keys,
//!   nothing JSON cannot carry, a supported `$schema`, and its meta-schema;
//! - arguments: depth (scan before parsing), total properties, string and array lengths,
//!   forbidden keys, nothing JSON cannot carry.
//!
//! Every violation is an [`Issue`]; nothing here panics on input or fetches anything.

pub mod bounds;
pub mod ecma;
pub mod expansion;
pub mod limits;
pub mod messages;
pub mod meta;
pub mod plan;
pub mod refs;
pub mod tape;

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use jsonschema::json::{Json, Node, SerdeJson};
use jsonschema::paths::Location;
use jsonschema::{Draft, Keyword, ValidationError, Validator};
use lru::LruCache;
use serde_json::Value;

use bounds::{ParseFailure, Subject};
pub use limits::Limits;
use tape::{Tape, TapeJson};

/// One problem: a JSON Pointer into the arguments (absent for problems of the schema itself
/// or of the text as a whole) and a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub path: Option<String>,
    pub message: String,
}

impl Issue {
    pub fn at(path: String, message: String) -> Self {
        Issue {
            path: Some(path),
            message,
        }
    }
    /// An issue of a text as a whole (the schema, or the arguments), at no path.
    pub fn whole(message: String) -> Self {
        Issue {
            path: None,
            message,
        }
    }
}

/// `Ok(())` or at most `maxErrors` issues.
pub type Outcome = Result<(), Vec<Issue>>;

/// A schema or an argument value as it reaches the engine: its JSON text, or the exception the
/// JS side got when serializing it (a cycle, a throwing getter, too deep for the serializer).
#[derive(Clone, Copy, Debug)]
pub enum Input<'a> {
    Text(&'a str),
    Thrown { name: &'a str, message: &'a str },
}

/// The draft a schema asks for through `$schema`; 2020-12 when it names none. Each is validated by
/// its own rules (the `jsonschema` crate's draft): draft-04's boolean `exclusiveMaximum`, `id` and
/// no boolean schemas, draft-06/07's array `items` and `dependencies`, 2019-09's `$recursiveRef`.
pub fn draft_of(schema: &Value) -> Result<Draft, Issue> {
    let Some(uri) = schema.as_object().and_then(|o| o.get("$schema")) else {
        return Ok(Draft::Draft202012);
    };
    let Some(uri) = uri.as_str() else {
        return Err(Issue::whole(format!(
            "schema keyword \"$schema\" must be a string, found {}",
            messages::summary(uri)
        )));
    };
    match uri.trim_end_matches('#') {
        "https://json-schema.org/draft/2020-12/schema" | "http://json-schema.org/draft/2020-12/schema" => Ok(Draft::Draft202012),
        "https://json-schema.org/draft/2019-09/schema" | "http://json-schema.org/draft/2019-09/schema" => Ok(Draft::Draft201909),
        "https://json-schema.org/draft-07/schema" | "http://json-schema.org/draft-07/schema" => Ok(Draft::Draft7),
        "https://json-schema.org/draft-06/schema" | "http://json-schema.org/draft-06/schema" => Ok(Draft::Draft6),
        "https://json-schema.org/draft-04/schema" | "http://json-schema.org/draft-04/schema" => Ok(Draft::Draft4),
        other => Err(Issue::whole(format!(
            "schema keyword \"$schema\" names an unsupported dialect \"{}\": use draft 2020-12 (the default), 2019-09, 07, 06 or 04",
            messages::clip(other, 120)
        ))),
    }
}

/// The most backtracking steps one regular-expression match may take (`pattern`,
/// `patternProperties`, `propertyNames`): past it the string is refused with a message naming
/// the limit, so a catastrophic pattern costs milliseconds, not seconds.
pub const MAX_REGEX_BACKTRACKS: usize = ecma::MAX_REGEX_BACKTRACKS;

/// The `regex` format: a string `new RegExp(value, "u")` accepts and the `pattern` keyword runs
/// (`ecma.rs`), so a value this format admits can never be refused, or hang, when used as a
/// pattern.
pub fn is_valid_regex_format(text: &str) -> bool {
    ecma::compile(text).is_ok()
}

/// `pattern` with its ECMAScript meaning (`ecma.rs`), bounded like every match.
struct PatternKeyword {
    source: String,
    regex: ecma::EcmaRegex,
}

impl PatternKeyword {
    fn verdict(&self, text: &str) -> Result<(), ValidationError<'static>> {
        match self.regex.is_match(text) {
            Ok(true) => Ok(()),
            Ok(false) => Err(ValidationError::custom(format!(
                "expected a string matching the pattern {}",
                messages::clip(&Value::String(self.source.clone()).to_string(), 60)
            ))),
            Err(ecma::LimitExceeded) => Err(ValidationError::custom(format!(
                "the schema's pattern could not be evaluated on this string: it passed the regular-expression backtracking limit of {MAX_REGEX_BACKTRACKS} steps"
            ))),
        }
    }
}

impl<'i, F: Json> Keyword<'i, F> for PatternKeyword {
    fn validate(&self, instance: F::Node<'i>) -> Result<(), ValidationError<'i>> {
        match instance.as_string() {
            Some(text) => self.verdict(&text),
            None => Ok(()),
        }
    }

    fn is_valid(&self, instance: F::Node<'i>) -> bool {
        instance
            .as_string()
            .is_none_or(|text| matches!(self.regex.is_match(&text), Ok(true)))
    }
}

#[allow(clippy::type_complexity)]
fn pattern_keyword<'a, F: Json>(
    _: &'a serde_json::Map<String, Value>,
    value: &'a Value,
    path: Location,
) -> Result<Box<dyn for<'i> Keyword<'i, F>>, ValidationError<'a>> {
    let Value::String(source) = value else {
        return Err(ValidationError::schema(format!(
            "schema keyword \"pattern\" at #{} must be a string, found {}",
            path.as_str(),
            messages::summary(value)
        )));
    };
    match ecma::compile(source) {
        Ok(regex) => Ok(Box::new(PatternKeyword {
            source: source.clone(),
            regex,
        })),
        Err(why) => Err(ValidationError::schema(format!(
            "schema keyword \"pattern\" at #{} has a pattern {} that is refused: {why}",
            path.as_str(),
            messages::clip(&value.to_string(), 80)
        ))),
    }
}

/// Parses `text` (the `subject`) no deeper than `max_depth`; a refusal is an issue of the whole
/// text: `too_deep`, or what the parser found wrong.
fn parse_within(
    text: &str,
    max_depth: usize,
    subject: Subject,
    too_deep: impl FnOnce() -> String,
) -> Result<Value, Issue> {
    bounds::parse_bounded(text, max_depth).map_err(|e| {
        Issue::whole(match e {
            ParseFailure::TooDeep => too_deep(),
            ParseFailure::Syntax(e) => bounds::describe_parse_error(subject, &e),
        })
    })
}

/// Bounds-checks and compiles one schema text (a schema its plan restates whole waits to be
/// compiled until a verdict needs it).
pub fn compile(text: &str, limits: &Limits) -> Result<Compiled, Issue> {
    compile_with(text, limits, true)
}

/// `compile`, with `defer` false compiling every schema at once (what the tests compare against).
fn compile_with(text: &str, limits: &Limits, defer: bool) -> Result<Compiled, Issue> {
    if text.len() > limits.max_schema_bytes {
        return Err(Issue::whole(format!(
            "schema exceeds maximum bytes {} (maxSchemaBytes; found {} bytes)",
            limits.max_schema_bytes,
            text.len()
        )));
    }
    let mut schema = parse_within(text, limits.max_schema_depth, Subject::Schema, || {
        format!(
            "schema exceeds maximum schema depth {} (maxSchemaDepth)",
            limits.max_schema_depth
        )
    })?;
    // The schema came from a JS object, so its numbers are doubles too: `const`/`enum` past 2^53
    // must compare as the same doubles the arguments become.
    bounds::numbers_as_js(&mut schema);
    let facts = bounds::check_schema(&schema, limits)?;
    let draft = draft_of(&schema)?;
    refs::check_refs(&schema, &facts, draft)?;
    if !facts.refs.is_empty() {
        expansion::check_expansions(&schema, expansion::MAX_REF_EXPANSIONS, draft)?;
    }
    if ecma::rewrite_pattern_properties(&mut schema)?
        && facts
            .refs
            .iter()
            .any(|(_, r)| r.contains("patternProperties"))
    {
        return Err(Issue::whole(
            "schema $ref points into \"patternProperties\", whose patterns are rewritten for matching: move the subschema to $defs and reference it there".to_owned(),
        ));
    }
    // A schema its plan restates whole waits to be compiled until a verdict needs the validator's
    // words (`Compiled::validate`): checking it against its meta-schema now refuses exactly what
    // compiling it would (the unit tests compare the two on every fixture and the hostile list).
    if defer && plan::compiles_as_planned(&schema, true) {
        if let Some(plan) = plan::Node::of(&schema, draft) {
            meta::meta_check(draft, &schema)?;
            return Ok(Compiled {
                value: None,
                plan: Some(plan),
                source: Arc::from(text),
                draft,
                tape: None,
                uses: 0,
            });
        }
    }
    Ok(Compiled {
        value: Some(build_value(&schema, draft)?),
        plan: None,
        source: Arc::from(text),
        draft,
        tape: None,
        uses: 0,
    })
}

/// The `Value` validator of a bounds-checked schema, or the issue compiling it raised.
fn build_value(schema: &Value, draft: Draft) -> Result<Validator, Issue> {
    match catch_unwind(AssertUnwindSafe(|| build::<SerdeJson>(schema, draft))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(messages::schema_issue(&e)),
        Err(_) => Err(Issue::whole("schema could not be compiled".to_owned())),
    }
}

/// The validator of a bounds-checked schema, for one instance representation.
fn build<F: Json>(
    schema: &Value,
    draft: Draft,
) -> Result<Validator<F>, jsonschema::ValidationError<'static>> {
    jsonschema::options_for::<F>()
        .with_draft(draft)
        .offline()
        .should_validate_formats(true)
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex().backtrack_limit(MAX_REGEX_BACKTRACKS),
        )
        .with_format("regex", is_valid_regex_format)
        .with_keyword("pattern", pattern_keyword::<F>)
        .build(schema)
}

/// A compiled schema: the validator over `Value`s (every verdict that refuses, every message),
/// and from the second use on, the same schema compiled for the tape (the fast "valid" answer).
/// A schema its acceptance plan restates whole keeps the plan instead, and its `Value` validator
/// is built the first time the plan does not accept. The schema's text is kept, not its parsed
/// tree: the tree is a third of a compiled schema's memory and only the second use (tape,
/// acceptance plan) or a deferred compilation needs it again.
pub struct Compiled {
    value: Option<Validator>,
    plan: Option<plan::Node>,
    source: Arc<str>,
    draft: Draft,
    tape: Option<Validator<TapeJson>>,
    uses: u32,
}

impl Compiled {
    /// The validator over `Value`s, built now if it waited (the fuzz target and the tests compare
    /// the paths).
    #[cfg(any(test, feature = "fuzz"))]
    pub fn value_validator(&mut self, limits: &Limits) -> Result<&Validator, Issue> {
        self.value_built(limits)
    }

    /// The `Value` validator, compiled now when the plan stood in for it until this verdict.
    fn value_built(&mut self, limits: &Limits) -> Result<&Validator, Issue> {
        let validator = match self.value.take() {
            Some(v) => v,
            None => {
                let schema = self
                    .schema(limits)
                    .ok_or_else(|| Issue::whole("schema could not be compiled".to_owned()))?;
                build_value(&schema, self.draft)?
            }
        };
        Ok(self.value.insert(validator))
    }

    /// The schema as compiled: its text parsed again, numbers as JS holds them (it compiled, so
    /// it parses within the same bounds).
    fn schema(&self, limits: &Limits) -> Option<Value> {
        let mut schema = bounds::parse_bounded(&self.source, limits.max_schema_depth).ok()?;
        bounds::numbers_as_js(&mut schema);
        ecma::rewrite_pattern_properties(&mut schema).ok()?;
        Some(schema)
    }

    /// Validates argument text: through the tape when this schema is warm and the text is
    /// unremarkable and valid; through `Value`s otherwise.
    pub fn validate(&mut self, args: Input<'_>, limits: &Limits) -> Outcome {
        if let Input::Text(text) = args {
            if self.uses < 1 {
                self.uses += 1;
            } else if self.tape.is_none() {
                // A schema that compiled for `Value`s compiles for the tape too; if it ever did
                // not, the `Value` path simply stays the only one.
                let draft = self.draft;
                if let Some(schema) = self.schema(limits) {
                    if let Ok(Ok(v)) =
                        catch_unwind(AssertUnwindSafe(|| build::<TapeJson>(&schema, draft)))
                    {
                        self.tape = Some(v);
                    }
                }
            }
            if let Some(validator) = &self.tape {
                if let Some(tape) = Tape::parse(text, limits) {
                    let valid = catch_unwind(AssertUnwindSafe(|| validator.is_valid(tape.root())));
                    if matches!(valid, Ok(true)) {
                        return Ok(());
                    }
                }
            }
        }
        let value = parse_arguments(args, limits).map_err(|i| vec![i])?;
        if self.value.is_none() && self.plan.as_ref().is_some_and(|p| p.accepts(&value)) {
            return Ok(());
        }
        let validator = self.value_built(limits).map_err(|i| vec![i])?;
        run_validator(validator, &value, limits.max_errors)
    }
}

fn thrown_issue(subject: Subject, name: &str, message: &str, limits: &Limits) -> Issue {
    let text = if message.contains("circular") || message.contains("cyclic") {
        format!("{} a cycle, which is not plain JSON", subject.contains())
    } else if name == "RangeError" {
        let (what, limit) = match subject {
            Subject::Arguments => ("maxDepth", limits.max_depth),
            Subject::Schema => ("maxSchemaDepth", limits.max_schema_depth),
        };
        format!(
            "{} nested too deep to serialize ({what} {limit})",
            subject.is()
        )
    } else {
        format!(
            "{} not serializable as JSON: {}",
            subject.is(),
            messages::clip(message, 200)
        )
    };
    Issue::whole(text)
}

/// Parses and bounds argument text.
pub fn parse_arguments(args: Input<'_>, limits: &Limits) -> Result<Value, Issue> {
    let text = match args {
        Input::Text(t) => t,
        Input::Thrown { name, message } => {
            return Err(thrown_issue(Subject::Arguments, name, message, limits))
        }
    };
    let mut value = parse_within(text, limits.max_depth, Subject::Arguments, || {
        format!(
            "arguments exceed maximum depth {} (maxDepth)",
            limits.max_depth
        )
    })?;
    bounds::check_arguments(&value, limits)?;
    bounds::numbers_as_js(&mut value);
    Ok(value)
}

/// Validates a parsed, bounded value; at most `max_errors` issues.
pub fn run_validator(validator: &Validator, value: &Value, max_errors: usize) -> Outcome {
    let result = catch_unwind(AssertUnwindSafe(|| {
        if validator.is_valid(value) {
            return Ok(());
        }
        let mut out = Vec::new();
        for e in validator.iter_errors(value) {
            if out.len() >= max_errors {
                break;
            }
            messages::instance_issues(&e, Some(value), &mut out, max_errors);
        }
        if out.is_empty() {
            out.push(Issue::at(
                String::new(),
                "arguments do not match the schema".to_owned(),
            ));
        }
        Err(out)
    }));
    result.unwrap_or_else(|_| {
        Err(vec![Issue::whole(
            "arguments could not be validated".to_owned(),
        )])
    })
}

struct Entry {
    text: Arc<str>,
    compiled: Result<Compiled, Issue>,
}

/// Limits plus the compiled-schema LRU (failures are cached too, so a bad schema is refused
/// without recompiling).
pub struct Engine {
    limits: Limits,
    cache: LruCache<u64, Entry>,
    by_text: HashMap<Arc<str>, u64>,
    next_id: u64,
}

impl Engine {
    pub fn new(limits: Limits) -> Self {
        let cap = NonZeroUsize::new(limits.max_compiled_schemas).unwrap_or(NonZeroUsize::MIN);
        Engine {
            limits,
            cache: LruCache::new(cap),
            by_text: HashMap::new(),
            next_id: 1,
        }
    }

    /// How many schemas (compiled or refused) the cache holds.
    pub fn cached(&self) -> usize {
        self.cache.len()
    }

    /// The cache id of a schema text, compiling it when it is not cached. Equal texts share one
    /// entry; ids are never reused, so an evicted id stays unknown.
    pub fn schema_id(&mut self, text: &str) -> u64 {
        if let Some(&id) = self.by_text.get(text) {
            if self.cache.get(&id).is_some() {
                return id;
            }
        }
        let compiled = compile(text, &self.limits);
        let id = self.next_id;
        self.next_id += 1;
        // One copy of the text serves the compiled schema and the cache's key.
        let text: Arc<str> = match &compiled {
            Ok(c) => c.source.clone(),
            Err(_) => Arc::from(text),
        };
        self.by_text.insert(text.clone(), id);
        if let Some((_, evicted)) = self.cache.push(id, Entry { text, compiled }) {
            self.by_text.remove(&evicted.text);
        }
        id
    }

    /// The acceptance plan of a cached schema (`plan.rs`): `None` when the id is no longer cached,
    /// `Some(None)` when the schema failed to compile or has no plan.
    pub fn acceptance_plan(&mut self, id: u64) -> Option<Option<String>> {
        let limits = &self.limits;
        match &self.cache.get(&id)?.compiled {
            Ok(compiled) => Some(
                compiled
                    .schema(limits)
                    .and_then(|schema| plan::acceptance_plan(&schema, compiled.draft, limits)),
            ),
            Err(_) => Some(None),
        }
    }

    /// Validates arguments against a cached schema; `None` when the id is no longer cached.
    pub fn validate_id(&mut self, id: u64, args: Input<'_>) -> Option<Outcome> {
        let limits = &self.limits;
        match &mut self.cache.get_mut(&id)?.compiled {
            Ok(compiled) => Some(compiled.validate(args, limits)),
            Err(issue) => Some(Err(vec![issue.clone()])),
        }
    }

    /// Validates arguments against a schema given as text (or as the exception serializing it
    /// raised).
    pub fn validate(&mut self, schema: Input<'_>, args: Input<'_>) -> Outcome {
        let text = match schema {
            Input::Text(t) => t,
            Input::Thrown { name, message } => {
                return Err(vec![thrown_issue(
                    Subject::Schema,
                    name,
                    message,
                    &self.limits,
                )]);
            }
        };
        let id = self.schema_id(text);
        self.validate_id(id, args)
            .unwrap_or_else(|| Err(vec![Issue::whole("schema cache is empty".to_owned())]))
    }
}

/// `path: message; …` (a message alone when it has no path), as a `ToolValidator` returns it.
pub fn join_issues(issues: &[Issue]) -> String {
    let mut out = String::new();
    for (i, issue) in issues.iter().enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        match issue.path.as_deref() {
            Some(p) if !p.is_empty() => {
                out.push_str(p);
                out.push_str(": ");
            }
            _ => {}
        }
        out.push_str(&issue.message);
    }
    out
}

/// The issues as JSON text: `[{"path":…,"message":…}]`, `path` left out when absent.
pub fn issues_json(issues: &[Issue]) -> String {
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
    let mut out = String::from("[");
    for (i, issue) in issues.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        if let Some(p) = &issue.path {
            out.push_str("\"path\":");
            out.push_str(&quote(p));
            out.push(',');
        }
        out.push_str("\"message\":");
        out.push_str(&quote(&issue.message));
        out.push('}');
    }
    out.push(']');
    out
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tape_tests;
