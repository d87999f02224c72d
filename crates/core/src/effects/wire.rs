//! Store inputs read from JSON text, for stores whose work leaves the JS thread (PostgreSQL): the host
//! side writes the key and transition fields with `JSON.stringify`, and this module reads them with the
//! same meaning the in-thread reader gives JS values — a missing field is absent, a string is text,
//! anything else is invalid. Timestamps that only `Date.parse` understands arrive pre-parsed in `dates`.

use serde_json::{Map, Value};

use super::identity::{Field, IdentityView, OwnershipView, PrincipalView};
use super::key::{KeyInput, KeyParts};
use super::store::{Claim, FailureInput, Resolution, ResultInput, Transition};
use super::time::parse_iso_strict;

/// Most list items read from a host array; past it the list holds one invalid entry (every bound is far
/// lower, so the input is refused).
const MAX_LIST_ITEMS: usize = 4096;

fn field(obj: &Map<String, Value>, name: &str) -> Field {
    match obj.get(name) {
        None => Field::Absent,
        Some(Value::String(s)) => Field::Text(s.clone()),
        Some(_) => Field::Invalid,
    }
}

fn principal(v: Option<&Value>) -> Option<PrincipalView> {
    let obj = v?.as_object()?;
    Some(PrincipalView {
        kind: field(obj, "kind"),
        id: field(obj, "id"),
        display_name: field(obj, "displayName"),
    })
}

fn string_list(v: &Value) -> Option<Vec<Field>> {
    let items = v.as_array()?;
    let mut out: Vec<Field> = items
        .iter()
        .take(MAX_LIST_ITEMS)
        .map(|item| match item {
            Value::String(s) => Field::Text(s.clone()),
            _ => Field::Invalid,
        })
        .collect();
    if items.len() > MAX_LIST_ITEMS {
        out.push(Field::Invalid);
    }
    Some(out)
}

/// An `AgentIdentity` as the host wrote it; `metadataBytes` is the byte length of the metadata's JSON
/// (absent when there is no metadata, `null` when it could not be serialised).
pub fn identity(v: Option<&Value>) -> IdentityView {
    let Some(obj) = v.and_then(Value::as_object) else {
        return IdentityView::default();
    };
    let other_principals = ["sponsor", "owner", "delegatedFrom"]
        .iter()
        .filter(|name| obj.contains_key(**name))
        .map(|name| principal(obj.get(*name)))
        .collect();
    IdentityView {
        tenant_id: field(obj, "tenantId"),
        account_id: field(obj, "accountId"),
        user_id: field(obj, "userId"),
        principal: principal(obj.get("principal")),
        other_principals,
        scopes: obj.get("scopes").and_then(string_list),
        credential_refs: obj.get("credentialRefs").map(string_list),
        metadata_bytes: obj
            .get("metadataBytes")
            .map(|b| b.as_u64().map(|n| n as usize)),
        issued_at: field(obj, "issuedAt"),
        expires_at: field(obj, "expiresAt"),
        revoked_at: field(obj, "revokedAt"),
        verified: obj.get("verified") == Some(&Value::Bool(true)),
    }
}

pub fn ownership(v: Option<&Value>) -> OwnershipView {
    let Some(obj) = v.and_then(Value::as_object) else {
        return OwnershipView::default();
    };
    OwnershipView {
        tenant_id: field(obj, "tenantId"),
        account_id: field(obj, "accountId"),
        user_id: field(obj, "userId"),
    }
}

/// A `ToolEffectKey` (`identity`, `ownership`, `key`, ids, `argumentsHash`).
pub fn key(obj: &Map<String, Value>) -> KeyInput {
    KeyInput {
        identity: identity(obj.get("identity")),
        parts: KeyParts {
            ownership: ownership(obj.get("ownership")),
            key: field(obj, "key"),
            session_id: field(obj, "sessionId"),
            run_id: field(obj, "runId"),
            tool_call_id: field(obj, "toolCallId"),
            tool_name: field(obj, "toolName"),
            arguments_hash: field(obj, "argumentsHash"),
        },
    }
}

pub fn claim(obj: &Map<String, Value>) -> Claim {
    Claim {
        claim_token: field(obj, "claimToken"),
        expected_version: number(obj, "expectedVersion"),
    }
}

