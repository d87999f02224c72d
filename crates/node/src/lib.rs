//! prism-tools-native: the Node.js binding of `prism-tools-core`.
//!
//! The only crate that knows Node-API: `#[napi]` exports, conversions between JS values and the
//! core's types, and every `unsafe` block of the project. Decisions stay in the core.

pub mod approval;
pub mod arguments;
pub mod blocking;
pub mod checkpoints;
pub mod dispatch;
pub mod effects;
pub mod host;
pub mod instance;
pub mod ledger;
pub mod middleware;
pub mod policy;
pub mod postgres;
pub mod redact;
pub mod run;
pub mod search;
pub mod throw;
pub mod validate;
