//! In-process storage of checkpoints (the rules are `checkpoint.rs`'s, as for SQLite and
//! PostgreSQL): rows in the order they were last saved, the least recently saved evicted past
//! `max_records`. A read never changes that order.

use std::sync::{Mutex, MutexGuard};

use lru::LruCache;

use super::checkpoint::{
    CheckpointError, CheckpointId, CheckpointStorage, Checkpoints, Decide, ListFilter, Row, Write,
};

/// Checkpoint → row, least recently saved first.
pub struct MemoryStorage {
    rows: Mutex<LruCache<CheckpointId, Row>>,
    max_records: usize,
}

/// An in-process checkpoint store.
pub type MemoryCheckpoints = Checkpoints<MemoryStorage>;

impl MemoryCheckpoints {
    /// An empty store keeping at most `max_records` checkpoints.
    pub fn open(max_records: usize, max_value_bytes: usize, max_page_size: usize) -> Self {
        let storage = MemoryStorage {
            rows: Mutex::new(LruCache::unbounded()),
            max_records: max_records.max(1),
        };
        Checkpoints::new(storage, max_value_bytes, max_page_size)
    }
}

impl MemoryStorage {
    fn rows(&self) -> MutexGuard<'_, LruCache<CheckpointId, Row>> {
        // A panic while the lock was held left the rows as they were before that step: each step
        // changes them with one put or pop, after its decision.
        self.rows
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whether `row` is in the page `f` selects (before its offset and limit).
fn selected(row: &Row, f: &ListFilter) -> bool {
    f.namespace.as_ref().is_none_or(|n| *n == row.namespace)
        && f.key_prefix
            .as_ref()
            .is_none_or(|p| row.key.starts_with(p.as_str()))
        && f.owner
            .iter()
            .zip(&row.owner)
            .all(|(want, has)| want.is_none() || want == has)
        && f.categories
            .as_ref()
            .is_none_or(|c| row.category.as_ref().is_some_and(|have| c.contains(have)))
}

impl CheckpointStorage for MemoryStorage {
    fn transact<T>(&self, id: &CheckpointId, decide: impl Decide<T>) -> Result<T, CheckpointError> {
        let mut rows = self.rows();
        let (write, out) = decide(rows.peek(id).cloned())?;
        match write {
            Write::Keep => {}
            Write::Put(row) => {
                // `push` makes the row the most recently saved.
                rows.push(id.clone(), *row);
                while rows.len() > self.max_records {
                    rows.pop_lru();
                }
            }
            Write::Delete => {
                rows.pop(id);
            }
        }
        Ok(out)
    }

    fn read(&self, id: &CheckpointId) -> Result<Option<Row>, CheckpointError> {
        Ok(self.rows().peek(id).cloned())
    }

    fn select(&self, f: &ListFilter) -> Result<Vec<Row>, CheckpointError> {
        let rows = self.rows();
        let mut matching: Vec<&Row> = rows
            .iter()
            .map(|(_, row)| row)
            .filter(|row| selected(row, f))
            .collect();
        // As the SQL stores order them: newest `updated_at` first, then by key (UTF-8 byte order).
        // Only the page is copied.
        matching.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then_with(|| a.key.cmp(&b.key))
        });
        let page = matching.into_iter().skip(f.offset).take(f.limit + 1);
        Ok(page.cloned().collect())
    }

    fn close(&self) {}
}

#[cfg(test)]
mod tests {
    use super::super::checkpoint::is_json;
    use super::*;
    use serde_json::{json, Value};

    fn parsed(text: String) -> Value {
        serde_json::from_str(&text).unwrap()
    }

    fn save(s: &MemoryCheckpoints, key: &str, version: i64, now: &str) {
        let input = json!({ "namespace": "n", "key": key, "version": version });
        s.save(&input, version.to_string(), None, now).unwrap();
    }

    fn load(s: &MemoryCheckpoints, key: &str) -> Option<Value> {
        s.load(&json!({ "namespace": "n", "key": key }))
            .unwrap()
            .map(parsed)
    }

