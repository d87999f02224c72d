//! Messages a model can act on: what the schema expected and what the arguments held, with a
//! JSON Pointer into the arguments. Values are summarised and clipped, never echoed whole.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::ValidationError;
use serde_json::Value;

use super::Issue;

/// The JSON type of a value, as JSON Schema names it.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                "integer"
            } else {
                "number"
            }
        }
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// At most `max` characters of `s`, with `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_owned(),
    }
}

/// A short rendering of a value found in the arguments.
pub fn summary(v: &Value) -> String {
    match v {
        Value::String(s) => format!("string {}", Value::String(clip(s, 40))),
        Value::Array(a) => format!(
            "an array of {} item{}",
            a.len(),
            if a.len() == 1 { "" } else { "s" }
        ),
        Value::Object(o) => format!(
            "an object with {} propert{}",
            o.len(),
            if o.len() == 1 { "y" } else { "ies" }
        ),
        Value::Number(_) => format!("{} {v}", type_name(v)),
        other => other.to_string(),
    }
}

/// A short JSON rendering of a value the schema holds (an enum member, a const, a limit).
fn literal(v: &Value) -> String {
    clip(&v.to_string(), 60)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The issue of one property `keyword` (`additionalProperties`, `unevaluatedProperties`) refuses,
/// whichever error reports it.
fn not_allowed(keyword: &str) -> String {
    format!("property is not allowed by the schema ({keyword})")
}

fn join_pointer(base: &str, key: &str) -> String {
    format!("{base}/{}", key.replace('~', "~0").replace('/', "~1"))
}

/// The issues one validation error stands for (one per unexpected property), appended to `out`
/// until it holds `max`.
pub fn instance_issues(
    err: &ValidationError<'_>,
    root: Option<&Value>,
    out: &mut Vec<Issue>,
    max: usize,
) {
    let path = err.instance_path().as_str().to_owned();
    let found = || summary(err.instance());
    let mut push = |path: String, message: String| {
        if out.len() < max {
            out.push(Issue {
                path: Some(path),
                message,
            });
        }
    };
    let message = match err.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| property.to_string());
            push(
                join_pointer(&path, &name),
                "required property is missing".to_owned(),
            );
            return;
        }
        // Both keywords refuse each unexpected property alike; the message names the keyword.
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let keyword = err.kind().keyword();
            for name in unexpected {
                push(join_pointer(&path, name), not_allowed(keyword));
            }
            return;
        }
        ValidationErrorKind::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("expected {expected}, found {}", found())
        }
        ValidationErrorKind::Enum { options } => {
            let list = match options.as_ref() {
                Value::Array(items) => {
                    let mut shown: Vec<String> = items.iter().take(12).map(literal).collect();
                    if items.len() > 12 {
                        shown.push(format!("… ({} in all)", items.len()));
                    }
                    shown.join(", ")
                }
                other => literal(other),
            };
            format!("expected one of {list}, found {}", found())
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("expected {}, found {}", literal(expected_value), found())
        }
        ValidationErrorKind::Minimum { limit } => {
            format!("expected a number >= {limit}, found {}", found())
        }
        ValidationErrorKind::Maximum { limit } => {
            format!("expected a number <= {limit}, found {}", found())
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("expected a number > {limit}, found {}", found())
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("expected a number < {limit}, found {}", found())
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("expected a multiple of {multiple_of}, found {}", found())
        }
        ValidationErrorKind::MinLength { limit } => {
            let n = err.instance().as_str().map_or(0, |s| s.chars().count());
            format!(
                "expected at least {}, found {n}",
                plural(*limit, "character", "characters")
            )
        }
        ValidationErrorKind::MaxLength { limit } => {
            let n = err.instance().as_str().map_or(0, |s| s.chars().count());
            format!(
                "expected at most {}, found {n}",
                plural(*limit, "character", "characters")
            )
        }
        ValidationErrorKind::MinItems { limit } => {
            format!(
                "expected at least {}, found {}",
                plural(*limit, "item", "items"),
                err.instance().as_array().map_or(0, Vec::len)
            )
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!(
                "expected at most {}, found {}",
                plural(*limit, "item", "items"),
                err.instance().as_array().map_or(0, Vec::len)
            )
        }
        ValidationErrorKind::MinProperties { limit } => format!(
            "expected at least {}, found {}",
            plural(*limit, "property", "properties"),
            err.instance().as_object().map_or(0, |o| o.len())
        ),
        ValidationErrorKind::MaxProperties { limit } => format!(
            "expected at most {}, found {}",
            plural(*limit, "property", "properties"),
            err.instance().as_object().map_or(0, |o| o.len())
        ),
        ValidationErrorKind::Pattern { pattern } => {
            format!(
                "expected a string matching the pattern {}, found {}",
                literal(&Value::String(pattern.clone())),
                found()
            )
        }
        ValidationErrorKind::BacktrackLimitExceeded { .. } => format!(
            "the schema's pattern could not be evaluated on this string: it passed the regular-expression backtracking limit of {} steps",
            super::MAX_REGEX_BACKTRACKS
        ),
        ValidationErrorKind::RegexEngineFailure { .. } => {
            "the schema's pattern could not be evaluated on this string (regex engine failure)"
                .to_owned()
        }
        ValidationErrorKind::Format { format } => format!(
            "expected a string in format \"{format}\", found {}",
            found()
        ),
        // Each branch's own failure is named, so `.nullable()`'s `anyOf: [{..bound..}, {null}]`
        // says which bound the value broke, not only that no branch matched.
        ValidationErrorKind::AnyOf { context } => format!(
            "expected a value matching at least one of the anyOf schemas, found {}{}",
            found(),
            branch_failures(context, &path, root)
        ),
        ValidationErrorKind::OneOfNotValid { .. } => {
            format!("expected a value matching exactly one of the oneOf schemas, found {} matching none", found())
        }
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            format!("expected a value matching exactly one of the oneOf schemas, found {} matching several", found())
        }
        ValidationErrorKind::Not { .. } => format!(
            "expected a value the \"not\" schema rejects, found {}",
            found()
        ),
        ValidationErrorKind::FalseSchema => {
            // `additionalProperties: false` with no `properties` reports the object's path and
            // its first member; every member is unexpected, so name each.
            if err
                .schema_path()
                .as_str()
                .ends_with("/additionalProperties")
            {
                if let Some(Value::Object(object)) = root.and_then(|r| r.pointer(&path)) {
                    for name in object.keys() {
                        push(join_pointer(&path, name), not_allowed("additionalProperties"));
                    }
                    return;
                }
            }
            format!("no value is allowed here, found {}", found())
        }
        ValidationErrorKind::UniqueItems => "expected unique items, found duplicates".to_owned(),
        ValidationErrorKind::Contains => {
            "expected at least one item matching the \"contains\" schema, found none".to_owned()
        }
        ValidationErrorKind::AdditionalItems { limit } => {
            format!(
                "expected at most {}, found {}",
                plural(*limit as u64, "item", "items"),
                err.instance().as_array().map_or(0, Vec::len)
            )
        }
        ValidationErrorKind::UnevaluatedItems { unexpected } => {
            format!(
                "unexpected items (unevaluatedItems): {}",
                clip(&unexpected.join(", "), 80)
            )
        }
        ValidationErrorKind::PropertyNames { error } => {
            let mut inner = Vec::new();
            instance_issues(error, None, &mut inner, 1);
            let why = inner.pop().map(|i| i.message).unwrap_or_default();
            format!(
                "property name {} is not allowed: {why}",
                literal(err.instance())
            )
        }
        // The `pattern` keyword (mod.rs) words its own messages.
        ValidationErrorKind::Custom { message, .. } if message.starts_with("expected ") => {
            format!("{message}, found {}", found())
        }
        ValidationErrorKind::Custom { message, .. } => message.clone(),
        other => clip(&format!("{} (keyword \"{}\")", err, other.keyword()), 300),
    };
    push(path, message);
}

