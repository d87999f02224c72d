//! The effect record as a table row, the same on SQLite and PostgreSQL: one column list, one list of
//! bound values, one reading back (`storage::row`).

use super::error::StoreError;
use super::record::{EffectKey, EffectRecord, Failure, KeyFields, ResultDigest, Status};
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
        r.key.tenant_id().into(),
        r.key.account_id().into(),
        r.key.user_id().into(),
        r.key.effect_key().into(),
        r.key.session_id().into(),
        r.key.run_id().into(),
        r.key.tool_call_id().into(),
        r.key.tool_name().into(),
        r.key.arguments_hash().into(),
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
        let failure_reference = row.opt_text(16)?;
        let omitted_sha256 = row.opt_text(21)?;
        Ok(EffectRecord {
            key: Arc::new(EffectKey::new(KeyFields {
                tenant_id: &row.text(0)?,
                account_id: row.opt_text(1)?.as_deref(),
                user_id: row.opt_text(2)?.as_deref(),
                effect_key: &row.text(3)?,
                session_id: &row.text(4)?,
                run_id: &row.text(5)?,
                tool_call_id: &row.text(6)?,
                tool_name: &row.text(7)?,
                arguments_hash: &row.text(8)?,
            })),
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
