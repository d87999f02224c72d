//! napi exports of the run ledgers. Rows cross as `JSON.stringify` text (one call per row) and come back
//! as one `JSON.parse` of the joined rows.

use super::effects::{read_sqlite_options, Js};
use crate::ledger::{LedgerError, MemoryLedger, RecordKind, SqliteLedger, SqliteLedgerOptions};
use napi::bindgen_prelude::*;
use napi::sys;
use napi_derive::napi;
use std::cell::{Cell, RefCell};
use std::sync::{Arc, Weak};

thread_local! {
    /// Open SQLite ledgers of this JS environment, committed on `process.on("exit")`.
    static OPEN: RefCell<Vec<Weak<SqliteLedger>>> = const { RefCell::new(Vec::new()) };
    static EXIT_LISTENER: Cell<bool> = const { Cell::new(false) };
}

/// Commits every open ledger of this environment (the `exit` listener).
unsafe extern "C" fn close_open_ledgers(
    _env: sys::napi_env,
    _info: sys::napi_callback_info,
) -> sys::napi_value {
    let ledgers: Vec<Weak<SqliteLedger>> = OPEN.with(|o| o.borrow_mut().drain(..).collect());
    for l in ledgers.iter().filter_map(Weak::upgrade) {
        let _ = l.close();
    }
    std::ptr::null_mut()
}

/// `process.exit()` skips environment cleanup hooks, so the ledger also listens to `process.on("exit")`.
fn track(js: Js, ledger: &Arc<SqliteLedger>) -> Result<()> {
    OPEN.with(|o| {
        let mut o = o.borrow_mut();
        o.retain(|w| w.strong_count() > 0);
        o.push(Arc::downgrade(ledger));
    });
    if EXIT_LISTENER.with(Cell::get) {
        return Ok(());
    }
    let (process, on) = js.global_fn(c"process", c"on")?;
    let mut listener = std::ptr::null_mut();
    let name = "prismRunLedgerExit";
    let status = unsafe {
        sys::napi_create_function(
            js.0,
            name.as_ptr().cast(),
            name.len() as isize,
            Some(close_open_ledgers),
            std::ptr::null_mut(),
            &mut listener,
        )
    };
    if status != sys::Status::napi_ok {
        return Err(Error::new(
            Status::GenericFailure,
            "could not create the exit listener",
        ));
    }
    let exit = js.create_string("exit")?;
    js.call(process, on, &[exit, listener])?;
    EXIT_LISTENER.with(|c| c.set(true));
    Ok(())
}

enum Inner {
    Memory(MemoryLedger),
    Sqlite(Arc<SqliteLedger>),
}

/// A built-in `RunLedger`: `appendToolCall` / `appendRun` / `appendEvent` / `appendUsage` store the record
/// as JSON text (a snapshot: later changes to the object do not reach the ledger) and return `undefined`
/// synchronously; `list(kind = "tool_call")` reads the records of one kind back in append order.
#[napi]
pub struct NativeRunLedger {
    inner: Inner,
    cleanup: Option<napi::CleanupEnvHook<Weak<SqliteLedger>>>,
}

fn ledger_error(e: LedgerError) -> Error {
    match e {
        LedgerError::TooLarge => Error::new(Status::InvalidArg, e.to_string()),
        _ => Error::new(Status::GenericFailure, e.to_string()),
    }
}

impl NativeRunLedger {
    fn append(&self, env: &Env, kind: RecordKind, record: Unknown) -> Result<()> {
        let js = Js(env.raw());
        let v = record.raw();
        let mut is_array = false;
        unsafe { sys::napi_is_array(js.0, v, &mut is_array) };
        if !js.is_object(v)? || is_array {
            return Err(Error::new(
                Status::InvalidArg,
                "run ledger record must be an object",
            ));
        }
        let text = match js.json_stringify(v)? {
            Ok(Some(t)) => t,
            _ => {
                return Err(Error::new(
                    Status::InvalidArg,
                    "run ledger record must be JSON serializable",
                ))
            }
        };
        match &self.inner {
            Inner::Memory(m) => m.append(kind, text),
            Inner::Sqlite(s) => s.append(kind, text),
        }
        .map_err(ledger_error)
    }
}

#[napi]
impl NativeRunLedger {
    /// Appends a `ToolCallRecord`.
    #[napi]
    pub fn append_tool_call(&self, env: &Env, record: Unknown) -> Result<()> {
        self.append(env, RecordKind::ToolCall, record)
    }
    /// Appends a `RunRecord`.
    #[napi]
    pub fn append_run(&self, env: &Env, record: Unknown) -> Result<()> {
        self.append(env, RecordKind::Run, record)
    }
    /// Appends an `AgentEventRecord`.
    #[napi]
    pub fn append_event(&self, env: &Env, record: Unknown) -> Result<()> {
        self.append(env, RecordKind::Event, record)
    }
    /// Appends a `UsageRecord`.
    #[napi]
    pub fn append_usage(&self, env: &Env, record: Unknown) -> Result<()> {
        self.append(env, RecordKind::Usage, record)
    }

