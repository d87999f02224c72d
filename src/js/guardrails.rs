//! `tool_input` / `tool_output` guardrails: evaluated in declaration order with up to
//! `maxConcurrency` in flight; the first non-allow decision stops the rest and aborts the signal
//! of those still running. Every decision becomes a bounded, redacted record and a
//! `guardrail_decision` event, in declaration order.

use super::dispatch::{Input, Machine, Vals, S_AUX, S_CTX};
use super::hooks::Hook;
use super::raw::{range_error, Js, Ty, R, V};
use super::realm::Realm;
use crate::dispatch::reasons;
use crate::redact::truncate_utf8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Input,
    Output,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Input => "tool_input",
            Stage::Output => "tool_output",
        }
    }
}

const NAME_BYTES: usize = 128;
const REASON_BYTES: usize = 4 * 1024;
const METADATA_BYTES: usize = 16 * 1024;
pub const MAX_CONCURRENCY: f64 = 16.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    NotStarted,
    Value,
    Threw,
    Pending,
    /// Malformed guardrail (`guardrail_invalid`).
    Invalid,
}

pub enum GuardOutcome {
    Allow,
    Park(V),
    Block { message: String },
    Tripwire { message: String, error: V },
}

pub struct GuardRun {
    stage: Stage,
    max: u32,
    next_start: u32,
    next_process: u32,
    slots: Vec<Slot>,
}

/// Aux array layout: [controller, signal, slot values...].
const AUX_HEAD: u32 = 2;

impl GuardRun {
    /// `None` when the stage has no guardrails.
    pub fn new(js: &Js, guardrails: V, stage: Stage) -> R<Option<GuardRun>> {
        let list = stage_list(js, guardrails, stage)?;
        let Some(list) = list else { return Ok(None) };
        let n = js.array_len(list)?;
        if n == 0 {
            return Ok(None);
        }
        let mc = js.get_opt(guardrails, c"maxConcurrency")?;
        let max = match js.ty(mc)? {
            Ty::Undefined => 1,
            Ty::Number => {
                let x = js.f64(mc)?;
                if x.fract() != 0.0 || !(1.0..=MAX_CONCURRENCY).contains(&x) {
                    return Err(range_error(
                        format!(
                            "guardrails.maxConcurrency must be an integer from 1 to 16 (got {x})"
                        ),
                        "ERR_PRISM_INVALID_OPTION",
                    ));
                }
                x as u32
            }
            _ => {
                return Err(range_error(
                    "guardrails.maxConcurrency must be an integer from 1 to 16",
                    "ERR_PRISM_INVALID_OPTION",
                ))
            }
        };
        Ok(Some(GuardRun {
            stage,
            max,
            next_start: 0,
            next_process: 0,
            slots: vec![Slot::NotStarted; n as usize],
        }))
    }

    pub fn run(
        &mut self,
        js: &Js,
        realm: &Realm,
        m: &Machine,
        vals: &mut Vals,
        value: V,
        input: &mut Option<Input>,
    ) -> R<GuardOutcome> {
        let list =
            stage_list(js, m.hook_value(Hook::Guardrails), self.stage)?.unwrap_or(js.array(0)?);
        if js.ty(vals.0[S_AUX])? != Ty::Object {
            let glue = realm.glue()?;
            let caller_signal = js.get_opt(vals.0[S_CTX], c"signal")?;
            let pair = js.call(
                js.undefined(),
                js.ref_value(glue.guardrail_signal)?,
                &[caller_signal],
            )?;
            let aux = js.array(AUX_HEAD as usize + self.slots.len())?;
            js.set_element(aux, 0, js.element(pair, 0)?)?;
            js.set_element(aux, 1, js.element(pair, 1)?)?;
            vals.0[S_AUX] = aux;
        }
        let aux = vals.0[S_AUX];
        if let Some(i) = input.take() {
            let at = self.next_process;
            match i {
                Input::Value(v) => {
                    js.set_element(aux, AUX_HEAD + at, v)?;
                    self.slots[at as usize] = Slot::Value;
                }
                Input::Threw(e) => {
                    js.set_element(aux, AUX_HEAD + at, e)?;
                    self.slots[at as usize] = Slot::Threw;
                }
                Input::Aborted => {
                    js.set_element(aux, AUX_HEAD + at, js.undefined())?;
                    self.slots[at as usize] = Slot::Threw;
                }
            }
        }
        let n = self.slots.len() as u32;
        while self.next_process < n {
            while self.next_start < n && self.next_start < self.next_process + self.max {
                self.start(js, realm, m, vals, list, aux, value, self.next_start)?;
                self.next_start += 1;
            }
            let i = self.next_process;
            let slot_v = js.element(aux, AUX_HEAD + i)?;
            let g = js.element(list, i)?;
            let (action, reason, record) = match self.slots[i as usize] {
                Slot::Pending => return Ok(GuardOutcome::Park(slot_v)),
                Slot::NotStarted => unreachable_slot()?,
                Slot::Invalid => (
                    "tripwire".to_string(),
                    Some("guardrail_invalid".to_string()),
                    None,
                ),
                Slot::Threw => (
                    "tripwire".to_string(),
                    Some("guardrail_failed".to_string()),
                    None,
                ),
                Slot::Value => read_decision(js, slot_v)?,
            };
            let record = self.record(js, realm, m, g, &action, reason.as_deref(), record)?;
            emit_decision(js, realm, m, record)?;
            self.next_process += 1;
            if action == "allow" {
                continue;
            }
            // Stop the rest: abort those in flight.
            let controller = js.element(aux, 0)?;
            let abort = js.get_opt(controller, c"abort")?;
            if js.ty(abort)? == Ty::Function {
                let _ = js.call_catch(controller, abort, &[])?;
            }
            let message = self.message(js, g, reason.as_deref())?;
            if action == "block" {
                return Ok(GuardOutcome::Block { message });
            }
            let glue = realm.glue()?;
            let safe_message = m.secrets().redact(&message).into_owned();
            let err = js.call(
                js.undefined(),
                js.ref_value(glue.guardrail_error)?,
                &[js.string(&safe_message)?, record],
            )?;
            return Ok(GuardOutcome::Tripwire {
                message,
                error: err,
            });
        }
        Ok(GuardOutcome::Allow)
    }

