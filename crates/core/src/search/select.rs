//! Progressive disclosure: which of the input tools to send this turn. Fail closed: whenever the
//! selection cannot be made (too many tools, an entry without a name, an internal error in the
//! caller), everything is disclosed; the result is never empty and never names a tool outside
//! the input list.

use std::collections::HashSet;

use super::{SearchIndex, MAX_ACTIVATED_NAMES, MAX_INDEXED_TOOLS, SEARCH_TOOLS_NAME};

#[derive(Debug, PartialEq, Eq)]
pub enum Disclosure {
    /// Send the whole input list.
    All,
    /// Send these input positions (ascending: input order).
    Some(Vec<usize>),
}

/// The last `MAX_ACTIVATED_NAMES` distinct names of `activated` (the newest are kept).
pub fn recent_activated<'a>(activated: &[&'a str]) -> Vec<&'a str> {
    let mut seen = HashSet::new();
    let mut out: Vec<&str> = Vec::new();
    for name in activated.iter().rev() {
        if out.len() == MAX_ACTIVATED_NAMES {
            break;
        }
        if seen.insert(*name) {
            out.push(name);
        }
    }
    out.reverse();
    out
}

/// Adds `names` to an activation list: duplicates move to the end (newest), and only the newest
/// `MAX_ACTIVATED_NAMES` are kept.
pub fn activate(current: &[&str], names: &[&str]) -> Vec<String> {
    let mut all: Vec<&str> = Vec::with_capacity(current.len() + names.len());
    all.extend_from_slice(current);
    all.extend_from_slice(names);
    recent_activated(&all)
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// Chooses the tools for one turn.
///
/// `names[i]` is the name of input entry `i` (`None` when the entry has no string name, which
/// discloses everything). The chosen set is the top `top_k` tools of `index` for `input` (the
/// `search_tools` tool itself takes no slot), plus the activated names, plus `search_tools`.
pub fn disclose(
    names: &[Option<&str>],
    index: &SearchIndex,
    input: &str,
    top_k: usize,
    activated: &[&str],
) -> Disclosure {
    // The default cap, or the size of an index built with a larger `maxTools` over this list.
    if names.len() > MAX_INDEXED_TOOLS.max(index.size()) || names.iter().any(Option::is_none) {
        return Disclosure::All;
    }
    let mut chosen: HashSet<&str> = HashSet::new();
    chosen.insert(SEARCH_TOOLS_NAME);
    for a in recent_activated(activated) {
        chosen.insert(a);
    }
    if top_k > 0 {
        let (_, hits) = index.search(input, top_k + 1);
        for hit in hits
            .iter()
            .filter(|h| index.name(h.doc) != SEARCH_TOOLS_NAME)
            .take(top_k)
        {
            chosen.insert(index.name(hit.doc));
        }
    }
    let picked: Vec<usize> = names
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.filter(|n| chosen.contains(n)).map(|_| i))
        .collect();
    if picked.is_empty() {
        Disclosure::All
    } else {
        Disclosure::Some(picked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::{Scoring, ToolText};

    fn index(tools: &[(&str, &str)]) -> SearchIndex {
        SearchIndex::build(
            tools.iter().map(|(n, d)| ToolText {
                name: n,
                description: d,
                parameters: "",
            }),
            Scoring::DEFAULT,
        )
    }

    const TOOLS: &[(&str, &str)] = &[
        ("create_issue", "Create a new issue"),
        ("list_branches", "List branches in a repository"),
        ("search_tools", "Search the tools"),
        ("get_weather", "Current weather for a city"),
    ];

    fn names() -> Vec<Option<&'static str>> {
        TOOLS.iter().map(|(n, _)| Some(*n)).collect()
    }

    #[test]
    fn picks_top_k_plus_activated_plus_search_tools_in_input_order() {
        let idx = index(TOOLS);
        assert_eq!(
            disclose(
                &names(),
                &idx,
                "what's the weather in Paris",
                1,
                &["create_issue"]
            ),
            Disclosure::Some(vec![0, 2, 3])
        );
    }

    #[test]
    fn search_tools_takes_no_top_k_slot() {
        let idx = index(TOOLS);
        assert_eq!(
            disclose(&names(), &idx, "search tools for branches", 1, &[]),
            Disclosure::Some(vec![1, 2])
        );
    }

    #[test]
    fn activated_names_outside_the_input_are_inert() {
        let idx = index(TOOLS);
        assert_eq!(
            disclose(&names(), &idx, "", 16, &["delete_everything"]),
            Disclosure::Some(vec![2])
        );
    }

    #[test]
    fn fails_closed_to_everything() {
        let idx = index(&TOOLS[..2]);
        let two: Vec<Option<&str>> = vec![Some("create_issue"), Some("list_branches")];
        // Nothing matched, nothing activated, no search_tools in the list: never zero tools.
        assert_eq!(disclose(&two, &idx, "", 16, &[]), Disclosure::All);
        assert_eq!(
            disclose(&[Some("create_issue"), None], &idx, "issue", 16, &[]),
            Disclosure::All
        );
        let many: Vec<Option<&str>> = (0..MAX_INDEXED_TOOLS + 1).map(|_| Some("x")).collect();
        assert_eq!(disclose(&many, &idx, "issue", 16, &[]), Disclosure::All);
    }

    #[test]
    fn a_list_past_the_default_cap_is_disclosed_in_part_through_an_index_over_it() {
        let owned: Vec<(String, String)> = (0..3000)
            .map(|i| (format!("tool_{i}"), format!("Does thing number w{i}")))
            .collect();
        let tools: Vec<(&str, &str)> = owned
            .iter()
            .map(|(n, d)| (n.as_str(), d.as_str()))
            .collect();
        let idx = index(&tools);
        let names: Vec<Option<&str>> = tools.iter().map(|(n, _)| Some(*n)).collect();
        assert_eq!(
            disclose(&names, &idx, "w2999", 1, &[]),
            Disclosure::Some(vec![2999])
        );
        // A longer list than the index covers still fails closed.
        let mut more = names.clone();
        more.push(Some("extra"));
        assert_eq!(disclose(&more, &idx, "w2999", 1, &[]), Disclosure::All);
    }

    #[test]
    fn activation_keeps_the_newest_128_distinct_names() {
        let names: Vec<String> = (0..200).map(|i| format!("t{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let out = activate(&[], &refs);
        assert_eq!(out.len(), MAX_ACTIVATED_NAMES);
        assert_eq!(out[0], "t72");
        assert_eq!(out[127], "t199");
        let again = activate(&["a", "b", "c"], &["a"]);
        assert_eq!(again, ["b", "c", "a"]);
    }
}
