//! The inert text lines of `search_tools`: `name: short description [matched: a, b]`.
//! No schemas, no tool bodies; control characters become spaces so a line stays one line.

use super::DESCRIPTION_CHARS;

/// The first line of `description`, cut at the end of its first sentence, whitespace collapsed,
/// at most `DESCRIPTION_CHARS` characters (an ellipsis marks a cut).
pub fn short_description(description: &str) -> String {
    let first_line = description
        .trim_start()
        .split(['\n', '\r'])
        .next()
        .unwrap_or("");
    let sentence = match first_line.find(". ") {
        Some(i) => &first_line[..=i],
        None => first_line,
    };
    let mut out = String::with_capacity(sentence.len().min(DESCRIPTION_CHARS * 4));
    let mut chars = 0usize;
    let mut pending_space = false;
    let mut cut = false;
    for c in sentence.chars() {
        if c.is_whitespace() || c.is_control() {
            pending_space = !out.is_empty();
            continue;
        }
        let need = if pending_space { 2 } else { 1 };
        if chars + need > DESCRIPTION_CHARS {
            cut = true;
            break;
        }
        if pending_space {
            out.push(' ');
            chars += 1;
            pending_space = false;
        }
        out.push(c);
        chars += 1;
    }
    if cut {
        // Make room for the ellipsis within the cap.
        while out.chars().count() >= DESCRIPTION_CHARS {
            out.pop();
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('…');
    }
    out
}

/// A tool name as shown in a line: control characters replaced by spaces.
fn clean_name(name: &str, out: &mut String) {
    for c in name.chars() {
        out.push(if c.is_control() { ' ' } else { c });
    }
}

/// One result line. Without a description: `name [matched: a, b]`.
pub fn line(name: &str, description: &str, matched: &[&str], out: &mut String) {
    clean_name(name, out);
    let short = short_description(description);
    if !short.is_empty() {
        out.push_str(": ");
        out.push_str(&short);
    }
    if !matched.is_empty() {
        out.push_str(" [matched: ");
        out.push_str(&matched.join(", "));
        out.push(']');
    }
}

/// The text `search_tools` returns when nothing matched.
pub const NO_MATCH_TEXT: &str = "No tools matched the query.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_description_takes_the_first_sentence_of_the_first_line() {
        assert_eq!(
            short_description("Get a file. Then more.\nSecond line"),
            "Get a file."
        );
        assert_eq!(
            short_description("  List   issues\tin a repo\n\nMore"),
            "List issues in a repo"
        );
        assert_eq!(short_description(""), "");
        assert_eq!(short_description("v1.2 release"), "v1.2 release");
    }

    #[test]
    fn short_description_is_capped_with_an_ellipsis() {
        let long = "word ".repeat(100);
        let s = short_description(&long);
        assert!(s.chars().count() <= DESCRIPTION_CHARS);
        assert!(s.ends_with('…'));
        let cjk = "検".repeat(500);
        let s = short_description(&cjk);
        assert_eq!(s.chars().count(), DESCRIPTION_CHARS);
    }

    #[test]
    fn lines_have_the_documented_shape() {
        let mut out = String::new();
        line(
            "get_me",
            "Get details of the authenticated user.",
            &["me", "user"],
            &mut out,
        );
        assert_eq!(
            out,
            "get_me: Get details of the authenticated user. [matched: me, user]"
        );
        out.clear();
        line("bare", "", &["bare"], &mut out);
        assert_eq!(out, "bare [matched: bare]");
        out.clear();
        line("evil\nname", "ok", &["evil"], &mut out);
        assert_eq!(out, "evil name: ok [matched: evil]");
    }
}
