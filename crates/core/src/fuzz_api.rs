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

/// The code units a fuzz byte stands for: letters, both halves of a pair, lone surrogates, U+FFFD,
/// 2- and 3-byte characters, and two characters of the `[REDACTED]` marker (not all of them, so
/// the marker never occurs in the text itself).
const REDACT_UNITS: [u16; 16] = [
    b'a' as u16,
    b'b' as u16,
    b'c' as u16,
    b'x' as u16,
    b'y' as u16,
    0xD83D,
    0xDE00,
    0xD800,
    0xDBFF,
    0xDC00,
    0xFFFD,
    0x00E9,
    0x4E2D,
    b'[' as u16,
    b'R' as u16,
    b' ' as u16,
];
/// The longest secret or text an input expands to (a 64 K periodic secret took the old DFA build
/// about sixteen seconds, far past a per-input timeout of a few seconds).
const REDACT_MAX_UNITS: usize = 1 << 16;

/// Code units from fuzz bytes: `0x00..=0xDF` pick a unit; `0xE0..=0xEF` repeat what came before
/// 2 to 256 times (long periodic secrets and texts), up to [`REDACT_MAX_UNITS`].
fn redact_units_of(bytes: &[u8]) -> Vec<u16> {
    let mut out: Vec<u16> = Vec::new();
    for &b in bytes {
        if (0xE0..=0xEF).contains(&b) {
            let times = 2usize << (b & 0x07);
            let want = (out.len() * times).min(REDACT_MAX_UNITS);
            let mut i = 0;
            while out.len() < want {
                out.push(out[i]);
                i += 1;
            }
        } else if out.len() < REDACT_MAX_UNITS {
            out.push(REDACT_UNITS[usize::from(b & 0x0F)]);
        }
    }
    out
}

/// Leftmost-longest matching over code units, the plain way: the model [`Secrets`] must agree with.
fn redact_model(text: &[u16], secrets: &[Vec<u16>]) -> Vec<u16> {
    let marker: Vec<u16> = crate::redact::REDACTED.encode_utf16().collect();
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let longest = secrets
            .iter()
            .filter(|s| !s.is_empty() && text[i..].starts_with(s))
            .map(Vec::len)
            .max();
        match longest {
            Some(n) => {
                out.extend_from_slice(&marker);
                i += n;
            }
            None => {
                out.push(text[i]);
                i += 1;
            }
        }
    }
    out
}

/// The secret matcher (`redact::Secrets`) over secret lists of any shape: up to 8 secrets
/// (overlapping, prefixes of one another, periodic, up to 64 K code units, lone surrogates and
/// halves of pairs) and a text. Every occurrence is replaced: no secret occurs in the text left
/// between the markers; where the model is cheap enough, the output is exactly leftmost-longest
/// matching over code units; Rust text gives what its code units give. Build and search are linear,
/// so no input comes near a per-input timeout (`-timeout`).
pub fn redact_secrets(data: &[u8]) {
    use crate::redact::{Secrets, REDACTED};
    // Segments split at 0xFF: the secrets, then the text.
    let mut parts: Vec<Vec<u16>> = data.split(|&b| b == 0xFF).map(redact_units_of).collect();
    let text = parts.pop().unwrap_or_default();
    parts.truncate(8);
    let secrets = Secrets::from_units(parts.iter().cloned());
    let out = secrets.redact_units(&text);
    let out = out.unwrap_or_else(|| text.clone());

    // Cut the output at the markers (the text cannot hold one: `REDACT_UNITS` lacks its letters)
    // and join the kept pieces with a unit no secret holds: no secret may occur in that.
    let marker: Vec<u16> = REDACTED.encode_utf16().collect();
    let mut kept: Vec<u16> = Vec::with_capacity(out.len());
    let mut markers = 0usize;
    let mut i = 0;
    while i < out.len() {
        if out[i..].starts_with(&marker) {
            kept.push(0x0001);
            markers += 1;
            i += marker.len();
        } else {
            kept.push(out[i]);
            i += 1;
        }
    }
    assert!(
        secrets.redact_units(&kept).is_none(),
        "a secret is left in the output"
    );
    let shortest = parts.iter().map(Vec::len).filter(|&n| n > 0).min();
    if let Some(shortest) = shortest {
        assert!(
            markers <= text.len() / shortest,
            "more markers than matches"
        );
    } else {
        assert_eq!(out, text, "no secrets, yet the text changed");
    }

    // The model costs text × secrets; it runs where that stays small.
    let total: usize = parts.iter().map(Vec::len).sum();
    if text.len().saturating_mul(total) <= 1 << 22 {
        assert_eq!(
            out,
            redact_model(&text, &parts),
            "not leftmost-longest on code units"
        );
    }
    // Rust text: the same answer from its code units (a half-pair left shows as U+FFFD).
    if let Ok(t) = String::from_utf16(&text) {
        assert_eq!(
            secrets.redact(&t).into_owned(),
            String::from_utf16_lossy(&out),
            "text and code units disagree"
        );
    }
}

#[cfg(test)]
mod tests {
    /// Seeded pseudo-random inputs through the redaction target, as `cargo fuzz` would give them
    /// (not coverage-guided; it keeps the decoding and the invariants checked in every test run).
    #[test]
    fn redact_secrets_on_seeded_inputs() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let len = (next() % 48) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| match next() % 16 {
                    0 => 0xFF,
                    1 => 0xE0 | (next() % 16) as u8,
                    _ => (next() % 16) as u8,
                })
                .collect();
            super::redact_secrets(&data);
        }
        // A 64 K periodic secret in a 64 K periodic text (the old build's quadratic case), and
        // secrets that are halves of a pair.
        super::redact_secrets(&[3, 0xEF, 0xE7, 0xFF, 3, 0xEF, 0xE7, 4]);
        super::redact_secrets(&[3, 3, 0xEF, 0xFF, 3, 0xEF, 0xE7]);
        super::redact_secrets(&[6, 0, 0xFF, 5, 0xFF, 0, 5, 6, 0, 7, 6]);
    }
}
