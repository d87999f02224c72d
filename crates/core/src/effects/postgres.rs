//! PostgreSQL storage for effect records: many workers on many machines share one table.
//!
//! Every operation that writes is one short transaction: take a transaction-scoped advisory lock on the
//! record's id (so two claimants of an absent key are serialised too, which a row lock cannot do), read
//! the row, let the store's state machine decide, write, commit. The decision logic is the one every
//! built-in store shares (`store.rs`); only the atomic primitive lives here. Runs on a blocking thread,
//! never the JS thread.

use std::str::FromStr;
use std::time::Duration;

use postgres::error::SqlState;
use postgres::{Client, Config, NoTls, Row, Statement};

use super::error::StoreError;
use super::record::{EffectRecord, Failure, ResultDigest, Status};
use super::store::{Owner, RecordStorage, Update, ValidKey};

/// A pooled connection with its component's statements prepared once, when it was opened: each
/// operation then costs one round trip per statement instead of two.
pub struct Prepared<S> {
    pub client: Client,
    pub statements: S,
}

/// Prepares one component's statements on a fresh connection.
pub type Prepare<S> = Box<dyn Fn(&mut Client) -> Result<S, postgres::Error> + Send + Sync>;

/// Opens connections and prepares the statements on each.
pub struct Manager<S> {
    config: Config,
    prepare: Prepare<S>,
}

impl<S: Send + 'static> r2d2::ManageConnection for Manager<S> {
    type Connection = Prepared<S>;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Prepared<S>, postgres::Error> {
        let mut client = self.config.connect(NoTls)?;
        let statements = (self.prepare)(&mut client)?;
        Ok(Prepared { client, statements })
    }

    fn is_valid(&self, conn: &mut Prepared<S>) -> Result<(), postgres::Error> {
        conn.client.simple_query("").map(|_| ())
    }

    fn has_broken(&self, conn: &mut Prepared<S>) -> bool {
        conn.client.is_closed()
    }
}

/// The effect store's statements.
pub struct EffectStatements {
    lock: Statement,
    read: Statement,
    upsert: Statement,
    cleanup: Statement,
}

/// A pool of prepared connections of one component.
pub type Pool<S> = r2d2::Pool<Manager<S>>;
/// One checked-out connection; back in the pool when dropped.
pub type Conn<S> = r2d2::PooledConnection<Manager<S>>;

/// Where and how to connect.
#[derive(Debug, Clone)]
pub struct PostgresOptions {
    /// `postgres://user:password@host:port/database?…` or key=value form.
    pub url: String,
    /// The schema holding the tables; created when absent. A plain identifier.
    pub schema: String,
    /// Connections kept open by this store (1–64).
    pub max_connections: u32,
    /// How long connecting may take before the operation fails (ms).
    pub connect_timeout_ms: u64,
    /// `statement_timeout` of every connection (ms): a stuck statement fails instead of hanging a worker.
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

/// A storage failure with the database's own words (never arguments, results or claim tokens: those
/// travel only as bound parameters, which PostgreSQL does not echo in errors).
pub fn storage_error(what: &str, e: &postgres::Error) -> StoreError {
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
    StoreError::Storage(format!("tool effect store failed: {what}: {detail}"))
}

fn pool_error(e: r2d2::Error) -> StoreError {
    StoreError::Storage(format!(
        "tool effect store failed: no database connection: {e}"
    ))
}

/// A pool of prepared connections (made lazily, at most `max_connections`).
pub fn open_pool<S: Send + 'static>(
    options: &PostgresOptions,
    config: Config,
    prepare: Prepare<S>,
) -> Result<Pool<S>, r2d2::Error> {
    let manager = Manager { config, prepare };
    r2d2::Pool::builder()
        // A dead connection shows as closed, or fails its statement and is dropped: no test query per use.
        .test_on_check_out(false)
        .max_size(options.max_connections.clamp(1, 64))
        .min_idle(Some(0))
        .connection_timeout(Duration::from_millis(options.connect_timeout_ms.max(100)))
        .error_handler(Box::new(r2d2::NopErrorHandler))
        .build(manager)
}

fn check_schema(schema: &str) -> Result<(), StoreError> {
    if valid_schema(schema) {
        return Ok(());
    }
    Err(StoreError::Storage(format!(
        "tool effect store failed: schema must match ^[a-z_][a-z0-9_]{{0,62}}$, got {:?}",
        crate::redact::truncate_utf8(schema, 80)
    )))
}

