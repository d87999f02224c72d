//! The `ToolEffectStore` state machine, shared by every built-in store.
//!
//! Legal transitions (everything else is `ERR_PRISM_TOOL_EFFECT_CONFLICT`):
//! absent → pending (`begin`); failed_retryable → pending (`begin`, while `attempt < maxAttempts`);
//! pending → dispatched (`markDispatched`); pending | dispatched → failed_retryable | failed_terminal
//! (`fail`); dispatched → completed (`complete`); dispatched → unknown (`markUnknown`);
//! unknown | failed_retryable → completed | failed_retryable | failed_terminal (`resolveUnknown`, CAS on
//! version only; a `failed_retryable` verdict gives the key a fresh set of attempts, so a key whose
//! attempts ran out can be claimed again).
//! Every claimed transition compares `expectedVersion` with the record's `version` and `claimToken` with
//! the record's token, and bumps `version` by one. A `pending` record whose lease (`expiresAt`) has passed
//! reads as `failed_retryable`, a `dispatched` one as `unknown` (failure code
//! `ERR_PRISM_TOOL_EFFECT_EXPIRED`); `unknown` never expires. Completed and failed records drop their claim.
//!
//! A storage backend provides one primitive — run a function on the current record atomically and write
//! what it returns — and each operation is written once on top of it.

use super::error::{EffectError, StoreError};
use super::identity::{Field, OwnershipView};
use super::key::{bounded_text, optional_text, owner_of, validate_key, KeyInput, Owner, ValidKey};
use super::record::{EffectRecord, Failure, ResultDigest, Status};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
/// The largest result a store keeps by default; a larger one completes its record without the value
/// (`resultOmitted`). `maxResultBytes` raises it up to [`HARD_MAX_RESULT_BYTES`].
pub const MAX_RESULT_BYTES: usize = 64 * 1024;
pub const HARD_MAX_RESULT_BYTES: usize = 16 * 1024 * 1024;
pub const MAX_REFERENCE_BYTES: usize = 1024;
pub const MAX_FAILURE_CODE_BYTES: usize = 128;
/// The largest record with the default result limit; a store that keeps larger results allows
/// its result limit plus the same 64 KiB for everything else.
pub const MAX_RECORD_BYTES: usize = 128 * 1024;
/// Failure code of a record whose lease ran out.
pub const EXPIRED_CODE: &str = "ERR_PRISM_TOOL_EFFECT_EXPIRED";

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

/// What the atomic primitive's function asks for: a record to insert where there was none, or
/// (`dirty`) that the record it was lent, changed in place, be written back; and what to return.
pub struct Step<R> {
    pub insert: Option<EffectRecord>,
    pub dirty: bool,
    pub out: R,
}

impl<R> Step<R> {
    /// Nothing to write.
    pub fn read(out: R) -> Self {
        Self {
            insert: None,
            dirty: false,
            out,
        }
    }
    /// The lent record was changed in place.
    pub fn changed(out: R) -> Self {
        Self {
            insert: None,
            dirty: true,
            out,
        }
    }
    /// The record a storage that holds copies must write: the one to insert, else the lent record
    /// (`current`) when it changed, else none.
    pub fn written<'a>(&'a self, current: Option<&'a EffectRecord>) -> Option<&'a EffectRecord> {
        match (&self.insert, self.dirty) {
            (Some(r), _) => Some(r),
            (None, true) => current,
            (None, false) => None,
        }
    }
}

/// Outcome of the atomic primitive's function.
pub type Update<R> = Result<Step<R>, StoreError>;

/// The atomic primitive's function: it is lent the current record, if any, and says what to write
/// and what to answer (see [`RecordStorage::update`]).
pub trait RecordUpdate<R>: FnOnce(Option<&mut EffectRecord>) -> Update<R> {}
impl<R, F: FnOnce(Option<&mut EffectRecord>) -> Update<R>> RecordUpdate<R> for F {}