/// Branches of an `anyOf` described, and the issues described per branch.
const MAX_BRANCHES: usize = 4;
const MAX_BRANCH_ISSUES: usize = 2;

/// ` (branch 1: …; branch 2: …)`: what each `anyOf` branch refused, each issue's path relative to the
/// value's own when it lies deeper. Nesting is bounded by the schema (a branch's errors are the
/// validator's, already depth-bounded), and each level keeps at most a few branches and issues.
fn branch_failures(
    context: &[Vec<ValidationError<'static>>],
    path: &str,
    root: Option<&Value>,
) -> String {
    let mut parts = Vec::new();
    for (i, errors) in context.iter().take(MAX_BRANCHES).enumerate() {
        let mut issues = Vec::new();
        for e in errors {
            instance_issues(e, root, &mut issues, MAX_BRANCH_ISSUES);
        }
        let text: Vec<String> = issues
            .iter()
            .map(|issue| {
                let at = issue.path.as_deref().unwrap_or(path);
                // Drop the stated "found …" when it repeats the value already named.
                let message = issue
                    .message
                    .split(", found ")
                    .next()
                    .unwrap_or(&issue.message);
                match at.strip_prefix(path) {
                    Some("") | None => message.to_owned(),
                    Some(rest) => format!("{rest}: {message}"),
                }
            })
            .collect();
        if !text.is_empty() {
            parts.push(format!("branch {}: {}", i + 1, text.join(", ")));
        }
    }
    if context.len() > MAX_BRANCHES {
        parts.push(format!("{} more", context.len() - MAX_BRANCHES));
    }
    if parts.is_empty() {
        String::new()
    } else {
        clip(&format!(" ({})", parts.join("; ")), 400)
    }
}

/// The issue for a schema its meta-schema refuses, naming the keyword and where it sits.
pub fn schema_issue(err: &ValidationError<'_>) -> Issue {
    if let ValidationErrorKind::Referencing(e) = err.kind() {
        return Issue::whole(clip(
            &format!("schema reference cannot be resolved: {e}"),
            300,
        ));
    }
    if let ValidationErrorKind::Custom { message, .. } = err.kind() {
        if message.starts_with("schema keyword ") {
            return Issue::whole(message.clone());
        }
    }
    let location = err.instance_path().as_str();
    let mut segments: Vec<&str> = location.split('/').skip(1).collect();
    // The keyword is the last segment that is not an index into an array.
    while segments.last().is_some_and(|s| s.parse::<usize>().is_ok()) {
        segments.pop();
    }
    let keyword = segments.last().copied().unwrap_or(err.kind().keyword());
    let value = err.instance();
    let mut detail = Vec::new();
    instance_issues(err, None, &mut detail, 1);
    let detail = detail.pop().map(|i| i.message).unwrap_or_default();
    let message = if keyword == "type" && matches!(value.as_ref(), Value::String(_)) {
        format!(
            "schema keyword \"type\" at #{location} has the unknown type {}: expected one of \"array\", \"boolean\", \"integer\", \"null\", \"number\", \"object\", \"string\"",
            literal(value)
        )
    } else {
        format!("schema keyword \"{keyword}\" at #{location} is invalid: {detail}")
    };
    Issue::whole(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn issues(schema: Value, value: Value) -> Vec<Issue> {
        let v = jsonschema::validator_for(&schema).unwrap();
        let mut out = Vec::new();
        for e in v.iter_errors(&value) {
            instance_issues(&e, Some(&value), &mut out, 8);
        }
        out
    }

    #[test]
    fn messages_say_what_was_expected_and_found() {
        let s = json!({"type": "object", "required": ["owner"], "additionalProperties": false,
            "properties": {"n": {"type": "integer", "minimum": 1}, "s": {"enum": ["a", "b"]}, "t": {"type": "string"}}});
        let got = issues(s, json!({"n": 0, "s": "c", "t": 5, "x": 1}));
        let text: Vec<String> = got
            .iter()
            .map(|i| format!("{}: {}", i.path.as_deref().unwrap(), i.message))
            .collect();
        assert!(
            text.contains(&"/owner: required property is missing".to_owned()),
            "{text:?}"
        );
        assert!(
            text.contains(
                &"/x: property is not allowed by the schema (additionalProperties)".to_owned()
            ),
            "{text:?}"
        );
        assert!(
            text.contains(&"/n: expected a number >= 1, found integer 0".to_owned()),
            "{text:?}"
        );
        assert!(
            text.contains(&"/s: expected one of \"a\", \"b\", found string \"c\"".to_owned()),
            "{text:?}"
        );
        assert!(
            text.contains(&"/t: expected string, found integer 5".to_owned()),
            "{text:?}"
        );
    }

    #[test]
    fn any_of_names_the_bound_each_branch_broke() {
        // zod's `.nullable()`: `anyOf: [{ number, maximum }, { null }]`.
        let s = json!({"type": "object", "properties": {
            "n": {"anyOf": [{"type": "number", "maximum": 5}, {"type": "null"}]},
            "o": {"anyOf": [{"type": "object", "properties": {"k": {"type": "string", "minLength": 3}}}, {"type": "null"}]}}});
        let got = issues(s, json!({"n": 9, "o": {"k": "ab"}}));
        let text: Vec<String> = got
            .iter()
            .map(|i| format!("{}: {}", i.path.as_deref().unwrap(), i.message))
            .collect();
        assert!(
            text.contains(&"/n: expected a value matching at least one of the anyOf schemas, found integer 9 (branch 1: expected a number <= 5; branch 2: expected null)".to_owned()),
            "{text:?}"
        );
        assert!(
            text.contains(&"/o: expected a value matching at least one of the anyOf schemas, found an object with 1 property (branch 1: /k: expected at least 3 characters; branch 2: expected null)".to_owned()),
            "{text:?}"
        );
    }

    #[test]
    fn refused_properties_name_their_keyword() {
        let text = |schema: Value, value: Value| -> Vec<String> {
            issues(schema, value)
                .iter()
                .map(|i| format!("{}: {}", i.path.as_deref().unwrap(), i.message))
                .collect()
        };
        assert_eq!(
            text(
                json!({"properties": {"a": {}}, "unevaluatedProperties": false}),
                json!({"a": 1, "b": 2})
            ),
            ["/b: property is not allowed by the schema (unevaluatedProperties)"]
        );
        // `additionalProperties: false` with no `properties` names every member.
        let mut bare = text(
            json!({"additionalProperties": false}),
            json!({"x": 1, "y": 2}),
        );
        bare.sort();
        assert_eq!(
            bare,
            [
                "/x: property is not allowed by the schema (additionalProperties)",
                "/y: property is not allowed by the schema (additionalProperties)"
            ]
        );
    }

    #[test]
    fn clip_cuts_on_characters() {
        assert_eq!(clip("ééé", 2), "éé…");
        assert_eq!(clip("ab", 2), "ab");
    }
}
