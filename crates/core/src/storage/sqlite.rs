//! SQLite: one file may be shared by several processes. Every connection runs in WAL mode with a busy
//! timeout, and every write is one `BEGIN IMMEDIATE` transaction (read, decide, write, commit), so two
//! processes writing one row are serialised by SQLite's write lock. `synchronous = FULL` by default: a
//! committed write survives a killed process and a power loss; `NORMAL` survives a killed process only.

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
