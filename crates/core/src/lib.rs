//! prism-tools-core: every decision and every store of the tool harness, in plain Rust.
//!
//! No napi dependency and no `unsafe`: the compiler keeps Node out of this crate, and `cargo test`
//! runs it without Node. The binding crate (`crates/node`) is the only place that reads or writes
//! JS values.
#![forbid(unsafe_code)]

pub mod arguments;
pub mod dispatch;
pub mod effects;
pub mod error;
pub mod filter;
// Also built for the unit tests, which run each target on seeded inputs.
#[cfg(any(test, feature = "fuzz"))]
#[doc(hidden)]
pub mod fuzz_api;
pub mod host;
pub mod ledger;
pub mod middleware;
pub mod policy;
pub mod redact;
pub mod redact_match;
pub mod redact_units;
pub mod run;
pub mod search;
pub mod storage;
pub mod text;
pub mod tool_contract;
pub mod validate;
