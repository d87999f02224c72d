//! State-machine tests run against both storages.

use super::error::{EffectErrorCode, StoreError};
use super::identity::tests::identity;
use super::identity::{Field, OwnershipView};
use super::key::{KeyInput, KeyParts};
use super::memory::MemoryStorage;
use super::record::Status;
use super::sqlite::SqliteStorage;
use super::store::*;
use super::time::parse_iso_strict;
use crate::storage::sqlite::SqliteOptions;

const NOW: i64 = 1_767_225_600_000;

fn key(call: &str) -> KeyInput {
    KeyInput {
        identity: identity(),
        parts: KeyParts {
            ownership: OwnershipView {
                tenant_id: "tenant".into(),
                ..Default::default()
            },
            key: Field::Text(format!("prism:tool-effect:v1:{call}")),
            session_id: "s".into(),
            run_id: "r".into(),
            tool_call_id: call.into(),
            tool_name: "pay".into(),
            arguments_hash: Field::Text("a".repeat(64)),
        },
    }
}

fn code(e: StoreError) -> EffectErrorCode {
    match e {
        StoreError::Effect(e) => e.code,
        other => panic!("expected a ToolEffectError, got {other:?}"),
    }
}

fn claim(r: &super::record::EffectRecord) -> Claim {
    Claim {
        claim_token: Field::Text(r.claim_token.clone().unwrap()),
        expected_version: Some(r.version as f64),
    }
}

fn result(call: &str) -> ResultInput {
    Some(Ok(format!(
        r#"{{"toolCallId":"{call}","name":"pay","value":{{"ok":true}}}}"#
    )))
}

