//! SQLite storage of checkpoints (the rules are `checkpoint.rs`'s): one table, opened the way the
//! effect store and the run ledger open theirs (`storage::sqlite`: WAL, busy timeout,
//! `synchronous = FULL` by default so a saved checkpoint survives a crash).
//! Every write runs in one `BEGIN IMMEDIATE` transaction, so two processes racing on one run see
//! exactly one winner.

use rusqlite::{params, Connection};
use std::sync::LazyLock;

use super::checkpoint::{
    CheckpointError, CheckpointId, CheckpointStorage, Checkpoints, Decide, ListFilter, Row, Write,
    COLUMNS,
};
use crate::storage::sqlite::{query_opt, SqliteConnection, SqliteError, SqliteOptions};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS prism_checkpoints (
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  version INTEGER NOT NULL,
  fencing_token INTEGER,
  value TEXT NOT NULL,
  category TEXT,
  tenant_id TEXT,
  account_id TEXT,
  user_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  metadata TEXT,
  PRIMARY KEY (namespace, key)
);";

impl From<rusqlite::Error> for CheckpointError {
    fn from(e: rusqlite::Error) -> Self {
        CheckpointError::Storage(format!("checkpoint store: {e}"))
    }
}

impl SqliteError for CheckpointError {
    fn closed() -> Self {
        CheckpointError::Storage("checkpoint store is closed".into())
    }
}

/// The checkpoint table of one SQLite file.
pub struct SqliteStorage {
    db: SqliteConnection,
}

/// A SQLite checkpoint store.
pub type SqliteCheckpoints = Checkpoints<SqliteStorage>;

static SELECT: LazyLock<String> = LazyLock::new(|| {
    format!("SELECT {COLUMNS} FROM prism_checkpoints WHERE namespace = ?1 AND key = ?2")
});

fn read_row(conn: &Connection, id: &CheckpointId) -> Result<Option<Row>, CheckpointError> {
    query_opt(conn, &SELECT, params![id.namespace, id.key], |r| {
        Row::read(r)
    })
}

impl SqliteCheckpoints {
    /// Opens (creating when absent) the checkpoint table in the file at `path`.
    pub fn open(
        path: &str,
        options: &SqliteOptions,
        max_value_bytes: usize,
        max_page_size: usize,
    ) -> Result<Self, CheckpointError> {
        let storage = SqliteStorage {
            db: SqliteConnection::open(path, options, SCHEMA)?,
        };
        Ok(Checkpoints::new(storage, max_value_bytes, max_page_size))
    }
}

impl CheckpointStorage for SqliteStorage {
    fn transact<T>(&self, id: &CheckpointId, decide: impl Decide<T>) -> Result<T, CheckpointError> {
        self.db.write(|tx| {
            let (write, out) = decide(read_row(tx, id)?)?; // an Err rolls back
            match write {
                Write::Keep => {}
                Write::Put(r) => {
                    tx.execute(
                        &format!("INSERT OR REPLACE INTO prism_checkpoints ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"),
                        rusqlite::params_from_iter(r.values().iter()),
                    )?;
                }
                Write::Delete => {
                    tx.execute(
                        "DELETE FROM prism_checkpoints WHERE namespace = ?1 AND key = ?2",
                        params![id.namespace, id.key],
                    )?;
                }
            }
            Ok(out)
        })
    }

    fn read(&self, id: &CheckpointId) -> Result<Option<Row>, CheckpointError> {
        self.db.with(|conn| read_row(conn, id))
    }

    fn select(&self, f: &ListFilter) -> Result<Vec<Row>, CheckpointError> {
        let categories = f
            .categories
            .as_ref()
            .map(|c| serde_json::Value::from(c.clone()).to_string());
        self.db.with(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM prism_checkpoints
                 WHERE (?1 IS NULL OR namespace = ?1)
                   AND (?2 IS NULL OR substr(key, 1, length(?2)) = ?2)
                   AND (?3 IS NULL OR tenant_id = ?3)
                   AND (?4 IS NULL OR account_id = ?4)
                   AND (?5 IS NULL OR user_id = ?5)
                   AND (?6 IS NULL OR category IN (SELECT value FROM json_each(?6)))
                 ORDER BY updated_at DESC, key ASC
                 LIMIT ?7 OFFSET ?8"
            ))?;
            let rows = stmt.query_map(
                params![
                    f.namespace,
                    f.key_prefix,
                    f.owner[0],
                    f.owner[1],
                    f.owner[2],
                    categories,
                    (f.limit + 1) as i64,
                    f.offset as i64
                ],
                |r| Ok(Row::read(r)),
            )?;
            rows.map(|r| r?).collect()
        })
    }

    fn close(&self) {
        self.db.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store() -> (SqliteCheckpoints, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!(
            "prism-checkpoints-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.db");
        let s = SqliteCheckpoints::open(
            path.to_str().unwrap(),
            &SqliteOptions::default(),
            1 << 20,
            500,
        )
        .unwrap();
        (s, dir)
    }

    #[test]
    fn compare_and_swap_and_ownership() {
        let (s, dir) = store();
        let parsed = |t: String| serde_json::from_str::<serde_json::Value>(&t).unwrap();
        let first = json!({ "namespace": "n", "key": "k", "version": 1, "expectedVersion": 0, "tenantId": "t" });
        let r = parsed(
            s.save(&first, r#"{"a":1}"#.into(), None, "2026-01-01T00:00:00Z")
                .unwrap(),
        );
        assert_eq!(r["version"], 1);
        assert!(matches!(
            s.save(&first, "1".into(), None, "x"),
            Err(CheckpointError::Conflict(_))
        ));
        let next = json!({ "namespace": "n", "key": "k", "version": 2, "expectedVersion": 1, "tenantId": "t" });
        let saved = s.save(&next, r#"{"a":2}"#.into(), None, "2026-01-01T00:00:01Z");
        assert_eq!(parsed(saved.unwrap())["value"]["a"], 2);
        let foreign = json!({ "namespace": "n", "key": "k", "tenantId": "u" });
        assert!(matches!(
            s.load(&foreign),
            Err(CheckpointError::Conflict(_))
        ));
        let mine = json!({ "namespace": "n", "key": "k", "tenantId": "t" });
        assert_eq!(parsed(s.load(&mine).unwrap().unwrap())["version"], 2);
        let page = parsed(s.list(&json!({ "namespace": "n" })).unwrap());
        assert_eq!(page["items"].as_array().unwrap().len(), 1);
        assert!(s.delete(&mine).unwrap());
        assert!(s.load(&mine).unwrap().is_none());
        s.close();
        let _ = std::fs::remove_dir_all(dir);
    }
}
