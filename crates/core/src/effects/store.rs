//! The `ToolEffectStore` state machine, shared by every built-in store.
//!
//! Legal transitions (everything else is `ERR_PRISM_TOOL_EFFECT_CONFLICT`):
//! absent → pending (`begin`); failed_retryable → pending (`begin`, while `attempt < maxAttempts`);
//! pending → dispatched (`markDispatched`); pending | dispatched → failed_retryable | failed_terminal
//! (`fail`); dispatched → completed (`complete`); dispatched → unknown (`markUnknown`);
//! unknown → completed | failed_retryable | failed_terminal (`resolveUnknown`, CAS on version only).
//! Every claimed transition compares `expectedVersion` with the record's `version` and `claimToken` with
//! the record's token, and bumps `version` by one. A `pending` record whose lease (`expiresAt`) has passed
//! reads as `failed_retryable`, a `dispatched` one as `unknown` (failure code
//! `ERR_PRISM_TOOL_EFFECT_EXPIRED`); `unknown` never expires. Completed and failed records drop their claim.
//!
//! A storage backend provides one primitive — run a function on the current record atomically and write
//! what it returns — and each operation is written once on top of it.

use super::error::{EffectError, EffectErrorCode, StoreError};
use super::identity::{check_matches_ownership, Field, IdentityView, OwnershipView};
use super::record::{EffectRecord, Failure, Status};
use std::collections::HashMap;
use std::sync::Mutex;

pub const DEFAULT_CLAIM_TTL_MS: i64 = 15 * 60_000;
pub const HARD_CLAIM_TTL_MS: i64 = 60 * 60_000;
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;
pub const HARD_MAX_ATTEMPTS: u32 = 10;
pub const DEFAULT_CLEANUP_LIMIT: u32 = 100;
pub const HARD_CLEANUP_LIMIT: u32 = 500;
pub const MAX_EFFECT_KEY_BYTES: usize = 96;
pub const MAX_TOOL_NAME_BYTES: usize = 512;
pub const MAX_IDENTIFIER_BYTES: usize = 512;
pub const MAX_RESULT_BYTES: usize = 64 * 1024;
pub const MAX_REFERENCE_BYTES: usize = 1024;
pub const MAX_FAILURE_CODE_BYTES: usize = 128;
pub const MAX_RECORD_BYTES: usize = 128 * 1024;
/// Failure code of a record whose lease ran out.
pub const EXPIRED_CODE: &str = "ERR_PRISM_TOOL_EFFECT_EXPIRED";

/// `ToolEffectKey` as read from the host.
#[derive(Debug, Clone, Default)]
pub struct KeyInput {
    pub identity: IdentityView,
    pub ownership: OwnershipView,
    pub key: Field,
    pub session_id: Field,
    pub run_id: Field,
    pub tool_call_id: Field,
    pub tool_name: Field,
    pub arguments_hash: Field,
}

/// A key whose identity, ownership and fields passed validation.
#[derive(Debug, Clone)]
pub struct ValidKey {
    pub storage_id: String,
    pub tenant_id: String,
    pub account_id: Option<String>,
    pub user_id: Option<String>,
    pub key: String,
    pub session_id: String,
    pub run_id: String,
    pub tool_call_id: String,
    pub tool_name: String,
    pub arguments_hash: String,
}

/// `claimToken` + `expectedVersion` of a transition.
#[derive(Debug, Clone, Default)]
pub struct Claim {
    pub claim_token: Field,
    pub expected_version: Option<f64>,
}

/// `{ code, reference? }` as read from the host; `None` fields are absent.
#[derive(Debug, Clone, Default)]
pub struct FailureInput {
    pub code: Field,
    pub reference: Field,
}

/// A `ToolResult` given to `complete` / `resolveUnknown`: its `JSON.stringify` text, or `Err` when it
/// could not be serialised.
pub type ResultInput = Option<Result<String, ()>>;

/// Whether `begin` took the claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeginOutcome {
    Acquired,
    Existing,
}

impl BeginOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Acquired => "acquired",
            Self::Existing => "existing",
        }
    }
}

/// Outcome of the atomic primitive's function: what to write (if anything) and what to return.
pub type Update<R> = Result<(Option<EffectRecord>, R), StoreError>;

/// A place records live in. `update` must run `f` and the write it asks for as one atomic step with
/// respect to every other `update` on the same storage, in this process and in others sharing it.
pub trait RecordStorage: Send + Sync {
    fn read(&self, id: &str) -> Result<Option<EffectRecord>, StoreError>;
    fn update<R>(
        &self,
        id: &str,
        f: impl FnOnce(Option<EffectRecord>) -> Update<R>,
    ) -> Result<R, StoreError>;
    /// Deletes up to `limit` terminal records of exactly this ownership updated before `before`.
    fn cleanup(&self, owner: &Owner, before: i64, limit: u32) -> Result<u32, StoreError>;
    fn close(&self) {}
}

