//! Turning the core's `PrismError` into a thrown JS error.

use napi::{Env, Error, Result, Status};
use prism_tools_core::error::{Kind, PrismError};

/// Throws a `PrismError` into `env` as `new <kind>(message)` with `code` set.
pub trait Throw {
    /// Throws, and returns the pending-exception result napi-rs expects from an entry point that
    /// has thrown.
    fn throw<T>(self, env: &Env) -> Result<T>;
}

impl Throw for PrismError {
    fn throw<T>(self, env: &Env) -> Result<T> {
        let code = Some(self.code.as_str());
        match self.kind {
            Kind::Error => env.throw_error(&self.message, code)?,
            Kind::TypeError => env.throw_type_error(&self.message, code)?,
            Kind::RangeError => env.throw_range_error(&self.message, code)?,
        }
        Err(Error::from_status(Status::PendingException))
    }
}