    /// Records of one kind (`"tool_call"` by default, or `"run"`, `"event"`, `"usage"`) in append order.
    /// The SQLite ledger commits its queue first and also returns rows other processes committed.
    #[napi]
    pub fn list<'a>(&self, env: &'a Env, kind: Option<String>) -> Result<Unknown<'a>> {
        let kind = match kind.as_deref() {
            None => RecordKind::ToolCall,
            Some(k) => RecordKind::parse(k).ok_or_else(|| {
                Error::new(
                    Status::InvalidArg,
                    "kind must be \"tool_call\", \"run\", \"event\" or \"usage\"",
                )
            })?,
        };
        let rows = match &self.inner {
            Inner::Memory(m) => m.list(kind),
            Inner::Sqlite(s) => s.list(kind).map_err(ledger_error)?,
        };
        let mut text = String::with_capacity(2 + rows.iter().map(|r| r.len() + 1).sum::<usize>());
        text.push('[');
        for (i, r) in rows.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(r);
        }
        text.push(']');
        let js = Js(env.raw());
        js.unknown(js.json_parse(&text)?)
    }

    /// Commits every row appended so far (a no-op for the memory ledger).
    #[napi]
    pub fn flush(&self) -> Result<()> {
        match &self.inner {
            Inner::Memory(_) => Ok(()),
            Inner::Sqlite(s) => s.flush().map_err(ledger_error),
        }
    }

    /// Commits every queued row and closes the file; later appends throw. Idempotent.
    #[napi]
    pub fn close(&mut self, env: &Env) -> Result<()> {
        if let Some(hook) = self.cleanup.take() {
            let _ = env.remove_env_cleanup_hook(hook);
        }
        match &self.inner {
            Inner::Memory(_) => Ok(()),
            Inner::Sqlite(s) => s.close().map_err(ledger_error),
        }
    }
}

/// `createMemoryRunLedger()`: rows kept in memory, in order (for tests and examples).
#[napi(js_name = "createMemoryRunLedger")]
pub fn create_memory_run_ledger() -> NativeRunLedger {
    NativeRunLedger {
        inner: Inner::Memory(MemoryLedger::default()),
        cleanup: None,
    }
}

/// `createSqliteRunLedger(path, { batchSize? = 512, flushIntervalMs? = 10, maxPendingRows? = 8192,
/// busyTimeoutMs? = 5000, synchronous? = "normal" })`.
#[napi(js_name = "createSqliteRunLedger")]
pub fn create_sqlite_run_ledger(
    env: Env,
    path: String,
    options: Option<Unknown>,
) -> Result<NativeRunLedger> {
    let js = Js(env.raw());
    let o = options.as_ref().map_or(std::ptr::null_mut(), |o| o.raw());
    let mut opts = SqliteLedgerOptions {
        sqlite: read_sqlite_options(js, o, false)?,
        ..Default::default()
    };
    let int = |name: &std::ffi::CStr, max: f64| -> Result<Option<u64>> {
        match js.number(o, name)? {
            None => Ok(None),
            Some(f) if f.fract() == 0.0 && f >= 1.0 && f <= max => Ok(Some(f as u64)),
            Some(_) => Err(Error::new(
                Status::InvalidArg,
                format!(
                    "{} must be an integer from 1 to {max}",
                    name.to_string_lossy()
                ),
            )),
        }
    };
    if let Some(n) = int(c"batchSize", 100_000.0)? {
        opts.batch_size = n as usize;
    }
    if let Some(n) = int(c"flushIntervalMs", 60_000.0)? {
        opts.flush_interval_ms = n;
    }
    if let Some(n) = int(c"maxPendingRows", 1_000_000.0)? {
        opts.max_pending_rows = n as usize;
    }
    if opts.max_pending_rows < opts.batch_size {
        return Err(Error::new(
            Status::InvalidArg,
            "maxPendingRows must be at least batchSize",
        ));
    }
    let ledger = Arc::new(SqliteLedger::open(&path, opts).map_err(ledger_error)?);
    track(js, &ledger)?;
    // Commit queued rows when the JS environment shuts down without close() (worker end, natural exit).
    let hook = env.add_env_cleanup_hook(Arc::downgrade(&ledger), |weak| {
        if let Some(l) = weak.upgrade() {
            let _ = l.close();
        }
    })?;
    Ok(NativeRunLedger {
        inner: Inner::Sqlite(ledger),
        cleanup: Some(hook),
    })
}
