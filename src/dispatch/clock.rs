//! Unique ledger row ids, without a date crate.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub fn now_millis() -> i64 {
    match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_millis() as i64,
        Err(e) => -(e.duration().as_millis() as i64),
    }
}

static ROW_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A ledger row id unique within this process and, through the time and process id, across
/// processes writing to one ledger: `tcr_<ms base36>_<pid base36>_<counter base36>`.
pub fn row_id() -> String {
    let n = ROW_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(
        "tcr_{}_{}_{}",
        base36(now_millis().max(0) as u64),
        base36(std::process::id() as u64),
        base36(n)
    )
}

fn base36(mut n: u64) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    if n == 0 {
        return "0".into();
    }
    let mut out = Vec::new();
    while n > 0 {
        out.push(DIGITS[(n % 36) as usize]);
        n /= 36;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_ids_are_unique() {
        let a = row_id();
        let b = row_id();
        assert_ne!(a, b);
        assert!(a.starts_with("tcr_"));
    }
}
