//! How a dispatch ends: redaction of what leaves it, the blocked and error results, the lifecycle
//! events and ledger rows (built by JS literals from fields computed here), and the terminal phase
//! that settles an effect claim, then emits, appends and resolves or rejects.

use super::*;
use crate::dispatch::clock::{iso8601, now_millis, row_id};
use crate::dispatch::reasons::BlockedReason;
use crate::js::hooks::Hook;
use crate::js::raw::{Js, Ty, R, V};
use crate::js::realm::Realm;
use crate::js::redact::error_to_error_info;

impl Machine {
    /// A value with every secret removed: the native secrets in Rust, then a host redactor.
    pub(super) fn redact(&self, js: &Js, realm: &Realm, v: V) -> R<V> {
        if !self.compiled.any_redaction {
            return Ok(v);
        }
        let mut out = v;
        if !self.compiled.secrets.is_empty() {
            out = crate::js::redact::redact_if_needed(js, realm, &self.compiled.secrets, out)?;
        }
        if self.compiled.host_redactor {
            let r = self.hook(Hook::Redactor);
            let f = js.get(r, c"redact")?;
            out = match js.call_catch(r, f, &[out])? {
                Ok(v) => v,
                // A redactor that fails must not let the unredacted value through.
                Err(_) => js.string(crate::redact::REDACTED)?,
            };
        }
        Ok(out)
    }

    pub(super) fn error_info(&self, js: &Js, realm: &Realm, thrown: V) -> R<V> {
        let info = error_to_error_info(js, &self.compiled.secrets, thrown)?;
        if self.compiled.host_redactor {
            self.redact(js, realm, info)
        } else {
            Ok(info)
        }
    }

    /// `{ message }`: the shape upstream gives lookup, filter, argument and guardrail blocks.
    pub(super) fn plain_error(&self, js: &Js, realm: &Realm, message: &str) -> R<V> {
        let e = js.object()?;
        js.set(
            e,
            c"message",
            js.string(&self.compiled.secrets.redact(message))?,
        )?;
        if self.compiled.host_redactor {
            self.redact(js, realm, e)
        } else {
            Ok(e)
        }
    }

    pub(super) fn make_error(
        &self,
        js: &Js,
        realm: &Realm,
        name: &str,
        message: &str,
        code: &str,
        cause: Option<&str>,
    ) -> R<V> {
        let e = js.object()?;
        js.set(e, c"name", js.string(name)?)?;
        js.set(
            e,
            c"message",
            js.string(&self.compiled.secrets.redact(message))?,
        )?;
        js.set(e, c"code", js.string(code)?)?;
        if let Some(c) = cause {
            js.set(e, c"cause", js.string(&self.compiled.secrets.redact(c))?)?;
        }
        if self.compiled.host_redactor {
            self.redact(js, realm, e)
        } else {
            Ok(e)
        }
    }

    // ----- objects ---------------------------------------------------------------------------

    pub(super) fn glue(
        &self,
        js: &Js,
        pick: impl Fn(&crate::js::realm::Glue) -> napi::sys::napi_ref,
        args: &[V],
    ) -> R<V> {
        let realm = Realm::get(js)?;
        let f = js.ref_value(pick(realm.glue()?))?;
        js.call(js.undefined(), f, args)
    }

    pub(super) fn result_with_error(&self, js: &Js, vals: &Vals, error: V) -> R<V> {
        self.glue(
            js,
            |g| g.error_result,
            &[vals.0[S_ID], vals.0[S_NAME], error],
        )
    }

    /// A `ToolCallRecord`: `{ id, sessionId, runId, toolCallId, name, arguments, status, startedAt,
    /// redacted, ...ownership }` plus the terminal fields when given.
    pub(super) fn row(
        &self,
        js: &Js,
        vals: &Vals,
        status: &str,
        finished: Option<(V, V, V)>,
    ) -> R<V> {
        let u = js.undefined();
        let args = vals.0[S_SAFE_ARGS];
        let args = if js.ty(args)? == Ty::Object {
            args
        } else {
            js.object()?
        };
        let ownership =
            if self.has(Hook::Ownership) && js.ty(self.hook(Hook::Ownership))? == Ty::Object {
                self.hook(Hook::Ownership)
            } else {
                u
            };
        let (finished_at, reason, result) = finished.unwrap_or((u, u, u));
        self.glue(
            js,
            |g| g.row,
            &[
                js.string(&row_id())?,
                vals.0[S_SESSION],
                vals.0[S_RUN],
                vals.0[S_ID],
                vals.0[S_NAME],
                args,
                js.string(status)?,
                js.string(&self.dispatch_at)?,
                js.boolean(self.has(Hook::Redactor)),
                ownership,
                finished_at,
                reason,
                result,
            ],
        )
    }