/// An exact ownership (tenant, optional account, optional user).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub tenant_id: String,
    pub account_id: Option<String>,
    pub user_id: Option<String>,
}

fn bounded_text(f: &Field, max: usize, label: &str) -> Result<String, EffectError> {
    match f.text() {
        Some(s) if !s.trim().is_empty() && s.len() <= max => Ok(s.to_owned()),
        _ => Err(EffectError::limit(format!(
            "{label} is required and bounded"
        ))),
    }
}

fn optional_text(f: &Field, max: usize, label: &str) -> Result<Option<String>, EffectError> {
    match f {
        Field::Absent => Ok(None),
        _ => bounded_text(f, max, label).map(Some),
    }
}

fn owner_of(o: &OwnershipView) -> Result<Owner, EffectError> {
    if o.tenant_id.text().is_none_or(|t| t.trim().is_empty()) {
        return Err(EffectError::new(
            EffectErrorCode::Conflict,
            "tool effect ownership is required",
        ));
    }
    Ok(Owner {
        tenant_id: bounded_text(&o.tenant_id, MAX_IDENTIFIER_BYTES, "ownership")?,
        account_id: optional_text(&o.account_id, MAX_IDENTIFIER_BYTES, "ownership")?,
        user_id: optional_text(&o.user_id, MAX_IDENTIFIER_BYTES, "ownership")?,
    })
}

/// Validates a key: the identity is active and owns exactly this ownership, every field is bounded.
pub fn validate_key(
    input: &KeyInput,
    now: i64,
    parse: &dyn Fn(&str) -> Option<i64>,
) -> Result<ValidKey, StoreError> {
    check_matches_ownership(&input.identity, &input.ownership, now, parse)?;
    let owner = owner_of(&input.ownership)?;
    let id = &input.identity;
    if Some(owner.tenant_id.as_str()) != id.tenant_id.text()
        || owner.account_id.as_deref() != id.account_id.text()
        || owner.user_id.as_deref() != id.user_id.text()
    {
        return Err(EffectError::conflict().into());
    }
    let key = bounded_text(&input.key, MAX_EFFECT_KEY_BYTES, "effect key")?;
    let session_id = bounded_text(&input.session_id, MAX_IDENTIFIER_BYTES, "session id")?;
    let run_id = bounded_text(&input.run_id, MAX_IDENTIFIER_BYTES, "run id")?;
    let tool_call_id = bounded_text(&input.tool_call_id, MAX_IDENTIFIER_BYTES, "tool call id")?;
    let tool_name = bounded_text(&input.tool_name, MAX_TOOL_NAME_BYTES, "tool name")?;
    let arguments_hash = match input.arguments_hash.text() {
        Some(h)
            if h.len() == 64
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
        {
            h.to_owned()
        }
        _ => return Err(EffectError::limit("arguments hash is invalid").into()),
    };
    let principal = id
        .principal
        .as_ref()
        .and_then(|p| p.id.text())
        .unwrap_or_default();
    let mut storage_id = String::with_capacity(64 + key.len());
    storage_id.push('[');
    for (i, part) in [
        owner.tenant_id.as_str(),
        owner.account_id.as_deref().unwrap_or(""),
        owner.user_id.as_deref().unwrap_or(""),
        principal,
        key.as_str(),
    ]
    .iter()
    .enumerate()
    {
        if i > 0 {
            storage_id.push(',');
        }
        super::canonical::write_json_string(part, &mut storage_id);
    }
    storage_id.push(']');
    Ok(ValidKey {
        storage_id,
        tenant_id: owner.tenant_id,
        account_id: owner.account_id,
        user_id: owner.user_id,
        key,
        session_id,
        run_id,
        tool_call_id,
        tool_name,
        arguments_hash,
    })
}

fn check_matches(record: &EffectRecord, k: &ValidKey) -> Result<(), StoreError> {
    if record.key != k.key
        || record.session_id != k.session_id
        || record.run_id != k.run_id
        || record.tool_call_id != k.tool_call_id
        || record.tool_name != k.tool_name
        || record.arguments_hash != k.arguments_hash
        || record.tenant_id != k.tenant_id
        || record.account_id != k.account_id
        || record.user_id != k.user_id
    {
        return Err(EffectError::conflict().into());
    }
    Ok(())
}

