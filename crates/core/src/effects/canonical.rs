//! Canonical JSON for tool effects: the text hashed into `argumentsHash` and into the effect key.
//!
//! The text is byte-for-byte what `@arnilo/prism` produces (`JSON.stringify` of a copy whose object keys
//! were inserted in sorted order), so keys derived here and there agree on a shared store:
//! - no whitespace; arrays keep their order;
//! - object keys: JavaScript enumerates array-index keys ("0", "1", … up to 2^32 − 2) first in numeric order,
//!   then the other keys in insertion order — so an object's keys come out as its index keys ascending by
//!   number, then every other key sorted by UTF-16 code units;
//! - numbers are written as JavaScript's `Number.prototype.toString` writes them (`1`, `1.5`, `1e+21`,
//!   `1.5e-7`; `-0` as `0`);
//! - strings are escaped as `JSON.stringify` escapes them.
//!
//! Only JSON values are accepted: `null`, booleans, finite numbers, strings, arrays and plain objects.
//! Everything else is refused with `ERR_PRISM_TOOL_EFFECT_LIMIT` (`tool effect values must be JSON`): a
//! non-finite number, `undefined` (also as a property value), a function, a symbol, a bigint, an object whose
//! prototype is neither `Object.prototype` nor `null` (`Date`, `Map`, a class instance), a `__proto__` key,
//! and nesting deeper than [`MAX_CANONICAL_DEPTH`].

use super::error::{EffectError, EffectErrorCode};
use crate::host::{Host, Key, ObjectKind, ReadPolicy};
use sha2::{Digest, Sha256};
use std::cmp::Ordering;

/// Deepest nesting accepted (the top-level value is depth 1).
pub const MAX_CANONICAL_DEPTH: usize = 128;

pub fn not_json() -> EffectError {
    EffectError::new(EffectErrorCode::Limit, "tool effect values must be JSON")
}

/// The canonical text of a `serde_json::Value` (already JSON, so only depth can be refused).
pub fn canonical_json(value: &serde_json::Value) -> Result<String, EffectError> {
    host_canonical::<()>(&Host::from_json(value)).map_err(|_| not_json())
}

/// Why a host value read by the binding (`crate::host`) has no canonical text.
#[derive(Debug)]
pub enum Refusal<H> {
    /// Not JSON data: [`not_json`].
    NotJson,
    /// A read threw: the binding rethrows the value.
    Threw(H),
}

/// The canonical text of a host value read with [`HOST_POLICY`].
pub fn host_canonical<H: Copy>(value: &Host<H>) -> Result<String, Refusal<H>> {
    let mut out = String::with_capacity(128);
    write_host(value, &mut out, 1)?;
    Ok(out)
}

/// What the reader reads for canonical text: down to [`MAX_CANONICAL_DEPTH`]; a cycle is refused
/// there, so no per-ancestor check.
pub const HOST_POLICY: ReadPolicy = ReadPolicy {
    max_depth: MAX_CANONICAL_DEPTH,
    cycles: false,
};

fn write_host<H: Copy>(value: &Host<H>, out: &mut String, depth: usize) -> Result<(), Refusal<H>> {
    if depth > MAX_CANONICAL_DEPTH {
        return Err(Refusal::NotJson);
    }
    match value {
        Host::Null => out.push_str("null"),
        Host::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Host::Number(f) => write_number(*f, out).map_err(|_| Refusal::NotJson)?,
        Host::String(s, _) => write_json_string(s, out),
        Host::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                match item {
                    Host::Hole => out.push_str("null"), // as JSON.stringify writes a hole
                    item => write_host(item, out, depth + 1)?,
                }
            }
            out.push(']');
        }
        Host::Object(ObjectKind::Plain, entries) => {
            let mut sorted: Vec<&(Key<H>, Host<H>)> = Vec::with_capacity(entries.len());
            for entry in entries {
                check_key(&entry.0).map_err(|_| Refusal::NotJson)?;
                sorted.push(entry);
            }
            sorted.sort_by(|a, b| compare_keys(&a.0, &b.0));
            out.push('{');
            for (i, (key, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(key, out);
                out.push(':');
                write_host(item, out, depth + 1)?;
            }
            out.push('}');
        }
        Host::Threw(h) => return Err(Refusal::Threw(*h)),
        // undefined, a function, a symbol or bigint, a class instance, a Map or Set, a Date, a cycle
        _ => return Err(Refusal::NotJson),
    }
    Ok(())
}

