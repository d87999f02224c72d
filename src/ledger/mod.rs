//! Run ledgers.
