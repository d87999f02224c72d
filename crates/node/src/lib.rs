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
pub mod run_machine;
pub mod search;
pub mod throw;
pub mod tool_contract;
pub mod validate;

/// A process forked from this one must not hand out claim tokens its parent may also hand out: the
/// child's copy of the token pool is marked stale (`prism_tools_core::effects::store::note_fork`).
#[cfg(unix)]
#[napi_derive::module_init]
fn watch_forks() {
    extern "C" fn forked() {
        prism_tools_core::effects::store::note_fork();
    }
    // SAFETY: `pthread_atfork` only records the handlers; `forked` is a plain `extern "C"` function
    // of this library (Node never unloads an addon), and what it does (an atomic add) is safe in a
    // fork's child.
    let registered = unsafe { libc::pthread_atfork(None, None, Some(forked)) } == 0;
    // Unregistered (ENOMEM), the pool keeps checking the process id at every token.
    if registered {
        prism_tools_core::effects::store::watching_forks();
    }
}
