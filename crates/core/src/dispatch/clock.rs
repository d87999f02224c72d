//! The process-wide counter behind ledger row ids. `lib/dispatch-records.js` formats the ids
//! (`tcr_<ms base36>_<pid base36>_<counter base36>`) from blocks of counters reserved here, so a
//! row costs no Node-API crossing; the one counter keeps ids unique across every dispatcher,
//! worker thread and module instance of this process.

use std::sync::atomic::{AtomicU64, Ordering};

static ROW_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Reserves `n` consecutive row counters and returns the first; no counter is handed out twice.
pub fn reserve_row_counters(n: u64) -> u64 {
    ROW_COUNTER.fetch_add(n, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_never_overlap() {
        let a = reserve_row_counters(1024);
        let b = reserve_row_counters(1);
        let c = reserve_row_counters(1024);
        assert!(b >= a + 1024, "a reserved block is never handed out again");
        assert!(c > b);
    }
}