/// Applies lease expiry. Returns the record as it reads at `now` and whether that differs from storage.
pub fn expire(record: EffectRecord, now: i64) -> (EffectRecord, bool) {
    let status = match (record.status, record.expires_at) {
        (Status::Pending, Some(e)) if e <= now => Status::FailedRetryable,
        (Status::Dispatched, Some(e)) if e <= now => Status::Unknown,
        _ => return (record, false),
    };
    let expired = EffectRecord {
        status,
        version: record.version + 1,
        claim_token: None,
        expires_at: None,
        failure: Some(Failure {
            code: EXPIRED_CODE.to_owned(),
            reference: None,
        }),
        updated_at: now,
        ..record
    };
    (expired, true)
}

fn safe_int(
    v: Option<f64>,
    default: i64,
    min: i64,
    max: i64,
    message: &'static str,
) -> Result<i64, EffectError> {
    match v {
        None => Ok(default),
        Some(f) if f.fract() == 0.0 && f >= min as f64 && f <= max as f64 => Ok(f as i64),
        Some(_) => Err(EffectError::limit(message)),
    }
}

fn require_claim(
    record: Option<EffectRecord>,
    claim: &Claim,
    statuses: &[Status],
) -> Result<EffectRecord, StoreError> {
    let Some(record) = record else {
        return Err(EffectError::conflict().into());
    };
    let token_ok =
        matches!((&record.claim_token, claim.claim_token.text()), (Some(a), Some(b)) if a == b);
    if !statuses.contains(&record.status)
        || claim.expected_version != Some(record.version as f64)
        || !token_ok
    {
        return Err(EffectError::conflict().into());
    }
    Ok(record)
}

fn validate_failure(f: &FailureInput) -> Result<Failure, EffectError> {
    Ok(Failure {
        code: bounded_text(&f.code, MAX_FAILURE_CODE_BYTES, "effect failure code")?,
        reference: optional_text(&f.reference, MAX_REFERENCE_BYTES, "effect reference")?,
    })
}

fn validate_result(result: &ResultInput, k: &ValidKey) -> Result<Option<String>, EffectError> {
    let text = match result {
        None => return Ok(None),
        Some(Err(())) => return Err(EffectError::limit("tool result must be JSON serializable")),
        Some(Ok(t)) => t,
    };
    if text.len() > MAX_RESULT_BYTES {
        return Err(EffectError::limit("tool result exceeds limits"));
    }
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|_| EffectError::limit("tool result must be JSON serializable"))?;
    let same = value.get("toolCallId").and_then(|v| v.as_str()) == Some(k.tool_call_id.as_str())
        && value.get("name").and_then(|v| v.as_str()) == Some(k.tool_name.as_str());
    if !same {
        return Err(EffectError::conflict());
    }
    Ok(Some(text.clone()))
}

fn check_size(record: &EffectRecord) -> Result<(), EffectError> {
    if record.to_json().len() > MAX_RECORD_BYTES {
        return Err(EffectError::limit("tool effect record exceeds limits"));
    }
    Ok(())
}

fn new_claim_token() -> Result<String, StoreError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)
        .map_err(|e| StoreError::Storage(format!("tool effect store failed: {e}")))?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}

/// The end state of a claimed transition.
#[derive(Debug, Clone)]
pub enum Transition {
    Dispatched,
    Complete {
        result: ResultInput,
        result_ref: Field,
    },
    Fail {
        status: Field,
        failure: Option<FailureInput>,
    },
    Unknown {
        failure: Option<FailureInput>,
    },
}

/// Input of `resolveUnknown` beyond the key.
#[derive(Debug, Clone, Default)]
pub struct Resolution {
    pub expected_version: Option<f64>,
    pub status: Field,
    pub result: ResultInput,
    pub result_ref: Field,
    pub failure: Option<FailureInput>,
}

/// A `ToolEffectStore` over some storage.
pub struct EffectStore<S: RecordStorage> {
    pub storage: S,
}

type Parse<'a> = &'a dyn Fn(&str) -> Option<i64>;

impl<S: RecordStorage> EffectStore<S> {
    pub fn new(storage: S) -> Self {
        Self { storage }
    }

    /// `get`: the record as it reads now (lease expiry applied and persisted), or `None`.
    pub fn get(
        &self,
        input: &KeyInput,
        now: i64,
        parse: Parse,
    ) -> Result<Option<EffectRecord>, StoreError> {
        let k = validate_key(input, now, parse)?;
        let Some(found) = self.storage.read(&k.storage_id)? else {
            return Ok(None);
        };
        check_matches(&found, &k)?;
        let (_, changed) = expire(found.clone(), now);
        if !changed {
            return Ok(Some(found));
        }
        self.storage.update(&k.storage_id, |current| {
            let Some(current) = current else {
                return Ok((None, None));
            };
            check_matches(&current, &k)?;
            let (view, changed) = expire(current, now);
            Ok((changed.then(|| view.clone()), Some(view)))
        })
    }