/// A place records live in. `update` lends `f` the current record (mutable, so a transition edits it
/// in place instead of copying it) and must run `f` and the write it asks for as one atomic step with
/// respect to every other `update` on the same storage, in this process and in others sharing it.
/// `f` changes the record only once it has decided to succeed, so an `Err` leaves storage as it was.
pub trait RecordStorage: Send + Sync {
    fn read(&self, k: &ValidKey) -> Result<Option<EffectRecord>, StoreError>;
    fn update<R>(&self, k: &ValidKey, f: impl RecordUpdate<R>) -> Result<R, StoreError>;
    /// Deletes up to `limit` terminal records of exactly this ownership updated before `before`.
    fn cleanup(&self, owner: &Owner, before: i64, limit: u32) -> Result<u32, StoreError>;
    fn close(&self) {}
}

fn check_matches(record: &EffectRecord, k: &ValidKey) -> Result<(), StoreError> {
    if record.key != k.key {
        return Err(EffectError::conflict().into());
    }
    Ok(())
}

/// Applies lease expiry in place: a `pending` record whose lease ran out becomes `failed_retryable`,
/// a `dispatched` one `unknown`. Returns whether the record changed.
pub fn expire(record: &mut EffectRecord, now: i64) -> bool {
    let status = match (record.status, record.expires_at) {
        (Status::Pending, Some(e)) if e <= now => Status::FailedRetryable,
        (Status::Dispatched, Some(e)) if e <= now => Status::Unknown,
        _ => return false,
    };
    record.status = status;
    record.version += 1;
    record.claim_token = None;
    record.expires_at = None;
    record.failure = Some(Box::new(Failure {
        code: EXPIRED_CODE.to_owned(),
        reference: None,
    }));
    record.updated_at = now;
    true
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

fn require_claim<'r>(
    record: Option<&'r mut EffectRecord>,
    claim: &Claim,
    statuses: &[Status],
) -> Result<&'r mut EffectRecord, StoreError> {
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

/// A result as a record keeps it: its text, or (larger than the store keeps) its digest.
#[derive(Debug, Default)]
pub struct StoredResult {
    pub text: Option<String>,
    pub omitted: Option<ResultDigest>,
}

/// The two fields of a `ToolResult` a store checks; everything else is skipped unread.
#[derive(serde::Deserialize)]
struct ResultHead {
    #[serde(rename = "toolCallId", default)]
    tool_call_id: Option<serde_json::Value>,
    #[serde(default)]
    name: Option<serde_json::Value>,
}

/// Checks a result: JSON, and a `ToolResult` of this call (same `toolCallId` and `name`). One larger
/// than `max_bytes` is not kept: the record holds its size and SHA-256 instead (`resultOmitted`).
pub fn validate_result(
    result: ResultInput,
    k: &ValidKey,
    max_bytes: usize,
) -> Result<StoredResult, EffectError> {
    let text = match result {
        None => return Ok(StoredResult::default()),
        Some(Err(())) => return Err(EffectError::limit("tool result must be JSON serializable")),
        Some(Ok(t)) => t,
    };
    let same = match serde_json::from_str::<ResultHead>(&text) {
        Ok(head) => {
            head.tool_call_id.as_ref().and_then(|v| v.as_str()) == Some(k.key.tool_call_id())
                && head.name.as_ref().and_then(|v| v.as_str()) == Some(k.key.tool_name())
        }
        // Not an object of that shape (an array, a string, a field of another type): JSON that is
        // not this call's result, or not JSON at all.
        Err(_) => {
            serde_json::from_str::<serde::de::IgnoredAny>(&text)
                .map_err(|_| EffectError::limit("tool result must be JSON serializable"))?;
            false
        }
    };
    if !same {
        return Err(EffectError::conflict());
    }
    if text.len() > max_bytes {
        return Ok(StoredResult {
            text: None,
            omitted: Some(ResultDigest {
                bytes: text.len() as u64,
                sha256: super::canonical::sha256_hex(&text),
            }),
        });
    }
    Ok(StoredResult {
        text: Some(text),
        omitted: None,
    })
}

fn check_size(record: &EffectRecord, max: usize) -> Result<(), EffectError> {
    if record.json_len_bound() > max && record.to_json().len() > max {
        return Err(EffectError::limit("tool effect record exceeds limits"));
    }
    Ok(())
}

