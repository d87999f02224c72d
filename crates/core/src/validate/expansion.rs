//! A budget on `$ref` expansion: how many times references would be followed if the schema were
//! written out in full. Each level of `{"oneOf": [{"$ref": next}, {"$ref": next}]}` doubles it, so
//! sixty such levels (under the `maxSchemaRefs` cap) describe 2^60 expansions, which compiling and
//! validating would walk on the JS thread where no abort can stop them. Such a schema is refused
//! before compiling.
//!
//! The count is computed once per schema node (memoised by address), so the check itself is linear
//! in the schema. A reference back to a schema on the current path (recursion, which descends into
//! the arguments and is bounded by their depth) counts once and is not followed again.

use std::collections::{HashMap, HashSet};

use jsonschema::Draft;
use serde_json::Value;

use super::refs::Resolver;
use super::Issue;

/// The most `$ref` expansions a schema may describe. Compiling and validating a schema right at
/// the budget takes about 60 ms (a 2^14 chain, 32 767 expansions, takes 90 ms).
pub const MAX_REF_EXPANSIONS: u64 = 20_000;

/// Keywords whose value is plain data, never a subschema.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "examples", "required"];
/// Keywords whose value maps names to subschemas (`$defs` and `definitions` are reached only
/// through references, where the target itself is the subschema).
const NAME_MAPS: [&str; 4] = [
    "properties",
    "patternProperties",
    "dependentSchemas",
    "dependencies",
];

type Addr = *const Value;

struct Frame<'s> {
    node: &'s Value,
    children: Vec<(&'s Value, bool)>,
    next: usize,
    sum: u64,
}

