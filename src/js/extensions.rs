//! napi exports for contribution registries: inert, named storage of what extensions contribute.
//! Nothing stored here is registered into a `ToolRegistry` or dispatched until the host does it.
//! The extension kernel that fills them (`createExtensionKernel`) is the await driver in
//! `lib/extensions.js`.

// napi registers these exports; a `cargo test` build sees no caller.
#![cfg_attr(test, allow(dead_code))]

use std::collections::HashMap;

use napi::bindgen_prelude::*;
use napi::{Env, ValueType};
use napi_derive::napi;

const CODE_INVALID_ARG: &str = "ERR_INVALID_ARG_TYPE";
const CODE_UNKNOWN: &str = "ERR_PRISM_UNKNOWN_CONTRIBUTION";

fn throw<T>(env: &Env, message: &str, code: &str, type_error: bool) -> Result<T> {
    if type_error {
        env.throw_type_error(message, Some(code))?;
    } else {
        env.throw_error(message, Some(code))?;
    }
    Err(Error::from_status(Status::PendingException))
}

fn key_of(env: &Env, key: &Unknown, label: &str) -> Result<String> {
    if key.get_type()? != ValueType::String {
        return throw(
            env,
            &format!("A {label} contribution name must be a string"),
            CODE_INVALID_ARG,
            true,
        );
    }
    unsafe { key.cast::<String>() }
}

/// A named store of contributions (`register`, `get`, `resolve`, `list`, `unregister`), in first
/// registration order; registering a name again replaces the value in place.
#[napi(custom_finalize)]
pub struct ContributionRegistry {
    label: String,
    order: Vec<String>,
    values: HashMap<String, ObjectRef<false>>,
}

#[napi]
impl ContributionRegistry {
    /// `label` names the kind in messages (`Unknown <label>: <name>`); `"contribution"` by default.
    #[napi(constructor)]
    pub fn new(label: Option<String>) -> Self {
        ContributionRegistry {
            label: label.unwrap_or_else(|| "contribution".to_owned()),
            order: Vec::new(),
            values: HashMap::new(),
        }
    }

    /// Stores `contribution` (an object or a function) under `name`.
    #[napi]
    pub fn register(&mut self, env: &Env, name: Unknown, contribution: Unknown) -> Result<()> {
        let key = key_of(env, &name, &self.label)?;
        match contribution.get_type()? {
            ValueType::Object | ValueType::Function => {}
            _ => {
                return throw(
                    env,
                    &format!(
                        "The {} contribution \"{key}\" must be an object",
                        self.label
                    ),
                    CODE_INVALID_ARG,
                    true,
                )
            }
        }
        let reference = unsafe { contribution.cast::<Object>() }?.create_ref::<false>()?;
        match self.values.insert(key.clone(), reference) {
            Some(previous) => previous.unref(env)?,
            None => self.order.push(key),
        }
        Ok(())
    }

    /// The contribution stored under `name`, or `undefined`.
    #[napi(ts_return_type = "unknown")]
    pub fn get<'env>(&self, env: &'env Env, name: Unknown) -> Result<Either<Object<'env>, ()>> {
        if name.get_type()? != ValueType::String {
            return Ok(Either::B(()));
        }
        let key = unsafe { name.cast::<String>() }?;
        match self.values.get(&key) {
            Some(r) => Ok(Either::A(r.get_value(env)?)),
            None => Ok(Either::B(())),
        }
    }

    /// The contribution stored under `name`; throws `Unknown <label>: <name>` when there is none.
    #[napi(ts_return_type = "unknown")]
    pub fn resolve<'env>(&self, env: &'env Env, name: Unknown) -> Result<Object<'env>> {
        let key = key_of(env, &name, &self.label)?;
        match self.values.get(&key) {
            Some(r) => r.get_value(env),
            None => throw(
                env,
                &format!("Unknown {}: {key}", self.label),
                CODE_UNKNOWN,
                false,
            ),
        }
    }

    /// Every contribution, in first registration order.
    #[napi(ts_return_type = "unknown[]")]
    pub fn list<'env>(&self, env: &'env Env) -> Result<Array<'env>> {
        let mut array = env.create_array(self.order.len() as u32)?;
        for (i, key) in self.order.iter().enumerate() {
            if let Some(r) = self.values.get(key) {
                array.set(i as u32, r.get_value(env)?)?;
            }
        }
        Ok(array)
    }

    /// Removes `name`; `true` when something was removed.
    #[napi]
    pub fn unregister(&mut self, env: &Env, name: Unknown) -> Result<bool> {
        if name.get_type()? != ValueType::String {
            return Ok(false);
        }
        let key = unsafe { name.cast::<String>() }?;
        match self.values.remove(&key) {
            Some(r) => {
                r.unref(env)?;
                self.order.retain(|k| k != &key);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

impl ObjectFinalize for ContributionRegistry {
    fn finalize(self, env: Env) -> Result<()> {
        for (_, r) in self.values {
            r.unref(&env)?;
        }
        Ok(())
    }
}

/// `createContributionRegistries()`: `{ tools }`, each a `ContributionRegistry`.
#[napi(
    js_name = "createContributionRegistries",
    ts_return_type = "{ tools: ContributionRegistry }"
)]
pub fn create_contribution_registries(env: &Env) -> Result<Object<'_>> {
    let mut registries = Object::new(env)?;
    let tools = ContributionRegistry::new(Some("tool".to_owned())).into_instance(env)?;
    registries.set_named_property("tools", tools)?;
    Ok(registries)
}