/// A number field; `None` when absent or not a number (the store then refuses it as it does any
/// missing bound).
pub fn number(obj: &Map<String, Value>, name: &str) -> Option<f64> {
    obj.get(name).and_then(Value::as_f64)
}

fn failure(obj: &Map<String, Value>) -> Option<FailureInput> {
    let f = obj.get("failure")?;
    let fo = f.as_object();
    Some(FailureInput {
        code: fo.map_or(Field::Invalid, |o| field(o, "code")),
        reference: fo.map_or(Field::Absent, |o| field(o, "reference")),
    })
}

/// `result` as the host's own `JSON.stringify` text (`resultJson`), so a replayed result keeps its key
/// order and number spelling; `resultUnserializable: true` when `JSON.stringify` failed.
fn result(obj: &Map<String, Value>) -> ResultInput {
    if obj.get("resultUnserializable") == Some(&Value::Bool(true)) {
        return Some(Err(()));
    }
    match obj.get("resultJson") {
        None => None,
        Some(Value::String(text)) => Some(Ok(text.clone())),
        Some(_) => Some(Err(())),
    }
}

/// The transition a claimed method asks for: `markDispatched`, `complete`, `fail` or `markUnknown`.
pub fn transition(method: &str, obj: &Map<String, Value>) -> Option<Transition> {
    Some(match method {
        "markDispatched" => Transition::Dispatched,
        "complete" => Transition::Complete {
            result: result(obj),
            result_ref: field(obj, "resultRef"),
        },
        "fail" => Transition::Fail {
            status: field(obj, "status"),
            failure: failure(obj),
        },
        "markUnknown" => Transition::Unknown {
            failure: failure(obj),
        },
        _ => return None,
    })
}

pub fn resolution(obj: &Map<String, Value>) -> Resolution {
    Resolution {
        expected_version: number(obj, "expectedVersion"),
        status: field(obj, "status"),
        result: result(obj),
        result_ref: field(obj, "resultRef"),
        failure: failure(obj),
    }
}

/// The `dates` a host sent: `[text, epochMs]` pairs it parsed with `Date.parse`.
fn host_dates(obj: &Map<String, Value>) -> Vec<(String, i64)> {
    obj.get("dates")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|pair| {
            let pair = pair.as_array()?;
            Some((
                pair.first()?.as_str()?.to_owned(),
                pair.get(1)?.as_f64()? as i64,
            ))
        })
        .collect()
}

/// How a timestamp parses: common ISO forms in Rust, the rest from the host's `dates`.
fn parse_date_with(dates: &[(String, i64)], text: &str) -> Option<i64> {
    parse_iso_strict(text).or_else(|| dates.iter().find_map(|(t, ms)| (t == text).then_some(*ms)))
}

/// How timestamps parse: common ISO forms in Rust, the rest from `dates` (`[text, epochMs]` pairs the host
/// parsed with `Date.parse`).
pub fn date_parser(obj: &Map<String, Value>) -> impl Fn(&str) -> Option<i64> {
    let dates = host_dates(obj);
    move |text: &str| parse_date_with(&dates, text)
}

/// What dispatch's identity check reads, as `lib/effect-store-wire.js` writes it
/// (`identityChecker`): the identity, the ownership it must own (`None`: none asked), and the
/// timestamps only `Date.parse` understands, pre-parsed.
#[derive(Debug, Default)]
pub struct IdentityCheck {
    pub identity: IdentityView,
    pub ownership: Option<OwnershipView>,
    dates: Vec<(String, i64)>,
}

impl IdentityCheck {
    /// Reads the check's JSON text; `None` when it is not the object the host writes.
    pub fn parse(text: &str) -> Option<Self> {
        let v: Value = serde_json::from_str(text).ok()?;
        let obj = v.as_object()?;
        Some(IdentityCheck {
            identity: identity(obj.get("identity")),
            ownership: obj.get("ownership").map(|o| ownership(Some(o))),
            dates: host_dates(obj),
        })
    }

