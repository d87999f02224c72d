//! PostgreSQL: many workers on many machines share one schema. A component opens with one direct
//! connection (so a refused connection or a failed login is reported with its cause; a pool keeps only
//! a summary) that runs its migrations, then works over a pool of connections with its statements
//! prepared once, or its own writer connection. Everything here runs on a blocking thread, never the
//! JS thread.

use std::str::FromStr;
use std::sync::RwLock;
use std::time::Duration;

use postgres::error::SqlState;
use postgres::{Client, Config, NoTls, Row, Statement};

/// A failure of this layer, without the component's words: each component says which store failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PgError {
    /// The component was closed.
    Closed,
    /// What failed and why, in the database's own words: `connect: …`, `migrate: …`,
    /// `invalid connection string: …`, `no database connection: …`, `schema must match …`. Nothing
    /// was committed.
    Failed(String),
    /// `COMMIT` was sent and its answer never came (the connection dropped): the transaction may
    /// have committed or not. `commit: <why>`.
    CommitUnknown(String),
}

impl PgError {
    /// The message of `store` (`"tool effect store"`, `"checkpoint store"`): `<store> is closed` or
    /// `<store> failed: <what>: <why>`.
    pub fn message(&self, store: &str) -> String {
        match self {
            Self::Closed => format!("{store} is closed"),
            Self::Failed(detail) | Self::CommitUnknown(detail) => {
                format!("{store} failed: {detail}")
            }
        }
    }
}

/// A failed step with the database's own words (never arguments, results or claim tokens: those
/// travel only as bound parameters, which PostgreSQL does not echo in errors).
pub fn failed(what: &str, e: &postgres::Error) -> PgError {
    let detail = match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => {
            // "error connecting to server" alone hides the cause (refused, timed out, DNS, …).
            let mut d = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(s) = source {
                d.push_str(": ");
                d.push_str(&s.to_string());
                source = s.source();
            }
            d
        }
    };
    PgError::Failed(format!("{what}: {detail}"))
}

/// A failed `COMMIT`: refused by the server (a serialisation failure, a deferred constraint) it
/// committed nothing; lost on the way (no answer from the server) it may have committed.
fn commit_failed(e: &postgres::Error) -> PgError {
    match failed("commit", e) {
        PgError::Failed(m) if e.as_db_error().is_none() => PgError::CommitUnknown(m),
        other => other,
    }
}

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// `postgres://user:password@host:port/database?…` or key=value form.
    pub url: String,
    /// The schema holding the tables; created when absent. A plain identifier.
    pub schema: String,
    /// Connections kept open by a pooled component (1–64).
    pub max_connections: u32,
    /// How long connecting may take before the operation fails (ms).
    pub connect_timeout_ms: u64,
    /// `statement_timeout` (and `lock_timeout`) of every connection (ms): a stuck statement fails
    /// instead of hanging a worker.
    pub statement_timeout_ms: u64,
}

impl PostgresOptions {
    /// The defaults with whatever the host set (the napi option objects of every PostgreSQL component).
    pub fn from_host(
        url: String,
        schema: Option<String>,
        max_connections: Option<u32>,
        connect_timeout_ms: Option<u32>,
        statement_timeout_ms: Option<u32>,
    ) -> Self {
        let mut o = Self::new(url);
        if let Some(s) = schema {
            o.schema = s;
        }
        if let Some(n) = max_connections {
            o.max_connections = n;
        }
        if let Some(ms) = connect_timeout_ms {
            o.connect_timeout_ms = ms as u64;
        }
        if let Some(ms) = statement_timeout_ms {
            o.statement_timeout_ms = ms as u64;
        }
        o
    }

    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            schema: "prism".into(),
            max_connections: 8,
            connect_timeout_ms: 10_000,
            statement_timeout_ms: 30_000,
        }
    }
}

