//! In-memory run ledger: rows in a vector, in append order.

use super::{LedgerError, RecordKind, MAX_LEDGER_RECORD_BYTES};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

#[derive(Default)]
pub struct MemoryLedger {
    rows: Mutex<Vec<(RecordKind, String)>>,
    closed: AtomicBool,
}

impl MemoryLedger {
    pub fn append(&self, kind: RecordKind, json: String) -> Result<(), LedgerError> {
        // Closed as every built-in ledger closes: later appends fail, the rows stay readable.
        if self.closed.load(Ordering::Acquire) {
            return Err(LedgerError::Closed);
        }
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

    /// Refuses later appends. Idempotent.
    pub fn close(&self) {
        self.closed.store(true, Ordering::Release);
    }

    pub fn len(&self) -> usize {
        self.rows.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_ledger_refuses_appends_and_keeps_its_rows() {
        let l = MemoryLedger::default();
        l.append(RecordKind::Run, "{\"a\":1}".into()).unwrap();
        l.close();
        l.close();
        assert_eq!(
            l.append(RecordKind::Run, "{}".into()),
            Err(LedgerError::Closed)
        );
        assert_eq!(l.list(RecordKind::Run), vec!["{\"a\":1}".to_string()]);
    }
}
