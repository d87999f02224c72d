//! Static permission and trust policies: exact-name allow/deny lists with a default.
//!
//! An entry matches a request when it equals the target name (`"echo"`) or the full key
//! `<kind>:<target>:<action>` (`"tool:echo:execute"`, the form `@arnilo/prism` uses). A deny entry
//! always wins. Names in neither list get `default`: given explicitly, or "allow" when the allow list
//! is empty and "deny" when it is not.

use std::collections::HashSet;

/// The verdict of a static list for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed (listed, or by default).
    Allowed,
    /// Named by the deny list.
    Denied,
    /// In neither list and the default refuses (an allow list exists, or `defaultDecision` says so).
    NotAllowed,
}

/// Exact-name lists with a default decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticLists {
    allow: HashSet<String>,
    deny: HashSet<String>,
    default_allow: bool,
    /// Whether any entry is a full key (contains `:`); if not, the key is never built for matching.
    keyed: bool,
}

impl StaticLists {
    /// `default_allow`: `None` means "allow when `allow` is empty, deny otherwise".
    pub fn new(allow: Vec<String>, deny: Vec<String>, default_allow: Option<bool>) -> Self {
        let keyed = allow.iter().chain(deny.iter()).any(|e| e.contains(':'));
        let allow: HashSet<String> = allow.into_iter().collect();
        let deny: HashSet<String> = deny.into_iter().collect();
        let default_allow = default_allow.unwrap_or(allow.is_empty());
        StaticLists {
            allow,
            deny,
            default_allow,
            keyed,
        }
    }

    /// Decides for `target`; `key` is the full `<kind>:<target>:<action>` key, built only if needed.
    pub fn decide(&self, target: &str, key: impl FnOnce() -> String) -> Verdict {
        let key = if self.keyed { Some(key()) } else { None };
        let listed = |set: &HashSet<String>| {
            set.contains(target) || key.as_ref().is_some_and(|k| set.contains(k))
        };
        if listed(&self.deny) {
            Verdict::Denied
        } else if listed(&self.allow) || self.default_allow {
            Verdict::Allowed
        } else {
            Verdict::NotAllowed
        }
    }
}

/// Parses a `defaultDecision` value: `Some(true)` allows, `Some(false)` refuses, `Err` names the
/// accepted values.
pub fn parse_default(value: Option<&str>, allow: &str, deny: &str) -> Result<Option<bool>, String> {
    match value {
        None => Ok(None),
        Some(v) if v == allow => Ok(Some(true)),
        Some(v) if v == deny => Ok(Some(false)),
        Some(_) => Err(format!("defaultDecision must be \"{allow}\" or \"{deny}\"")),
    }
}

/// `Permission denied: <key>` / `Permission not allowed: <key>`, as `@arnilo/prism` words them.
pub fn permission_reason(verdict: Verdict, key: &str) -> Option<String> {
    match verdict {
        Verdict::Allowed => None,
        Verdict::Denied => Some(format!("Permission denied: {key}")),
        Verdict::NotAllowed => Some(format!("Permission not allowed: {key}")),
    }
}

/// `Untrusted <kind>: <target>` for both refusals (the message `TrustDeniedError` uses by default).
pub fn trust_reason(verdict: Verdict, kind: &str, target: &str) -> Option<String> {
    match verdict {
        Verdict::Allowed => None,
        Verdict::Denied | Verdict::NotAllowed => Some(format!("Untrusted {kind}: {target}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lists(allow: &[&str], deny: &[&str], default_allow: Option<bool>) -> StaticLists {
        StaticLists::new(
            allow.iter().map(|s| s.to_string()).collect(),
            deny.iter().map(|s| s.to_string()).collect(),
            default_allow,
        )
    }

    fn key(t: &str) -> impl FnOnce() -> String + '_ {
        move || format!("tool:{t}:execute")
    }

    #[test]
    fn empty_lists_allow_everything_by_default() {
        let l = lists(&[], &[], None);
        assert_eq!(l.decide("echo", key("echo")), Verdict::Allowed);
    }

    #[test]
    fn an_allow_list_refuses_names_outside_it() {
        let l = lists(&["echo"], &[], None);
        assert_eq!(l.decide("echo", key("echo")), Verdict::Allowed);
        assert_eq!(l.decide("rm", key("rm")), Verdict::NotAllowed);
    }

    #[test]
    fn deny_wins_over_allow() {
        let l = lists(&["echo"], &["echo"], Some(true));
        assert_eq!(l.decide("echo", key("echo")), Verdict::Denied);
    }

    #[test]
    fn explicit_default_overrides_the_implicit_one() {
        assert_eq!(
            lists(&[], &[], Some(false)).decide("x", key("x")),
            Verdict::NotAllowed
        );
        assert_eq!(
            lists(&["a"], &[], Some(true)).decide("x", key("x")),
            Verdict::Allowed
        );
    }

    #[test]
    fn full_keys_match_like_prism() {
        let l = lists(&["tool:echo:execute"], &["tool:rm:execute"], None);
        assert_eq!(l.decide("echo", key("echo")), Verdict::Allowed);
        assert_eq!(l.decide("rm", key("rm")), Verdict::Denied);
        assert_eq!(l.decide("ls", key("ls")), Verdict::NotAllowed);
    }

    #[test]
    fn names_are_exact() {
        let l = lists(&["echo"], &[], None);
        assert_eq!(l.decide("Echo", key("Echo")), Verdict::NotAllowed);
        assert_eq!(l.decide("echo ", key("echo ")), Verdict::NotAllowed);
    }

    #[test]
    fn the_key_is_not_built_without_keyed_entries() {
        let l = lists(&["echo"], &[], None);
        assert_eq!(l.decide("echo", || panic!("key built")), Verdict::Allowed);
    }

    #[test]
    fn parses_default_decisions() {
        assert_eq!(parse_default(None, "allow", "deny"), Ok(None));
        assert_eq!(
            parse_default(Some("allow"), "allow", "deny"),
            Ok(Some(true))
        );
        assert_eq!(
            parse_default(Some("deny"), "allow", "deny"),
            Ok(Some(false))
        );
        assert_eq!(
            parse_default(Some("maybe"), "allow", "deny"),
            Err("defaultDecision must be \"allow\" or \"deny\"".to_owned())
        );
    }

    #[test]
    fn reasons_follow_prism_wording() {
        assert_eq!(permission_reason(Verdict::Allowed, "tool:a:execute"), None);
        assert_eq!(
            permission_reason(Verdict::Denied, "tool:a:execute").unwrap(),
            "Permission denied: tool:a:execute"
        );
        assert_eq!(
            permission_reason(Verdict::NotAllowed, "tool:a:execute").unwrap(),
            "Permission not allowed: tool:a:execute"
        );
        assert_eq!(
            trust_reason(Verdict::NotAllowed, "tool", "a").unwrap(),
            "Untrusted tool: a"
        );
    }
}
