//! `$ref` checks that need the whole schema: targets that exist and no reference cycle that
//! would let validation loop without consuming the arguments.
//!
//! A recursive schema (a tree whose `children` items `$ref` the root) is fine: each step goes one
//! level down the arguments, whose depth is bounded. A cycle through in-place keywords only
//! (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, `dependentSchemas`) never moves
//! down the arguments, so it is refused before compiling.

use std::collections::HashMap;

use jsonschema::Draft;
use serde_json::Value;

use super::bounds::{show_ptr, SchemaFacts};
use super::Issue;

/// Decodes `%XX` escapes of a URI fragment.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The keyword that sets a schema's base URI (and, as `"#name"`, a plain-name anchor) in `draft`:
/// draft-04 spells it `id`, later drafts `$id` (where `id` is an unknown keyword, ignored).
pub(super) fn id_keyword(draft: Draft) -> &'static str {
    if draft == Draft::Draft4 {
        "id"
    } else {
        "$id"
    }
}

pub(super) struct Resolver<'s> {
    root: &'s Value,
    id: &'static str,
    anchors: Option<HashMap<String, String>>,
}

impl<'s> Resolver<'s> {
    pub(super) fn new(root: &'s Value, draft: Draft) -> Self {
        Resolver {
            root,
            id: id_keyword(draft),
            anchors: None,
        }
    }

    /// The pointer a local reference lands on, when it can be found without `$id` scoping.
    pub(super) fn resolve(&mut self, reference: &str) -> Option<String> {
        let fragment = reference.strip_prefix('#')?;
        let fragment = percent_decode(fragment);
        if fragment.is_empty() || fragment.starts_with('/') {
            return self.root.pointer(&fragment).map(|_| fragment);
        }
        let (root, id) = (self.root, self.id);
        let anchors = self
            .anchors
            .get_or_insert_with(|| collect_anchors(root, id));
        anchors.get(&fragment).cloned()
    }
}

/// `$anchor` / `$dynamicAnchor` names and draft-4/6/7 `id`/`$id: "#name"` (`id` names the
/// draft's keyword), mapped to their pointers.
fn collect_anchors(root: &Value, id: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut stack = vec![(root, String::new())];
    while let Some((v, ptr)) = stack.pop() {
        match v {
            Value::Object(map) => {
                for key in ["$anchor", "$dynamicAnchor"] {
                    if let Some(Value::String(a)) = map.get(key) {
                        out.entry(a.clone()).or_insert_with(|| ptr.clone());
                    }
                }
                if let Some(Value::String(base)) = map.get(id) {
                    if let Some(a) = base.strip_prefix('#') {
                        out.entry(a.to_owned()).or_insert_with(|| ptr.clone());
                    }
                }
                for (k, c) in map {
                    if matches!(k.as_str(), "enum" | "const" | "default" | "examples") {
                        continue;
                    }
                    stack.push((
                        c,
                        format!("{ptr}/{}", k.replace('~', "~0").replace('/', "~1")),
                    ));
                }
            }
            Value::Array(items) => {
                for (i, c) in items.iter().enumerate() {
                    stack.push((c, format!("{ptr}/{i}")));
                }
            }
            _ => {}
        }
    }
    out
}

/// Whether any subschema below the root declares its own `$id` (`id` in draft-04: a new base for
/// its `$ref`s); then references are resolved by the compiler alone.
fn has_nested_ids(root: &Value, id: &str) -> bool {
    let mut stack: Vec<&Value> = match root {
        Value::Object(m) => m.values().collect(),
        _ => return false,
    };
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                if matches!(m.get(id), Some(Value::String(base)) if !base.starts_with('#')) {
                    return true;
                }
                stack.extend(m.values());
            }
            Value::Array(a) => stack.extend(a.iter()),
            _ => {}
        }
    }
    false
}