/// Random bytes from the OS, taken 4 KiB at a time: one `getrandom` call serves 256 claim tokens
/// (a call per token was most of a claim's cost). Each byte is used once; the pool belongs to the
/// process that filled it: a forked child refills its own before using any (see [`note_fork`]).
struct RandomPool {
    bytes: [u8; 4096],
    used: usize,
    /// The [`lineage`] of the process that filled it.
    lineage: u64,
}

impl RandomPool {
    /// Whether the next 16 bytes must come from a fresh fill: the pool is spent, or it was filled
    /// by another process (`lineage` is this process's).
    fn stale(&self, lineage: u64) -> bool {
        self.used + 16 > self.bytes.len() || self.lineage != lineage
    }
}

static RANDOM: Mutex<RandomPool> = Mutex::new(RandomPool {
    bytes: [0; 4096],
    used: 4096,
    lineage: 0,
});

/// How many forks this process descends from, as counted by [`note_fork`].
static FORKS: AtomicU64 = AtomicU64::new(0);
/// Whether a host counts forks with [`note_fork`] (see [`watching_forks`]).
static FORKS_WATCHED: AtomicBool = AtomicBool::new(false);

/// Tells the claim-token pool that this process is a fork's child: its copy of the parent's pool
/// is never used, so parent and child never hand out the same token. It only bumps a counter, so
/// it is safe in a child.
pub fn note_fork() {
    FORKS.fetch_add(1, Ordering::Relaxed);
}

/// Says that [`note_fork`] runs in every fork's child (the Node binding registers it with
/// `pthread_atfork` when it loads). Until a host says so, the pool asks for the process id at
/// every token instead: a system call per claim.
pub fn watching_forks() {
    FORKS_WATCHED.store(true, Ordering::Relaxed);
}

/// Which process the pool serves: the fork count when forks are watched, else the process id.
fn lineage() -> u64 {
    if FORKS_WATCHED.load(Ordering::Relaxed) {
        FORKS.load(Ordering::Relaxed)
    } else {
        u64::from(std::process::id()) | 1 << 63
    }
}

fn random_16() -> Result<[u8; 16], StoreError> {
    let mut pool = RANDOM.lock().unwrap_or_else(|e| e.into_inner());
    let lineage = lineage();
    if pool.stale(lineage) {
        getrandom::fill(&mut pool.bytes)
            .map_err(|e| StoreError::Storage(format!("tool effect store failed: {e}")))?;
        pool.used = 0;
        pool.lineage = lineage;
    }
    let mut b = [0u8; 16];
    let at = pool.used;
    b.copy_from_slice(&pool.bytes[at..at + 16]);
    // Wipe what was handed out, so the pool never holds a token already in use.
    pool.bytes[at..at + 16].fill(0);
    pool.used += 16;
    Ok(b)
}

/// A fresh claim token: a random (version 4) UUID.
fn new_claim_token() -> Result<String, StoreError> {
    let mut b = random_16()?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(36);
    for (i, x) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(HEX[(x >> 4) as usize] as char);
        out.push(HEX[(x & 15) as usize] as char);
    }
    Ok(out)
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

/// The validated payload of a transition, applied to a record in place.
struct Change {
    status: Status,
    result: StoredResult,
    result_ref: Option<String>,
    failure: Option<Failure>,
}

impl Change {
    /// A bound on the bytes this change adds to the record's JSON.
    fn json_len_bound(&self) -> usize {
        let opt = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        self.result.text.as_ref().map_or(0, String::len)
            + 6 * (opt(&self.result_ref)
                + self
                    .failure
                    .as_ref()
                    .map_or(0, |f| f.code.len() + opt(&f.reference)))
            + 256
    }

