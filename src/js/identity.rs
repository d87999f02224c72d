//! Identity checks before policies run: the host-verified identity must be active and own the call
//! (SPEC section 1). Returns why not, or `None`.

use super::raw::{Js, Ty, R, V};
use crate::dispatch::clock::now_millis;

/// How far in the future `issuedAt` may be (clock skew).
const ISSUED_AT_SKEW_MS: f64 = 60_000.0;

/// Milliseconds since the epoch of an ISO string, a number or a `Date`; `None` when not a time.
fn time_of(js: &Js, v: V) -> R<Option<f64>> {
    let ms = match js.ty(v)? {
        Ty::Number => js.f64(v)?,
        Ty::String => {
            let date = js.get(js.global()?, c"Date")?;
            let parse = js.get(date, c"parse")?;
            js.f64(js.call(date, parse, &[v])?)?
        }
        Ty::Object if js.is_date(v)? => {
            let mut t = 0.0;
            js.check(unsafe { napi::sys::napi_get_date_value(js.env, v, &mut t) })?;
            t
        }
        _ => return Ok(None),
    };
    Ok(if ms.is_finite() { Some(ms) } else { None })
}

pub fn check(js: &Js, identity: V, ownership: Option<V>) -> R<Option<String>> {
    if js.ty(identity)? != Ty::Object {
        return Ok(Some("Identity must be a verified AgentIdentity object".into()));
    }
    let verified = js.get(identity, c"verified")?;
    if !(js.ty(verified)? == Ty::Boolean && js.bool(verified)?) {
        return Ok(Some("Identity is not verified".into()));
    }
    let now = now_millis() as f64;
    match time_of(js, js.get(identity, c"issuedAt")?)? {
        None => return Ok(Some("Identity issuedAt is not a valid time".into())),
        Some(t) if t > now + ISSUED_AT_SKEW_MS => return Ok(Some("Identity issuedAt is in the future".into())),
        Some(_) => {}
    }
    let expires = js.get(identity, c"expiresAt")?;
    if !js.is_nullish(expires)? {
        match time_of(js, expires)? {
            Some(t) if t > now => {}
            Some(_) => return Ok(Some("Identity has expired".into())),
            None => return Ok(Some("Identity expiresAt is not a valid time".into())),
        }
    }
    let revoked = js.get(identity, c"revokedAt")?;
    if !js.is_nullish(revoked)? {
        return Ok(Some("Identity has been revoked".into()));
    }
    if let Some(o) = ownership {
        if js.ty(o)? == Ty::Object {
            for (key, label) in [(c"tenantId", "tenantId"), (c"accountId", "accountId"), (c"userId", "userId")] {
                let want = js.get(o, key)?;
                if js.is_nullish(want)? {
                    continue;
                }
                if !js.strict_eq(want, js.get(identity, key)?)? {
                    return Ok(Some(format!("Identity does not match ownership ({label})")));
                }
            }
        }
    }
    Ok(None)
}