/// Checks a schema name: lower-case letters, digits and `_`, not starting with a digit, at most 63 bytes
/// (PostgreSQL's identifier limit), so it can be written into SQL unquoted and unambiguous.
pub fn valid_schema(name: &str) -> bool {
    let b = name.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_lowercase() || b[0] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

fn check_schema(schema: &str) -> Result<(), PgError> {
    if valid_schema(schema) {
        return Ok(());
    }
    Err(PgError::Failed(format!(
        "schema must match ^[a-z_][a-z0-9_]{{0,62}}$, got {:?}",
        crate::text::utf8_prefix(schema, 80)
    )))
}

/// The client configuration: the URL's settings plus the connect timeout and per-statement timeouts.
pub fn client_config(options: &PostgresOptions, application: &str) -> Result<Config, PgError> {
    let mut config = Config::from_str(&options.url)
        .map_err(|e| PgError::Failed(format!("invalid connection string: {e}")))?;
    config
        .connect_timeout(Duration::from_millis(options.connect_timeout_ms))
        .application_name(application)
        .options(&format!(
            "-c statement_timeout={} -c lock_timeout={}",
            options.statement_timeout_ms, options.statement_timeout_ms
        ));
    Ok(config)
}

/// Ordered migrations of one component; each runs once per schema, under a lock, in one transaction.
/// `{schema}` in a step is the schema's name. Names and versions are part of every existing database.
pub fn migrate(
    conn: &mut Client,
    schema: &str,
    component: &str,
    steps: &[&str],
) -> Result<(), PgError> {
    let step = |e: postgres::Error| failed("migrate", &e);
    let mut tx = conn.transaction().map_err(step)?;
    // One lock for every migration of this package, so workers starting together take turns.
    tx.execute("SELECT pg_advisory_xact_lock(7307141006339522001)", &[])
        .map_err(step)?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {schema};
         CREATE TABLE IF NOT EXISTS {schema}.prism_migrations (
           component text NOT NULL, version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (component, version))"
    ))
    .map_err(step)?;
    let applied: i32 = tx
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {schema}.prism_migrations WHERE component = $1"),
            &[&component],
        )
        .map_err(step)?
        .get(0);
    for (i, sql) in steps.iter().enumerate().skip(applied.max(0) as usize) {
        tx.batch_execute(&sql.replace("{schema}", schema))
            .map_err(step)?;
        tx.execute(
            &format!("INSERT INTO {schema}.prism_migrations (component, version) VALUES ($1, $2)"),
            &[&component, &(i as i32 + 1)],
        )
        .map_err(step)?;
    }
    tx.commit().map_err(step)
}

/// Opens one component: checks the schema name (the one place it is checked), builds the client
/// configuration, connects once directly and runs the component's migrations. The configuration is
/// what the component's pool or writer connects with afterwards.
pub fn open_component(
    options: &PostgresOptions,
    application: &str,
    component: &str,
    migrations: &[&str],
) -> Result<Config, PgError> {
    check_schema(&options.schema)?;
    let config = client_config(options, application)?;
    let mut first = config.connect(NoTls).map_err(|e| failed("connect", &e))?;
    migrate(&mut first, &options.schema, component, migrations)?;
    Ok(config)
}

/// A pooled connection with its component's statements prepared once, when it was opened: each
/// operation then costs one round trip per statement instead of two. `statements` are in the order
/// of the SQL the pool was opened with.
pub struct Prepared {
    pub client: Client,
    pub statements: Vec<Statement>,
}

/// Opens connections and prepares the statements on each.
pub struct Manager {
    config: Config,
    sql: Vec<String>,
}

impl r2d2::ManageConnection for Manager {
    type Connection = Prepared;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Prepared, postgres::Error> {
        let mut client = self.config.connect(NoTls)?;
        let statements = self
            .sql
            .iter()
            .map(|sql| client.prepare(sql))
            .collect::<Result<_, _>>()?;
        Ok(Prepared { client, statements })
    }