    fn keys(s: &MemoryCheckpoints, query: Value) -> Vec<String> {
        parsed(s.list(&query).unwrap())["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["key"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn evicts_the_least_recently_saved_and_reads_do_not_count() {
        let s = MemoryCheckpoints::open(2, 1 << 20, 500);
        save(&s, "a", 1, "t1");
        save(&s, "b", 1, "t2");
        // Reading `a` does not keep it; saving `a` again would.
        assert!(load(&s, "a").is_some());
        save(&s, "c", 1, "t3");
        assert!(load(&s, "a").is_none());
        save(&s, "b", 2, "t4");
        save(&s, "d", 1, "t5");
        assert_eq!(keys(&s, json!({ "namespace": "n" })), ["d", "b"]);
    }

    #[test]
    fn a_refused_save_changes_nothing() {
        let s = MemoryCheckpoints::open(10, 1 << 20, 500);
        save(&s, "a", 2, "t1");
        let stale = json!({ "namespace": "n", "key": "a", "version": 1 });
        let refused = s.save(&stale, "0".into(), None, "t2");
        assert!(matches!(refused, Err(CheckpointError::Conflict(_))));
        let cas = json!({ "namespace": "n", "key": "a", "version": 3, "expectedVersion": 1 });
        let refused = s.save(&cas, "0".into(), None, "t2");
        assert!(matches!(refused, Err(CheckpointError::Conflict(_))));
        let loaded = load(&s, "a").unwrap();
        assert_eq!(
            (&loaded["version"], &loaded["updatedAt"]),
            (&json!(2), &json!("t1"))
        );
    }

    #[test]
    fn keeps_and_answers_the_value_text_as_given_at_any_depth() {
        let s = MemoryCheckpoints::open(10, 1 << 20, 500);
        let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
        let input = json!({ "namespace": "n", "key": "deep", "version": 1 });
        s.save(
            &input,
            deep.clone(),
            Some(r#"{"by":"w\u00e9"}"#.into()),
            "t1",
        )
        .unwrap();
        let text = s
            .load(&json!({ "namespace": "n", "key": "deep" }))
            .unwrap()
            .unwrap();
        assert!(text.contains(&format!("\"value\":{deep},")));
        assert!(text.ends_with(r#""metadata":{"by":"w\u00e9"}}"#));
        assert!(is_json(&text));
        let broken = s.save(
            &json!({ "namespace": "n", "key": "x", "version": 1 }),
            "[1".into(),
            None,
            "t",
        );
        assert!(matches!(broken, Err(CheckpointError::Conflict(_))));
    }

    #[test]
    fn lists_newest_first_then_by_key_with_filters_and_pages() {
        let s = MemoryCheckpoints::open(10, 1 << 20, 2);
        for (k, now) in [("k2", "t1"), ("k1", "t1"), ("x", "t2"), ("k3", "t0")] {
            save(&s, k, 1, now);
        }
        let page = json!({ "namespace": "n", "keyPrefix": "k", "limit": 5 });
        assert_eq!(keys(&s, page), ["k1", "k2"]);
        let next = parsed(
            s.list(&json!({ "namespace": "n", "keyPrefix": "k" }))
                .unwrap(),
        );
        assert_eq!(next["nextCursor"], "2");
        let rest = json!({ "namespace": "n", "keyPrefix": "k", "cursor": "2" });
        assert_eq!(keys(&s, rest), ["k3"]);
        assert!(keys(&s, json!({ "namespace": "other" })).is_empty());
        assert!(keys(&s, json!({ "category": [] })).is_empty());
    }

    #[test]
    fn page_limits_read_as_upstreams_math_min_max() {
        let s = MemoryCheckpoints::open(10, 1 << 20, 3);
        for k in ["a", "b", "c", "d"] {
            save(&s, k, 1, "t");
        }
        let count = |limit: Value| keys(&s, json!({ "limit": limit })).len();
        assert_eq!(count(json!(2)), 2);
        assert_eq!(count(json!("2")), 2); // what the facade sends for `"2"` is 2; a stray text reads so too
        assert_eq!(count(json!(2.9)), 2);
        assert_eq!(count(json!(0)), 1);
        assert_eq!(count(json!(-5)), 1);
        assert_eq!(count(json!("-Infinity")), 1);
        assert_eq!(count(json!("Infinity")), 3);
        assert_eq!(count(Value::Null), 3); // 100, then the page bound
        let nan = parsed(s.list(&json!({ "limit": "NaN", "cursor": "1" })).unwrap());
        assert_eq!(nan["items"], json!([]));
        assert_eq!(nan["nextCursor"], "1");
    }
}