    /// `begin`: claims an absent (or retryable) effect as `pending` with a fresh claim token and a lease of
    /// `claimTtlMs`; otherwise returns the existing record (without its claim token).
    pub fn begin(
        &self,
        input: &KeyInput,
        claim_ttl_ms: Option<f64>,
        max_attempts: Option<f64>,
        now: i64,
        parse: Parse,
    ) -> Result<(BeginOutcome, EffectRecord), StoreError> {
        let k = validate_key(input, now, parse)?;
        let ttl = safe_int(
            claim_ttl_ms,
            DEFAULT_CLAIM_TTL_MS,
            1,
            HARD_CLAIM_TTL_MS,
            "claim TTL exceeds limits",
        )?;
        let attempts = safe_int(
            max_attempts,
            DEFAULT_MAX_ATTEMPTS as i64,
            1,
            HARD_MAX_ATTEMPTS as i64,
            "effect attempts exceed limits",
        )? as u32;
        let token = new_claim_token()?;
        self.storage.update(&k.storage_id, |current| {
            let fresh = |attempt: u32, previous: Option<&EffectRecord>| EffectRecord {
                tenant_id: k.tenant_id.clone(),
                account_id: k.account_id.clone(),
                user_id: k.user_id.clone(),
                key: k.key.clone(),
                session_id: k.session_id.clone(),
                run_id: k.run_id.clone(),
                tool_call_id: k.tool_call_id.clone(),
                tool_name: k.tool_name.clone(),
                arguments_hash: k.arguments_hash.clone(),
                status: Status::Pending,
                attempt,
                version: previous.map_or(0, |p| p.version) + 1,
                claim_token: Some(token.clone()),
                result: None,
                result_ref: None,
                failure: None,
                created_at: previous.map_or(now, |p| p.created_at),
                updated_at: now,
                expires_at: Some(now + ttl),
            };
            let Some(current) = current else {
                let record = fresh(1, None);
                check_size(&record)?;
                return Ok((Some(record.clone()), (BeginOutcome::Acquired, record)));
            };
            check_matches(&current, &k)?;
            let (view, changed) = expire(current, now);
            if view.status == Status::FailedRetryable && view.attempt < attempts {
                let record = fresh(view.attempt + 1, Some(&view));
                check_size(&record)?;
                return Ok((Some(record.clone()), (BeginOutcome::Acquired, record)));
            }
            let shown = view.without_claim_token();
            Ok((changed.then_some(view), (BeginOutcome::Existing, shown)))
        })
    }

    /// A claimed transition (`markDispatched`, `complete`, `fail`, `markUnknown`).
    pub fn transition(
        &self,
        input: &KeyInput,
        claim: &Claim,
        to: &Transition,
        now: i64,
        parse: Parse,
    ) -> Result<EffectRecord, StoreError> {
        let k = validate_key(input, now, parse)?;
        // Validate the payload before touching storage.
        let (from, status, result, result_ref, failure): (
            &[Status],
            Status,
            Option<String>,
            Option<String>,
            Option<Failure>,
        ) = match to {
            Transition::Dispatched => (&[Status::Pending], Status::Dispatched, None, None, None),
            Transition::Complete { result, result_ref } => (
                &[Status::Dispatched],
                Status::Completed,
                validate_result(result, &k)?,
                optional_text(result_ref, MAX_REFERENCE_BYTES, "effect reference")?,
                None,
            ),
            Transition::Fail { status, failure } => {
                let status = match status.text().and_then(Status::parse) {
                    Some(s @ (Status::FailedRetryable | Status::FailedTerminal)) => s,
                    _ => return Err(EffectError::limit("effect failure status is invalid").into()),
                };
                let failure = match failure {
                    Some(f) => validate_failure(f)?,
                    None => {
                        return Err(EffectError::limit(
                            "effect failure code is required and bounded",
                        )
                        .into())
                    }
                };
                (
                    &[Status::Pending, Status::Dispatched],
                    status,
                    None,
                    None,
                    Some(failure),
                )
            }
            Transition::Unknown { failure } => (
                &[Status::Dispatched],
                Status::Unknown,
                None,
                None,
                failure.as_ref().map(validate_failure).transpose()?,
            ),
        };
        self.storage.update(&k.storage_id, |current| {
            let current = match current {
                Some(c) => {
                    check_matches(&c, &k)?;
                    Some(expire(c, now).0)
                }
                None => None,
            };
            let record = require_claim(current, claim, from)?;
            let keeps_claim = status == Status::Dispatched;
            let next = EffectRecord {
                status,
                version: record.version + 1,
                claim_token: if keeps_claim {
                    record.claim_token.clone()
                } else {
                    None
                },
                expires_at: if keeps_claim { record.expires_at } else { None },
                result: result.or_else(|| record.result.clone()),
                result_ref: result_ref.or_else(|| record.result_ref.clone()),
                failure: failure.or_else(|| record.failure.clone()),
                updated_at: now,
                ..record
            };
            check_size(&next)?;
            Ok((Some(next.clone()), next))
        })
    }

