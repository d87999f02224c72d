//! SQLite: one file may be shared by several processes. Every connection runs in WAL mode with a busy
//! timeout, and every write is one `BEGIN IMMEDIATE` transaction (read, decide, write, commit), so two
//! processes writing one row are serialised by SQLite's write lock. `synchronous = FULL` by default: a
//! committed write survives a killed process and a power loss; `NORMAL` survives a killed process only.

use crate::error::PrismError;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Options of a SQLite store or ledger.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// How long a writer waits for another process's lock before failing (ms).
    pub busy_timeout_ms: u32,
    /// `PRAGMA synchronous`: `true` = FULL, `false` = NORMAL.
    pub synchronous_full: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self {
            busy_timeout_ms: 5_000,
            synchronous_full: true,
        }
    }
}

/// Opens a connection in WAL mode with the busy timeout and synchronous level applied.
pub fn open_connection(path: &str, options: &SqliteOptions) -> Result<Connection, rusqlite::Error> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(Duration::from_millis(options.busy_timeout_ms as u64))?;
    // Switching to WAL needs a moment without other writers; retry while another process holds the lock.
    let mut tries = 0;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Ok(_) => break,
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy && tries < 100 =>
            {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
    conn.pragma_update(
        None,
        "synchronous",
        if options.synchronous_full {
            "FULL"
        } else {
            "NORMAL"
        },
    )?;
    Ok(conn)
}

/// Whether SQLite would give `path` a private in-memory database: `""` and `":memory:"` (and
/// `file::memory:` URIs) open a database no other connection, store or process shares.
pub fn is_private_memory_path(path: &str) -> bool {
    path.is_empty() || path == ":memory:" || path.starts_with("file::memory:")
}

/// The path check every durable SQLite factory makes before it opens its store: a private in-memory
/// database is refused (a store there keeps nothing another process, or the next one, can read:
/// a claim stops no one, a saved approval pause is gone with the process), and so is a path SQLite
/// cannot open as a database (a missing directory, a directory, a file that is not a database, no
/// permission). Both are the caller's option, so both are `ERR_PRISM_INVALID_OPTION` naming the
/// factory, the option and the path; `instead` says what to use for one process. The probe opens
/// the file as the store will and reads its header, then closes it; a failure after this check
/// (a lock held too long, a disk error) stays the store's own error.
pub fn check_store_path(factory: &str, path: &str, instead: &str) -> Result<(), PrismError> {
    if is_private_memory_path(path) {
        return Err(PrismError::invalid_option(format!(
            "{factory}: path {path:?} opens a private in-memory database that no other store or process shares, so nothing kept there outlives this store; pass a file path, or use {instead} for one process"
        )));
    }
    let probe = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .and_then(|conn| {
        conn.query_row("PRAGMA schema_version", [], |r| r.get::<_, i64>(0))?;
        Ok(conn)
    });
    match probe {
        Ok(conn) => {
            let _ = conn.close();
            Ok(())
        }
        Err(e) if path_fault(&e) => Err(PrismError::invalid_option(format!(
            "{factory}: path {path:?} cannot be opened as a SQLite database: {e}"
        ))),
        // Busy and the like: not the path's fault; the store's own open reports it.
        Err(_) => Ok(()),
    }
}

/// SQLite failures that say the path itself is unusable.
fn path_fault(e: &rusqlite::Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, C::CannotOpen | C::NotADatabase | C::ReadOnly | C::PermissionDenied)
    )
}

/// Runs `f` in one `BEGIN IMMEDIATE` transaction and commits; an `Err` from `f` rolls back.
pub fn immediate<T, E: From<rusqlite::Error>>(
    conn: &mut Connection,
    f: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
) -> Result<T, E> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let out = f(&tx)?; // an Err drops `tx`, which rolls back
    tx.commit()?;
    Ok(out)
}

