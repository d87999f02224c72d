//! SQLite checkpoint store: upstream's `CheckpointStore` contract (save with compare-and-swap on
//! the version, fencing tokens, exact ownership; load; list; delete) over one table, opened the way
//! the effect store and the run ledger open theirs (`effects::sqlite::open_connection`: WAL, busy
//! timeout, `synchronous = FULL` by default so a saved checkpoint survives a crash).
//! Every save runs in one `BEGIN IMMEDIATE` transaction, so two processes racing on one run see
//! exactly one winner.

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use serde_json::{json, Map, Value};
use std::sync::Mutex;

use crate::effects::sqlite::{open_connection, SqliteOptions};

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

/// Why a store operation failed.
#[derive(Debug)]
pub enum CheckpointError {
    /// `CheckpointConflictError` (`ERR_PRISM_CHECKPOINT_CONFLICT`).
    Conflict(String),
    /// `RangeError`: a value over `maxValueBytes`.
    Range(String),
    /// The database failed.
    Storage(String),
}

impl From<rusqlite::Error> for CheckpointError {
    fn from(e: rusqlite::Error) -> Self {
        CheckpointError::Storage(format!("checkpoint store: {e}"))
    }
}

pub struct SqliteCheckpoints {
    conn: Mutex<Option<Connection>>,
    max_value_bytes: usize,
    max_page_size: usize,
}

