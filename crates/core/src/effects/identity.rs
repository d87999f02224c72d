//! `AgentIdentity` checks: is an identity active, and does it own an `OwnershipScope`.
//!
//! Active (docs/spec.md section 1): `verified === true`; `issuedAt` parseable and at most one minute in the future;
//! `expiresAt`, when set, parseable and in the future; `revokedAt`, when set, parseable and in the future.
//! The shape is bounded as in `@arnilo/prism` (default identity limits): `tenantId` non-empty, at most 256
//! bytes; `principal.id` non-empty, at most 256 bytes; `principal.kind` non-empty, at most 64 bytes;
//! `scopes` a non-empty array of at most 64 non-empty strings of at most 128 bytes; `credentialRefs`
//! strings of at most 256 bytes; `metadata` JSON of at most 4 KiB; `accountId` / `userId` at most 256 bytes.
//! Ownership matches when each field the scope sets equals the identity's (a scope that sets `accountId`
//! does not match an identity without one).

use super::error::IdentityFailure;

/// A field read from a host object: absent (`undefined`), a string, or some other value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Field {
    #[default]
    Absent,
    Text(String),
    Invalid,
}

impl Field {
    pub fn text(&self) -> Option<&str> {
        match self {
            Field::Text(s) => Some(s),
            _ => None,
        }
    }
    pub fn is_absent(&self) -> bool {
        matches!(self, Field::Absent)
    }
    /// Its own string, when it is text.
    pub fn into_text(self) -> Option<String> {
        match self {
            Field::Text(s) => Some(s),
            _ => None,
        }
    }
}

impl From<&str> for Field {
    fn from(s: &str) -> Self {
        Field::Text(s.to_owned())
    }
}

#[derive(Debug, Clone, Default)]
pub struct PrincipalView {
    pub kind: Field,
    pub id: Field,
    pub display_name: Field,
}

/// The parts of an `AgentIdentity` the checks read.
#[derive(Debug, Clone, Default)]
pub struct IdentityView {
    pub tenant_id: Field,
    pub account_id: Field,
    pub user_id: Field,
    /// `None` when `principal` is not an object.
    pub principal: Option<PrincipalView>,
    /// Optional principals (`sponsor`, `owner`, `delegatedFrom`) that are present; `None` entries are
    /// present but not objects.
    pub other_principals: Vec<Option<PrincipalView>>,
    /// `None` when `scopes` is not an array.
    pub scopes: Option<Vec<Field>>,
    /// `None` when absent; `Some(None)` when present but not an array.
    pub credential_refs: Option<Option<Vec<Field>>>,
    /// `None` when absent; `Some(None)` when not JSON-serialisable; else its JSON byte length.
    pub metadata_bytes: Option<Option<usize>>,
    pub issued_at: Field,
    pub expires_at: Field,
    pub revoked_at: Field,
    /// `verified === true`.
    pub verified: bool,
}

/// The fields an `OwnershipScope` may set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnershipView {
    pub tenant_id: Field,
    pub account_id: Field,
    pub user_id: Field,
}

const MAX_SCOPES: usize = 64;
const MAX_SCOPE_BYTES: usize = 128;
const MAX_METADATA_BYTES: usize = 4 * 1024;
const MAX_CREDENTIAL_REF_BYTES: usize = 256;
const MAX_ID_BYTES: usize = 256;
const MAX_PRINCIPAL_KIND_BYTES: usize = 64;
/// How far in the future `issuedAt` may be (clock skew).
pub const ISSUED_AT_SKEW_MS: i64 = 60_000;

fn fail(reason: &'static str, message: &'static str) -> IdentityFailure {
    IdentityFailure::new(reason, message)
}

/// A failure's reason and message.
type Why = (&'static str, &'static str);

/// A required text of at most `max` bytes: `missing` when it is absent, not text, or empty,
/// `too_large` past the limit.
fn required_text(
    v: Option<&str>,
    max: usize,
    missing: Why,
    too_large: Why,
) -> Result<(), IdentityFailure> {
    match v {
        None | Some("") => Err(fail(missing.0, missing.1)),
        Some(s) if s.len() > max => Err(fail(too_large.0, too_large.1)),
        Some(_) => Ok(()),
    }
}

/// An optional text of at most `max` bytes: absent, or text within the limit; anything else is
/// `invalid`.
fn optional_text(f: &Field, max: usize, invalid: Why) -> Result<(), IdentityFailure> {
    match f {
        Field::Absent => Ok(()),
        Field::Text(s) if s.len() <= max => Ok(()),
        _ => Err(fail(invalid.0, invalid.1)),
    }
}