fn lifecycle<S: RecordStorage>(store: EffectStore<S>) {
    let p = &parse_iso_strict;
    let k = key("c1");
    assert!(store.get(&k, NOW, p).unwrap().is_none());
    let (outcome, pending) = store.begin(&k, None, None, NOW, p).unwrap();
    assert_eq!(
        (outcome, pending.status, pending.version, pending.attempt),
        (BeginOutcome::Acquired, Status::Pending, 1, 1)
    );
    assert_eq!(pending.expires_at, Some(NOW + DEFAULT_CLAIM_TTL_MS));
    let (outcome, dup) = store.begin(&k, None, None, NOW, p).unwrap();
    assert_eq!(
        (outcome, dup.status, dup.claim_token.as_deref()),
        (BeginOutcome::Existing, Status::Pending, None)
    );

    // Wrong token, stale version, wrong status: refused.
    let wrong = Claim {
        claim_token: "nope".into(),
        expected_version: Some(1.0),
    };
    assert_eq!(
        code(
            store
                .transition(&k, &wrong, Transition::Dispatched, NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    let stale = Claim {
        expected_version: Some(0.0),
        ..claim(&pending)
    };
    assert_eq!(
        code(
            store
                .transition(&k, &stale, Transition::Dispatched, NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    let complete = Transition::Complete {
        result: result("c1"),
        result_ref: Field::Absent,
    };
    assert_eq!(
        code(
            store
                .transition(&k, &claim(&pending), complete.clone(), NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );

    let dispatched = store
        .transition(&k, &claim(&pending), Transition::Dispatched, NOW + 1, p)
        .unwrap();
    assert_eq!(
        (dispatched.status, dispatched.version),
        (Status::Dispatched, 2)
    );
    assert_eq!(
        code(
            store
                .transition(&k, &claim(&pending), Transition::Dispatched, NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    // A result for another call is a conflict.
    let foreign = Transition::Complete {
        result: result("other"),
        result_ref: Field::Absent,
    };
    assert_eq!(
        code(
            store
                .transition(&k, &claim(&dispatched), foreign, NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    let done = store
        .transition(&k, &claim(&dispatched), complete.clone(), NOW + 2, p)
        .unwrap();
    assert_eq!(
        (done.status, done.version, done.claim_token.is_none()),
        (Status::Completed, 3, true)
    );
    assert!(done.result.as_deref().unwrap().contains("\"ok\":true"));
    let (outcome, replay) = store.begin(&k, None, None, NOW + 3, p).unwrap();
    assert_eq!(
        (outcome, replay.status),
        (BeginOutcome::Existing, Status::Completed)
    );
    assert_eq!(store.get(&k, NOW, p).unwrap().unwrap(), done);

    // Another key: dispatched → unknown → resolved.
    let k2 = key("c2");
    let (_, p2) = store.begin(&k2, Some(1000.0), None, NOW, p).unwrap();
    let d2 = store
        .transition(&k2, &claim(&p2), Transition::Dispatched, NOW, p)
        .unwrap();
    let unknown = Transition::Unknown {
        failure: Some(FailureInput {
            code: "boom".into(),
            reference: Field::Absent,
        }),
    };
    let u2 = store
        .transition(&k2, &claim(&d2), unknown.clone(), NOW, p)
        .unwrap();
    assert_eq!(
        (u2.status, u2.claim_token.as_deref()),
        (Status::Unknown, None)
    );
    let (outcome, again) = store.begin(&k2, None, None, NOW, p).unwrap();
    assert_eq!(
        (outcome, again.status),
        (BeginOutcome::Existing, Status::Unknown)
    );
    let res = |v: u64| Resolution {
        expected_version: Some(v as f64),
        status: "failed_terminal".into(),
        ..Default::default()
    };
    assert_eq!(
        code(
            store
                .resolve_unknown(&k2, res(u2.version - 1), NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    let resolved = store.resolve_unknown(&k2, res(u2.version), NOW, p).unwrap();
    assert_eq!(resolved.status, Status::FailedTerminal);
    assert_eq!(
        code(
            store
                .resolve_unknown(&k2, res(resolved.version), NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );

    // Leases: pending expires to failed_retryable (and may be claimed again), dispatched to unknown.
    let k3 = key("c3");
    let (_, p3) = store.begin(&k3, Some(10.0), Some(2.0), NOW, p).unwrap();
    let seen = store.get(&k3, NOW + 10, p).unwrap().unwrap();
    assert_eq!(
        (
            seen.status,
            seen.version,
            seen.failure.as_ref().unwrap().code.as_str()
        ),
        (Status::FailedRetryable, 2, EXPIRED_CODE)
    );
    assert_eq!(
        code(
            store
                .transition(&k3, &claim(&p3), Transition::Dispatched, NOW + 10, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    let (outcome, retry) = store
        .begin(&k3, Some(10.0), Some(2.0), NOW + 11, p)
        .unwrap();
    assert_eq!(
        (outcome, retry.attempt, retry.version),
        (BeginOutcome::Acquired, 2, 3)
    );
    let d3 = store
        .transition(&k3, &claim(&retry), Transition::Dispatched, NOW + 12, p)
        .unwrap();
    let (outcome, after) = store
        .begin(&k3, Some(10.0), Some(2.0), NOW + 100, p)
        .unwrap();
    assert_eq!(
        (outcome, after.status),
        (BeginOutcome::Existing, Status::Unknown)
    );
    assert_eq!(
        code(
            store
                .transition(&k3, &claim(&d3), Transition::Dispatched, NOW + 100, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );

    // Attempts are bounded: failed_retryable at maxAttempts stays existing.
    let k4 = key("c4");
    let (_, p4) = store.begin(&k4, None, Some(1.0), NOW, p).unwrap();
    let fail = Transition::Fail {
        status: "failed_retryable".into(),
        failure: Some(FailureInput {
            code: "x".into(),
            reference: Field::Absent,
        }),
    };
    store
        .transition(&k4, &claim(&p4), fail.clone(), NOW, p)
        .unwrap();
    assert_eq!(
        store.begin(&k4, None, Some(1.0), NOW, p).unwrap().0,
        BeginOutcome::Existing
    );
    assert_eq!(
        store.begin(&k4, None, Some(2.0), NOW, p).unwrap().0,
        BeginOutcome::Acquired
    );

    // An exhausted key is settled by the operator: a failed_retryable verdict gives it fresh
    // attempts, a stale version is refused, a pending record is not the operator's to settle.
    let k6 = key("c6");
    let (_, p6) = store.begin(&k6, None, Some(1.0), NOW, p).unwrap();
    assert_eq!(
        code(
            store
                .resolve_unknown(&k6, res(p6.version), NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    let failed = store
        .transition(&k6, &claim(&p6), fail.clone(), NOW, p)
        .unwrap();
    let (outcome, stuck) = store.begin(&k6, None, Some(1.0), NOW, p).unwrap();
    assert_eq!(
        (outcome, stuck.status, stuck.attempt),
        (BeginOutcome::Existing, Status::FailedRetryable, 1)
    );
    let retry = Resolution {
        expected_version: Some(failed.version as f64),
        status: "failed_retryable".into(),
        failure: Some(FailureInput {
            code: "operator".into(),
            reference: Field::Absent,
        }),
        ..Default::default()
    };
    assert_eq!(
        code(
            store
                .resolve_unknown(
                    &k6,
                    Resolution {
                        expected_version: Some(failed.version as f64 - 1.0),
                        ..retry.clone()
                    },
                    NOW,
                    p
                )
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    let released = store.resolve_unknown(&k6, retry, NOW, p).unwrap();
    assert_eq!(
        (released.status, released.attempt, released.version),
        (Status::FailedRetryable, 0, failed.version + 1)
    );
    let (outcome, again) = store.begin(&k6, None, Some(1.0), NOW, p).unwrap();
    assert_eq!(
        (outcome, again.status, again.attempt),
        (BeginOutcome::Acquired, Status::Pending, 1)
    );

    // Limits and ownership.
    assert_eq!(
        code(store.begin(&k4, Some(0.0), None, NOW, p).unwrap_err()),
        EffectErrorCode::Limit
    );
    assert_eq!(
        code(store.begin(&k4, None, Some(11.0), NOW, p).unwrap_err()),
        EffectErrorCode::Limit
    );
    let mut bad = key("c5");
    bad.parts.arguments_hash = "A".into();
    assert_eq!(
        code(store.begin(&bad, None, None, NOW, p).unwrap_err()),
        EffectErrorCode::Limit
    );
    let mut bad = key("c5");
    bad.parts.ownership = OwnershipView::default();
    assert_eq!(
        code(store.begin(&bad, None, None, NOW, p).unwrap_err()),
        EffectErrorCode::Conflict
    );
    let mut bad = key("c1");
    bad.parts.arguments_hash = Field::Text("b".repeat(64));
    assert_eq!(
        code(store.begin(&bad, None, None, NOW, p).unwrap_err()),
        EffectErrorCode::Conflict
    );
    let mut bad = key("c5");
    bad.identity.verified = false;
    assert!(
        matches!(store.begin(&bad, None, None, NOW, p), Err(StoreError::Identity(f)) if f.reason == "unverified")
    );

    // Cleanup removes terminal records of this ownership only.
    let owner = OwnershipView {
        tenant_id: "tenant".into(),
        ..Default::default()
    };
    let other = OwnershipView {
        tenant_id: "tenant".into(),
        user_id: "u".into(),
        ..Default::default()
    };
    assert_eq!(
        store
            .cleanup(&other, &"2027-01-01".into(), None, p)
            .unwrap(),
        0
    );
    assert_eq!(
        store
            .cleanup(&owner, &"2027-01-01".into(), Some(500.0), p)
            .unwrap(),
        2
    );
    assert!(store.get(&k, NOW, p).unwrap().is_none());
    assert_eq!(
        code(store.cleanup(&owner, &"later".into(), None, p).unwrap_err()),
        EffectErrorCode::Limit
    );
    assert_eq!(
        code(
            store
                .cleanup(&owner, &"2027-01-01".into(), Some(501.0), p)
                .unwrap_err()
        ),
        EffectErrorCode::Limit
    );
}

fn temp_db(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("prism-effects-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("effects.db").to_string_lossy().into_owned()
}

#[test]
fn the_default_lease_is_the_stores_option() {
    let p = &parse_iso_strict;
    let store = EffectStore::new(MemoryStorage::default()).with_claim_ttl_ms(5_000);
    let (_, pending) = store.begin(&key("lease"), None, None, NOW, p).unwrap();
    assert_eq!(pending.expires_at, Some(NOW + 5_000));
    // A begin that names its own lease keeps it.
    let (_, named) = store
        .begin(&key("named"), Some(60_000.0), None, NOW, p)
        .unwrap();
    assert_eq!(named.expires_at, Some(NOW + 60_000));
    let plain = EffectStore::new(MemoryStorage::default());
    let (_, default) = plain.begin(&key("lease"), None, None, NOW, p).unwrap();
    assert_eq!(default.expires_at, Some(NOW + DEFAULT_CLAIM_TTL_MS));
}

#[test]
fn memory_store_follows_the_state_machine() {
    lifecycle(EffectStore::new(MemoryStorage::default()));
}

#[test]
fn sqlite_store_follows_the_state_machine_and_persists() {
    let path = temp_db("lifecycle");
    let opts = SqliteOptions {
        synchronous_full: false,
        ..Default::default()
    };
    lifecycle(EffectStore::new(SqliteStorage::open(&path, &opts).unwrap()));
    // A second connection sees what the first left (c2 resolved failed_terminal was cleaned; c3 unknown stays).
    let again = EffectStore::new(SqliteStorage::open(&path, &opts).unwrap());
    let seen = again
        .get(&key("c3"), NOW + 1000, &parse_iso_strict)
        .unwrap()
        .unwrap();
    assert_eq!(seen.status, Status::Unknown);
    let _ = std::fs::remove_dir_all(std::path::Path::new(&path).parent().unwrap());
}

#[test]
fn exactly_one_of_many_connections_claims_a_key() {
    let path = temp_db("race");
    let opts = SqliteOptions {
        synchronous_full: false,
        ..Default::default()
    };
    for trial in 0..20 {
        let winners: usize = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let path = path.clone();
                    let opts = opts.clone();
                    s.spawn(move || {
                        let store = EffectStore::new(SqliteStorage::open(&path, &opts).unwrap());
                        let (outcome, _) = store
                            .begin(
                                &key(&format!("race-{trial}")),
                                None,
                                None,
                                NOW,
                                &parse_iso_strict,
                            )
                            .unwrap();
                        (outcome == BeginOutcome::Acquired) as usize
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(winners, 1, "trial {trial}");
    }
    let _ = std::fs::remove_dir_all(std::path::Path::new(&path).parent().unwrap());
}

/// A result larger than the store keeps completes the record without the value: its size and SHA-256
/// stand in for it, and a retry of the key finds the completed record (never a new claim).
fn large_result_completes<S: RecordStorage>(store: EffectStore<S>) {
    let p = &parse_iso_strict;
    let k = key("big");
    let (_, pending) = store.begin(&k, None, None, NOW, p).unwrap();
    let dispatched = store
        .transition(&k, &claim(&pending), Transition::Dispatched, NOW, p)
        .unwrap();
    let text = format!(
        r#"{{"toolCallId":"big","name":"pay","value":"{}"}}"#,
        "x".repeat(70_000)
    );
    let big = Transition::Complete {
        result: Some(Ok(text.clone())),
        result_ref: Field::Text("blob://big".into()),
    };
    let done = store
        .transition(&k, &claim(&dispatched), big, NOW + 1, p)
        .unwrap();
    assert_eq!(done.status, Status::Completed);
    assert!(done.result.is_none());
    let digest = done.result_omitted.clone().unwrap();
    assert_eq!(digest.bytes, text.len() as u64);
    assert_eq!(digest.sha256, super::canonical::sha256_hex(&text));
    assert_eq!(done.result_ref.as_deref(), Some("blob://big"));
    let json = done.to_json();
    assert!(json.contains(&format!(
        r#""resultOmitted":{{"bytes":{},"sha256":"{}"}}"#,
        text.len(),
        digest.sha256
    )));
    assert!(json.len() < 2048, "the record stays small: {}", json.len());
    let (outcome, replay) = store.begin(&k, None, None, NOW + 2, p).unwrap();
    assert_eq!(
        (outcome, replay.status, replay.result_omitted),
        (BeginOutcome::Existing, Status::Completed, Some(digest))
    );
    assert_eq!(store.get(&k, NOW + 3, p).unwrap().unwrap(), done);

    // A large result of another call is still a conflict, and a non-JSON one a limit.
    let k2 = key("big2");
    let (_, p2) = store.begin(&k2, None, None, NOW, p).unwrap();
    let d2 = store
        .transition(&k2, &claim(&p2), Transition::Dispatched, NOW, p)
        .unwrap();
    let foreign = Transition::Complete {
        result: Some(Ok(format!(
            r#"{{"toolCallId":"other","name":"pay","value":"{}"}}"#,
            "x".repeat(70_000)
        ))),
        result_ref: Field::Absent,
    };
    assert_eq!(
        code(
            store
                .transition(&k2, &claim(&d2), foreign, NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Conflict
    );
    let broken = Transition::Complete {
        result: Some(Ok("{\"toolCallId\":".into())),
        result_ref: Field::Absent,
    };
    assert_eq!(
        code(
            store
                .transition(&k2, &claim(&d2), broken, NOW, p)
                .unwrap_err()
        ),
        EffectErrorCode::Limit
    );
    for not_a_result in ["[1,2]", "\"big2\"", r#"{"toolCallId":7,"name":"pay"}"#] {
        let t = Transition::Complete {
            result: Some(Ok(not_a_result.into())),
            result_ref: Field::Absent,
        };
        assert_eq!(
            code(store.transition(&k2, &claim(&d2), t, NOW, p).unwrap_err()),
            EffectErrorCode::Conflict,
            "{not_a_result}"
        );
    }
}

#[test]
fn memory_store_completes_a_result_larger_than_it_keeps() {
    large_result_completes(EffectStore::new(MemoryStorage::default()));
}

#[test]
fn sqlite_store_completes_a_result_larger_than_it_keeps() {
    let path = temp_db("large");
    large_result_completes(EffectStore::new(
        SqliteStorage::open(&path, &SqliteOptions::default()).unwrap(),
    ));
    let _ = std::fs::remove_dir_all(std::path::Path::new(&path).parent().unwrap());
}

#[test]
fn a_store_may_keep_larger_results() {
    let p = &parse_iso_strict;
    let store = EffectStore::with_max_result_bytes(MemoryStorage::default(), 1024 * 1024);
    assert_eq!(store.max_result_bytes(), 1024 * 1024);
    let k = key("kept");
    let (_, pending) = store.begin(&k, None, None, NOW, p).unwrap();
    let d = store
        .transition(&k, &claim(&pending), Transition::Dispatched, NOW, p)
        .unwrap();
    let text = format!(
        r#"{{"toolCallId":"kept","name":"pay","value":"{}"}}"#,
        "y".repeat(500_000)
    );
    let done = store
        .transition(
            &k,
            &claim(&d),
            Transition::Complete {
                result: Some(Ok(text.clone())),
                result_ref: Field::Absent,
            },
            NOW,
            p,
        )
        .unwrap();
    assert_eq!(done.result.as_deref(), Some(text.as_str()));
    assert!(done.result_omitted.is_none());
    // The hard ceiling holds whatever is asked.
    let capped = EffectStore::with_max_result_bytes(MemoryStorage::default(), usize::MAX);
    assert_eq!(capped.max_result_bytes(), HARD_MAX_RESULT_BYTES);
}

#[test]
fn a_sqlite_file_from_before_result_digests_gains_their_columns() {
    let path = temp_db("migrate");
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE prism_tool_effects (
              id TEXT PRIMARY KEY NOT NULL, tenant_id TEXT NOT NULL, account_id TEXT, user_id TEXT,
              effect_key TEXT NOT NULL, session_id TEXT NOT NULL, run_id TEXT NOT NULL,
              tool_call_id TEXT NOT NULL, tool_name TEXT NOT NULL, arguments_hash TEXT NOT NULL,
              status TEXT NOT NULL, attempt INTEGER NOT NULL, version INTEGER NOT NULL, claim_token TEXT,
              result TEXT, result_ref TEXT, failure_code TEXT, failure_reference TEXT,
              created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, expires_at INTEGER
            ) WITHOUT ROWID;",
        )
        .unwrap();
    }
    large_result_completes(EffectStore::new(
        SqliteStorage::open(&path, &SqliteOptions::default()).unwrap(),
    ));
    // Opening it again finds the columns there.
    SqliteStorage::open(&path, &SqliteOptions::default()).unwrap();
    let _ = std::fs::remove_dir_all(std::path::Path::new(&path).parent().unwrap());
}

#[test]
fn claim_tokens_are_distinct_version_4_uuids() {
    let store = EffectStore::new(MemoryStorage::default());
    let p = &parse_iso_strict;
    let mut seen = std::collections::HashSet::new();
    // More than one pool's worth (256 tokens per refill).
    for i in 0..1000 {
        let (_, r) = store
            .begin(&key(&format!("t{i}")), None, None, NOW, p)
            .unwrap();
        let t = r.claim_token.unwrap();
        assert_eq!(t.len(), 36);
        let parts: Vec<&str> = t.split('-').collect();
        assert_eq!(
            parts.iter().map(|x| x.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12]
        );
        assert!(parts[2].starts_with('4'), "{t}");
        assert!(matches!(&parts[3][..1], "8" | "9" | "a" | "b"), "{t}");
        assert!(t
            .bytes()
            .all(|c| c == b'-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert!(seen.insert(t));
    }
}
