//! Entry points for the coverage-guided fuzz targets in `fuzz/` (feature `fuzz`, never in the
//! published binary). Each takes raw bytes and asserts the invariants its module promises; a
//! broken invariant panics, which the fuzzer reports as a crash.

use serde_json::Value;

use crate::validate::{self, bounds, Input, Limits};

fn text(data: &[u8]) -> &str {
    match std::str::from_utf8(data) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&data[..e.valid_up_to()]).unwrap_or(""),
    }
}

/// No number left that JS could not hold exactly as an integer.
fn assert_js_numbers(v: &Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    assert!(u <= 1 << 53, "integer {u} left past 2^53");
                }
                if let Some(i) = n.as_i64() {
                    assert!(i.unsigned_abs() <= 1 << 53, "integer {i} left past -2^53");
                }
            }
            Value::Array(a) => stack.extend(a.iter()),
            Value::Object(m) => stack.extend(m.values()),
            _ => {}
        }
    }
}

/// Provider argument text: the refusal message and the validator's parse agree, the depth scan
/// bounds the parser, and parsed numbers are the ones JS holds.
pub fn arguments_text(data: &[u8]) {
    let t = text(data);
    let problem = crate::arguments::arguments_text_problem("t", t, 1 << 20);
    if let Some(p) = &problem {
        assert!(p.starts_with("Tool t arguments"), "{p}");
    }
    let limits = Limits::default();
    match validate::parse_arguments(Input::Text(t), &limits) {
        Ok(v) => {
            assert_js_numbers(&v);
            // Accepted arguments are an object exactly when the text check accepts them.
            if v.is_object() && !t.trim().is_empty() {
                assert!(
                    problem.is_none(),
                    "validator parsed an object the text check refused: {problem:?}"
                );
            }
            // The depth the scan allowed is the depth the value has.
            let depth =
                bounds::scan_depth(t, limits.max_depth).expect("parsed text passed the scan");
            assert!(depth <= limits.max_depth);
        }
        Err(issue) => assert!(!issue.message.is_empty()),
    }
    if problem.is_none() && !t.trim().is_empty() {
        assert!(
            bounds::scan_depth(t, 128).is_ok()
                && matches!(bounds::parse_scanned(t), Ok(Value::Object(_))),
            "text check accepted what is not an object"
        );
    }
}

/// Delta reconstruction's Rust side: the text of a call is its fragments joined, possibly cut at
/// `maxBytes + 1` UTF-16 units by the JS side. The verdict on the joined text must not depend on
/// where the fragments were cut, and a cut text is refused for its size, never accepted.
pub fn delta_text(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let max = usize::from(data[0]) * 4 + 1;
    let cuts = usize::from(data[1] % 8);
    let t = text(&data[2..]);
    let whole = crate::arguments::arguments_text_problem("t", t, max);
    // Rebuild the same text from fragments cut at char boundaries chosen by the input.
    let mut joined = String::with_capacity(t.len());
    let mut rest = t;
    for i in 0..cuts {
        let want = (rest.len() * (i + 1)) / (cuts + 1);
        let mut at = want.min(rest.len());
        while !rest.is_char_boundary(at) {
            at -= 1;
        }
        joined.push_str(&rest[..at]);
        rest = &rest[at..];
    }
    joined.push_str(rest);
    assert_eq!(joined, t);
    assert_eq!(
        crate::arguments::arguments_text_problem("t", &joined, max),
        whole
    );
    if t.len() > max {
        let msg = whole.expect("text over the bound refused");
        assert!(msg.contains("exceeded"), "{msg}");
    }
}

/// Schema bounds and compilation: any schema text is refused with a message or compiled, never
/// a panic or an unbounded walk; a compiled schema validates arbitrary arguments with bounded
/// issues.
pub fn schema(data: &[u8]) {
    let t = text(data);
    // The first line is the schema, the rest the arguments.
    let (schema, args) = t.split_once('\n').unwrap_or((t, "{}"));
    let limits = Limits::default();
    match validate::compile(schema, &limits) {
        Ok(mut compiled) => {
            let cold = match validate::parse_arguments(Input::Text(args), &limits) {
                Ok(value) => match compiled.value_validator(&limits) {
                    Ok(validator) => validate::run_validator(validator, &value, limits.max_errors),
                    Err(issue) => Err(vec![issue]),
                },
                Err(issue) => Err(vec![issue]),
            };
            if let Err(issues) = &cold {
                assert!(!issues.is_empty() && issues.len() <= limits.max_errors);
            }
            // Warm: the second use builds the tape validator, the third takes the tape path. It
            // must give the same outcome, messages and all.
            for _ in 0..3 {
                assert_eq!(compiled.validate(Input::Text(args), &limits), cold);
            }
        }
        Err(issue) => {
            assert!(issue.path.is_none());
            assert!(!issue.message.is_empty());
        }
    }
}

/// The search tokenizer: the ASCII fast path and the Unicode path give the same tokens on ASCII
/// text, tokens are non-empty, lower-case and hold no separator.
pub fn tokenizer(data: &[u8]) {
    use crate::search::tokenize::{ascii_tokens, for_each_token, unicode_tokens};
    let t = text(data);
    let mut buf = String::new();
    let mut all = Vec::new();
    for_each_token(t, &mut buf, |tok| all.push(tok.to_owned()));
    for tok in &all {
        assert!(!tok.is_empty());
        assert!(
            !tok.chars()
                .any(|c| c.is_whitespace() || c == '_' || c == '-'),
            "{tok:?}"
        );
        assert_eq!(tok.to_lowercase(), *tok, "{tok:?}");
    }
    if t.is_ascii() {
        let mut a = Vec::new();
        ascii_tokens(t, &mut buf, |tok| a.push(tok.to_owned()));
        let mut u = Vec::new();
        unicode_tokens(t, &mut buf, |tok| u.push(tok.to_owned()));
        assert_eq!(a, u, "ASCII and Unicode paths disagree on {t:?}");
    }
}