    #[allow(clippy::too_many_arguments)]
    fn start(
        &mut self,
        js: &Js,
        realm: &Realm,
        m: &Machine,
        vals: &Vals,
        list: V,
        aux: V,
        value: V,
        i: u32,
    ) -> R<()> {
        let g = js.element(list, i)?;
        let evaluate = js.get_opt(g, c"evaluate")?;
        let name_ok = js.ty(js.get_opt(g, c"name")?)? == Ty::String;
        let stage_v = js.get_opt(g, c"stage")?;
        let stage_ok = match js.opt_str(stage_v)? {
            Some(s) => s == self.stage.as_str(),
            None => js.ty(stage_v)? == Ty::Undefined,
        };
        if js.ty(evaluate)? != Ty::Function || !name_ok || !stage_ok {
            self.slots[i as usize] = Slot::Invalid;
            return Ok(());
        }
        let ctx = js.object()?;
        js.set(ctx, c"stage", js.string(self.stage.as_str())?)?;
        js.set(ctx, c"value", value)?;
        js.set(ctx, c"sessionId", js.string(m.session_id())?)?;
        js.set(ctx, c"runId", js.string(m.run_id())?)?;
        js.set(ctx, c"toolCallId", js.string(m.tool_call_id())?)?;
        js.set(ctx, c"toolName", js.string(m.name())?)?;
        js.set(ctx, c"metadata", js.get_opt(vals.0[S_CTX], c"metadata")?)?;
        js.set(ctx, c"signal", js.element(aux, 1)?)?;
        match js.call_catch(g, evaluate, &[ctx])? {
            Err(e) => {
                js.set_element(aux, AUX_HEAD + i, e)?;
                self.slots[i as usize] = Slot::Threw;
            }
            Ok(v) => {
                js.set_element(aux, AUX_HEAD + i, v)?;
                if js.is_thenable(v)? {
                    self.slots[i as usize] = Slot::Pending;
                    if self.max > 1 {
                        // Not awaited yet: a rejection must not count as unhandled meanwhile.
                        let then = js.get(v, c"then")?;
                        let noop = js.ref_value(realm.glue()?.noop)?;
                        let _ = js.call_catch(v, then, &[js.undefined(), noop])?;
                    }
                } else {
                    self.slots[i as usize] = Slot::Value;
                }
            }
        }
        Ok(())
    }

    fn record(
        &self,
        js: &Js,
        realm: &Realm,
        m: &Machine,
        g: V,
        action: &str,
        reason: Option<&str>,
        metadata: Option<V>,
    ) -> R<V> {
        let secrets = m.secrets();
        let rec = js.object()?;
        let name = js
            .opt_str(js.get_opt(g, c"name")?)?
            .unwrap_or_else(|| "(unnamed guardrail)".into());
        js.set(
            rec,
            c"guardrail",
            js.string(&secrets.redact(truncate_utf8(&name, NAME_BYTES)))?,
        )?;
        js.set(rec, c"stage", js.string(self.stage.as_str())?)?;
        js.set(rec, c"action", js.string(action)?)?;
        if let Some(r) = reason {
            js.set(
                rec,
                c"reason",
                js.string(&secrets.redact(truncate_utf8(r, REASON_BYTES)))?,
            )?;
        }
        if let Some(md) = metadata {
            if let Some(norm) = normalise_metadata(js, realm, md)? {
                js.set(rec, c"metadata", m.redact_value(js, realm, norm)?)?;
            }
        }
        Ok(rec)
    }

