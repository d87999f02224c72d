//! What the binding keeps for one JS environment (the main thread's, each worker's): Node-API gives an
//! addon one instance-data slot per environment, and this struct is what it holds. Everything in it is
//! a reference into that environment, deleted with it (the slot's finalizer runs at teardown), so a
//! worker's values are never seen from another thread and nothing outlives its environment.
//!
//! Callers take the struct for one short step and let go before anything can run JS (a getter, a
//! constructor): a JS call may re-enter the addon and take it again.

use napi::bindgen_prelude::*;
use napi::sys;

/// A reference the instance data holds, deleted by [`Realm::unref`]. napi-rs's check on drop (a
/// reference dropped undeleted is reported on stderr as a leak) is off: during some runtimes'
/// teardown (Deno's) deleting a reference fails, and the environment frees it with itself.
pub(crate) type Held = ObjectRef<false>;

/// The built-ins the host reader compares against (`crates/node/src/host.rs`), captured once so a script
/// that replaces `globalThis.Map` cannot change what the walk recognises.
pub(crate) struct Realm {
    pub object_proto: Held,
    pub map_ctor: Held,
    pub set_ctor: Held,
    pub regexp_ctor: Held,
    pub array_from: Held,
}

impl Realm {
    /// Deletes the references (the environment's teardown, or a realm captured twice): every one,
    /// even after one fails; the first failure is the answer.
    pub fn unref(self, env: &Env) -> Result<()> {
        let mut first = Ok(());
        for r in [
            self.object_proto,
            self.map_ctor,
            self.set_ctor,
            self.regexp_ctor,
            self.array_from,
        ] {
            let deleted = r.unref(env);
            if first.is_ok() {
                first = deleted;
            }
        }
        first
    }
}

#[derive(Default)]
pub(crate) struct Instance {
    /// Made on first use by the host reader.
    pub realm: Option<Realm>,
    /// `ToolEffectError` and `IdentityError` as lib/effects.js registered them
    /// (`crates/node/src/effects/errors.rs`); `None` until it does.
    pub effect_errors: Option<[sys::napi_ref; 2]>,
}

/// This environment's instance data, made empty on first use.
pub(crate) fn instance(env: &Env) -> Result<&'static mut Instance> {
    // Each lookup locks napi-rs's registry of native payloads and hashes the pointer: the usual
    // case (the slot is set) looks once.
    if let Some(data) = env.get_instance_data::<Instance>()? {
        return Ok(data);
    }
    env.set_instance_data(Instance::default(), (), |ctx| {
        let Instance {
            realm,
            effect_errors,
        } = ctx.value;
        if let Some(r) = realm {
            let _ = r.unref(&ctx.env);
        }
        for r in effect_errors.into_iter().flatten() {
            // SAFETY: `r` was made in this environment by `napi_create_reference` and is held only
            // here; the environment is being torn down and nothing reads the slot after this.
            unsafe { sys::napi_delete_reference(ctx.env.raw(), r) };
        }
    })?;
    env.get_instance_data::<Instance>()?.ok_or_else(|| {
        Error::new(
            Status::GenericFailure,
            "prism-tools-native: no instance data for this environment",
        )
    })
}
