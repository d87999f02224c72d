//! SQLite storage for effect records (rusqlite, bundled SQLite), opened through `storage::sqlite`.
//!
//! One file may be shared by several processes: every operation that writes is one `BEGIN IMMEDIATE`
//! transaction (read, decide, write, commit), so two claimants of one key are serialised by SQLite's
//! write lock and exactly one acquires it. `synchronous = FULL` by default: a committed transition
//! survives a killed process and a power loss; `NORMAL` survives a killed process only.

use super::error::StoreError;
use super::key::{Owner, ValidKey};
use super::record::EffectRecord;
use super::row::{self, COLUMNS};
use super::store::{RecordStorage, RecordUpdate};
use crate::storage::sqlite::{
    add_missing_columns, query_opt, SqliteConnection, SqliteError, SqliteOptions,
};
use rusqlite::{params, Connection};
use std::sync::LazyLock;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS prism_tool_effects (
  id TEXT PRIMARY KEY NOT NULL,
  tenant_id TEXT NOT NULL,
  account_id TEXT,
  user_id TEXT,
  effect_key TEXT NOT NULL,
  session_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  tool_call_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  arguments_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  version INTEGER NOT NULL,
  claim_token TEXT,
  result TEXT,
  result_ref TEXT,
  failure_code TEXT,
  failure_reference TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER,
  result_omitted_bytes INTEGER,
  result_omitted_sha256 TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS prism_tool_effects_cleanup ON prism_tool_effects (tenant_id, status, updated_at);
";

/// Columns added after the first release, for files made before them (checked and added in one
/// write transaction, so processes opening one file together add each once).
const ADDED_COLUMNS: &[(&str, &str)] = &[
    ("result_omitted_bytes", "INTEGER"),
    ("result_omitted_sha256", "TEXT"),
];

static SELECT: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {COLUMNS} FROM prism_tool_effects WHERE id = ?1"));

static UPSERT: LazyLock<String> = LazyLock::new(|| {
    format!(
        "INSERT OR REPLACE INTO prism_tool_effects (id, {COLUMNS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)"
    )
});

fn read_with(conn: &Connection, id: &str) -> Result<Option<EffectRecord>, StoreError> {
    query_opt(conn, &SELECT, [id], |r| row::record(r))
}

fn write_with(conn: &Connection, id: &str, r: &EffectRecord) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(&UPSERT)?;
    stmt.execute(rusqlite::params_from_iter(row::values(id, r).iter()))?;
    Ok(())
}

/// Effect records in a SQLite file.
pub struct SqliteStorage {
    db: SqliteConnection,
}

impl SqliteStorage {
    pub fn open(path: &str, options: &SqliteOptions) -> Result<Self, StoreError> {
        let db = SqliteConnection::open(path, options, SCHEMA)?;
        db.write(|tx| {
            Ok::<_, StoreError>(add_missing_columns(
                tx,
                "prism_tool_effects",
                ADDED_COLUMNS,
            )?)
        })?;
        Ok(Self { db })
    }
}

impl SqliteError for StoreError {
    fn closed() -> Self {
        StoreError::Storage("tool effect store is closed".into())
    }
}

impl RecordStorage for SqliteStorage {
    fn read(&self, k: &ValidKey) -> Result<Option<EffectRecord>, StoreError> {
        self.db.with(|conn| read_with(conn, &k.storage_id))
    }

    fn update<R>(&self, k: &ValidKey, f: impl RecordUpdate<R>) -> Result<R, StoreError> {
        let id = k.storage_id.as_str();
        self.db.write(|tx| {
            let mut current = read_with(tx, id)?;
            let step = f(current.as_mut())?; // an Err rolls back
            if let Some(record) = step.written(current.as_ref()) {
                write_with(tx, id, record)?;
            }
            Ok(step.out)
        })
    }

    fn cleanup(&self, owner: &Owner, before: i64, limit: u32) -> Result<u32, StoreError> {
        self.db.write(|tx| {
            let n = tx.execute(
                "DELETE FROM prism_tool_effects WHERE id IN (
                   SELECT id FROM prism_tool_effects
                   WHERE tenant_id = ?1 AND account_id IS ?2 AND user_id IS ?3
                     AND status IN ('completed', 'failed_terminal') AND updated_at < ?4
                   LIMIT ?5)",
                params![
                    owner.tenant_id,
                    owner.account_id,
                    owner.user_id,
                    before,
                    limit
                ],
            )?;
            Ok(n as u32)
        })
    }

    fn close(&self) {
        self.db.close();
    }
}
