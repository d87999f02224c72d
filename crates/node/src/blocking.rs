//! Work run on libuv's thread pool, never the JS thread: one `Task` for every store operation that
//! waits on a disk or a database (the SQLite and PostgreSQL effect stores, ledger flushes and lists,
//! checkpoints, opening a pool). `work` runs on the pool; back on the JS thread, `done` makes the answer or `fail`
//! the rejection (a real `Error` with the component's code).

use napi::bindgen_prelude::{AsyncTask, ToNapiValue, TypeName};
use napi::{Env, Error, Result, Status, Task};

type Work<O, E> = Box<dyn FnOnce() -> std::result::Result<O, E> + Send>;

pub struct Blocking<O, E, J> {
    work: Option<Work<O, E>>,
    done: fn(O) -> J,
    fail: fn(&Env, &E) -> Error,
}

impl<O, E, J> Task for Blocking<O, E, J>
where
    O: Send + 'static,
    E: Send + 'static,
    J: ToNapiValue + TypeName,
{
    type Output = std::result::Result<O, E>;
    type JsValue = J;

    fn compute(&mut self) -> Result<Self::Output> {
        let work = self
            .work
            .take()
            .ok_or_else(|| Error::new(Status::GenericFailure, "the task already ran"))?;
        Ok(work())
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> Result<J> {
        output.map(self.done).map_err(|e| (self.fail)(&env, &e))
    }
}

/// A promise of `done(work())`, rejected with `fail(error)`.
pub fn blocking<O, E, J>(
    work: impl FnOnce() -> std::result::Result<O, E> + Send + 'static,
    done: fn(O) -> J,
    fail: fn(&Env, &E) -> Error,
) -> AsyncTask<Blocking<O, E, J>>
where
    O: Send + 'static,
    E: Send + 'static,
    J: ToNapiValue + TypeName,
{
    AsyncTask::new(Blocking {
        work: Some(Box::new(work)),
        done,
        fail,
    })
}
