//! Per-environment state: references to the built-ins and to the small JS helpers (`lib/glue.js`)
//! the native code calls, kept as Node-API instance data so worker threads each get their own.

use std::ptr;

use napi::sys;

use super::raw::{error, Js, R, V};

/// JS helpers handed over once by the package entry (`bindGlue`).
pub struct Glue {
    pub tool_context: sys::napi_ref,
    pub guardrail_error: sys::napi_ref,
    pub guardrail_signal: sys::napi_ref,
    pub noop: sys::napi_ref,
    pub row: sys::napi_ref,
    pub started_event: sys::napi_ref,
    pub finished_event: sys::napi_ref,
    pub error_event: sys::napi_ref,
    pub blocked_event: sys::napi_ref,
    pub error_result: sys::napi_ref,
    pub json_for_scan: sys::napi_ref,
}

impl Glue {
    pub fn refs(&self) -> [sys::napi_ref; 11] {
        [
            self.tool_context,
            self.guardrail_error,
            self.guardrail_signal,
            self.noop,
            self.row,
            self.started_event,
            self.finished_event,
            self.error_event,
            self.blocked_event,
            self.error_result,
            self.json_for_scan,
        ]
    }
}

pub struct Realm {
    pub object_proto: sys::napi_ref,
    pub map_ctor: sys::napi_ref,
    pub set_ctor: sys::napi_ref,
    pub regexp_ctor: sys::napi_ref,
    pub json_stringify: sys::napi_ref,
    pub json_parse: sys::napi_ref,
    pub json: sys::napi_ref,
    /// `progressSink`, handed to the tool-context helper.
    pub progress_sink: sys::napi_ref,
    pub glue: Option<Glue>,
}

impl Realm {
    pub fn install(js: &Js) -> R<()> {
        let global = js.global()?;
        let object = js.get(global, c"Object")?;
        let json = js.get(global, c"JSON")?;
        let realm = Box::new(Realm {
            object_proto: js.create_ref(js.get(object, c"prototype")?)?,
            map_ctor: js.create_ref(js.get(global, c"Map")?)?,
            set_ctor: js.create_ref(js.get(global, c"Set")?)?,
            regexp_ctor: js.create_ref(js.get(global, c"RegExp")?)?,
            json_stringify: js.create_ref(js.get(json, c"stringify")?)?,
            json_parse: js.create_ref(js.get(json, c"parse")?)?,
            json: js.create_ref(json)?,
            progress_sink: js.create_ref(js.function(
                "progressSink",
                Some(super::progress::progress_sink),
                ptr::null_mut(),
            )?)?,
            glue: None,
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
    pub fn get<'a>(js: &Js) -> R<&'a mut Realm> {
        let mut data = ptr::null_mut();
        js.check(unsafe { sys::napi_get_instance_data(js.env, &mut data) })?;
        if data.is_null() {
            return Err(error(
                "prism-tools-native was not initialised in this environment",
                "ERR_PRISM_INTERNAL",
            ));
        }
        Ok(unsafe { &mut *data.cast::<Realm>() })
    }

    pub fn glue(&self) -> R<&Glue> {
        self.glue.as_ref().ok_or_else(|| {
            error(
                "prism-tools-native: load the package through its entry point (index.js)",
                "ERR_PRISM_INTERNAL",
            )
        })
    }
}

/// `Object.getPrototypeOf(v)` is `Object.prototype` or `null`: a plain object.
pub fn is_plain_object(js: &Js, realm: &Realm, v: V) -> R<bool> {
    // Arrays and class instances have other prototypes, so one prototype check covers them.
    if js.ty(v)? != super::raw::Ty::Object {
        return Ok(false);
    }
    let proto = js.prototype_of(v)?;
    if js.ty(proto)? == super::raw::Ty::Null {
        return Ok(true);
    }
    js.strict_eq(proto, js.ref_value(realm.object_proto)?)
}
