//! Per-environment state: references to the built-ins the redaction walk compares against, kept as Node-API instance data so worker threads each get their own.

use std::ptr;

use napi::sys;

use super::raw::{error, Js, R};

pub struct Realm {
    pub object_proto: sys::napi_ref,
    pub map_ctor: sys::napi_ref,
    pub set_ctor: sys::napi_ref,
    pub regexp_ctor: sys::napi_ref,
}

impl Realm {
    pub fn install(js: &Js) -> R<()> {
        let global = js.global()?;
        let object = js.get(global, c"Object")?;
        let realm = Box::new(Realm {
            object_proto: js.create_ref(js.get(object, c"prototype")?)?,
            map_ctor: js.create_ref(js.get(global, c"Map")?)?,
            set_ctor: js.create_ref(js.get(global, c"Set")?)?,
            regexp_ctor: js.create_ref(js.get(global, c"RegExp")?)?,
        });
        unsafe extern "C" fn drop_realm(
            _env: sys::napi_env,
            data: *mut std::ffi::c_void,
            _hint: *mut std::ffi::c_void,
        ) {
            drop(unsafe { Box::from_raw(data.cast::<Realm>()) });
        }
        let raw = Box::into_raw(realm);
        js.check(unsafe {
            sys::napi_set_instance_data(js.env, raw.cast(), Some(drop_realm), ptr::null_mut())
        })
    }

    /// The realm of this environment.
    pub fn get<'a>(js: &Js) -> R<&'a Realm> {
        let mut data = ptr::null_mut();
        js.check(unsafe { sys::napi_get_instance_data(js.env, &mut data) })?;
        if data.is_null() {
            return Err(error(
                "prism-tools-native was not initialised in this environment",
                "ERR_PRISM_INTERNAL",
            ));
        }
        // SAFETY: `data` is the `Realm` boxed by `install` for this environment; it lives until the
        // environment's finaliser runs, and only shared references to it are ever handed out.
        Ok(unsafe { &*data.cast::<Realm>() })
    }
}
