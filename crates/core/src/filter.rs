//! Exact allow/deny filtering. A tool survives when no rule denies its exact name and every rule
//! with a non-empty `allow` lists its exact name. Nothing is normalised: names match byte for byte.

use std::collections::HashSet;

#[derive(Debug, Default, Clone)]
pub struct FilterRule {
    /// `None` when the rule has no allow restriction (missing or empty list).
    pub allow: Option<HashSet<String>>,
    pub deny: HashSet<String>,
}

impl FilterRule {
    pub fn new(allow: Vec<String>, deny: Vec<String>) -> Self {
        FilterRule {
            allow: if allow.is_empty() {
                None
            } else {
                Some(allow.into_iter().collect())
            },
            deny: deny.into_iter().collect(),
        }
    }
}

/// One filter or an ordered list of them, compiled to hash sets.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub rules: Vec<FilterRule>,
}

impl Filter {
    pub fn permits(&self, name: &str) -> bool {
        self.rules.iter().all(|rule| {
            !rule.deny.contains(name)
                && rule.allow.as_ref().is_none_or(|allow| allow.contains(name))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(allow: &[&str], deny: &[&str]) -> FilterRule {
        FilterRule::new(
            allow.iter().map(|s| s.to_string()).collect(),
            deny.iter().map(|s| s.to_string()).collect(),
        )
    }

    #[test]
    fn deny_wins_over_allow() {
        let f = Filter {
            rules: vec![rule(&["a", "b"], &["b"])],
        };
        assert!(f.permits("a"));
        assert!(!f.permits("b"));
        assert!(!f.permits("c"));
    }

    #[test]
    fn empty_allow_means_no_restriction() {
        let f = Filter {
            rules: vec![rule(&[], &["x"])],
        };
        assert!(f.permits("anything"));
        assert!(!f.permits("x"));
        assert!(Filter::default().permits("x"));
    }

    #[test]
    fn every_non_empty_allow_must_list_the_tool() {
        let f = Filter {
            rules: vec![
                rule(&["a", "b"], &[]),
                rule(&["b", "c"], &[]),
                rule(&[], &[]),
            ],
        };
        assert!(!f.permits("a"));
        assert!(f.permits("b"));
        assert!(!f.permits("c"));
    }

    #[test]
    fn names_match_exactly() {
        let f = Filter {
            rules: vec![rule(&["echo"], &[])],
        };
        assert!(!f.permits("Echo"));
        assert!(!f.permits("echo "));
    }
}
