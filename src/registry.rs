//! The registry index: exact tool names to insertion-ordered slots, with the duplicate policy.
//! Plain Rust: the JS tool objects themselves stay in a JS array the binding owns; this index
//! only maps names to positions in it.

use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DuplicatePolicy {
    /// A second registration replaces the first in place (its position in `list()` is kept).
    Replace,
    /// A second registration is refused with `Duplicate tool: <name>`.
    Error,
}

impl DuplicatePolicy {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "replace" => Some(Self::Replace),
            "error" => Some(Self::Error),
            _ => None,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct DuplicateTool(pub String);

impl std::fmt::Display for DuplicateTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Duplicate tool: {}", self.0)
    }
}

/// Where a registration landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Appended(usize),
    Replaced(usize),
}

#[derive(Debug, Default)]
pub struct RegistryIndex {
    names: Vec<String>,
    slots: HashMap<String, usize>,
}

impl RegistryIndex {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn register(
        &mut self,
        name: &str,
        policy: DuplicatePolicy,
    ) -> Result<Placement, DuplicateTool> {
        if let Some(&slot) = self.slots.get(name) {
            return match policy {
                DuplicatePolicy::Replace => Ok(Placement::Replaced(slot)),
                DuplicatePolicy::Error => Err(DuplicateTool(name.to_owned())),
            };
        }
        let slot = self.names.len();
        self.names.push(name.to_owned());
        self.slots.insert(name.to_owned(), slot);
        Ok(Placement::Appended(slot))
    }

    #[inline]
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.slots.get(name).copied()
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    #[cfg(test)]
    pub fn names(&self) -> &[String] {
        &self.names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_keeps_the_first_position() {
        let mut r = RegistryIndex::new();
        assert_eq!(
            r.register("a", DuplicatePolicy::Replace),
            Ok(Placement::Appended(0))
        );
        assert_eq!(
            r.register("b", DuplicatePolicy::Replace),
            Ok(Placement::Appended(1))
        );
        assert_eq!(
            r.register("a", DuplicatePolicy::Replace),
            Ok(Placement::Replaced(0))
        );
        assert_eq!(r.names(), &["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn error_policy_refuses_shadowing() {
        let mut r = RegistryIndex::new();
        r.register("a", DuplicatePolicy::Error).unwrap();
        let err = r.register("a", DuplicatePolicy::Error).unwrap_err();
        assert_eq!(err.to_string(), "Duplicate tool: a");
        assert_eq!(r.len(), 1);
    }

    #[test]
    fn lookup_is_exact() {
        let mut r = RegistryIndex::new();
        r.register("Echo", DuplicatePolicy::Replace).unwrap();
        assert_eq!(r.slot("Echo"), Some(0));
        assert_eq!(r.slot("echo"), None);
        assert_eq!(r.slot("Echo "), None);
    }
}
