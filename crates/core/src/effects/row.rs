//! The effect record as a table row, the same on SQLite and PostgreSQL: one column list, one list of
//! bound values, one reading back (`storage::row`).

use super::error::StoreError;
use super::record::{EffectKey, EffectRecord, Failure, ResultDigest, Status};
use crate::storage::row::{Columns, Value};
use std::sync::Arc;

/// Every column but `id`, in the order `values` binds (after `id`) and `record` reads them.
pub const COLUMNS: &str = "tenant_id, account_id, user_id, effect_key, session_id, run_id, tool_call_id,
  tool_name, arguments_hash, status, attempt, version, claim_token, result, result_ref, failure_code,
  failure_reference, created_at, updated_at, expires_at, result_omitted_bytes, result_omitted_sha256";

/// `id` and then [`COLUMNS`]' values of `r`.
pub fn values<'a>(id: &'a str, r: &'a EffectRecord) -> [Value<'a>; 23] {
    [
        id.into(),
        r.key.field(0).into(),
        r.key.field(1).into(),
        r.key.field(2).into(),
        r.key.field(3).into(),
        r.key.field(4).into(),
        r.key.field(5).into(),
        r.key.field(6).into(),
        r.key.field(7).into(),
        r.key.field(8).into(),
        r.status.as_str().into(),
        i64::from(r.attempt).into(),
        (r.version as i64).into(),
        (&r.claim_token).into(),
        (&r.result).into(),
        (&r.result_ref).into(),
        r.failure.as_ref().map(|f| f.code.as_str()).into(),
        r.failure
            .as_ref()
            .and_then(|f| f.reference.as_deref())
            .into(),
        r.created_at.into(),
        r.updated_at.into(),
        r.expires_at.into(),
        r.result_omitted.as_ref().map(|d| d.bytes as i64).into(),
        r.result_omitted.as_ref().map(|d| d.sha256.as_str()).into(),
    ]
}

fn read_failed(e: String) -> StoreError {
    StoreError::Storage(format!("tool effect store failed: read: {e}"))
}

/// The record of a row read as [`COLUMNS`].
pub fn record(row: &impl Columns) -> Result<EffectRecord, StoreError> {
    let status = row.text(9).map_err(read_failed)?;
    let status = Status::parse(&status).ok_or_else(|| {
        StoreError::Storage("tool effect store failed: corrupt record status".into())
    })?;
    let read = || -> Result<EffectRecord, String> {
        // The key's columns come first, in EffectKey's order; only the account and user may be null.
        let mut key_fields: [Option<String>; 9] = Default::default();
        for (i, f) in key_fields.iter_mut().enumerate() {
            *f = if i == 1 || i == 2 {
                row.opt_text(i)?
            } else {
                Some(row.text(i)?)
            };
        }
        let failure_reference = row.opt_text(16)?;
        let omitted_sha256 = row.opt_text(21)?;
        Ok(EffectRecord {
            key: Arc::new(EffectKey::new(key_fields.each_ref().map(Option::as_deref))),
            status,
            attempt: row.int(10)?.clamp(0, u32::MAX.into()) as u32,
            version: row.int(11)?.max(0) as u64,
            claim_token: row.opt_text(12)?,
            result: row.opt_text(13)?,
            result_ref: row.opt_text(14)?,
            result_omitted: row.opt_int(20)?.zip(omitted_sha256).map(|(bytes, sha256)| {
                Box::new(ResultDigest {
                    bytes: bytes.max(0) as u64,
                    sha256,
                })
            }),
            failure: row.opt_text(15)?.map(|code| {
                Box::new(Failure {
                    code,
                    reference: failure_reference,
                })
            }),
            created_at: row.int(17)?,
            updated_at: row.int(18)?,
            expires_at: row.opt_int(19)?,
        })
    };
    read().map_err(read_failed)
}