    /// Applies the change: new status and version; completed, failed and unknown records drop their
    /// claim; a new result, reference or failure replaces the old one.
    fn apply(self, record: &mut EffectRecord, now: i64) {
        record.status = self.status;
        record.version += 1;
        if self.status != Status::Dispatched {
            record.claim_token = None;
            record.expires_at = None;
        }
        if let Some(t) = self.result.text {
            record.result = Some(t);
            record.result_omitted = None;
        }
        if let Some(d) = self.result.omitted {
            record.result = None;
            record.result_omitted = Some(Box::new(d));
        }
        if let Some(r) = self.result_ref {
            record.result_ref = Some(r);
        }
        if let Some(f) = self.failure {
            record.failure = Some(Box::new(f));
        }
        record.updated_at = now;
    }

    /// Applies the change if the record stays within `max` bytes after it; else leaves it as it was.
    fn apply_within(
        self,
        record: &mut EffectRecord,
        max: usize,
        now: i64,
    ) -> Result<(), EffectError> {
        self.check_size(record, max, now)?;
        self.apply(record, now);
        Ok(())
    }

    /// Checks the record's size after the change before making it: by a bound when that suffices, else
    /// on a copy (only a record near the limit pays for it).
    fn check_size(&self, record: &EffectRecord, max: usize, now: i64) -> Result<(), EffectError> {
        if record.json_len_bound() + self.json_len_bound() <= max {
            return Ok(());
        }
        let mut probe = record.clone();
        Change {
            status: self.status,
            result: StoredResult {
                text: self.result.text.clone(),
                omitted: self.result.omitted.clone(),
            },
            result_ref: self.result_ref.clone(),
            failure: self.failure.clone(),
        }
        .apply(&mut probe, now);
        check_size(&probe, max)
    }
}

/// A `ToolEffectStore` over some storage.
pub struct EffectStore<S: RecordStorage> {
    pub storage: S,
    max_result_bytes: usize,
    max_record_bytes: usize,
    /// The lease of a `begin` that names none (`claimTtlMs`).
    claim_ttl_ms: i64,
}

type Parse<'a> = &'a dyn Fn(&str) -> Option<i64>;

/// The fresh `pending` record of a claim (a new key, or a new attempt of a retryable one).
fn fresh_record(
    k: &ValidKey,
    token: String,
    attempt: u32,
    version: u64,
    created_at: i64,
    now: i64,
    ttl: i64,
) -> EffectRecord {
    EffectRecord {
        key: k.key.clone(),
        status: Status::Pending,
        attempt,
        version,
        claim_token: Some(token),
        result: None,
        result_ref: None,
        result_omitted: None,
        failure: None,
        created_at,
        updated_at: now,
        expires_at: Some(now + ttl),
    }
}

impl<S: RecordStorage> EffectStore<S> {
    pub fn new(storage: S) -> Self {
        Self::with_max_result_bytes(storage, MAX_RESULT_BYTES)
    }

    /// A store that keeps results up to `max_result_bytes` (at most [`HARD_MAX_RESULT_BYTES`]); larger
    /// ones complete their record with `resultOmitted` instead of the value.
    pub fn with_max_result_bytes(storage: S, max_result_bytes: usize) -> Self {
        let max_result_bytes = max_result_bytes.min(HARD_MAX_RESULT_BYTES);
        Self {
            storage,
            max_result_bytes,
            max_record_bytes: MAX_RECORD_BYTES.max(max_result_bytes + 64 * 1024),
            claim_ttl_ms: DEFAULT_CLAIM_TTL_MS,
        }
    }

    /// The lease a claim gets when its `begin` names none (the store's `claimTtlMs` option): how long
    /// a claim whose worker died, or whose database restarted before it was dispatched, blocks its
    /// key. Default 15 min; kept within 1 ms and 60 min.
    pub fn with_claim_ttl_ms(mut self, ms: i64) -> Self {
        self.claim_ttl_ms = ms.clamp(1, HARD_CLAIM_TTL_MS);
        self
    }

    pub fn max_result_bytes(&self) -> usize {
        self.max_result_bytes
    }

    /// A transition's payload validated for `k`, in this order: the result, its reference, the
    /// failure.
    fn change(
        &self,
        k: &ValidKey,
        status: Status,
        result: ResultInput,
        result_ref: &Field,
        failure: Option<&FailureInput>,
    ) -> Result<Change, EffectError> {
        Ok(Change {
            status,
            result: validate_result(result, k, self.max_result_bytes)?,
            result_ref: optional_text(result_ref, MAX_REFERENCE_BYTES, "effect reference")?,
            failure: failure.map(validate_failure).transpose()?,
        })
    }

