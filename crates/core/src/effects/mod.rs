//! Recoverable tool effects (docs/spec.md section 7): declarations, canonical JSON, keys, identity checks, and the
//! claim/CAS store state machine with its in-memory, SQLite and PostgreSQL storages. Plain Rust, no napi types.

pub mod canonical;
pub mod declaration;
pub mod error;
pub mod identity;
pub mod key;
pub mod memory;
pub mod postgres;
pub mod record;
pub mod row;
pub mod sqlite;
pub mod store;
pub mod time;
pub mod wire;

pub use canonical::{arguments_hash, canonical_json, derive_key, KeyMaterial};
pub use error::{EffectError, EffectErrorCode, IdentityFailure, StoreError};
pub use memory::MemoryStorage;
pub use sqlite::SqliteStorage;
pub use store::EffectStore;

#[cfg(test)]
mod tests;
