//! UTF-8 text bounds: the one way the crate cuts text to a byte budget.

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
pub fn utf8_prefix(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while end > 0 && !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::utf8_prefix;

    #[test]
    fn cuts_on_character_boundaries() {
        assert_eq!(utf8_prefix("héllo", 2), "h");
        assert_eq!(utf8_prefix("héllo", 3), "hé");
        assert_eq!(utf8_prefix("abc", 10), "abc");
        assert_eq!(utf8_prefix("abcdef", 3), "abc");
        assert_eq!(utf8_prefix("🔍x", 3), "");
        assert_eq!(utf8_prefix("🔍x", 4), "🔍");
        assert_eq!(utf8_prefix("", 0), "");
        assert_eq!(utf8_prefix("a", 0), "");
    }
}
