//! prism-tools-native: the tool harness of `@arnilo/prism` as a Node.js addon.
//! Each concern is its own module of plain Rust; `js` holds every napi export.

mod arguments;
mod dispatch;
pub mod effects;
pub mod error;
mod filter;
#[cfg(feature = "fuzz")]
#[doc(hidden)]
pub mod fuzz_api;
mod js;
pub mod ledger;
mod middleware;
mod policy;
mod redact;
mod run;
mod search;
mod validate;