/// The client configuration: the URL's settings plus the connect timeout and per-statement timeouts.
pub fn pool_config(options: &PostgresOptions, application: &str) -> Result<Config, StoreError> {
    let mut config = Config::from_str(&options.url).map_err(|e| {
        StoreError::Storage(format!(
            "tool effect store failed: invalid connection string: {e}"
        ))
    })?;
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
pub fn migrate(
    conn: &mut Client,
    schema: &str,
    component: &str,
    steps: &[&str],
) -> Result<(), StoreError> {
    let mut tx = conn
        .transaction()
        .map_err(|e| storage_error("migrate", &e))?;
    // One lock for every migration of this package, so workers starting together take turns.
    tx.execute("SELECT pg_advisory_xact_lock(7307141006339522001)", &[])
        .map_err(|e| storage_error("migrate", &e))?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {schema};
         CREATE TABLE IF NOT EXISTS {schema}.prism_migrations (
           component text NOT NULL, version integer NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(),
           PRIMARY KEY (component, version))"
    ))
    .map_err(|e| storage_error("migrate", &e))?;
    let applied: i32 = tx
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {schema}.prism_migrations WHERE component = $1"),
            &[&component],
        )
        .map_err(|e| storage_error("migrate", &e))?
        .get(0);
    for (i, step) in steps.iter().enumerate().skip(applied.max(0) as usize) {
        tx.batch_execute(&step.replace("{schema}", schema))
            .map_err(|e| storage_error("migrate", &e))?;
        tx.execute(
            &format!("INSERT INTO {schema}.prism_migrations (component, version) VALUES ($1, $2)"),
            &[&component, &(i as i32 + 1)],
        )
        .map_err(|e| storage_error("migrate", &e))?;
    }
    tx.commit().map_err(|e| storage_error("migrate", &e))
}

const MIGRATIONS: &[&str] = &["CREATE TABLE {schema}.prism_tool_effects (
  id text PRIMARY KEY,
  tenant_id text NOT NULL,
  account_id text,
  user_id text,
  effect_key text NOT NULL,
  session_id text NOT NULL,
  run_id text NOT NULL,
  tool_call_id text NOT NULL,
  tool_name text NOT NULL,
  arguments_hash text NOT NULL,
  status text NOT NULL,
  attempt integer NOT NULL,
  version bigint NOT NULL,
  claim_token text,
  result text,
  result_ref text,
  failure_code text,
  failure_reference text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  expires_at bigint
);
CREATE INDEX prism_tool_effects_cleanup ON {schema}.prism_tool_effects (tenant_id, status, updated_at)",
    // A result larger than the store keeps: its size and SHA-256 instead of the value.
    "ALTER TABLE {schema}.prism_tool_effects ADD COLUMN IF NOT EXISTS result_omitted_bytes bigint,
       ADD COLUMN IF NOT EXISTS result_omitted_sha256 text"];

/// Effect records in a PostgreSQL table (`<schema>.prism_tool_effects`).
pub struct PostgresStorage {
    /// `None` once closed.
    pool: std::sync::RwLock<Option<Pool<EffectStatements>>>,
}

/// How many times taking a row's lock is retried after a serialisation failure or deadlock.
const LOCK_RETRIES: u32 = 5;