/// The subschemas of `node` (JSON children that hold schemas) and the targets of its references,
/// each marked `true` when reached through a reference.
fn children<'s>(
    node: &'s Value,
    names: bool,
    resolver: &mut Resolver<'s>,
    root: &'s Value,
    targets: &mut HashMap<Addr, Option<&'s Value>>,
) -> Vec<(&'s Value, bool)> {
    let mut out = Vec::new();
    match node {
        Value::Object(map) => {
            for (k, v) in map {
                if names {
                    if v.is_object() || v.is_array() {
                        out.push((v, false));
                    }
                    continue;
                }
                match k.as_str() {
                    "$ref" | "$dynamicRef" | "$recursiveRef" => {
                        if let Value::String(r) = v {
                            let target = *targets.entry(v as Addr).or_insert_with(|| {
                                resolver.resolve(r).and_then(|ptr| root.pointer(&ptr))
                            });
                            if let Some(t) = target {
                                out.push((t, true));
                            }
                        }
                    }
                    k if DATA_KEYWORDS.contains(&k) => {}
                    // Definitions apply only where a reference reaches them.
                    "$defs" | "definitions" => {}
                    _ => {
                        if v.is_object() || v.is_array() {
                            out.push((v, false));
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            out.extend(
                items
                    .iter()
                    .filter(|v| v.is_object() || v.is_array())
                    .map(|v| (v, false)),
            );
        }
        _ => {}
    }
    out
}

/// Whether the object `child` of `parent` under key `key` maps names to subschemas.
fn is_name_map(parent: &Value, child: &Value) -> bool {
    let Value::Object(map) = parent else {
        return false;
    };
    map.iter()
        .any(|(k, v)| std::ptr::eq(v, child) && NAME_MAPS.contains(&k.as_str()) && v.is_object())
}

/// The number of `$ref` expansions the schema describes, or an issue naming the budget as soon
/// as it passes `budget`.
pub fn check_expansions(root: &Value, budget: u64, draft: Draft) -> Result<u64, Issue> {
    let refused = || {
        Issue::whole(format!(
            "schema $ref expansion exceeds the budget of {budget} expansions (references that branch \
             at every level describe exponentially many schemas); share fewer references or flatten the schema"
        ))
    };
    let mut resolver = Resolver::new(root, draft);
    let mut targets: HashMap<Addr, Option<&Value>> = HashMap::new();
    let mut memo: HashMap<Addr, u64> = HashMap::new();
    let mut on_path: HashSet<Addr> = HashSet::new();
    let first = children(root, false, &mut resolver, root, &mut targets);
    on_path.insert(root as Addr);
    let mut stack = vec![Frame {
        node: root,
        children: first,
        next: 0,
        sum: 0,
    }];
    while let Some(top) = stack.last_mut() {
        if top.next < top.children.len() {
            let (child, via_ref) = top.children[top.next];
            top.next += 1;
            let addr = child as Addr;
            let own = u64::from(via_ref);
            if on_path.contains(&addr) {
                top.sum = top.sum.saturating_add(own);
            } else if let Some(&m) = memo.get(&addr) {
                top.sum = top.sum.saturating_add(own).saturating_add(m);
            } else {
                top.sum = top.sum.saturating_add(own);
                // Name maps are told apart by the key their parent holds them under.
                let names = !via_ref && is_name_map(top.node, child);
                let grandchildren = children(child, names, &mut resolver, root, &mut targets);
                on_path.insert(addr);
                stack.push(Frame {
                    node: child,
                    children: grandchildren,
                    next: 0,
                    sum: 0,
                });
                continue;
            }
            if top.sum > budget {
                return Err(refused());
            }
        } else {
            let done = stack.pop().expect("the loop checked the stack");
            let addr = done.node as Addr;
            on_path.remove(&addr);
            memo.insert(addr, done.sum);
            match stack.last_mut() {
                Some(parent) => {
                    parent.sum = parent.sum.saturating_add(done.sum);
                    if parent.sum > budget {
                        return Err(refused());
                    }
                }
                None => return Ok(done.sum),
            }
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chain(levels: usize) -> Value {
        let mut defs = serde_json::Map::new();
        for i in 0..levels {
            defs.insert(
                format!("d{i}"),
                json!({"oneOf": [{"$ref": format!("#/$defs/d{}", i + 1)}, {"$ref": format!("#/$defs/d{}", i + 1)}]}),
            );
        }
        defs.insert(format!("d{levels}"), json!({"type": "string"}));
        json!({"$defs": defs, "properties": {"a": {"$ref": "#/$defs/d0"}}})
    }

    #[test]
    fn counts_each_place_a_reference_is_reached() {
        assert_eq!(
            check_expansions(&json!({"type": "object"}), 10, Draft::Draft202012),
            Ok(0)
        );
        // root → a (1), and d0 → d1 twice (2, each time d1 → d2 twice: 4) = 1 + 2 + 4.
        assert_eq!(
            check_expansions(&chain(2), 1_000, Draft::Draft202012),
            Ok(7)
        );
        assert_eq!(
            check_expansions(&chain(10), 1_000_000, Draft::Draft202012),
            Ok(2_047)
        );
    }

    #[test]
    fn an_exponential_chain_is_refused_quickly() {
        let e = check_expansions(&chain(60), MAX_REF_EXPANSIONS, Draft::Draft202012).unwrap_err();
        assert!(e.message.contains("budget of 20000"), "{}", e.message);
        assert!(check_expansions(&chain(13), MAX_REF_EXPANSIONS, Draft::Draft202012).is_ok());
        assert!(check_expansions(&chain(14), MAX_REF_EXPANSIONS, Draft::Draft202012).is_err());
    }

    #[test]
    fn recursion_counts_once() {
        let tree = json!({"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}});
        assert_eq!(check_expansions(&tree, 10, Draft::Draft202012), Ok(1));
        // A property named like a data keyword is still a subschema.
        let s = json!({"$defs": {"s": {"type": "string"}}, "properties": {"enum": {"$ref": "#/$defs/s"}}});
        assert_eq!(check_expansions(&s, 10, Draft::Draft202012), Ok(1));
    }
}