fn check_principal(p: &Option<PrincipalView>) -> Result<(), IdentityFailure> {
    const MISSING: Why = ("missing_principal", "Principal id is required");
    let Some(p) = p else {
        return Err(fail(MISSING.0, MISSING.1));
    };
    required_text(
        p.id.text(),
        MAX_ID_BYTES,
        MISSING,
        ("principal_too_large", "Principal id exceeds byte limit"),
    )?;
    let kind = ("invalid_principal_kind", "Principal kind is invalid");
    required_text(p.kind.text(), MAX_PRINCIPAL_KIND_BYTES, kind, kind)?;
    optional_text(
        &p.display_name,
        MAX_ID_BYTES,
        (
            "display_name_too_large",
            "Principal displayName exceeds byte limit",
        ),
    )
}

fn check_shape(id: &IdentityView) -> Result<(), IdentityFailure> {
    required_text(
        id.tenant_id.text(),
        MAX_ID_BYTES,
        ("missing_tenant", "Identity tenantId is required"),
        ("tenant_too_large", "Identity tenantId exceeds byte limit"),
    )?;
    check_principal(&id.principal)?;
    for p in &id.other_principals {
        check_principal(p)?;
    }
    let scopes = match &id.scopes {
        Some(s) if !s.is_empty() => s,
        _ => {
            return Err(fail(
                "empty_scopes",
                "Identity scopes must be a non-empty array",
            ))
        }
    };
    if scopes.len() > MAX_SCOPES {
        return Err(fail("too_many_scopes", "Identity exceeds maxScopes (64)"));
    }
    for s in scopes {
        required_text(
            s.text(),
            MAX_SCOPE_BYTES,
            ("invalid_scope", "Identity scope is invalid"),
            ("scope_too_large", "Identity scope exceeds byte limit"),
        )?;
    }
    match &id.credential_refs {
        None => {}
        Some(None) => return Err(fail("invalid_credential_ref", "Credential ref is invalid")),
        Some(Some(refs)) => {
            for r in refs {
                required_text(
                    r.text(),
                    MAX_CREDENTIAL_REF_BYTES,
                    ("invalid_credential_ref", "Credential ref is invalid"),
                    (
                        "credential_ref_too_large",
                        "Credential ref exceeds byte limit",
                    ),
                )?;
            }
        }
    }
    match id.metadata_bytes {
        None => {}
        Some(None) => {
            return Err(fail(
                "invalid_metadata",
                "Identity metadata is not JSON-serializable",
            ))
        }
        Some(Some(n)) if n > MAX_METADATA_BYTES => {
            return Err(fail(
                "metadata_too_large",
                "Identity metadata exceeds byte limit",
            ))
        }
        Some(Some(_)) => {}
    }
    optional_text(
        &id.account_id,
        MAX_ID_BYTES,
        ("account_too_large", "Identity accountId exceeds byte limit"),
    )?;
    optional_text(
        &id.user_id,
        MAX_ID_BYTES,
        ("user_too_large", "Identity userId exceeds byte limit"),
    )
}

/// Checks that an identity is active at `now` (epoch ms). `parse` turns a timestamp into epoch ms the way
/// `Date.parse` does (`None` for an unparseable text).
pub fn check_active(
    id: &IdentityView,
    now: i64,
    parse: &dyn Fn(&str) -> Option<i64>,
) -> Result<(), IdentityFailure> {
    check_shape(id)?;
    if !id.verified {
        return Err(fail("unverified", "Identity is not host-verified"));
    }
    let time = |f: &Field| f.text().and_then(parse);
    if !id.revoked_at.is_absent() {
        match time(&id.revoked_at) {
            None => return Err(fail("invalid_revoked_at", "Identity revokedAt is invalid")),
            Some(t) if t <= now => return Err(fail("revoked", "Identity has been revoked")),
            Some(_) => {}
        }
    }
    if !id.expires_at.is_absent() {
        match time(&id.expires_at) {
            None => return Err(fail("invalid_expires_at", "Identity expiresAt is invalid")),
            Some(t) if t <= now => return Err(fail("expired", "Identity has expired")),
            Some(_) => {}
        }
    }
    match time(&id.issued_at) {
        None => Err(fail("invalid_issued_at", "Identity issuedAt is invalid")),
        Some(t) if t > now + ISSUED_AT_SKEW_MS => Err(fail(
            "invalid_issued_at",
            "Identity issuedAt is in the future",
        )),
        Some(_) => Ok(()),
    }
}