impl PostgresStorage {
    pub fn open(options: &PostgresOptions) -> Result<Self, StoreError> {
        check_schema(&options.schema)?;
        let config = pool_config(options, "prism-tools-native effects")?;
        // The first connection is made directly, so a refused connection or a failed login is reported
        // with its cause (a pool keeps only a summary); it creates or migrates the table.
        let mut first = config
            .connect(NoTls)
            .map_err(|e| storage_error("connect", &e))?;
        migrate(&mut first, &options.schema, "tool_effects", MIGRATIONS)?;
        let t = format!("{}.prism_tool_effects", options.schema);
        let sql = [
            // The advisory lock serialises every writer of this id, including two claimants of an absent
            // record (a row lock cannot). It must be its own statement: under READ COMMITTED a statement
            // reads the snapshot taken when it started, so a read in the locking statement could miss the
            // commit of the transaction it waited for (the race proof caught exactly that).
            "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))".to_owned(),
            format!(
                "SELECT tenant_id, account_id, user_id, effect_key, session_id, run_id, tool_call_id, tool_name,
                   arguments_hash, status, attempt, version, claim_token, result, result_ref, failure_code,
                   failure_reference, created_at, updated_at, expires_at, result_omitted_bytes,
                   result_omitted_sha256 FROM {t} WHERE id = $1"
            ),
            format!(
                "INSERT INTO {t} (id, tenant_id, account_id, user_id, effect_key, session_id, run_id, tool_call_id,
                   tool_name, arguments_hash, status, attempt, version, claim_token, result, result_ref,
                   failure_code, failure_reference, created_at, updated_at, expires_at, result_omitted_bytes,
                   result_omitted_sha256)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
                   $22, $23)
                 ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, attempt = EXCLUDED.attempt,
                   version = EXCLUDED.version, claim_token = EXCLUDED.claim_token, result = EXCLUDED.result,
                   result_ref = EXCLUDED.result_ref, failure_code = EXCLUDED.failure_code,
                   failure_reference = EXCLUDED.failure_reference, updated_at = EXCLUDED.updated_at,
                   expires_at = EXCLUDED.expires_at, result_omitted_bytes = EXCLUDED.result_omitted_bytes,
                   result_omitted_sha256 = EXCLUDED.result_omitted_sha256
                 WHERE {t}.tenant_id = EXCLUDED.tenant_id"
            ),
            format!(
                "DELETE FROM {t} WHERE id IN (
                   SELECT id FROM {t}
                   WHERE tenant_id = $1 AND account_id IS NOT DISTINCT FROM $2 AND user_id IS NOT DISTINCT FROM $3
                     AND status IN ('completed', 'failed_terminal') AND updated_at < $4
                   LIMIT $5)"
            ),
        ];
        drop(first);
        let prepare: Prepare<EffectStatements> = Box::new(move |client| {
            Ok(EffectStatements {
                lock: client.prepare(&sql[0])?,
                read: client.prepare(&sql[1])?,
                upsert: client.prepare(&sql[2])?,
                cleanup: client.prepare(&sql[3])?,
            })
        });
        let pool = open_pool(options, config, prepare).map_err(pool_error)?;
        Ok(Self {
            pool: std::sync::RwLock::new(Some(pool)),
        })
    }

    fn conn(&self) -> Result<Conn<EffectStatements>, StoreError> {
        // Clone the pool (a shared handle) so no lock is held while waiting for a connection.
        let pool = self.pool.read().unwrap_or_else(|e| e.into_inner()).clone();
        pool.ok_or_else(|| StoreError::Storage("tool effect store is closed".into()))?
            .get()
            .map_err(pool_error)
    }
}

fn from_row(row: &Row) -> Result<EffectRecord, StoreError> {
    let status: String = row.get(9);
    let status = Status::parse(&status).ok_or_else(|| {
        StoreError::Storage("tool effect store failed: corrupt record status".into())
    })?;
    let failure_code: Option<String> = row.get(15);
    let failure_reference: Option<String> = row.get(16);
    let attempt: i32 = row.get(10);
    let version: i64 = row.get(11);
    let omitted_bytes: Option<i64> = row.get(20);
    let omitted_sha256: Option<String> = row.get(21);
    Ok(EffectRecord {
        tenant_id: row.get(0),
        account_id: row.get(1),
        user_id: row.get(2),
        key: row.get(3),
        session_id: row.get(4),
        run_id: row.get(5),
        tool_call_id: row.get(6),
        tool_name: row.get(7),
        arguments_hash: row.get(8),
        status,
        attempt: attempt.max(0) as u32,
        version: version.max(0) as u64,
        claim_token: row.get(12),
        result: row.get(13),
        result_ref: row.get(14),
        result_omitted: omitted_bytes
            .zip(omitted_sha256)
            .map(|(bytes, sha256)| ResultDigest {
                bytes: bytes.max(0) as u64,
                sha256,
            }),
        failure: failure_code.map(|code| Failure {
            code,
            reference: failure_reference,
        }),
        created_at: row.get(17),
        updated_at: row.get(18),
        expires_at: row.get(19),
    })
}

fn retryable(e: &postgres::Error) -> bool {
    matches!(e.code(), Some(c) if *c == SqlState::T_R_SERIALIZATION_FAILURE || *c == SqlState::T_R_DEADLOCK_DETECTED)
}

/// Opens a transaction, takes the transaction-scoped advisory lock (`lock`), then reads the row (`read`),
/// both with `params`; a serialisation failure or deadlock is retried a few times. The lock and the read
/// are separate statements: under `READ COMMITTED` a read inside the locking statement could miss the
/// commit of the transaction it waited for. `then` gets the open transaction and the row (dropping the
/// transaction rolls it back). On failure: which step failed (`begin` or `lock`), and why.
pub fn in_locked_row<R>(
    client: &mut Client,
    lock: &Statement,
    read: &Statement,
    params: &[&(dyn postgres::types::ToSql + Sync)],
    then: impl FnOnce(postgres::Transaction<'_>, Option<Row>) -> R,
) -> Result<R, (&'static str, postgres::Error)> {
    let mut attempt = 0;
    loop {
        let mut tx = client.transaction().map_err(|e| ("begin", e))?;
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
            Err(e) => return Err(("lock", e)),
        }
    }
}

