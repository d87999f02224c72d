//! A conservative English stop-word list: articles, pronouns, auxiliaries, common prepositions and
//! conjunctions. Words that can name an operation or a scope (`all`, `not`, `up`, `off`, `over`,
//! `out`, `new`) are deliberately absent.

pub const STOP_WORDS: &[&str] = &[
    "a", "about", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but", "by",
    "can", "could", "did", "do", "does", "doing", "each", "for", "from", "had", "has", "have",
    "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is",
    "it", "its", "itself", "just", "me", "might", "my", "myself", "of", "on", "onto", "or", "our",
    "ours", "please", "s", "shall", "she", "should", "so", "some", "such", "t", "than", "that",
    "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "to",
    "us", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
    "whose", "why", "will", "with", "would", "you", "your", "yours",
];

/// Words of a request that ask rather than name: dropped with the stop words when the scoring
/// says so. Verbs that name an operation (`get`, `find`, `show`, `list`, `make`) are absent.
pub const REQUEST_WORDS: &[&str] = &[
    "also",
    "another",
    "btw",
    "currently",
    "give",
    "hello",
    "help",
    "hey",
    "hi",
    "im",
    "know",
    "let",
    "like",
    "looking",
    "need",
    "now",
    "one",
    "possible",
    "someone",
    "something",
    "tell",
    "thanks",
    "want",
    "wanted",
    "wondering",
];

/// True when `token` (lower-cased) is a stop word.
#[cfg(test)]
pub fn is_stop_word(token: &str) -> bool {
    token.len() <= 8 && STOP_WORDS.binary_search(&token).is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn list_is_sorted_and_lower_case() {
        let mut sorted = super::STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, super::STOP_WORDS);
        assert!(super::STOP_WORDS
            .iter()
            .all(|w| w.len() <= 8 && w.bytes().all(|b| b.is_ascii_lowercase())));
        assert!(super::is_stop_word("the"));
        assert!(!super::is_stop_word("all"));
    }
}
