//! Provider-side argument text: the size bound and the `invalid_json_arguments` message for text
//! that does not give a JSON object. Parsing into a JS object stays with the JS engine's own
//! `JSON.parse`; this module only explains why a text was refused.

/// Default bound on argument text, in UTF-8 bytes (1 MiB).
pub const DEFAULT_MAX_ARGUMENTS_BYTES: usize = 1_048_576;
/// Hard cap on the bound (64 MiB).
pub const MAX_ARGUMENTS_BYTES_CAP: usize = 64 * 1_048_576;

/// Why a provider's argument text gives no arguments object, as the message of a
/// `ProviderTransportError` naming the tool; `None` when the text is a JSON object within bounds.
pub fn arguments_text_problem(name: &str, text: &str, max_bytes: usize) -> Option<String> {
    // `@arnilo/prism`'s words first (hosts match on them), then what exactly is wrong.
    let tool = if name.is_empty() {
        String::new()
    } else {
        format!(" for tool {name}")
    };
    if text.len() > max_bytes {
        return Some(format!("Tool arguments{tool} exceeded {max_bytes} bytes"));
    }
    if text.trim().is_empty() {
        return None;
    }
    // Scan the depth first so hostile nesting cannot exhaust the parser's stack.
    if crate::validate::bounds::scan_depth(text, 128).is_err() {
        return Some(format!(
            "Invalid tool arguments JSON{tool}: nested deeper than 128 levels"
        ));
    }
    match crate::validate::bounds::parse_scanned(text) {
        Err(e) => Some(format!("Invalid tool arguments JSON{tool}: {e}")),
        Ok(serde_json::Value::Object(_)) => None,
        Ok(other) => Some(format!(
            "Tool arguments{tool} must be a JSON object, found {}",
            crate::validate::messages::type_name(&other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_tool_and_the_problem() {
        assert_eq!(arguments_text_problem("t", r#"{"a":1}"#, 100), None);
        assert_eq!(arguments_text_problem("t", "", 100), None);
        assert_eq!(
            arguments_text_problem("get_me", r#"{"a":"#, 100).unwrap(),
            "Invalid tool arguments JSON for tool get_me: EOF while parsing a value at line 1 column 5"
        );
        assert_eq!(
            arguments_text_problem("t", "[1]", 100).unwrap(),
            "Tool arguments for tool t must be a JSON object, found array"
        );
        assert_eq!(
            arguments_text_problem("t", "{}", 1).unwrap(),
            "Tool arguments for tool t exceeded 1 bytes"
        );
        let deep = "[".repeat(5_000);
        assert!(arguments_text_problem("t", &deep, 1 << 20)
            .unwrap()
            .contains("nested deeper"));
        assert_eq!(
            arguments_text_problem("", "{", 100).unwrap(),
            "Invalid tool arguments JSON: EOF while parsing an object at line 1 column 1"
        );
    }
}
