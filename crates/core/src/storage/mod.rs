//! The storage layer under effects, ledgers and checkpoints, over SQLite and PostgreSQL.
//!
//! Each component keeps only its own tables, statements and row mapping; what they share is here:
//!
//! - `sqlite`: options, opening a file (WAL, busy timeout, synchronous level), one connection held
//!   with its closed state, the `BEGIN IMMEDIATE` write transaction, reading one optional row, columns
//!   added after a release.
//! - `postgres`: options, the schema-name check, the client configuration, opening a component (first
//!   direct connection, migrations), the pool of prepared connections, the write transaction under a
//!   transaction-scoped lock (with its retries and its commit), and the database's errors in words
//!   ([`postgres::PgError`]).
//! - `batch`: one batched append writer thread over a [`batch::Sink`] (a SQLite connection or a
//!   PostgreSQL client), which both run ledgers use.
//! - `row`: one value type both databases bind and one column reader both rows implement, so a
//!   component maps its rows once.
//!
//! Errors of this layer carry no component prefix; each component says which store failed.

pub mod batch;
pub mod postgres;
pub mod row;
pub mod sqlite;