/// The one row `sql` selects with `params`, read by `read` (a component's row mapping); `None` when
/// there is no row. The statement is prepared once per connection.
pub fn query_opt<T, E: From<rusqlite::Error>>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    read: impl FnOnce(&rusqlite::Row<'_>) -> Result<T, E>,
) -> Result<Option<T>, E> {
    let mut stmt = conn.prepare_cached(sql)?;
    stmt.query_row(params, |r| Ok(read(r)))
        .optional()?
        .transpose()
}

/// Adds the columns of `table` that a file made before them lacks. Run it inside a write transaction
/// ([`immediate`]), so processes opening one file together add each column once.
pub fn add_missing_columns(
    conn: &Connection,
    table: &str,
    columns: &[(&str, &str)],
) -> Result<(), rusqlite::Error> {
    let present: Vec<String> = {
        let mut stmt = conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
        let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
        names.collect::<rusqlite::Result<_>>()?
    };
    for (name, ty) in columns {
        if !present.iter().any(|p| p == name) {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {name} {ty}"))?;
        }
    }
    Ok(())
}

/// A component's error: made from SQLite's errors, with its own words for a closed store.
pub trait SqliteError: From<rusqlite::Error> {
    fn closed() -> Self;
}

/// One component's connection, shared by its operations (one at a time); gone once closed, after
/// which every operation fails with the component's closed error.
pub struct SqliteConnection {
    conn: Mutex<Option<Connection>>,
}

impl SqliteConnection {
    /// Opens `path` ([`open_connection`]) and creates the component's tables (`schema`, idempotent).
    pub fn open(
        path: &str,
        options: &SqliteOptions,
        schema: &str,
    ) -> Result<Self, rusqlite::Error> {
        let conn = open_connection(path, options)?;
        conn.execute_batch(schema)?;
        Ok(Self {
            conn: Mutex::new(Some(conn)),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Option<Connection>> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the open connection.
    pub fn with<T, E: SqliteError>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        match self.lock().as_mut() {
            Some(conn) => f(conn),
            None => Err(E::closed()),
        }
    }

    /// Runs `f` in one write transaction ([`immediate`]).
    pub fn write<T, E: SqliteError>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.with(|conn| immediate(conn, f))
    }

    /// Closes the connection; later operations fail. Idempotent.
    pub fn close(&self) {
        if let Some(conn) = self.lock().take() {
            let _ = conn.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    #[test]
    fn private_memory_paths_and_unopenable_paths_are_invalid_options() {
        for path in ["", ":memory:", "file::memory:?cache=shared"] {
            let e = check_store_path("f", path, "g()").unwrap_err();
            assert_eq!(e.code, Code::InvalidOption, "{path:?}");
            assert!(
                e.message.contains(&format!("path {path:?}")),
                "{}",
                e.message
            );
            assert!(e.message.contains("g() for one process"), "{}", e.message);
        }
        let dir = std::env::temp_dir();
        let missing = dir.join("prism-no-such-dir").join("x.db");
        for path in [missing.to_str().unwrap(), dir.to_str().unwrap()] {
            let e = check_store_path("f", path, "g()").unwrap_err();
            assert_eq!(e.code, Code::InvalidOption, "{path:?}");
            assert!(
                e.message
                    .starts_with(&format!("f: path {path:?} cannot be opened")),
                "{}",
                e.message
            );
        }
        let junk = dir.join(format!("prism-not-a-db-{}", std::process::id()));
        std::fs::write(&junk, vec![b'x'; 4096]).unwrap();
        let e = check_store_path("f", junk.to_str().unwrap(), "g()").unwrap_err();
        assert_eq!(e.code, Code::InvalidOption);
        std::fs::remove_file(&junk).unwrap();
        let ok = dir.join(format!("prism-store-path-{}.db", std::process::id()));
        check_store_path("f", ok.to_str().unwrap(), "g()").unwrap();
        let _ = std::fs::remove_file(&ok);
    }
}