/// The in-place children of the schema at `ptr`: subschemas applied to the same instance.
fn in_place_children(resolver: &mut Resolver<'_>, ptr: &str) -> Vec<String> {
    let Some(Value::Object(map)) = resolver.root.pointer(ptr) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (k, v) in map {
        match k.as_str() {
            "$ref" | "$dynamicRef" | "$recursiveRef" => {
                if let Value::String(r) = v {
                    if let Some(target) = resolver.resolve(r) {
                        out.push(target);
                    }
                }
            }
            "allOf" | "anyOf" | "oneOf" => {
                if let Value::Array(items) = v {
                    out.extend((0..items.len()).map(|i| format!("{ptr}/{k}/{i}")));
                }
            }
            "not" | "if" | "then" | "else" => out.push(format!("{ptr}/{k}")),
            "dependentSchemas" => {
                if let Value::Object(m) = v {
                    out.extend(m.keys().map(|name| {
                        format!("{ptr}/{k}/{}", name.replace('~', "~0").replace('/', "~1"))
                    }));
                }
            }
            _ => {}
        }
    }
    out
}

/// Refuses references to nothing and in-place reference cycles.
pub fn check_refs(root: &Value, facts: &SchemaFacts, draft: Draft) -> Result<(), Issue> {
    if facts.refs.is_empty() || has_nested_ids(root, id_keyword(draft)) {
        return Ok(());
    }
    let mut resolver = Resolver::new(root, draft);
    for (holder, reference) in &facts.refs {
        if resolver.resolve(reference).is_none() {
            return Err(Issue::whole(format!(
                "schema $ref \"{}\" at {} points to nothing in the schema",
                super::messages::clip(reference, 120),
                show_ptr(holder)
            )));
        }
    }
    // Iterative depth-first search; 1 = on the current path, 2 = done.
    let mut color: HashMap<String, u8> = HashMap::new();
    for (start, _) in &facts.refs {
        if color.contains_key(start) {
            continue;
        }
        let children = in_place_children(&mut resolver, start);
        let mut stack: Vec<(String, Vec<String>, usize)> = vec![(start.clone(), children, 0)];
        color.insert(start.clone(), 1);
        while let Some(top) = stack.last_mut() {
            if top.2 < top.1.len() {
                let child = top.1[top.2].clone();
                top.2 += 1;
                match color.get(&child) {
                    Some(1) => {
                        let mut cycle: Vec<String> = stack.iter().map(|f| show_ptr(&f.0)).collect();
                        if let Some(pos) = stack.iter().position(|f| f.0 == child) {
                            cycle.drain(..pos);
                        }
                        cycle.push(show_ptr(&child));
                        return Err(Issue::whole(format!(
                            "schema $ref cycle never reaches the arguments: {}",
                            cycle.join(" → ")
                        )));
                    }
                    Some(_) => {}
                    None => {
                        color.insert(child.clone(), 1);
                        let grandchildren = in_place_children(&mut resolver, &child);
                        stack.push((child, grandchildren, 0));
                    }
                }
            } else {
                let done = stack.pop().unwrap();
                color.insert(done.0, 2);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::bounds::check_schema;
    use crate::validate::limits::Limits;
    use serde_json::json;

    fn check(schema: Value) -> Result<(), Issue> {
        let facts = check_schema(&schema, &Limits::default())?;
        check_refs(&schema, &facts, Draft::Draft202012)
    }

    #[test]
    fn recursive_schemas_that_descend_are_fine() {
        let tree = json!({"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}});
        assert!(check(tree).is_ok());
    }

    #[test]
    fn in_place_cycles_are_refused() {
        let e = check(json!({"$ref": "#"})).unwrap_err();
        assert!(e.message.contains("cycle"), "{}", e.message);
        let e = check(json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}))
            .unwrap_err();
        assert_eq!(e.message, "schema $ref cycle never reaches the arguments: #/$defs/a → #/$defs/b → #/$defs/b/allOf/0 → #/$defs/a");
    }

    #[test]
    fn dangling_and_anchor_refs() {
        assert!(check(json!({"$ref": "#/$defs/missing"}))
            .unwrap_err()
            .message
            .contains("points to nothing"));
        assert!(check(json!({"$defs": {"a": {"$anchor": "x", "type": "string"}}, "properties": {"p": {"$ref": "#x"}}})).is_ok());
        assert!(check(json!({"$defs": {"a b": {"type": "string"}}, "properties": {"p": {"$ref": "#/$defs/a%20b"}}})).is_ok());
    }
}
