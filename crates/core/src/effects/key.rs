//! Store keys: a `ToolEffectKey` as the host gave it, and the same key validated — its identity
//! owning its ownership, every field bounded — with the storage id and digest a record is found by.

use super::error::{EffectError, EffectErrorCode, StoreError};
use super::identity::{check_matches_ownership, Field, IdentityView, OwnershipView};
use super::record::EffectKey;
use super::store::{MAX_EFFECT_KEY_BYTES, MAX_IDENTIFIER_BYTES, MAX_TOOL_NAME_BYTES};
use sha2::Digest;
use std::sync::Arc;

/// `ToolEffectKey` as read from the host: its identity and its other fields.
#[derive(Debug, Clone, Default)]
pub struct KeyInput {
    pub identity: IdentityView,
    pub parts: KeyParts,
}

/// A key whose identity, ownership and fields passed validation.
#[derive(Debug, Clone)]
pub struct ValidKey {
    /// The record's identity in storage: tenant, account, user, principal and key as a JSON array.
    pub storage_id: String,
    /// SHA-256 of `storage_id`: the memory store's map key (32 bytes in the table, no allocation).
    pub storage_digest: [u8; 32],
    /// The fields a record of this key holds, shared with the record a claim makes (a new record
    /// takes a reference, not a copy of nine strings).
    pub key: Arc<EffectKey>,
}

/// An exact ownership (tenant, optional account, optional user).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub tenant_id: String,
    pub account_id: Option<String>,
    pub user_id: Option<String>,
}

/// `f`'s text when it is a bounded store field: non-blank, at most `max` bytes, no NUL.
fn bounded(f: &Field, max: usize, label: &str) -> Result<(), EffectError> {
    match f.text() {
        // Refused in every store alike: PostgreSQL's text cannot hold NUL, and a store must not
        // answer one way for memory and another (an unknown outcome) for PostgreSQL.
        Some(s) if s.contains('\0') => Err(EffectError::limit(format!(
            "{label} must not contain NUL (U+0000)"
        ))),
        Some(s) if !s.trim().is_empty() && s.len() <= max => Ok(()),
        _ => Err(EffectError::limit(format!(
            "{label} is required and bounded"
        ))),
    }
}

pub(super) fn bounded_text(f: &Field, max: usize, label: &str) -> Result<String, EffectError> {
    bounded(f, max, label)?;
    Ok(f.text().unwrap_or_default().to_owned())
}

/// [`bounded_text`] keeping the field's own string.
fn take_bounded(f: Field, max: usize, label: &str) -> Result<String, EffectError> {
    bounded(&f, max, label)?;
    Ok(f.into_text().unwrap_or_default())
}

pub(super) fn optional_text(
    f: &Field,
    max: usize,
    label: &str,
) -> Result<Option<String>, EffectError> {
    match f {
        Field::Absent => Ok(None),
        _ => bounded_text(f, max, label).map(Some),
    }
}

/// [`optional_text`] keeping the field's own string.
fn take_optional(f: Field, max: usize, label: &str) -> Result<Option<String>, EffectError> {
    match f {
        Field::Absent => Ok(None),
        _ => take_bounded(f, max, label).map(Some),
    }
}

pub(super) fn owner_of(o: OwnershipView) -> Result<Owner, EffectError> {
    if o.tenant_id.text().is_none_or(|t| t.trim().is_empty()) {
        return Err(EffectError::new(
            EffectErrorCode::Conflict,
            "tool effect ownership is required",
        ));
    }
    Ok(Owner {
        tenant_id: take_bounded(o.tenant_id, MAX_IDENTIFIER_BYTES, "ownership")?,
        account_id: take_optional(o.account_id, MAX_IDENTIFIER_BYTES, "ownership")?,
        user_id: take_optional(o.user_id, MAX_IDENTIFIER_BYTES, "ownership")?,
    })
}

/// Validates a key: the identity is active and owns exactly this ownership, every field is bounded.
pub fn validate_key(
    input: &KeyInput,
    now: i64,
    parse: &dyn Fn(&str) -> Option<i64>,
) -> Result<ValidKey, StoreError> {
    check_matches_ownership(&input.identity, &input.parts.ownership, now, parse)?;
    key_fields(&input.identity, input.parts.clone())
}

/// A key's fields besides its identity, given by value: a valid key keeps their strings.
#[derive(Debug, Clone, Default)]
pub struct KeyParts {
    pub ownership: OwnershipView,
    pub key: Field,
    pub session_id: Field,
    pub run_id: Field,
    pub tool_call_id: Field,
    pub tool_name: Field,
    pub arguments_hash: Field,
}

/// The key's fields bounded and its ownership equal to `id`'s, without the identity's activity
/// check (which depends on the time and is repeated at every transition).
pub fn key_fields(id: &IdentityView, parts: KeyParts) -> Result<ValidKey, StoreError> {
    let owner = owner_of(parts.ownership)?;
    if Some(owner.tenant_id.as_str()) != id.tenant_id.text()
        || owner.account_id.as_deref() != id.account_id.text()
        || owner.user_id.as_deref() != id.user_id.text()
    {
        return Err(EffectError::conflict().into());
    }
    let key = take_bounded(parts.key, MAX_EFFECT_KEY_BYTES, "effect key")?;
    let session_id = take_bounded(parts.session_id, MAX_IDENTIFIER_BYTES, "session id")?;
    let run_id = take_bounded(parts.run_id, MAX_IDENTIFIER_BYTES, "run id")?;
    let tool_call_id = take_bounded(parts.tool_call_id, MAX_IDENTIFIER_BYTES, "tool call id")?;
    let tool_name = take_bounded(parts.tool_name, MAX_TOOL_NAME_BYTES, "tool name")?;
    let arguments_hash = match parts.arguments_hash {
        Field::Text(h)
            if h.len() == 64
                && h.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) =>
        {
            h
        }
        _ => return Err(EffectError::limit("arguments hash is invalid").into()),
    };
    let principal = id
        .principal
        .as_ref()
        .and_then(|p| p.id.text())
        .unwrap_or_default();
    let mut storage_id = String::with_capacity(64 + key.len());
    storage_id.push('[');
    for (i, part) in [
        owner.tenant_id.as_str(),
        owner.account_id.as_deref().unwrap_or(""),
        owner.user_id.as_deref().unwrap_or(""),
        principal,
        key.as_str(),
    ]
    .iter()
    .enumerate()
    {
        if i > 0 {
            storage_id.push(',');
        }
        super::canonical::write_json_string(part, &mut storage_id);
    }
    storage_id.push(']');
    let storage_digest = sha2::Sha256::digest(storage_id.as_bytes()).into();
    Ok(ValidKey {
        storage_id,
        storage_digest,
        key: Arc::new(EffectKey::new([
            Some(&owner.tenant_id),
            owner.account_id.as_deref(),
            owner.user_id.as_deref(),
            Some(&key),
            Some(&session_id),
            Some(&run_id),
            Some(&tool_call_id),
            Some(&tool_name),
            Some(&arguments_hash),
        ])),
    })
}