    fn is_valid(&self, conn: &mut Prepared) -> Result<(), postgres::Error> {
        conn.client.simple_query("").map(|_| ())
    }

    fn has_broken(&self, conn: &mut Prepared) -> bool {
        conn.client.is_closed()
    }
}

/// The parameters of one statement.
pub type Params<'a> = &'a [&'a (dyn postgres::types::ToSql + Sync)];

/// One checked-out connection; back in the pool when dropped.
pub type Conn = r2d2::PooledConnection<Manager>;

fn no_connection(e: r2d2::Error) -> PgError {
    PgError::Failed(format!("no database connection: {e}"))
}

/// A pool of one component's connections with its statements (`sql`) prepared on each (made lazily,
/// at most `max_connections`), gone once closed.
pub struct PgPool {
    pool: RwLock<Option<r2d2::Pool<Manager>>>,
}

impl PgPool {
    /// Opens a pooled component ([`open_component`]); every connection of its pool prepares the
    /// statements `sql` makes for its table (`<schema>.<table>`).
    pub fn open_component(
        options: &PostgresOptions,
        application: &str,
        component: &str,
        migrations: &[&str],
        table: &str,
        sql: impl FnOnce(&str) -> Vec<String>,
    ) -> Result<Self, PgError> {
        let config = open_component(options, application, component, migrations)?;
        let sql = sql(&format!("{}.{table}", options.schema));
        Self::open(options, config, sql)
    }

    fn open(options: &PostgresOptions, config: Config, sql: Vec<String>) -> Result<Self, PgError> {
        let pool = r2d2::Pool::builder()
            // A dead connection shows as closed, or fails its statement and is dropped: no test query per use.
            .test_on_check_out(false)
            .max_size(options.max_connections.clamp(1, 64))
            .min_idle(Some(0))
            .connection_timeout(Duration::from_millis(options.connect_timeout_ms.max(100)))
            .error_handler(Box::new(r2d2::NopErrorHandler))
            .build(Manager { config, sql })
            .map_err(no_connection)?;
        Ok(Self {
            pool: RwLock::new(Some(pool)),
        })
    }

    /// A connection, waiting up to the connect timeout for one.
    fn get(&self) -> Result<Conn, PgError> {
        // Clone the pool (a shared handle) so no lock is held while waiting for a connection.
        let pool = self.pool.read().unwrap_or_else(|e| e.into_inner()).clone();
        pool.ok_or(PgError::Closed)?.get().map_err(no_connection)
    }

    /// Runs the pool's statement `i` (its place in the list the pool was opened with) on a pooled
    /// connection; on failure, says that `what` failed.
    pub fn query(&self, what: &str, i: usize, params: Params<'_>) -> Result<Vec<Row>, PgError> {
        let mut conn = self.get()?;
        let conn = &mut *conn;
        conn.client
            .query(&conn.statements[i], params)
            .map_err(|e| failed(what, &e))
    }

    /// As [`PgPool::query`], for a statement that returns no rows: how many rows it changed.
    pub fn execute(&self, what: &str, i: usize, params: Params<'_>) -> Result<u64, PgError> {
        let mut conn = self.get()?;
        let conn = &mut *conn;
        conn.client
            .execute(&conn.statements[i], params)
            .map_err(|e| failed(what, &e))
    }

    /// One write transaction: `in_locked_row` on a pooled connection, with the pool's statements
    /// `lock` and `read`; `then` decides and writes (it also gets every statement of the pool), and
    /// its `Ok` commits. An `Err` from `then` rolls back; a failed commit is `commit: <why>`, as
    /// [`PgError::CommitUnknown`] when its answer was lost. Every earlier failure committed nothing.
    pub fn locked<R, E: From<PgError>>(
        &self,
        lock: usize,
        read: usize,
        params: Params<'_>,
        then: impl FnOnce(&mut postgres::Transaction<'_>, Option<Row>, &[Statement]) -> Result<R, E>,
    ) -> Result<R, E> {
        let mut conn = self.get()?;
        let conn = &mut *conn;
        let st = &conn.statements;
        in_locked_row(
            &mut conn.client,
            &st[lock],
            &st[read],
            params,
            |mut tx, row| {
                let out = then(&mut tx, row, st)?; // an Err drops `tx`, which rolls back
                tx.commit().map_err(|e| commit_failed(&e))?;
                Ok(out)
            },
        )?
    }

    /// Dropping the last handle closes the idle connections; operations in flight keep theirs until done.
    pub fn close(&self) {
        self.pool.write().unwrap_or_else(|e| e.into_inner()).take();
    }
}

/// How many times taking a row's lock is retried after a serialisation failure or deadlock.
const LOCK_RETRIES: u32 = 5;

fn retryable(e: &postgres::Error) -> bool {
    matches!(e.code(), Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED)
}

/// Opens a transaction, takes the transaction-scoped advisory lock (`lock`), then reads the row (`read`),
/// both with `params`; a serialisation failure or deadlock is retried a few times. The advisory lock
/// serialises every writer of the key, including two writers of an absent row (a row lock cannot). The
/// lock and the read are separate statements: under `READ COMMITTED` a read inside the locking statement
/// could miss the commit of the transaction it waited for. `then` gets the open transaction and the row
/// (dropping the transaction rolls it back). On failure: which step failed (`begin` or `lock`), and why.
fn in_locked_row<R>(
    client: &mut Client,
    lock: &Statement,
    read: &Statement,
    params: &[&(dyn postgres::types::ToSql + Sync)],
    then: impl FnOnce(postgres::Transaction<'_>, Option<Row>) -> R,
) -> Result<R, PgError> {
    let mut attempt = 0;
    loop {
        let mut tx = client.transaction().map_err(|e| failed("begin", &e))?;
        match tx
            .execute(lock, params)
            .and_then(|_| tx.query_opt(read, params))
        {
            Ok(row) => return Ok(then(tx, row)),
            Err(e) if retryable(&e) && attempt < LOCK_RETRIES => {
                attempt += 1;
                drop(tx);
                std::thread::sleep(Duration::from_millis(5 << attempt));
            }
            Err(e) => return Err(failed("lock", &e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_plain_identifiers() {
        for ok in ["prism", "_x", "a1_b", &"a".repeat(63)] {
            assert!(valid_schema(ok), "{ok}");
        }
        for bad in [
            "",
            "1a",
            "Prism",
            "a-b",
            "a;drop table x",
            "a b",
            &"a".repeat(64),
            "é",
        ] {
            assert!(!valid_schema(bad), "{bad}");
        }
    }

    #[test]
    fn opening_checks_the_schema_before_connecting_and_names_a_refused_connection() {
        let mut o = PostgresOptions::new("postgres://nobody@127.0.0.1:1/none");
        o.connect_timeout_ms = 500;
        match open_component(&o, "test", "test", &[]) {
            Err(PgError::Failed(m)) => {
                assert!(m.starts_with("connect: ") && m.contains("refused"), "{m}")
            }
            other => panic!("unexpected {other:?}"),
        }
        o.schema = "Bad-Name".into();
        assert_eq!(
            open_component(&o, "test", "test", &[]).err(),
            Some(PgError::Failed(
                "schema must match ^[a-z_][a-z0-9_]{0,62}$, got \"Bad-Name\"".into()
            ))
        );
        o.url = "postgres://u@h:notaport/db".into();
        o.schema = "prism".into();
        assert!(matches!(
            open_component(&o, "test", "test", &[]),
            Err(PgError::Failed(m)) if m.starts_with("invalid connection string: ")
        ));
        assert_eq!(
            PgError::Closed.message("checkpoint store"),
            "checkpoint store is closed"
        );
    }
}
