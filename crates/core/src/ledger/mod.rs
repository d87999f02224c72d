//! Run ledgers: append-only rows (`ToolCallRecord` and the other `RunLedger` records) kept as JSON text,
//! read back in append order. An in-memory ledger for tests and examples, and a SQLite ledger whose appends
//! are committed in batches by a writer thread.

pub mod memory;
pub mod postgres;
pub mod sqlite;

use std::fmt;

/// Largest accepted row (JSON text).
pub const MAX_LEDGER_RECORD_BYTES: usize = 1024 * 1024;

/// Which `RunLedger` method appended a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    ToolCall,
    Run,
    Event,
    Usage,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolCall => "tool_call",
            Self::Run => "run",
            Self::Event => "event",
            Self::Usage => "usage",
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "tool_call" => Self::ToolCall,
            "run" => Self::Run,
            "event" => Self::Event,
            "usage" => Self::Usage,
            _ => return None,
        })
    }
}

/// A ledger failure: `closed`, a row over the size bound, or storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerError {
    Closed,
    TooLarge,
    Storage(String),
}

impl fmt::Display for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Closed => f.write_str("run ledger is closed"),
            Self::TooLarge => write!(
                f,
                "run ledger record exceeds {MAX_LEDGER_RECORD_BYTES} bytes"
            ),
            Self::Storage(m) => write!(f, "run ledger write failed: {m}"),
        }
    }
}

pub use memory::MemoryLedger;
pub use sqlite::{SqliteLedger, SqliteLedgerOptions};
