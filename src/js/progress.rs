//! The sink behind the `progress(progress?, metadata?)` a tool receives in its context: it calls the
//! caller's `progress`, emits `tool_execution_progress` and appends a `started` row carrying the
//! snapshot. A failing observer never fails the tool.

use std::rc::Rc;

use super::dispatch::{bound_of, build_row, RowFields};
use super::hooks::{cached_secrets, Bound, Hook, HOOKS};
use super::raw::{cb_args, Js, Ty, R, V};
use super::realm::Realm;
use super::redact::{native_redactor, read_secrets, redact_value};
use crate::dispatch::clock::{iso8601, now_millis};
use crate::raw_fn;
use crate::redact::Secrets;

struct Sinks {
    emit: V,
    ledger: V,
    redactor: V,
    ownership: V,
    secrets: Rc<Secrets>,
    host_redactor: bool,
}

fn sinks(js: &Js, hooks: V, bound: Option<Rc<Bound>>) -> R<Sinks> {
    let get = |h: Hook| -> R<V> {
        match &bound {
            Some(b) => super::hooks::Source::Bound(b.clone()).hook(js, hooks, h),
            None => js.get(hooks, HOOKS[h as usize].1),
        }
    };
    let redactor = get(Hook::Redactor)?;
    let (secrets, host_redactor) = match &bound {
        Some(b) => (b.compiled.secrets.clone(), b.compiled.host_redactor),
        None => {
            let mut list = read_secrets(js, js.get(hooks, c"secrets")?, "secrets")?;
            let mut host = false;
            if !js.is_nullish(redactor)? {
                match native_redactor(js, redactor)? {
                    Some(s) => list.extend(s.list().iter().cloned()),
                    None => host = true,
                }
            }
            (cached_secrets(list), host)
        }
    };
    Ok(Sinks {
        emit: get(Hook::Emit)?,
        ledger: get(Hook::Ledger)?,
        redactor,
        ownership: get(Hook::Ownership)?,
        secrets,
        host_redactor,
    })
}

impl Sinks {
    fn redact(&self, js: &Js, realm: &Realm, v: V) -> R<V> {
        let mut out = v;
        if !self.secrets.is_empty() {
            out = redact_value(js, realm, &self.secrets, out)?;
        }
        if self.host_redactor {
            let f = js.get_opt(self.redactor, c"redact")?;
            if js.ty(f)? == Ty::Function {
                out = match js.call_catch(self.redactor, f, &[out])? {
                    Ok(v) => v,
                    Err(_) => js.string(crate::redact::REDACTED)?,
                };
            }
        }
        Ok(out)
    }
}

/// Calls `f(this, arg)` and lets a failure or a rejection pass without effect.
fn observe(js: &Js, realm: &Realm, this: V, f: V, arg: V) -> R<()> {
    if let Ok(v) = js.call_catch(this, f, &[arg])? {
        if js.is_thenable(v)? {
            let then = js.get(v, c"then")?;
            let noop = js.ref_value(realm.glue()?.noop)?;
            let _ = js.call_catch(v, then, &[js.undefined(), noop])?;
        }
    }
    Ok(())
}

// progressSink(hooks, ctx, toolCallId, name, args, startedAt, progress, metadata)
raw_fn!(progress_sink, |js, info| {
    let (_, _, [hooks, ctx, tool_call_id, name, args, started_at, progress, metadata], _) =
        cb_args::<8>(js, info)?;
    let realm = Realm::get(js)?;
    let caller = js.get_opt(ctx, c"progress")?;
    if js.ty(caller)? == Ty::Function {
        let _ = js.call_catch(ctx, caller, &[progress, metadata])?;
    }
    let s = sinks(js, hooks, bound_of(js, hooks)?)?;
    let has_emit = js.ty(s.emit)? == Ty::Function;
    let has_ledger = js.ty(s.ledger)? == Ty::Object;
    if !has_emit && !has_ledger {
        return Ok(js.undefined());
    }
    let safe_progress = s.redact(js, realm, progress)?;
    let safe_metadata = s.redact(js, realm, metadata)?;
    let session_id = js.get_opt(ctx, c"sessionId")?;
    let run_id = js.get_opt(ctx, c"runId")?;
    if has_emit {
        let e = js.object()?;
        js.set(e, c"type", js.string("tool_execution_progress")?)?;
        js.set(e, c"sessionId", session_id)?;
        js.set(e, c"runId", run_id)?;
        js.set(e, c"toolCallId", tool_call_id)?;
        js.set(e, c"name", name)?;
        js.set(e, c"progress", safe_progress)?;
        js.set(e, c"metadata", safe_metadata)?;
        observe(js, realm, js.undefined(), s.emit, e)?;
    }
    if has_ledger {
        let append = js.get(s.ledger, c"appendToolCall")?;
        if js.ty(append)? == Ty::Function {
            let to_s = |v: V| -> R<String> {
                if js.is_nullish(v)? {
                    Ok(String::new())
                } else {
                    js.to_js_string(v)
                }
            };
            let safe_args = s.redact(js, realm, args)?;
            let row = build_row(
                js,
                &RowFields {
                    session_id: &to_s(session_id)?,
                    run_id: &to_s(run_id)?,
                    tool_call_id: &to_s(tool_call_id)?,
                    name: &to_s(name)?,
                    args: safe_args,
                    started_at: &if js.ty(started_at)? == Ty::Number {
                        iso8601(js.f64(started_at)? as i64)
                    } else {
                        to_s(started_at)?
                    },
                    redacted: !js.is_nullish(s.redactor)?,
                    ownership: if js.ty(s.ownership)? == Ty::Object {
                        Some(s.ownership)
                    } else {
                        None
                    },
                },
                "started",
            )?;
            js.set(row, c"progress", safe_progress)?;
            js.set(row, c"progressMetadata", safe_metadata)?;
            js.set(row, c"progressAt", js.string(&iso8601(now_millis()))?)?;
            observe(js, realm, s.ledger, append, row)?;
        }
    }
    Ok(js.undefined())
});
