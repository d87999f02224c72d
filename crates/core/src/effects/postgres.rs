//! PostgreSQL storage for effect records: many workers on many machines share one table.
//!
//! Every operation that writes is one short transaction: take a transaction-scoped advisory lock on the
//! record's id (so two claimants of an absent key are serialised too, which a row lock cannot do), read
//! the row, let the store's state machine decide, write, commit. The decision logic is the one every
//! built-in store shares (`store.rs`); only the atomic primitive lives here. Runs on a blocking thread,
//! never the JS thread.

use super::error::{EffectError, EffectErrorCode, StoreError};
use super::key::{Owner, ValidKey};
use super::record::EffectRecord;
use super::row::{self, COLUMNS};
use super::store::{RecordStorage, RecordUpdate};
use crate::storage::postgres::{failed, PgError, PgPool};
use crate::storage::row::pg_params;

use crate::storage::postgres::PostgresOptions;

/// The effect store's statements, by their place in the pool's list.
const LOCK: usize = 0;
const READ: usize = 1;
const UPSERT: usize = 2;
const CLEANUP: usize = 3;

impl From<PgError> for StoreError {
    /// A failure before the commit wrote nothing: a store error, safe to retry. A commit whose answer
    /// was lost may have written: its outcome is unknown.
    fn from(e: PgError) -> Self {
        let message = e.message("tool effect store");
        match e {
            PgError::CommitUnknown(_) => StoreError::Effect(EffectError::new(
                EffectErrorCode::Unknown,
                format!("{message}; the write may have committed"),
            )),
            PgError::Closed | PgError::Failed(_) => StoreError::Storage(message),
        }
    }
}

const MIGRATIONS: &[&str] = &["CREATE TABLE {schema}.prism_tool_effects (
  id text PRIMARY KEY,
  tenant_id text NOT NULL,
  account_id text,
  user_id text,
  effect_key text NOT NULL,
  session_id text NOT NULL,
  run_id text NOT NULL,
  tool_call_id text NOT NULL,
  tool_name text NOT NULL,
  arguments_hash text NOT NULL,
  status text NOT NULL,
  attempt integer NOT NULL,
  version bigint NOT NULL,
  claim_token text,
  result text,
  result_ref text,
  failure_code text,
  failure_reference text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  expires_at bigint
);
CREATE INDEX prism_tool_effects_cleanup ON {schema}.prism_tool_effects (tenant_id, status, updated_at)",
    // A result larger than the store keeps: its size and SHA-256 instead of the value.
    "ALTER TABLE {schema}.prism_tool_effects ADD COLUMN IF NOT EXISTS result_omitted_bytes bigint,
       ADD COLUMN IF NOT EXISTS result_omitted_sha256 text"];

/// Effect records in a PostgreSQL table (`<schema>.prism_tool_effects`).
pub struct PostgresStorage {
    pool: PgPool,
}

/// The statements every pooled connection prepares for the table `t`, in the order of `LOCK`, `READ`,
/// `UPSERT` and `CLEANUP`.
fn statements(t: &str) -> Vec<String> {
    vec![
        // The advisory lock serialises every writer of this id, including two claimants of an absent
        // record (a row lock cannot). It must be its own statement: under READ COMMITTED a statement
        // reads the snapshot taken when it started, so a read in the locking statement could miss the
        // commit of the transaction it waited for (the race proof caught exactly that).
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))".to_owned(),
        format!("SELECT {COLUMNS} FROM {t} WHERE id = $1"),
        format!(
            "INSERT INTO {t} (id, {COLUMNS})
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
               $22, $23)
             ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, attempt = EXCLUDED.attempt,
               version = EXCLUDED.version, claim_token = EXCLUDED.claim_token, result = EXCLUDED.result,
               result_ref = EXCLUDED.result_ref, failure_code = EXCLUDED.failure_code,
               failure_reference = EXCLUDED.failure_reference, updated_at = EXCLUDED.updated_at,
               expires_at = EXCLUDED.expires_at, result_omitted_bytes = EXCLUDED.result_omitted_bytes,
               result_omitted_sha256 = EXCLUDED.result_omitted_sha256
             WHERE {t}.tenant_id = EXCLUDED.tenant_id"
        ),
        format!(
            "DELETE FROM {t} WHERE id IN (
               SELECT id FROM {t}
               WHERE tenant_id = $1 AND account_id IS NOT DISTINCT FROM $2 AND user_id IS NOT DISTINCT FROM $3
                 AND status IN ('completed', 'failed_terminal') AND updated_at < $4
               LIMIT $5)"
        ),
    ]
}

impl PostgresStorage {
    pub fn open(options: &PostgresOptions) -> Result<Self, StoreError> {
        let pool = PgPool::open_component(
            options,
            "prism-tools-native effects",
            "tool_effects",
            MIGRATIONS,
            "prism_tool_effects",
            statements,
        )?;
        Ok(Self { pool })
    }
}

impl RecordStorage for PostgresStorage {
    fn read(&self, k: &ValidKey) -> Result<Option<EffectRecord>, StoreError> {
        // Reads take the lock too (inside a transaction): a read never sees a half-decided transition.
        self.update(k, |current| Ok(super::store::Step::read(current.cloned())))
    }

    fn update<R>(&self, k: &ValidKey, f: impl RecordUpdate<R>) -> Result<R, StoreError> {
        let id = k.storage_id.as_str();
        self.pool.locked(LOCK, READ, &[&id], |tx, found, st| {
            let mut current = found.as_ref().map(row::record).transpose()?;
            let step = f(current.as_mut())?;
            if let Some(r) = step.written(current.as_ref()) {
                let values = row::values(id, r);
                let written = tx
                    .execute(&st[UPSERT], &pg_params(&values))
                    .map_err(|e| failed("write", &e))?;
                if written != 1 {
                    return Err(StoreError::Storage(
                        "tool effect store failed: the record belongs to another tenant".into(),
                    ));
                }
            }
            Ok(step.out)
        })
    }

    fn cleanup(&self, owner: &Owner, before: i64, limit: u32) -> Result<u32, StoreError> {
        let limit = limit as i64;
        let params: [&(dyn postgres::types::ToSql + Sync); 5] = [
            &owner.tenant_id,
            &owner.account_id,
            &owner.user_id,
            &before,
            &limit,
        ];
        Ok(self.pool.execute("cleanup", CLEANUP, &params)? as u32)
    }

    fn close(&self) {
        self.pool.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_is_a_clear_storage_error() {
        let mut o = PostgresOptions::new("postgres://nobody@127.0.0.1:1/none");
        o.connect_timeout_ms = 500;
        match PostgresStorage::open(&o) {
            Err(StoreError::Storage(m)) => {
                assert!(m.contains("connect") && m.contains("refused"), "{m}")
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("connected to port 1"),
        }
        o.schema = "Bad-Name".into();
        assert!(
            matches!(PostgresStorage::open(&o), Err(StoreError::Storage(m)) if m.contains("schema must match"))
        );
    }
}
