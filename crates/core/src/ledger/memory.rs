//! In-memory run ledger: rows in a vector, in append order.

use super::{LedgerError, RecordKind, MAX_LEDGER_RECORD_BYTES};
use std::sync::Mutex;

#[derive(Default)]
pub struct MemoryLedger {
    rows: Mutex<Vec<(RecordKind, String)>>,
}

impl MemoryLedger {
    pub fn append(&self, kind: RecordKind, json: String) -> Result<(), LedgerError> {
        if json.len() > MAX_LEDGER_RECORD_BYTES {
            return Err(LedgerError::TooLarge);
        }
        self.rows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((kind, json));
        Ok(())
    }

    /// Rows of one kind in append order.
    pub fn list(&self, kind: RecordKind) -> Vec<String> {
        let rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
        rows.iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, j)| j.clone())
            .collect()
    }

    pub fn len(&self) -> usize {
        self.rows.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