    fn message(&self, js: &Js, g: V, reason: Option<&str>) -> R<String> {
        let pack = js.opt_str(js.get_opt(g, c"pack")?)?;
        let rule = js.opt_str(js.get_opt(g, c"rule")?)?;
        Ok(match (pack, rule) {
            (Some(p), Some(r)) => reasons::rule_pack_message(&p, &r, reason),
            _ => match self.stage {
                Stage::Input => reasons::INPUT_GUARDRAIL_BLOCKED.to_owned(),
                Stage::Output => reasons::OUTPUT_GUARDRAIL_BLOCKED.to_owned(),
            },
        })
    }
}

fn unreachable_slot() -> R<(String, Option<String>, Option<V>)> {
    Err(super::raw::error(
        "guardrail processed before it started",
        "ERR_PRISM_INTERNAL",
    ))
}

/// The list for a stage: `toolInput` or `toolOutput` (absent → none).
fn stage_list(js: &Js, guardrails: V, stage: Stage) -> R<Option<V>> {
    let key = match stage {
        Stage::Input => c"toolInput",
        Stage::Output => c"toolOutput",
    };
    let list = js.get_opt(guardrails, key)?;
    if js.is_nullish(list)? {
        return Ok(None);
    }
    if !js.is_array(list)? {
        return Err(super::raw::type_error(
            format!(
                "guardrails.{} must be an array of guardrails",
                key.to_str().unwrap_or("list")
            ),
            "ERR_PRISM_INVALID_OPTION",
        ));
    }
    Ok(Some(list))
}

/// `(action, reason, metadata)`; an answer without a valid action is a tripwire.
fn read_decision(js: &Js, d: V) -> R<(String, Option<String>, Option<V>)> {
    if js.ty(d)? != Ty::Object {
        return Ok((
            "tripwire".into(),
            Some("guardrail_invalid_decision".into()),
            None,
        ));
    }
    let action = js.opt_str(js.get(d, c"action")?)?;
    match action.as_deref() {
        Some("allow" | "block" | "tripwire" | "interrupt") => {
            let reason = js.opt_str(js.get(d, c"reason")?)?;
            let md = js.get(d, c"metadata")?;
            let md = if js.is_nullish(md)? { None } else { Some(md) };
            Ok((action.unwrap_or_default(), reason, md))
        }
        _ => Ok((
            "tripwire".into(),
            Some("guardrail_invalid_decision".into()),
            None,
        )),
    }
}

/// Metadata through JSON (what survives `JSON.stringify`), at most 16 KiB of it.
fn normalise_metadata(js: &Js, realm: &Realm, md: V) -> R<Option<V>> {
    let json = js.ref_value(realm.json)?;
    let text = match js.call_catch(json, js.ref_value(realm.json_stringify)?, &[md])? {
        Ok(t) if js.ty(t)? == Ty::String => t,
        _ => return Ok(None),
    };
    let len = js.str(text)?.len();
    if len > METADATA_BYTES {
        let o = js.object()?;
        js.set(o, c"truncated", js.boolean(true))?;
        js.set(o, c"bytes", js.number(len as f64)?)?;
        return Ok(Some(o));
    }
    Ok(js
        .call_catch(json, js.ref_value(realm.json_parse)?, &[text])?
        .ok())
}

fn emit_decision(js: &Js, realm: &Realm, m: &Machine, record: V) -> R<()> {
    if !m.has_hook(Hook::Emit) {
        return Ok(());
    }
    let f = m.hook_value(Hook::Emit);
    if js.ty(f)? != Ty::Function {
        return Ok(());
    }
    let e = js.object()?;
    js.set(e, c"type", js.string("guardrail_decision")?)?;
    js.set(e, c"sessionId", js.string(m.session_id())?)?;
    js.set(e, c"runId", js.string(m.run_id())?)?;
    js.set(e, c"toolCallId", js.string(m.tool_call_id())?)?;
    js.set(e, c"toolName", js.string(m.name())?)?;
    js.set(e, c"record", record)?;
    if let Ok(v) = js.call_catch(js.undefined(), f, &[e])? {
        if js.is_thenable(v)? {
            let then = js.get(v, c"then")?;
            let noop = js.ref_value(realm.glue()?.noop)?;
            let _ = js.call_catch(v, then, &[js.undefined(), noop])?;
        }
    }
    Ok(())
}
