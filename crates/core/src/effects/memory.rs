//! The in-memory storage of the effect store (the SQLite and PostgreSQL storages are beside it).

use super::error::StoreError;
use super::key::{Owner, ValidKey};
use super::record::EffectRecord;
use super::store::{RecordStorage, RecordUpdate};
use std::collections::HashMap;
use std::sync::Mutex;

/// In-process storage: a map behind a mutex, keyed by the SHA-256 of the storage id. Records are
/// boxed so the table stays small (a slot is 32 bytes and a pointer) and grows by moving pointers,
/// not records.
#[derive(Default)]
pub struct MemoryStorage {
    records: Mutex<HashMap<[u8; 32], Box<EffectRecord>>>,
}

impl MemoryStorage {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Box<EffectRecord>>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many records the store holds.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RecordStorage for MemoryStorage {
    fn read(&self, k: &ValidKey) -> Result<Option<EffectRecord>, StoreError> {
        Ok(self
            .lock()
            .get(&k.storage_digest)
            .map(|r| EffectRecord::clone(r)))
    }

    fn update<R>(&self, k: &ValidKey, f: impl RecordUpdate<R>) -> Result<R, StoreError> {
        let mut map = self.lock();
        if let Some(record) = map.get_mut(&k.storage_digest) {
            // Changed in place: `dirty` needs no write.
            return Ok(f(Some(record))?.out);
        }
        let step = f(None)?;
        if let Some(record) = step.insert {
            map.insert(k.storage_digest, Box::new(record));
        }
        Ok(step.out)
    }

    fn cleanup(&self, owner: &Owner, before: i64, limit: u32) -> Result<u32, StoreError> {
        let mut map = self.lock();
        let doomed: Vec<[u8; 32]> = map
            .iter()
            .filter(|(_, r)| {
                r.status.is_terminal()
                    && r.updated_at < before
                    && r.key.tenant_id() == owner.tenant_id
                    && r.key.account_id() == owner.account_id.as_deref()
                    && r.key.user_id() == owner.user_id.as_deref()
            })
            .take(limit as usize)
            .map(|(id, _)| *id)
            .collect();
        for id in &doomed {
            map.remove(id);
        }
        Ok(doomed.len() as u32)
    }
}