    /// `resolveUnknown`: an operator's verdict on an `unknown` record, CAS on `expectedVersion`.
    pub fn resolve_unknown(
        &self,
        input: &KeyInput,
        r: &Resolution,
        now: i64,
        parse: Parse,
    ) -> Result<EffectRecord, StoreError> {
        let k = validate_key(input, now, parse)?;
        let status = match r.status.text().and_then(Status::parse) {
            Some(s @ (Status::Completed | Status::FailedRetryable | Status::FailedTerminal)) => s,
            _ => return Err(EffectError::limit("effect resolution status is invalid").into()),
        };
        let result = validate_result(&r.result, &k)?;
        let result_ref = optional_text(&r.result_ref, MAX_REFERENCE_BYTES, "effect reference")?;
        let failure = r.failure.as_ref().map(validate_failure).transpose()?;
        self.storage.update(&k.storage_id, |current| {
            let Some(current) = current else {
                return Err(EffectError::conflict().into());
            };
            check_matches(&current, &k)?;
            let (record, _) = expire(current, now);
            if record.status != Status::Unknown || r.expected_version != Some(record.version as f64)
            {
                return Err(EffectError::conflict().into());
            }
            let next = EffectRecord {
                status,
                version: record.version + 1,
                claim_token: None,
                expires_at: None,
                result: result.or_else(|| record.result.clone()),
                result_ref: result_ref.or_else(|| record.result_ref.clone()),
                failure: failure.or_else(|| record.failure.clone()),
                updated_at: now,
                ..record
            };
            check_size(&next)?;
            Ok((Some(next.clone()), next))
        })
    }

    /// `cleanup`: deletes up to `limit` (default 100, at most 500) completed / failed_terminal records of
    /// exactly this ownership last updated before `before`.
    pub fn cleanup(
        &self,
        ownership: &OwnershipView,
        before: &Field,
        limit: Option<f64>,
        parse: Parse,
    ) -> Result<u32, StoreError> {
        let before = before
            .text()
            .and_then(parse)
            .ok_or_else(|| EffectError::limit("cleanup boundary is invalid"))?;
        let owner = owner_of(ownership)?;
        let limit = safe_int(
            limit,
            DEFAULT_CLEANUP_LIMIT as i64,
            1,
            HARD_CLEANUP_LIMIT as i64,
            "cleanup limit exceeds limits",
        )?;
        self.storage.cleanup(&owner, before, limit as u32)
    }
}

/// In-process storage: a map behind a mutex.
#[derive(Default)]
pub struct MemoryStorage {
    records: Mutex<HashMap<String, EffectRecord>>,
}

impl MemoryStorage {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, EffectRecord>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl RecordStorage for MemoryStorage {
    fn read(&self, id: &str) -> Result<Option<EffectRecord>, StoreError> {
        Ok(self.lock().get(id).cloned())
    }

    fn update<R>(
        &self,
        id: &str,
        f: impl FnOnce(Option<EffectRecord>) -> Update<R>,
    ) -> Result<R, StoreError> {
        let mut map = self.lock();
        let (write, out) = f(map.get(id).cloned())?;
        if let Some(record) = write {
            map.insert(id.to_owned(), record);
        }
        Ok(out)
    }

    fn cleanup(&self, owner: &Owner, before: i64, limit: u32) -> Result<u32, StoreError> {
        let mut map = self.lock();
        let doomed: Vec<String> = map
            .iter()
            .filter(|(_, r)| {
                r.status.is_terminal()
                    && r.updated_at < before
                    && r.tenant_id == owner.tenant_id
                    && r.account_id == owner.account_id
                    && r.user_id == owner.user_id
            })
            .take(limit as usize)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &doomed {
            map.remove(id);
        }
        Ok(doomed.len() as u32)
    }
}