    /// How the identity's timestamps parse: common ISO forms in Rust, the rest as the host parsed them.
    pub fn parse_date(&self, text: &str) -> Option<i64> {
        parse_date_with(&self.dates, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn fields_read_as_absent_text_or_invalid() {
        let k = key(&obj(json!({ "key": "k", "sessionId": 5, "runId": null })));
        let k = k.parts;
        assert_eq!(k.key, Field::Text("k".into()));
        assert_eq!(k.session_id, Field::Invalid);
        assert_eq!(k.run_id, Field::Invalid);
        assert_eq!(k.tool_call_id, Field::Absent);
    }

    #[test]
    fn identity_reads_like_the_in_thread_reader() {
        let id = identity(Some(&json!({
            "tenantId": "acme", "principal": { "kind": "service", "id": "billing" },
            "scopes": ["a", 1], "owner": "not an object", "metadataBytes": null, "verified": true
        })));
        assert_eq!(id.tenant_id, Field::Text("acme".into()));
        assert_eq!(
            id.principal.as_ref().map(|p| p.id.clone()),
            Some(Field::Text("billing".into()))
        );
        assert_eq!(
            id.scopes,
            Some(vec![Field::Text("a".into()), Field::Invalid])
        );
        assert_eq!(id.other_principals.len(), 1);
        assert!(id.other_principals[0].is_none());
        assert_eq!(id.metadata_bytes, Some(None));
        assert!(id.verified);
        assert!(!identity(Some(&json!({ "verified": "true" }))).verified);
        assert!(identity(Some(&json!("x"))).principal.is_none());
    }

    #[test]
    fn transitions_and_results() {
        let o = obj(json!({ "resultJson": "{\"b\":1,\"a\":[1,2]}", "resultRef": "r" }));
        match transition("complete", &o) {
            Some(Transition::Complete {
                result: Some(Ok(text)),
                result_ref,
            }) => {
                assert_eq!(text, r#"{"b":1,"a":[1,2]}"#);
                assert_eq!(result_ref, Field::Text("r".into()));
            }
            other => panic!("unexpected {other:?}"),
        }
        let bad = obj(json!({ "resultUnserializable": true }));
        assert!(matches!(
            transition("complete", &bad),
            Some(Transition::Complete {
                result: Some(Err(())),
                ..
            })
        ));
        assert!(transition("explode", &o).is_none());
        let f = obj(json!({ "status": "failed_terminal", "failure": "x" }));
        match transition("fail", &f) {
            Some(Transition::Fail {
                failure: Some(fi), ..
            }) => assert_eq!(fi.code, Field::Invalid),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn an_identity_check_reads_its_ownership_and_host_parsed_dates() {
        let text = r#"{"identity":{"tenantId":"t","issuedAt":"Tue, 01 Dec 2026 00:00:00 GMT","verified":true},"ownership":{},"dates":[["Tue, 01 Dec 2026 00:00:00 GMT",1796083200000]]}"#;
        let c = IdentityCheck::parse(text).expect("an identity check");
        assert_eq!(c.identity.tenant_id, Field::Text("t".into()));
        assert!(c.identity.verified);
        assert_eq!(
            c.ownership.as_ref().map(|o| o.tenant_id.is_absent()),
            Some(true)
        );
        assert_eq!(
            c.parse_date("Tue, 01 Dec 2026 00:00:00 GMT"),
            Some(1796083200000)
        );
        assert_eq!(
            c.parse_date("2026-12-01T00:00:00.000Z"),
            Some(1796083200000)
        );
        assert_eq!(c.parse_date("yesterday"), None);
        let none = IdentityCheck::parse(r#"{"identity":null}"#).expect("an identity check");
        assert!(none.ownership.is_none());
        assert!(!none.identity.verified);
        assert!(IdentityCheck::parse("[1]").is_none());
        assert!(IdentityCheck::parse("{").is_none());
    }

    #[test]
    fn dates_fall_back_to_host_parsed_values() {
        let o = obj(json!({ "dates": [["Tue, 01 Dec 2026 00:00:00 GMT", 1796083200000.0]] }));
        let parse = date_parser(&o);
        assert_eq!(
            parse("Tue, 01 Dec 2026 00:00:00 GMT"),
            Some(1_796_083_200_000)
        );
        assert_eq!(parse("1970-01-01T00:00:01.000Z"), Some(1000));
        assert_eq!(parse("nonsense"), None);
    }
}