impl RecordStorage for PostgresStorage {
    fn read(&self, k: &ValidKey) -> Result<Option<EffectRecord>, StoreError> {
        // Reads take the lock too (inside a transaction): a read never sees a half-decided transition.
        self.update(k, |current| Ok(super::store::Step::read(current.cloned())))
    }

    fn update<R>(
        &self,
        k: &ValidKey,
        f: impl FnOnce(Option<&mut EffectRecord>) -> Update<R>,
    ) -> Result<R, StoreError> {
        let id = k.storage_id.as_str();
        let mut conn = self.conn()?;
        let Prepared {
            client,
            statements: EffectStatements {
                lock, read, upsert, ..
            },
        } = &mut *conn;
        in_locked_row(client, lock, read, &[&id], |mut tx, row| {
            let mut current = row.as_ref().map(from_row).transpose()?;
            let step = f(current.as_mut())?; // an Err drops `tx`, which rolls back
            let write = match (&step.insert, step.dirty) {
                (Some(r), _) => Some(r),
                (None, true) => current.as_ref(),
                (None, false) => None,
            };
            if let Some(r) = write {
                let version = r.version as i64;
                let attempt = r.attempt as i32;
                let failure_code = r.failure.as_ref().map(|f| f.code.as_str());
                let failure_reference = r.failure.as_ref().and_then(|f| f.reference.as_deref());
                let omitted_bytes = r.result_omitted.as_ref().map(|d| d.bytes as i64);
                let omitted_sha256 = r.result_omitted.as_ref().map(|d| d.sha256.as_str());
                let written = tx
                    .execute(
                        &*upsert,
                        &[
                            &id,
                            &r.tenant_id,
                            &r.account_id,
                            &r.user_id,
                            &r.key,
                            &r.session_id,
                            &r.run_id,
                            &r.tool_call_id,
                            &r.tool_name,
                            &r.arguments_hash,
                            &r.status.as_str(),
                            &attempt,
                            &version,
                            &r.claim_token,
                            &r.result,
                            &r.result_ref,
                            &failure_code,
                            &failure_reference,
                            &r.created_at,
                            &r.updated_at,
                            &r.expires_at,
                            &omitted_bytes,
                            &omitted_sha256,
                        ],
                    )
                    .map_err(|e| storage_error("write", &e))?;
                if written != 1 {
                    return Err(StoreError::Storage(
                        "tool effect store failed: the record belongs to another tenant".into(),
                    ));
                }
            }
            tx.commit().map_err(|e| storage_error("commit", &e))?;
            Ok(step.out)
        })
        .map_err(|(what, e)| storage_error(what, &e))?
    }

    fn cleanup(&self, owner: &Owner, before: i64, limit: u32) -> Result<u32, StoreError> {
        let mut conn = self.conn()?;
        let limit = limit as i64;
        let Prepared {
            client,
            statements: EffectStatements { cleanup, .. },
        } = &mut *conn;
        let n = client
            .execute(
                &*cleanup,
                &[
                    &owner.tenant_id,
                    &owner.account_id,
                    &owner.user_id,
                    &before,
                    &limit,
                ],
            )
            .map_err(|e| storage_error("cleanup", &e))?;
        Ok(n as u32)
    }

    fn close(&self) {
        // Dropping the last handle closes the idle connections; operations in flight keep theirs until done.
        self.pool.write().unwrap_or_else(|e| e.into_inner()).take();
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
    fn a_refused_connection_is_a_clear_storage_error() {
        let mut o = PostgresOptions::new("postgres://nobody@127.0.0.1:1/none");
        o.connect_timeout_ms = 500;
        match PostgresStorage::open(&o) {
            Err(StoreError::Storage(m)) => {
                assert!(m.contains("connect") && m.contains("refused"), "{m}")
            }
            Err(e) => panic!("unexpected error {e}"),
            Ok(_) => panic!("connected to port 1"),
        }
        o.schema = "Bad-Name".into();
        assert!(
            matches!(PostgresStorage::open(&o), Err(StoreError::Storage(m)) if m.contains("schema must match"))
        );
    }
}
