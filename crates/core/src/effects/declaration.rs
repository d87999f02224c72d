//! `ToolEffectDeclaration`: `{ kind, idempotency }`.

use super::error::EffectError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectKind {
    None,
    LocalMutation,
    ExternalMutation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Idempotency {
    None,
    Optional,
    Required,
    ToolManaged,
    Unsupported,
}

/// A valid declaration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declaration {
    pub kind: EffectKind,
    pub idempotency: Idempotency,
}

/// What dispatch does with a declaration (docs/spec.md section 7, `seed/tools.md`):
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EffectPlan {
    /// No effect machinery (no declaration, `kind: "none"`, or `idempotency: "none"`).
    Unmanaged,
    /// Derive the key and hand it to the tool as `idempotencyKey`; no claim (`tool_managed`, `unsupported`).
    KeyOnly,
    /// Claim through the store when one is given; without a store, key only (`optional`).
    ClaimIfStore,
    /// Claim through the store; without a store, `ERR_PRISM_TOOL_EFFECT_REQUIRED` (`required`).
    ClaimRequired,
}

pub fn invalid_declaration() -> EffectError {
    EffectError::limit("tool effect declaration is invalid")
}

/// Parses `{ kind, idempotency }` strings; `kind: "none"` only goes with `idempotency: "none"`.
pub fn parse_declaration(
    kind: Option<&str>,
    idempotency: Option<&str>,
) -> Result<Declaration, EffectError> {
    let kind = match kind {
        Some("none") => EffectKind::None,
        Some("local_mutation") => EffectKind::LocalMutation,
        Some("external_mutation") => EffectKind::ExternalMutation,
        _ => return Err(invalid_declaration()),
    };
    let idempotency = match idempotency {
        Some("none") => Idempotency::None,
        Some("optional") => Idempotency::Optional,
        Some("required") => Idempotency::Required,
        Some("tool_managed") => Idempotency::ToolManaged,
        Some("unsupported") => Idempotency::Unsupported,
        _ => return Err(invalid_declaration()),
    };
    if kind == EffectKind::None && idempotency != Idempotency::None {
        return Err(invalid_declaration());
    }
    Ok(Declaration { kind, idempotency })
}

impl Declaration {
    pub fn plan(self) -> EffectPlan {
        match (self.kind, self.idempotency) {
            (EffectKind::None, _) | (_, Idempotency::None) => EffectPlan::Unmanaged,
            (_, Idempotency::ToolManaged | Idempotency::Unsupported) => EffectPlan::KeyOnly,
            (_, Idempotency::Optional) => EffectPlan::ClaimIfStore,
            (_, Idempotency::Required) => EffectPlan::ClaimRequired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_parse_and_plan() {
        let d = |k, i| parse_declaration(Some(k), Some(i)).map(Declaration::plan);
        assert_eq!(d("none", "none"), Ok(EffectPlan::Unmanaged));
        assert_eq!(
            d("external_mutation", "required"),
            Ok(EffectPlan::ClaimRequired)
        );
        assert_eq!(
            d("local_mutation", "optional"),
            Ok(EffectPlan::ClaimIfStore)
        );
        assert_eq!(d("local_mutation", "tool_managed"), Ok(EffectPlan::KeyOnly));
        assert_eq!(
            d("external_mutation", "unsupported"),
            Ok(EffectPlan::KeyOnly)
        );
        assert_eq!(d("external_mutation", "none"), Ok(EffectPlan::Unmanaged));
        assert!(d("none", "required").is_err());
        assert!(d("remote", "none").is_err());
        assert!(parse_declaration(None, Some("none")).is_err());
    }
}
