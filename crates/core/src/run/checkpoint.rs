//! Checkpoint stores: upstream's `CheckpointStore` contract (save with compare-and-swap on the
//! version, fencing tokens and exact ownership; load; list; delete), decided here once for every
//! built-in store. A storage (`checkpoint_memory.rs`, `checkpoint_sqlite.rs`,
//! `checkpoint_postgres.rs`) only has to run a decision on a key's current row with every other
//! writer of that key held off, read rows, and select a page.

use serde_json::Value;

use crate::storage::row as table;

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

impl CheckpointError {
    pub fn message(&self) -> &str {
        match self {
            CheckpointError::Conflict(m)
            | CheckpointError::Range(m)
            | CheckpointError::Storage(m) => m,
        }
    }
}

fn conflict(m: impl Into<String>) -> CheckpointError {
    CheckpointError::Conflict(m.into())
}

/// Which checkpoint: its namespace and key, both non-empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CheckpointId {
    pub namespace: String,
    pub key: String,
}

/// `tenantId`, `accountId`, `userId`: part of a key's trust boundary, matched exactly.
pub type Owner = [Option<String>; 3];

/// One stored checkpoint, as a table holds it (value and metadata as JSON text).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub namespace: String,
    pub key: String,
    pub version: i64,
    pub fencing_token: Option<i64>,
    pub value: String,
    pub category: Option<String>,
    pub owner: Owner,
    pub created_at: String,
    pub updated_at: String,
    pub metadata: Option<String>,
}

/// The table's columns (SQLite and PostgreSQL alike), in the order `Row::values` binds them and
/// `Row::read` reads them.
pub const COLUMNS: &str = "namespace, key, version, fencing_token, value, category, tenant_id, account_id, user_id, created_at, updated_at, metadata";

impl Row {
    /// The values of [`COLUMNS`].
    pub fn values(&self) -> [table::Value<'_>; 12] {
        [
            (&self.namespace).into(),
            (&self.key).into(),
            self.version.into(),
            self.fencing_token.into(),
            (&self.value).into(),
            (&self.category).into(),
            (&self.owner[0]).into(),
            (&self.owner[1]).into(),
            (&self.owner[2]).into(),
            (&self.created_at).into(),
            (&self.updated_at).into(),
            (&self.metadata).into(),
        ]
    }

    /// A row read as [`COLUMNS`]; a column of an unexpected type (a table altered by hand) is an
    /// error, not a panic.
    pub fn read(r: &impl table::Columns) -> Result<Row, CheckpointError> {
        let read = || -> Result<Row, String> {
            let row = Row {
                namespace: r.text(0)?,
                key: r.text(1)?,
                version: r.int(2)?,
                fencing_token: r.opt_int(3)?,
                value: r.text(4)?,
                category: r.opt_text(5)?,
                owner: [r.opt_text(6)?, r.opt_text(7)?, r.opt_text(8)?],
                created_at: r.text(9)?,
                updated_at: r.text(10)?,
                metadata: r.opt_text(11)?,
            };
            // The value and metadata go out as the text stored: a row altered by hand so that they
            // are not JSON is refused here, not sent on as a broken answer.
            for text in std::iter::once(&row.value).chain(&row.metadata) {
                if !is_json(text) {
                    return Err("a stored value or metadata is not JSON".into());
                }
            }
            Ok(row)
        };
        read().map_err(|e| CheckpointError::Storage(format!("checkpoint store failed: read: {e}")))
    }

    /// The record as `loadCheckpoint` returns it, as JSON text: the value and metadata are the
    /// stored text itself, never parsed, so a value nested as deep as JSON text can hold round-trips
    /// whole.
    pub fn json(&self) -> String {
        let mut out = String::with_capacity(self.value.len() + 256);
        out.push('{');
        field(&mut out, "namespace", &quoted(&self.namespace));
        field(&mut out, "key", &quoted(&self.key));
        field(&mut out, "version", &self.version.to_string());
        if let Some(f) = self.fencing_token {
            field(&mut out, "fencingToken", &f.to_string());
        }
        field(&mut out, "value", &self.value);
        let owner = ["tenantId", "accountId", "userId"]
            .into_iter()
            .zip(&self.owner);
        for (k, v) in [("category", &self.category)].into_iter().chain(owner) {
            if let Some(text) = v {
                field(&mut out, k, &quoted(text));
            }
        }
        field(&mut out, "createdAt", &quoted(&self.created_at));
        field(&mut out, "updatedAt", &quoted(&self.updated_at));
        if let Some(meta) = &self.metadata {
            field(&mut out, "metadata", meta);
        }
        out.push('}');
        out
    }
}

