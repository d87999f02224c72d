//! PostgreSQL storage of checkpoints (the rules are `checkpoint.rs`'s), shared by many workers on
//! many machines: a run suspended by one process is resumed by another.
//!
//! A write is one short transaction: a transaction-scoped advisory lock on the key (so two savers of
//! an absent key are serialised too, which a row lock cannot do), read, decide, write, commit — the
//! effect store's pattern, over the same pool of prepared connections and the same migrations
//! (`storage::postgres`).
//! Runs on a blocking thread, never the JS thread.

use super::checkpoint::{
    CheckpointError, CheckpointId, CheckpointStorage, Checkpoints, Decide, ListFilter, Row, Write,
    COLUMNS,
};
use crate::storage::postgres::{failed, PgError, PgPool, PostgresOptions};
use crate::storage::row::pg_params;

/// A PostgreSQL checkpoint store.
pub type PostgresCheckpoints = Checkpoints<PostgresStorage>;

const MIGRATIONS: &[&str] = &["CREATE TABLE {schema}.prism_checkpoints (
  namespace text NOT NULL,
  key text NOT NULL,
  version bigint NOT NULL,
  fencing_token bigint,
  value text NOT NULL,
  category text,
  tenant_id text,
  account_id text,
  user_id text,
  created_at text NOT NULL,
  updated_at text NOT NULL,
  metadata text,
  PRIMARY KEY (namespace, key)
);
CREATE INDEX prism_checkpoints_recent ON {schema}.prism_checkpoints (namespace, updated_at DESC)"];

/// The statements every pooled connection prepares once, by their place in the pool's list.
const LOCK: usize = 0;
const READ: usize = 1;
const UPSERT: usize = 2;
const DELETE: usize = 3;
const SELECT: usize = 4;

/// The checkpoint table of one schema (`<schema>.prism_checkpoints`).
pub struct PostgresStorage {
    pool: PgPool,
}

impl From<PgError> for CheckpointError {
    fn from(e: PgError) -> Self {
        CheckpointError::Storage(e.message("checkpoint store"))
    }
}

/// The statements every pooled connection prepares for the table `t`, in the order of `LOCK`, `READ`,
/// `UPSERT`, `DELETE` and `SELECT`.
fn statements(t: &str) -> Vec<String> {
    vec![
        // Its own statement: under READ COMMITTED a read in the locking statement could miss the
        // commit of the transaction it waited for (see the effect store).
        "SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(1) || $2, 7))".to_owned(),
        format!("SELECT {COLUMNS} FROM {t} WHERE namespace = $1 AND key = $2"),
        format!(
            "INSERT INTO {t} ({COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
             ON CONFLICT (namespace, key) DO UPDATE SET version = EXCLUDED.version,
               fencing_token = EXCLUDED.fencing_token, value = EXCLUDED.value,
               category = EXCLUDED.category, updated_at = EXCLUDED.updated_at,
               metadata = EXCLUDED.metadata"
        ),
        format!("DELETE FROM {t} WHERE namespace = $1 AND key = $2"),
        // COLLATE "C": byte order, as the SQLite store sorts, whatever the database's locale.
        format!(
            "SELECT {COLUMNS} FROM {t}
             WHERE ($1::text IS NULL OR namespace = $1)
               AND ($2::text IS NULL OR starts_with(key, $2))
               AND ($3::text IS NULL OR tenant_id = $3)
               AND ($4::text IS NULL OR account_id = $4)
               AND ($5::text IS NULL OR user_id = $5)
               AND ($6::text[] IS NULL OR category = ANY($6))
             ORDER BY updated_at COLLATE \"C\" DESC, key COLLATE \"C\" ASC
             LIMIT $7 OFFSET $8"
        ),
    ]
}

impl PostgresCheckpoints {
    /// Connects, creates or migrates the table, and keeps a pool of at most `max_connections`.
    pub fn open(
        options: &PostgresOptions,
        max_value_bytes: usize,
        max_page_size: usize,
    ) -> Result<Self, CheckpointError> {
        let pool = PgPool::open_component(
            options,
            "prism-tools-native checkpoints",
            "checkpoints",
            MIGRATIONS,
            "prism_checkpoints",
            statements,
        )?;
        let storage = PostgresStorage { pool };
        Ok(Checkpoints::new(storage, max_value_bytes, max_page_size))
    }
}

impl CheckpointStorage for PostgresStorage {
    fn transact<T>(&self, id: &CheckpointId, decide: impl Decide<T>) -> Result<T, CheckpointError> {
        let params: [&(dyn postgres::types::ToSql + Sync); 2] = [&id.namespace, &id.key];
        self.pool.locked(LOCK, READ, &params, |tx, row, st| {
            let current = row.as_ref().map(Row::read).transpose()?;
            let (write, out) = decide(current)?;
            match write {
                Write::Keep => {}
                Write::Put(r) => {
                    tx.execute(&st[UPSERT], &pg_params(&r.values()))
                        .map_err(|e| failed("write", &e))?;
                }
                Write::Delete => {
                    tx.execute(&st[DELETE], &params)
                        .map_err(|e| failed("delete", &e))?;
                }
            }
            Ok(out)
        })
    }

    fn read(&self, id: &CheckpointId) -> Result<Option<Row>, CheckpointError> {
        let rows = self.pool.query("read", READ, &[&id.namespace, &id.key])?;
        rows.first().map(Row::read).transpose()
    }

    fn select(&self, f: &ListFilter) -> Result<Vec<Row>, CheckpointError> {
        let limit = (f.limit + 1) as i64;
        let offset = i64::try_from(f.offset).unwrap_or(i64::MAX);
        let params: [&(dyn postgres::types::ToSql + Sync); 8] = [
            &f.namespace,
            &f.key_prefix,
            &f.owner[0],
            &f.owner[1],
            &f.owner[2],
            &f.categories,
            &limit,
            &offset,
        ];
        let rows = self.pool.query("list", SELECT, &params)?;
        rows.iter().map(Row::read).collect()
    }

    fn close(&self) {
        self.pool.close();
    }
}