/// Refuses keys that a JavaScript copy would not keep as an own property.
pub fn check_key(key: &str) -> Result<(), EffectError> {
    if key == "__proto__" {
        Err(not_json())
    } else {
        Ok(())
    }
}

/// The array index a key denotes in JavaScript, if it is one (canonical decimal, below 2^32 − 1).
fn array_index(key: &str) -> Option<u32> {
    let bytes = key.as_bytes();
    if bytes.is_empty() || bytes.len() > 10 || !bytes.iter().all(u8::is_ascii_digit) {
        return None;
    }
    if bytes.len() > 1 && bytes[0] == b'0' {
        return None;
    }
    let n: u64 = key.parse().ok()?;
    if n < u32::MAX as u64 {
        Some(n as u32)
    } else {
        None
    }
}

/// Key order of the canonical text (see the module documentation).
pub fn compare_keys(a: &str, b: &str) -> Ordering {
    match (array_index(a), array_index(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.encode_utf16().cmp(b.encode_utf16()),
    }
}

/// Writes a number as `JSON.stringify` does; non-finite numbers are refused.
pub fn write_number(f: f64, out: &mut String) -> Result<(), EffectError> {
    if !f.is_finite() {
        return Err(not_json());
    }
    if f == 0.0 {
        out.push('0');
        return Ok(());
    }
    if f.fract() == 0.0 && f.abs() < 1e21 {
        // Integral and below 1e21: JavaScript prints all digits, no exponent.
        if f.abs() < 9_007_199_254_740_992.0 {
            out.push_str(&(f as i64).to_string());
            return Ok(());
        }
    }
    // Shortest round-trip digits, then ECMAScript Number::toString layout.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').ok_or_else(not_json)?;
    let exp: i32 = exp.parse().map_err(|_| not_json())?;
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp + 1; // value = 0.digits × 10^n
    if f < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        for _ in 0..(n - k) {
            out.push('0');
        }
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        for _ in 0..(-n) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let e = n - 1;
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if e < 0 { '-' } else { '+' });
        out.push_str(&e.abs().to_string());
    }
    Ok(())
}

/// Writes a JSON string literal escaped as `JSON.stringify` escapes it.
pub fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    let mut start = 0;
    // Every character JSON escapes is ASCII, so a byte scan finds them and cuts at char boundaries.
    for (i, &b) in s.as_bytes().iter().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..0x20 => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 15) as usize] as char);
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Lower-case hex SHA-256 of a text.
pub fn sha256_hex(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest.iter() {
        hex.push(char::from_digit((b >> 4) as u32, 16).unwrap_or('0'));
        hex.push(char::from_digit((b & 0xf) as u32, 16).unwrap_or('0'));
    }
    hex
}

/// `toolEffectArgumentsHash`: SHA-256 hex of the canonical JSON of the arguments.
pub fn arguments_hash(args: &serde_json::Value) -> Result<String, EffectError> {
    Ok(sha256_hex(&canonical_json(args)?))
}

/// The fields the effect key is derived from.
#[derive(Debug, Clone, Default)]
pub struct KeyMaterial<'a> {
    pub tenant_id: &'a str,
    pub account_id: Option<&'a str>,
    pub user_id: Option<&'a str>,
    pub principal_id: &'a str,
    pub session_id: &'a str,
    pub run_id: &'a str,
    pub tool_call_id: &'a str,
    pub tool_name: &'a str,
    pub arguments_hash: &'a str,
}

/// Key prefix of every derived effect key.
pub const EFFECT_KEY_PREFIX: &str = "prism:tool-effect:v1:";

