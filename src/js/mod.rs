//! The JS boundary: napi exports and conversions between JS values and Rust.
//! Pure logic lives in the concern modules; only this tree knows napi details.

pub mod approval;
pub mod arguments;
pub mod checkpoints;
pub mod dispatch;
pub mod effects;
pub mod ledger;
pub mod middleware;
pub mod policy;
pub mod postgres;
pub mod redact;
pub mod run;
pub mod search;
pub mod validate;