    /// Arguments as they may appear in rows and events: redacted once, reused.
    pub(super) fn safe_args(&self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<V> {
        let cur = vals.0[S_SAFE_ARGS];
        if js.ty(cur)? != Ty::Undefined {
            return Ok(cur);
        }
        let args = vals.0[S_ARGS];
        let args = if js.ty(args)? == Ty::Undefined {
            js.object()?
        } else {
            args
        };
        let safe = self.redact(js, realm, args)?;
        vals.0[S_SAFE_ARGS] = safe;
        Ok(safe)
    }

    pub(super) fn safe_call(&self, js: &Js, realm: &Realm, vals: &mut Vals) -> R<V> {
        let cur = vals.0[S_SAFE_CALL];
        if js.ty(cur)? != Ty::Undefined {
            return Ok(cur);
        }
        let safe = self.redact(js, realm, vals.0[S_CALL])?;
        vals.0[S_SAFE_CALL] = safe;
        Ok(safe)
    }

    // ----- notifications ---------------------------------------------------------------------

    /// Calls `emit(event)`; a failing observer never changes the call's outcome.
    pub(super) fn emit(
        &self,
        js: &Js,
        input: &mut Option<Input>,
        event: impl FnOnce() -> R<V>,
    ) -> R<Option<V>> {
        if !self.has(Hook::Emit) {
            return Ok(None);
        }
        let f = self.hook(Hook::Emit);
        if input.is_some() {
            input.take();
            return Ok(None);
        }
        if js.ty(f)? != Ty::Function {
            return Ok(None);
        }
        let ev = event()?;
        match js.call_catch(js.undefined(), f, &[ev])? {
            Ok(v) if js.is_thenable(v)? => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    /// `ledger.appendToolCall(redactRunLedgerRecord(row, redactor))`.
    pub(super) fn append(
        &self,
        js: &Js,
        input: &mut Option<Input>,
        row: impl FnOnce() -> R<V>,
    ) -> R<Option<V>> {
        if !self.has(Hook::Ledger) {
            return Ok(None);
        }
        if input.is_some() {
            input.take();
            return Ok(None);
        }
        let ledger = self.hook(Hook::Ledger);
        let f = js.get_opt(ledger, c"appendToolCall")?;
        if js.ty(f)? != Ty::Function {
            return Ok(None);
        }
        let mut row = row()?;
        if self.compiled.host_redactor {
            // redactRunLedgerRecord(record, redactor): the whole row through the host's redactor.
            let r = self.hook(Hook::Redactor);
            let redact = js.get(r, c"redact")?;
            row = match js.call_catch(r, redact, &[row])? {
                Ok(v) => v,
                Err(_) => return Ok(None),
            };
        }
        match js.call_catch(ledger, f, &[row])? {
            Ok(v) if js.is_thenable(v)? => Ok(Some(v)),
            _ => Ok(None),
        }
    }

    // ----- blocked and failed calls -----------------------------------------------------------

    pub(super) fn block(
        &mut self,
        reason: BlockedReason,
        js: &Js,
        vals: &mut Vals,
        error: V,
    ) -> R<Flow> {
        self.ids(js, vals)?;
        vals.0[S_RESULT] = self.result_with_error(js, vals, error)?;
        self.terminal = Some((Terminal::Blocked(reason), 0));
        Ok(Flow::Continue)
    }

    pub(super) fn fail(&mut self, js: &Js, realm: &Realm, vals: &mut Vals, thrown: V) -> R<Flow> {
        let info = self.error_info(js, realm, thrown)?;
        self.fail_with(js, vals, info)
    }

    pub(super) fn fail_with(&mut self, js: &Js, vals: &mut Vals, info: V) -> R<Flow> {
        self.ids(js, vals)?;
        vals.0[S_RESULT] = self.result_with_error(js, vals, info)?;
        self.terminal = Some((Terminal::Error, 0));
        Ok(Flow::Continue)
    }

    /// Settle an unfinished effect claim, then the terminal event and row, then resolve or reject.
    /// Sub-steps: 0 settle the claim (1: after a `get`, mark it unknown), 2 the event, 3 the row, 4 done.
    pub(super) fn terminal_phase(
        &mut self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        kind: Terminal,
        sub: u32,
        input: &mut Option<Input>,
    ) -> R<Flow> {
        if self.has(Hook::Emit) || self.has(Hook::Ledger) || self.claim.is_some() {
            self.ids(js, vals)?;
        }
        let mut sub = sub;
        if sub == 0 {
            let getting = self.claim.as_ref().is_some_and(|c| c.attempted_only());
            if let Some(p) = self.settle_effect(js, vals, 0, input)? {
                self.terminal = Some((kind, if getting { 1 } else { 2 }));
                return Ok(Flow::Park(p));
            }
            sub = 2;
        } else if sub == 1 {
            if let Some(p) = self.settle_effect(js, vals, 1, input)? {
                self.terminal = Some((kind, 2));
                return Ok(Flow::Park(p));
            }
            sub = 2;
        } else if sub == 2 {
            input.take();
        }
        if sub == 2 {
            self.terminal = Some((kind, 3));
            let parked = self.emit(js, input, || self.terminal_event(js, realm, vals, kind))?;
            if let Some(p) = parked {
                return Ok(Flow::Park(p));
            }
        } else if sub == 3 {
            input.take();
        }
        if sub <= 3 {
            self.terminal = Some((kind, 4));
            if self.has(Hook::Ledger) {
                self.safe_args(js, realm, vals)?;
            }
            let parked = self.append(js, input, || self.terminal_row(js, vals, kind))?;
            if let Some(p) = parked {
                return Ok(Flow::Park(p));
            }
        } else {
            input.take();
        }
        if self.reject_after {
            return Ok(Flow::Reject(vals.0[S_AUX]));
        }
        Ok(Flow::Done(vals.0[S_RESULT]))
    }

    pub(super) fn terminal_event(
        &self,
        js: &Js,
        realm: &Realm,
        vals: &mut Vals,
        kind: Terminal,
    ) -> R<V> {
        let result = vals.0[S_RESULT];
        let ms = js.number(self.duration_ms())?;
        match kind {
            Terminal::Finished => self.glue(
                js,
                |g| g.finished_event,
                &[vals.0[S_SESSION], vals.0[S_RUN], result, ms],
            ),
            Terminal::Error => {
                let call = self.safe_call(js, realm, vals)?;
                let error = js.get(result, c"error")?;
                self.glue(
                    js,
                    |g| g.error_event,
                    &[vals.0[S_SESSION], vals.0[S_RUN], call, error, ms],
                )
            }
            Terminal::Blocked(reason) => {
                let error = js.get(result, c"error")?;
                let reason = js.string(reason.as_str())?;
                self.glue(
                    js,
                    |g| g.blocked_event,
                    &[
                        vals.0[S_SESSION],
                        vals.0[S_RUN],
                        vals.0[S_ID],
                        vals.0[S_NAME],
                        reason,
                        error,
                        ms,
                    ],
                )
            }
        }
    }

    pub(super) fn terminal_row(&self, js: &Js, vals: &Vals, kind: Terminal) -> R<V> {
        let finished_at = js.string(&iso8601(now_millis()))?;
        let (status, reason) = match kind {
            Terminal::Finished => ("finished", js.undefined()),
            Terminal::Error => ("error", js.undefined()),
            Terminal::Blocked(r) => ("blocked", js.string(r.as_str())?),
        };
        self.row(
            js,
            vals,
            status,
            Some((finished_at, reason, vals.0[S_RESULT])),
        )
    }
}

/// The fields every `ToolCallRecord` carries.
pub struct RowFields<'a> {
    pub session_id: &'a str,
    pub run_id: &'a str,
    pub tool_call_id: &'a str,
    pub name: &'a str,
    /// Already redacted.
    pub args: V,
    pub started_at: &'a str,
    pub redacted: bool,
    pub ownership: Option<V>,
}

/// `{ id, sessionId, runId, toolCallId, name, arguments, status, startedAt, redacted, ...ownership }`.
pub fn build_row(js: &Js, f: &RowFields, status: &str) -> R<V> {
    let r = js.object()?;
    js.set(r, c"id", js.string(&row_id())?)?;
    js.set(r, c"sessionId", js.string(f.session_id)?)?;
    js.set(r, c"runId", js.string(f.run_id)?)?;
    js.set(r, c"toolCallId", js.string(f.tool_call_id)?)?;
    js.set(r, c"name", js.string(f.name)?)?;
    js.set(
        r,
        c"arguments",
        if js.ty(f.args)? == Ty::Object {
            f.args
        } else {
            js.object()?
        },
    )?;
    js.set(r, c"status", js.string(status)?)?;
    js.set(r, c"startedAt", js.string(f.started_at)?)?;
    js.set(r, c"redacted", js.boolean(f.redacted))?;
    if let Some(o) = f.ownership {
        if js.ty(o)? == Ty::Object {
            for key in [c"tenantId", c"accountId", c"userId"] {
                let v = js.get(o, key)?;
                if !js.is_nullish(v)? {
                    js.set(r, key, v)?;
                }
            }
        }
    }
    Ok(r)
}