/// Whether `text` is one JSON value. The check walks without recursion, so no depth is too deep.
pub fn is_json(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

fn quoted(s: &str) -> String {
    Value::from(s).to_string()
}

/// Appends `"name":json` to an object being written (a comma first unless it is the first member).
fn field(out: &mut String, name: &str, json: &str) {
    if !out.ends_with('{') {
        out.push(',');
    }
    out.push('"');
    out.push_str(name);
    out.push_str("\":");
    out.push_str(json);
}

/// What a decision does to the key's row.
pub enum Write {
    Keep,
    Put(Box<Row>),
    Delete,
}

/// A `listCheckpoints` query as a storage runs it.
#[derive(Debug, Default)]
pub struct ListFilter {
    pub namespace: Option<String>,
    pub key_prefix: Option<String>,
    pub owner: Owner,
    /// `Some(empty)` matches nothing (a category that is not a string or a list of strings).
    pub categories: Option<Vec<String>>,
    pub offset: usize,
    pub limit: usize,
}

/// What `transact` runs on a key's current row: the write to make and the answer.
pub trait Decide<T>: FnOnce(Option<Row>) -> Result<(Write, T), CheckpointError> {}
impl<T, F: FnOnce(Option<Row>) -> Result<(Write, T), CheckpointError>> Decide<T> for F {}

/// Where checkpoints are kept.
pub trait CheckpointStorage: Send + Sync {
    /// Runs `decide` on the current row of `id` with every other writer of that checkpoint held
    /// off, then applies its write; an `Err` from `decide` writes nothing.
    fn transact<T>(&self, id: &CheckpointId, decide: impl Decide<T>) -> Result<T, CheckpointError>;
    fn read(&self, id: &CheckpointId) -> Result<Option<Row>, CheckpointError>;
    /// Matching rows, newest `updated_at` first then by key (UTF-8 byte order), from `offset`, at most
    /// `limit + 1` (the extra row says there is a next page).
    fn select(&self, filter: &ListFilter) -> Result<Vec<Row>, CheckpointError>;
    /// Later calls fail. Idempotent.
    fn close(&self);
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn id_of(v: &Value) -> Result<CheckpointId, CheckpointError> {
    match (text(v, "namespace"), text(v, "key")) {
        (Some(namespace), Some(key)) if !namespace.is_empty() && !key.is_empty() => {
            Ok(CheckpointId { namespace, key })
        }
        _ => Err(conflict("Checkpoint namespace and key are required")),
    }
}

fn owner_of(v: &Value) -> Owner {
    [text(v, "tenantId"), text(v, "accountId"), text(v, "userId")]
}

/// The rules of upstream's `CheckpointStore` over any storage.
pub struct Checkpoints<S> {
    storage: S,
    max_value_bytes: usize,
    max_page_size: usize,
}

/// A list's page size, as upstream's `Math.min(Math.max(1, query.limit ?? 100), maxPageSize)` and
/// `slice(offset, offset + limit)`. The facade sends the limit as JavaScript's `ToNumber` made it
/// (`"2"` is 2): a number, or `"NaN"` / `"Infinity"` / `"-Infinity"`, which JSON cannot carry. Absent
/// or `null` is 100; under 1 is 1; a fraction pages by its integer part; NaN is an empty page, as
/// `Math.max(1, NaN)` is NaN and `slice(offset, NaN)` takes nothing.
pub(crate) fn page_limit(limit: Option<&Value>, max_page_size: usize) -> usize {
    let n = match limit {
        None | Some(Value::Null) => 100.0,
        Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
        Some(Value::String(s)) => s.parse::<f64>().unwrap_or(f64::NAN),
        Some(_) => f64::NAN,
    };
    if n.is_nan() {
        return 0;
    }
    n.max(1.0).min(max_page_size as f64) as usize
}

impl<S: CheckpointStorage> Checkpoints<S> {
    pub fn new(storage: S, max_value_bytes: usize, max_page_size: usize) -> Self {
        Checkpoints {
            storage,
            max_value_bytes: max_value_bytes.max(1),
            max_page_size: max_page_size.max(1),
        }
    }

    /// `saveCheckpoint(input)`, with the value and metadata as JSON text (the facade's
    /// `JSON.stringify`; they are kept and answered as that text, never parsed here); `now` is the
    /// ISO time of the save. Answers the record as JSON text.
    pub fn save(
        &self,
        input: &Value,
        value: String,
        metadata: Option<String>,
        now: &str,
    ) -> Result<String, CheckpointError> {
        let id = id_of(input)?;
        let version = input
            .get("version")
            .and_then(Value::as_i64)
            .filter(|v| *v >= 1 && *v < (1i64 << 53))
            .ok_or_else(|| conflict("Checkpoint version must be a positive safe integer"))?;
        if !is_json(&value) || metadata.as_deref().is_some_and(|m| !is_json(m)) {
            return Err(conflict("Checkpoint value must be JSON serializable"));
        }
        if value.len() > self.max_value_bytes {
            return Err(CheckpointError::Range(format!(
                "Checkpoint value exceeds maxValueBytes ({})",
                self.max_value_bytes
            )));
        }
        let fencing = input.get("fencingToken").and_then(Value::as_i64);
        let owner = owner_of(input);
        let expected = input.get("expectedVersion").filter(|v| !v.is_null());
        let mut row = Row {
            namespace: id.namespace.clone(),
            key: id.key.clone(),
            version,
            fencing_token: fencing,
            value,
            category: text(input, "category"),
            owner,
            created_at: now.to_string(),
            updated_at: now.to_string(),
            metadata,
        };
        let saved = self.storage.transact(&id, |existing| {
            let current = existing.as_ref().map_or(0, |e| e.version);
            if let Some(e) = &existing {
                if e.owner != row.owner {
                    return Err(conflict("Checkpoint ownership mismatch"));
                }
            }
            if let Some(expected) = expected {
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
            if let Some(held) = existing.as_ref().and_then(|e| e.fencing_token) {
                if fencing.is_none_or(|f| f < held) {
                    return Err(conflict(format!(
                        "Stale checkpoint fencing token {} (current {held})",
                        fencing.map_or("missing".to_string(), |f| f.to_string())
                    )));
                }
            }
            if let Some(e) = existing {
                row.created_at = e.created_at;
            }
            Ok((Write::Put(Box::new(row.clone())), row))
        })?;
        Ok(saved.json())
    }

    /// `loadCheckpoint(key)`: the record's JSON text, `None` when absent; another owner's record is
    /// a conflict.
    pub fn load(&self, input: &Value) -> Result<Option<String>, CheckpointError> {
        let id = id_of(input)?;
        match self.storage.read(&id)? {
            Some(r) if r.owner != owner_of(input) => Err(conflict("Checkpoint ownership mismatch")),
            other => Ok(other.map(|r| r.json())),
        }
    }

    /// `deleteCheckpoint(key)`: whether a record was removed.
    pub fn delete(&self, input: &Value) -> Result<bool, CheckpointError> {
        let id = id_of(input)?;
        let owner = owner_of(input);
        self.storage.transact(&id, |existing| match existing {
            None => Ok((Write::Keep, false)),
            Some(r) if r.owner != owner => Err(conflict("Checkpoint ownership mismatch")),
            Some(_) => Ok((Write::Delete, true)),
        })
    }

    /// `listCheckpoints(query)`: newest first, a numeric cursor; the page as JSON text.
    pub fn list(&self, query: &Value) -> Result<String, CheckpointError> {
        let offset = match query.get("cursor") {
            None | Some(Value::Null) => 0usize,
            Some(Value::String(s)) => s
                .parse::<usize>()
                .map_err(|_| conflict("Invalid checkpoint cursor"))?,
            Some(_) => return Err(conflict("Invalid checkpoint cursor")),
        };
        let limit = page_limit(query.get("limit"), self.max_page_size);
        let categories = match query.get("category") {
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
        let filter = ListFilter {
            namespace: text(query, "namespace"),
            key_prefix: text(query, "keyPrefix"),
            owner: owner_of(query),
            categories,
            offset,
            limit,
        };
        let mut rows = self.storage.select(&filter)?;
        let more = rows.len() > limit;
        rows.truncate(limit);
        let next = offset + rows.len();
        let items: Vec<String> = rows.iter().map(Row::json).collect();
        let mut out = format!("{{\"items\":[{}]", items.join(","));
        if more {
            field(&mut out, "nextCursor", &quoted(&next.to_string()));
        }
        out.push('}');
        Ok(out)
    }

    pub fn close(&self) {
        self.storage.close()
    }
}