    /// `get`: the record as it reads now (lease expiry applied and persisted), or `None`.
    pub fn get(
        &self,
        input: &KeyInput,
        now: i64,
        parse: Parse,
    ) -> Result<Option<EffectRecord>, StoreError> {
        let k = validate_key(input, now, parse)?;
        let Some(mut found) = self.storage.read(&k)? else {
            return Ok(None);
        };
        check_matches(&found, &k)?;
        if !expire(&mut found, now) {
            return Ok(Some(found));
        }
        self.storage.update(&k, |current| {
            let Some(current) = current else {
                return Ok(Step::read(None));
            };
            check_matches(current, &k)?;
            let changed = expire(current, now);
            Ok(Step {
                insert: None,
                dirty: changed,
                out: Some(current.clone()),
            })
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
        self.begin_valid(&k, claim_ttl_ms, max_attempts, now, |outcome, r| {
            let shown = match outcome {
                BeginOutcome::Acquired => r.clone(),
                BeginOutcome::Existing => r.without_claim_token(),
            };
            (outcome, shown)
        })
    }

    /// `begin` on a validated key (whose identity the caller checked at `now`); `out` makes the answer
    /// from the record as stored (an `existing` answer must not show its claim token).
    pub fn begin_valid<R>(
        &self,
        k: &ValidKey,
        claim_ttl_ms: Option<f64>,
        max_attempts: Option<f64>,
        now: i64,
        out: impl FnOnce(BeginOutcome, &EffectRecord) -> R,
    ) -> Result<R, StoreError> {
        let ttl = safe_int(
            claim_ttl_ms,
            self.claim_ttl_ms,
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
        // A fresh record holds only the key's fields (each bounded, see `validate_key`) and a token:
        // far below every record limit, so it needs no size check.
        self.storage.update(k, |current| {
            let Some(current) = current else {
                let record = fresh_record(k, token, 1, 1, now, now, ttl);
                let out = out(BeginOutcome::Acquired, &record);
                return Ok(Step {
                    insert: Some(record),
                    dirty: false,
                    out,
                });
            };
            check_matches(current, k)?;
            let changed = expire(current, now);
            if current.status == Status::FailedRetryable && current.attempt < attempts {
                *current = fresh_record(
                    k,
                    token,
                    current.attempt + 1,
                    current.version + 1,
                    current.created_at,
                    now,
                    ttl,
                );
                return Ok(Step::changed(out(BeginOutcome::Acquired, current)));
            }
            Ok(Step {
                insert: None,
                dirty: changed,
                out: out(BeginOutcome::Existing, current),
            })
        })
    }

    /// A claimed transition (`markDispatched`, `complete`, `fail`, `markUnknown`).
    pub fn transition(
        &self,
        input: &KeyInput,
        claim: &Claim,
        to: Transition,
        now: i64,
        parse: Parse,
    ) -> Result<EffectRecord, StoreError> {
        let k = validate_key(input, now, parse)?;
        self.transition_valid(&k, claim, to, now, EffectRecord::clone)
    }

    /// A claimed transition on a validated key (whose identity the caller checked at `now`); `out`
    /// makes the answer from the record as stored, which is changed in place (no copy of it is made).
    pub fn transition_valid<R>(
        &self,
        k: &ValidKey,
        claim: &Claim,
        to: Transition,
        now: i64,
        out: impl FnOnce(&EffectRecord) -> R,
    ) -> Result<R, StoreError> {
        // Validate the payload before touching storage.
        let none = Field::Absent;
        let (from, change): (&[Status], Change) = match to {
            Transition::Dispatched => (
                &[Status::Pending],
                self.change(k, Status::Dispatched, None, &none, None)?,
            ),
            Transition::Complete { result, result_ref } => (
                &[Status::Dispatched],
                self.change(k, Status::Completed, result, &result_ref, None)?,
            ),
            Transition::Fail { status, failure } => {
                let status = match status.text().and_then(Status::parse) {
                    Some(s @ (Status::FailedRetryable | Status::FailedTerminal)) => s,
                    _ => return Err(EffectError::limit("effect failure status is invalid").into()),
                };
                let Some(failure) = failure else {
                    return Err(
                        EffectError::limit("effect failure code is required and bounded").into(),
                    );
                };
                (
                    &[Status::Pending, Status::Dispatched],
                    self.change(k, status, None, &none, Some(&failure))?,
                )
            }
            Transition::Unknown { failure } => (
                &[Status::Dispatched],
                self.change(k, Status::Unknown, None, &none, failure.as_ref())?,
            ),
        };
        let max = self.max_record_bytes;
        self.storage.update(k, |current| {
            // Lease expiry is applied first (as any read applies it); a refused transition may leave
            // it applied.
            let current = match current {
                Some(c) => {
                    check_matches(c, k)?;
                    expire(c, now);
                    Some(c)
                }
                None => None,
            };
            let record = require_claim(current, claim, from)?;
            change.apply_within(record, max, now)?;
            Ok(Step::changed(out(record)))
        })
    }

    /// `resolveUnknown`: an operator's verdict on an `unknown` record, or on a `failed_retryable` one
    /// (whose attempts may have run out: `begin` answers it as exhausted), CAS on `expectedVersion`.
    /// A `failed_retryable` verdict starts the key's attempts again.
    pub fn resolve_unknown(
        &self,
        input: &KeyInput,
        r: Resolution,
        now: i64,
        parse: Parse,
    ) -> Result<EffectRecord, StoreError> {
        let k = validate_key(input, now, parse)?;
        let status = match r.status.text().and_then(Status::parse) {
            Some(s @ (Status::Completed | Status::FailedRetryable | Status::FailedTerminal)) => s,
            _ => return Err(EffectError::limit("effect resolution status is invalid").into()),
        };
        let change = self.change(&k, status, r.result, &r.result_ref, r.failure.as_ref())?;
        let expected_version = r.expected_version;
        let max = self.max_record_bytes;
        self.storage.update(&k, |current| {
            let Some(record) = current else {
                return Err(EffectError::conflict().into());
            };
            check_matches(record, &k)?;
            expire(record, now);
            if !matches!(record.status, Status::Unknown | Status::FailedRetryable)
                || expected_version != Some(record.version as f64)
            {
                return Err(EffectError::conflict().into());
            }
            let retry = change.status == Status::FailedRetryable;
            change.apply_within(record, max, now)?;
            if retry {
                record.attempt = 0;
            }
            Ok(Step::changed(record.clone()))
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
        let owner = owner_of(ownership.clone())?;
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

#[cfg(test)]
mod random_pool_tests {
    use super::*;

    #[test]
    fn a_pool_filled_before_a_fork_is_never_used_after_it() {
        let pool = RandomPool {
            bytes: [7; 4096],
            used: 16,
            lineage: 0,
        };
        assert!(!pool.stale(0), "a fresh pool serves its own process");
        assert!(
            pool.stale(1),
            "the same bytes, seen from a fork's child, are refilled"
        );
        let spent = RandomPool {
            used: 4096 - 8,
            ..pool
        };
        assert!(spent.stale(0), "fewer than 16 bytes left: refilled");
    }

    #[test]
    fn noting_a_fork_refills_before_the_next_token() {
        let before = random_16().unwrap();
        // Unwatched, the pool is the process id's; watched, the fork count's.
        assert_eq!(lineage(), u64::from(std::process::id()) | 1 << 63);
        watching_forks();
        note_fork();
        let after = random_16().unwrap();
        assert_ne!(before, after);
        let pool = RANDOM.lock().unwrap_or_else(|e| e.into_inner());
        assert_eq!(pool.lineage, FORKS.load(Ordering::Relaxed));
        // The bytes handed out are wiped, the rest of the fresh fill is still there.
        assert!(pool.bytes[..pool.used].iter().all(|&b| b == 0));
    }
}
