//! napi exports of the effects module: canonical JSON, keys, identity checks, declarations, and the
//! built-in `ToolEffectStore`s. Host objects are read through raw N-API calls (one property read each);
//! records cross back as JSON text parsed by V8 (`JSON.parse`), one call per record.
//!
//! - `js`: the raw Node-API helpers every reader uses;
//! - `errors`: `ToolEffectError` / `IdentityError` instances (their classes held per environment);
//! - `canonical`: canonical JSON and the arguments hash of a JS value;
//! - `read`: identities, ownership, keys, claims, failures, results and signals read from JS;
//! - `identity`: key derivation, identity checks and effect declarations;
//! - `store`: the memory store's JS face, and the SQLite store's handle;
//! - `pool`: store operations on libuv's thread pool (SQLite, PostgreSQL: one handle class, run by `blocking`), JSON text in and out;
//! - `dispatch`: dispatch's lean path, with the identity read once and the key made once per call.

pub mod canonical;
pub mod dispatch;
pub mod errors;
pub mod identity;
pub mod js;
pub mod pool;
pub mod read;
pub mod store;