/// `deriveToolEffectKey`: `prism:tool-effect:v1:` + SHA-256 hex of the canonical JSON of
/// `{ accountId, argumentsHash, principalId, runId, sessionId, tenantId, toolCallId, toolName, userId }`
/// (`accountId` / `userId` are `null` when the ownership does not set them; `tenantId`, `accountId`,
/// `userId` come from the ownership, `principalId` is `identity.principal.id`).
pub fn derive_key(m: &KeyMaterial<'_>) -> String {
    // In the canonical (sorted) order of the names; `None` is `null`.
    let fields = [
        ("accountId", m.account_id),
        ("argumentsHash", Some(m.arguments_hash)),
        ("principalId", Some(m.principal_id)),
        ("runId", Some(m.run_id)),
        ("sessionId", Some(m.session_id)),
        ("tenantId", Some(m.tenant_id)),
        ("toolCallId", Some(m.tool_call_id)),
        ("toolName", Some(m.tool_name)),
        ("userId", m.user_id),
    ];
    let mut text = String::with_capacity(256);
    for (i, (name, value)) in fields.into_iter().enumerate() {
        text.push(if i == 0 { '{' } else { ',' });
        text.push('"');
        text.push_str(name);
        text.push_str("\":");
        match value {
            Some(s) => write_json_string(s, &mut text),
            None => text.push_str("null"),
        }
    }
    text.push('}');
    format!("{EFFECT_KEY_PREFIX}{}", sha256_hex(&text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn num(f: f64) -> String {
        let mut s = String::new();
        write_number(f, &mut s).unwrap();
        s
    }

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(-0.0), "0");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(1e21), "1e+21");
        assert_eq!(num(1.5e-7), "1.5e-7");
        assert_eq!(num(0.000001), "0.000001");
        assert_eq!(num(123456789012345680000.0), "123456789012345680000");
        assert_eq!(num(-2.5e-300), "-2.5e-300");
        assert_eq!(num(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(num(9007199254740993.0), "9007199254740992");
        assert!(write_number(f64::NAN, &mut String::new()).is_err());
        assert!(write_number(f64::INFINITY, &mut String::new()).is_err());
    }

    #[test]
    fn keys_follow_javascript_enumeration_of_a_sorted_copy() {
        let v = json!({ "b": 1, "10": 2, "2": 3, "a": { "z": null, "y": [3, 1] }, "01": 4 });
        assert_eq!(
            canonical_json(&v).unwrap(),
            r#"{"2":3,"10":2,"01":4,"a":{"y":[3,1],"z":null},"b":1}"#
        );
        // UTF-16 order: U+FF61 sorts after U+10000 (a surrogate pair starting 0xD800).
        let v = json!({ "\u{ff61}": 1, "\u{10000}": 2 });
        assert_eq!(
            canonical_json(&v).unwrap(),
            "{\"\u{10000}\":2,\"\u{ff61}\":1}"
        );
    }

    #[test]
    fn strings_are_escaped_as_json_stringify_escapes_them() {
        let v = json!("q\"\\\n\u{1f}\u{7f}\u{2028}é");
        assert_eq!(
            canonical_json(&v).unwrap(),
            "\"q\\\"\\\\\\n\\u001f\u{7f}\u{2028}é\""
        );
    }

    #[test]
    fn refuses_proto_keys_and_excess_depth() {
        let v: serde_json::Value = serde_json::from_str(r#"{"__proto__":{"x":1}}"#).unwrap();
        assert_eq!(canonical_json(&v).unwrap_err().code, EffectErrorCode::Limit);
        let mut deep = json!(1);
        for _ in 0..MAX_CANONICAL_DEPTH {
            deep = json!([deep]);
        }
        assert!(canonical_json(&deep).is_err());
    }

    #[test]
    fn hashes_and_keys_are_stable() {
        // sha256("{}")
        assert_eq!(
            arguments_hash(&json!({})).unwrap(),
            "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"
        );
        let h = arguments_hash(&json!({ "to": "a@b.c", "amount": 5 })).unwrap();
        assert_eq!(
            h,
            arguments_hash(&json!({ "amount": 5, "to": "a@b.c" })).unwrap()
        );
        let m = KeyMaterial {
            tenant_id: "t",
            principal_id: "p",
            session_id: "s",
            run_id: "r",
            tool_call_id: "c",
            tool_name: "n",
            arguments_hash: &h,
            ..Default::default()
        };
        let key = derive_key(&m);
        assert!(key.starts_with(EFFECT_KEY_PREFIX) && key.len() == EFFECT_KEY_PREFIX.len() + 64);
        let expected = sha256_hex(&canonical_json(&json!({
            "tenantId": "t", "accountId": null, "userId": null, "principalId": "p", "sessionId": "s",
            "runId": "r", "toolCallId": "c", "toolName": "n", "argumentsHash": h,
        })).unwrap());
        assert_eq!(key, format!("{EFFECT_KEY_PREFIX}{expected}"));
        assert_ne!(
            key,
            derive_key(&KeyMaterial {
                account_id: Some("a"),
                ..m.clone()
            })
        );
    }
}