/// Checks that each field the ownership sets equals the identity's (the identity must be active too).
pub fn check_matches_ownership(
    id: &IdentityView,
    ownership: &OwnershipView,
    now: i64,
    parse: &dyn Fn(&str) -> Option<i64>,
) -> Result<(), IdentityFailure> {
    check_active(id, now, parse)?;
    if !ownership.tenant_id.is_absent() && ownership.tenant_id != id.tenant_id {
        return Err(fail(
            "ownership_tenant",
            "Ownership tenant conflicts with identity",
        ));
    }
    if !ownership.account_id.is_absent() && ownership.account_id != id.account_id {
        return Err(fail(
            "ownership_account",
            "Ownership account conflicts with identity",
        ));
    }
    if !ownership.user_id.is_absent() && ownership.user_id != id.user_id {
        return Err(fail(
            "ownership_user",
            "Ownership user conflicts with identity",
        ));
    }
    Ok(())
}

/// `ownershipFromIdentity`: the identity's tenant, account and user as an ownership scope.
pub fn ownership_from_identity(id: &IdentityView) -> OwnershipView {
    OwnershipView {
        tenant_id: id.tenant_id.clone(),
        account_id: id.account_id.clone(),
        user_id: id.user_id.clone(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::effects::time::parse_iso_strict;

    pub fn identity() -> IdentityView {
        IdentityView {
            tenant_id: "tenant".into(),
            principal: Some(PrincipalView {
                kind: "service".into(),
                id: "svc".into(),
                ..Default::default()
            }),
            scopes: Some(vec!["tools:execute".into()]),
            issued_at: "2026-01-01T00:00:00.000Z".into(),
            verified: true,
            ..Default::default()
        }
    }

    const NOW: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    fn active(id: &IdentityView) -> Result<(), &'static str> {
        check_active(id, NOW, &parse_iso_strict).map_err(|f| f.reason)
    }

    #[test]
    fn an_active_identity_passes_and_each_defect_is_named() {
        assert_eq!(active(&identity()), Ok(()));
        assert_eq!(
            active(&IdentityView {
                verified: false,
                ..identity()
            }),
            Err("unverified")
        );
        assert_eq!(
            active(&IdentityView {
                issued_at: "soon".into(),
                ..identity()
            }),
            Err("invalid_issued_at")
        );
        assert_eq!(
            active(&IdentityView {
                issued_at: "2026-01-01T00:00:59Z".into(),
                ..identity()
            }),
            Ok(())
        );
        assert_eq!(
            active(&IdentityView {
                issued_at: "2026-01-01T00:01:01Z".into(),
                ..identity()
            }),
            Err("invalid_issued_at")
        );
        assert_eq!(
            active(&IdentityView {
                expires_at: "2026-01-01T00:00:00Z".into(),
                ..identity()
            }),
            Err("expired")
        );
        assert_eq!(
            active(&IdentityView {
                expires_at: "2026-01-02".into(),
                ..identity()
            }),
            Ok(())
        );
        assert_eq!(
            active(&IdentityView {
                revoked_at: "2025-12-31".into(),
                ..identity()
            }),
            Err("revoked")
        );
        assert_eq!(
            active(&IdentityView {
                revoked_at: Field::Invalid,
                ..identity()
            }),
            Err("invalid_revoked_at")
        );
        assert_eq!(
            active(&IdentityView {
                tenant_id: "".into(),
                ..identity()
            }),
            Err("missing_tenant")
        );
        assert_eq!(
            active(&IdentityView {
                principal: None,
                ..identity()
            }),
            Err("missing_principal")
        );
        assert_eq!(
            active(&IdentityView {
                scopes: Some(vec![]),
                ..identity()
            }),
            Err("empty_scopes")
        );
        assert_eq!(
            active(&IdentityView {
                metadata_bytes: Some(Some(5000)),
                ..identity()
            }),
            Err("metadata_too_large")
        );
    }

    #[test]
    fn ownership_matches_field_by_field() {
        let id = IdentityView {
            account_id: "acct".into(),
            ..identity()
        };
        let check = |o: OwnershipView| {
            check_matches_ownership(&id, &o, NOW, &parse_iso_strict).map_err(|f| f.reason)
        };
        assert_eq!(check(OwnershipView::default()), Ok(()));
        assert_eq!(
            check(OwnershipView {
                tenant_id: "tenant".into(),
                account_id: "acct".into(),
                ..Default::default()
            }),
            Ok(())
        );
        assert_eq!(
            check(OwnershipView {
                tenant_id: "other".into(),
                ..Default::default()
            }),
            Err("ownership_tenant")
        );
        assert_eq!(
            check(OwnershipView {
                account_id: "x".into(),
                ..Default::default()
            }),
            Err("ownership_account")
        );
        assert_eq!(
            check(OwnershipView {
                user_id: "u".into(),
                ..Default::default()
            }),
            Err("ownership_user")
        );
        assert_eq!(
            ownership_from_identity(&id).account_id,
            Field::Text("acct".into())
        );
    }
}