fn conflict(m: impl Into<String>) -> CheckpointError {
    CheckpointError::Conflict(m.into())
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn key_of(v: &Value) -> Result<(String, String), CheckpointError> {
    match (text(v, "namespace"), text(v, "key")) {
        (Some(n), Some(k)) if !n.is_empty() && !k.is_empty() => Ok((n, k)),
        _ => Err(conflict("Checkpoint namespace and key are required")),
    }
}

type Owner = [Option<String>; 3];

fn owner_of(v: &Value) -> Owner {
    [text(v, "tenantId"), text(v, "accountId"), text(v, "userId")]
}

const COLUMNS: &str = "namespace, key, version, fencing_token, value, category, tenant_id, account_id, user_id, created_at, updated_at, metadata";

fn record_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<Value> {
    let mut m = Map::new();
    m.insert("namespace".into(), json!(r.get::<_, String>(0)?));
    m.insert("key".into(), json!(r.get::<_, String>(1)?));
    m.insert("version".into(), json!(r.get::<_, i64>(2)?));
    if let Some(f) = r.get::<_, Option<i64>>(3)? {
        m.insert("fencingToken".into(), json!(f));
    }
    let value: String = r.get(4)?;
    m.insert(
        "value".into(),
        serde_json::from_str(&value).unwrap_or(Value::Null),
    );
    for (i, k) in [
        (5, "category"),
        (6, "tenantId"),
        (7, "accountId"),
        (8, "userId"),
    ] {
        if let Some(s) = r.get::<_, Option<String>>(i)? {
            m.insert(k.into(), json!(s));
        }
    }
    m.insert("createdAt".into(), json!(r.get::<_, String>(9)?));
    m.insert("updatedAt".into(), json!(r.get::<_, String>(10)?));
    if let Some(meta) = r.get::<_, Option<String>>(11)? {
        m.insert(
            "metadata".into(),
            serde_json::from_str(&meta).unwrap_or(Value::Null),
        );
    }
    Ok(Value::Object(m))
}

fn owner_matches(expected: &Owner, record: &Value) -> bool {
    &owner_of(record) == expected
}

impl SqliteCheckpoints {
    pub fn open(
        path: &str,
        options: &SqliteOptions,
        max_value_bytes: usize,
        max_page_size: usize,
    ) -> Result<Self, CheckpointError> {
        let conn = open_connection(path, options)?;
        conn.execute_batch(SCHEMA)?;
        Ok(SqliteCheckpoints {
            conn: Mutex::new(Some(conn)),
            max_value_bytes: max_value_bytes.max(1),
            max_page_size: max_page_size.max(1),
        })
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, CheckpointError>,
    ) -> Result<T, CheckpointError> {
        let mut guard = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        match guard.as_mut() {
            Some(c) => f(c),
            None => Err(CheckpointError::Storage(
                "checkpoint store is closed".into(),
            )),
        }
    }

    fn load_row(conn: &Connection, ns: &str, key: &str) -> Result<Option<Value>, CheckpointError> {
        Ok(conn
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM prism_checkpoints WHERE namespace = ?1 AND key = ?2"
                ),
                params![ns, key],
                record_of,
            )
            .optional()?)
    }

    /// `saveCheckpoint(input)`; `now` is the ISO time of the save.
    pub fn save(&self, input: &Value, now: &str) -> Result<Value, CheckpointError> {
        let (ns, key) = key_of(input)?;
        let version = input
            .get("version")
            .and_then(Value::as_i64)
            .filter(|v| *v >= 1 && *v < (1i64 << 53))
            .ok_or_else(|| conflict("Checkpoint version must be a positive safe integer"))?;
        let value = input
            .get("value")
            .ok_or_else(|| conflict("Checkpoint value must be JSON serializable"))?;
        let value_text = value.to_string();
        if value_text.len() > self.max_value_bytes {
            return Err(CheckpointError::Range(format!(
                "Checkpoint value exceeds maxValueBytes ({})",
                self.max_value_bytes
            )));
        }
        let fencing = input.get("fencingToken").and_then(Value::as_i64);
        let owner = owner_of(input);
        let metadata = input
            .get("metadata")
            .filter(|m| !m.is_null())
            .map(Value::to_string);
        self.with(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let existing = Self::load_row(&tx, &ns, &key)?;
            let current = existing
                .as_ref()
                .and_then(|e| e.get("version").and_then(Value::as_i64))
                .unwrap_or(0);
            if let Some(e) = &existing {
                if !owner_matches(&owner, e) {
                    return Err(conflict("Checkpoint ownership mismatch"));
                }
            }
            if let Some(expected) = input.get("expectedVersion").filter(|v| !v.is_null()) {
                if expected.as_i64() != Some(current) {
                    return Err(conflict(format!(
                        "Checkpoint compare-and-swap failed (expected {expected}, current {current})"
                    )));
                }
            }
            if existing.is_some() && version <= current {
                return Err(conflict(format!(
                    "Stale checkpoint version {version} (current {current})"
                )));
            }
            if let Some(held) = existing
                .as_ref()
                .and_then(|e| e.get("fencingToken").and_then(Value::as_i64))
            {
                if fencing.is_none_or(|f| f < held) {
                    return Err(conflict(format!(
                        "Stale checkpoint fencing token {} (current {held})",
                        fencing.map_or("missing".to_string(), |f| f.to_string())
                    )));
                }
            }
            let created = existing
                .as_ref()
                .and_then(|e| text(e, "createdAt"))
                .unwrap_or_else(|| now.to_string());
            tx.execute(
                "INSERT OR REPLACE INTO prism_checkpoints (namespace, key, version, fencing_token, value, category, tenant_id, account_id, user_id, created_at, updated_at, metadata)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    ns,
                    key,
                    version,
                    fencing,
                    value_text,
                    text(input, "category"),
                    owner[0],
                    owner[1],
                    owner[2],
                    created,
                    now,
                    metadata
                ],
            )?;
            let record = Self::load_row(&tx, &ns, &key)?;
            tx.commit()?;
            record.ok_or_else(|| CheckpointError::Storage("checkpoint vanished".into()))
        })
    }

    /// `loadCheckpoint(key)`: the record, `None` when absent; another owner's record is a conflict.
    pub fn load(&self, input: &Value) -> Result<Option<Value>, CheckpointError> {
        let (ns, key) = key_of(input)?;
        let owner = owner_of(input);
        self.with(|conn| match Self::load_row(conn, &ns, &key)? {
            Some(r) if !owner_matches(&owner, &r) => Err(conflict("Checkpoint ownership mismatch")),
            other => Ok(other),
        })
    }

    /// `deleteCheckpoint(key)`.
    pub fn delete(&self, input: &Value) -> Result<bool, CheckpointError> {
        let (ns, key) = key_of(input)?;
        let owner = owner_of(input);
        self.with(|conn| {
            match Self::load_row(conn, &ns, &key)? {
                None => return Ok(false),
                Some(r) if !owner_matches(&owner, &r) => {
                    return Err(conflict("Checkpoint ownership mismatch"))
                }
                Some(_) => {}
            }
            let n = conn.execute(
                "DELETE FROM prism_checkpoints WHERE namespace = ?1 AND key = ?2",
                params![ns, key],
            )?;
            Ok(n > 0)
        })
    }

    /// `listCheckpoints(query)`: newest first, a numeric cursor.
    pub fn list(&self, query: &Value) -> Result<Value, CheckpointError> {
        let offset = match query.get("cursor") {
            None | Some(Value::Null) => 0usize,
            Some(Value::String(s)) => s
                .parse::<usize>()
                .map_err(|_| conflict("Invalid checkpoint cursor"))?,
            Some(_) => return Err(conflict("Invalid checkpoint cursor")),
        };
        let limit = query
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(100, |l| l.max(1) as usize)
            .min(self.max_page_size);
        let categories: Option<Vec<String>> = match query.get("category") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(vec![s.clone()]),
            Some(Value::Array(a)) => Some(
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            ),
            Some(_) => Some(Vec::new()),
        };
        let ns = text(query, "namespace");
        let prefix = text(query, "keyPrefix");
        let owner = owner_of(query);
        self.with(|conn| {
            let mut stmt = conn.prepare(&format!(
                "SELECT {COLUMNS} FROM prism_checkpoints
                 WHERE (?1 IS NULL OR namespace = ?1)
                   AND (?2 IS NULL OR substr(key, 1, length(?2)) = ?2)
                   AND (?3 IS NULL OR tenant_id = ?3)
                   AND (?4 IS NULL OR account_id = ?4)
                   AND (?5 IS NULL OR user_id = ?5)
                 ORDER BY updated_at DESC, key ASC"
            ))?;
            let rows =
                stmt.query_map(params![ns, prefix, owner[0], owner[1], owner[2]], record_of)?;
            let mut items = Vec::new();
            for r in rows {
                let r = r?;
                if let Some(c) = &categories {
                    match text(&r, "category") {
                        Some(cat) if c.contains(&cat) => {}
                        _ => continue,
                    }
                }
                items.push(r);
            }
            let total = items.len();
            let page: Vec<Value> = items.into_iter().skip(offset).take(limit).collect();
            let next = offset + page.len();
            let mut out = Map::new();
            out.insert("items".into(), Value::Array(page));
            if next < total {
                out.insert("nextCursor".into(), json!(next.to_string()));
            }
            Ok(Value::Object(out))
        })
    }

    /// Closes the file; later calls fail. Idempotent.
    pub fn close(&self) {
        let mut guard = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        guard.take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let first = json!({ "namespace": "n", "key": "k", "version": 1, "expectedVersion": 0, "value": { "a": 1 }, "tenantId": "t" });
        let r = s.save(&first, "2026-01-01T00:00:00Z").unwrap();
        assert_eq!(r["version"], 1);
        assert!(matches!(
            s.save(&first, "x"),
            Err(CheckpointError::Conflict(_))
        ));
        let next = json!({ "namespace": "n", "key": "k", "version": 2, "expectedVersion": 1, "value": { "a": 2 }, "tenantId": "t" });
        assert_eq!(
            s.save(&next, "2026-01-01T00:00:01Z").unwrap()["value"]["a"],
            2
        );
        let foreign = json!({ "namespace": "n", "key": "k", "tenantId": "u" });
        assert!(matches!(
            s.load(&foreign),
            Err(CheckpointError::Conflict(_))
        ));
        let mine = json!({ "namespace": "n", "key": "k", "tenantId": "t" });
        assert_eq!(s.load(&mine).unwrap().unwrap()["version"], 2);
        assert_eq!(
            s.list(&json!({ "namespace": "n" })).unwrap()["items"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        assert!(s.delete(&mine).unwrap());
        assert!(s.load(&mine).unwrap().is_none());
        s.close();
        let _ = std::fs::remove_dir_all(dir);
    }
}
