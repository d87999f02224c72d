//! Tokenizer: identifiers and prose to lower-case terms.
//!
//! A word is a maximal run of alphanumeric characters (Unicode `Alphabetic` or `Numeric`) and
//! combining marks; everything else (space, punctuation, `_ - . /`, emoji, U+FFFD) separates words.
//! Inside a word, camelCase boundaries split tokens: `getHTTPResponse` → `get`, `http`, `response`;
//! digits stay with the letters before them (`sha256`, `log10`) and a capital after a digit starts a
//! new token (`utf8String` → `utf8`, `string`). Tokens are lower-cased with Unicode rules.
//! There is no Unicode normalization and no word segmentation of scripts written without spaces: a
//! run of CJK characters is one token, and precomposed and decomposed accents are different terms.

/// True for characters that continue a word.
#[inline]
fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    c.is_alphanumeric() || is_combining_mark(c)
}

/// The main blocks of combining marks (general category M in practice), kept inside a word.
#[inline]
fn is_combining_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x0610..=0x061A | 0x064B..=0x065F
        | 0x0900..=0x0903 | 0x093A..=0x094F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF
        | 0x302A..=0x302F | 0x3099..=0x309A | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F)
}

/// Calls `f` with each token of `text`, lower-cased, in order. `buf` is scratch space.
pub fn for_each_token(text: &str, buf: &mut String, f: impl FnMut(&str)) {
    if text.is_ascii() {
        ascii_tokens(text, buf, f);
    } else {
        unicode_tokens(text, buf, f);
    }
}

/// As `for_each_token`, but an ASCII token with capitals is passed as it is typed with `fold` set,
/// for the caller to lower-case itself: a build folds it in the register it keys its dictionary
/// with, where writing it lower-cased to memory and reading it back stalls on store forwarding.
/// With `fold` clear the token is already lower case.
pub fn for_each_raw_token(text: &str, buf: &mut String, mut f: impl FnMut(&str, bool)) {
    if text.is_ascii() {
        ascii_raw_tokens(text, f);
    } else {
        unicode_tokens(text, buf, |t| f(t, false));
    }
}

/// Byte classes of ASCII text: separator, lower-case letter or digit, upper-case letter.
const SEP: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 3;

static CLASS: [u8; 256] = {
    let mut t = [SEP; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_lowercase() {
            LOWER
        } else if c.is_ascii_uppercase() {
            UPPER
        } else if c.is_ascii_digit() {
            DIGIT
        } else {
            SEP
        };
        b += 1;
    }
    t
};

/// The high bit of every byte of a `u64`.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Moves the high bit of each byte of a `u64` (set or clear) to bit `i` for byte `i`: each lane's
/// bit lands in the top byte at a distinct place, so the multiply never carries into it.
const GATHER: u64 = 0x0102_0408_1020_4080;

#[inline]
fn gather(high_bits: u64) -> u64 {
    ((high_bits >> 7).wrapping_mul(GATHER)) >> 56
}

/// Where the letters and digits (`alnum`) and the capitals (`upper`) of 64 ASCII bytes are: bit
/// `i` for byte `i`. SWAR over eight lanes: for bytes below 0x80, `x + (0x80 - lo)` has the high
/// bit set exactly when the byte is >= lo, and no lane carries into the next.
#[inline]
fn block_masks(block: &[u8; 64]) -> (u64, u64) {
    let mut alnum = 0u64;
    let mut upper = 0u64;
    for (lane, chunk) in block.chunks_exact(8).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w);
        let between = |lo: u8, hi: u8| -> u64 {
            let ge_lo = x.wrapping_add(0x0101_0101_0101_0101 * u64::from(0x80 - lo));
            let gt_hi = x.wrapping_add(0x0101_0101_0101_0101 * u64::from(0x7f - hi));
            ge_lo & !gt_hi & HIGH
        };
        let up = between(b'A', b'Z');
        // Letters of either case: bit 0x20 set maps `A..Z` onto `a..z` and no other byte into it.
        let x = x | 0x2020_2020_2020_2020;
        let letter = {
            let ge_lo = x.wrapping_add(0x0101_0101_0101_0101 * u64::from(0x80 - b'a'));
            let gt_hi = x.wrapping_add(0x0101_0101_0101_0101 * u64::from(0x7f - b'z'));
            ge_lo & !gt_hi & HIGH
        };
        let an = between(b'0', b'9') | letter;
        alnum |= gather(an) << (lane * 8);
        upper |= gather(up) << (lane * 8);
    }
    (alnum, upper)
}

/// The same rules as `unicode_tokens`, over ASCII text (most tool text), without decoding;
/// parts already in lower case are passed as slices of `text`.
pub(crate) fn ascii_tokens(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    ascii_raw_tokens(text, |tok, fold| {
        if fold {
            buf.clear();
            buf.push_str(tok);
            buf.make_ascii_lowercase();
            f(buf);
        } else {
            f(tok);
        }
    });
}

/// The tokens of ASCII text as slices of it, `fold` set on those with capitals.
///
/// Words are found 64 bytes at a time from bit masks: the bits where "letter or digit" changes
/// are the starts and ends of words, walked with `trailing_zeros`. A branch per word boundary
/// taken from a mask predicts far better than a byte loop whose exit depends on each word's length.
fn ascii_raw_tokens(text: &str, mut f: impl FnMut(&str, bool)) {
    let bytes = text.as_bytes();
    let n = bytes.len();
    // A word still open at the end of a block: its start and whether it has a capital so far.
    let mut open: Option<usize> = None;
    let mut open_upper = false;
    let mut base = 0;
    while base < n {
        let (alnum, upper) = if let Some(block) = bytes
            .get(base..base + 64)
            .and_then(|b| <&[u8; 64]>::try_from(b).ok())
        {
            block_masks(block)
        } else {
            // The tail, padded with separators (which also closes a word at the end of the text).
            let mut block = [0u8; 64];
            block[..n - base].copy_from_slice(&bytes[base..]);
            block_masks(&block)
        };
        // Bit i set where byte i starts a word or is the first separator after one.
        let mut edges = alnum ^ ((alnum << 1) | u64::from(open.is_some()));
        while edges != 0 {
            let at = edges.trailing_zeros() as usize;
            edges &= edges - 1;
            match open.take() {
                None => {
                    open = Some(base + at);
                    open_upper = false;
                }
                Some(start) => {
                    let end = base + at;
                    if open_upper {
                        split_camel(text, start, end, &mut f);
                        continue;
                    }
                    let from = start.saturating_sub(base);
                    let all = (1u64 << (at - from)) - 1;
                    let caps = (upper >> from) & all;
                    if caps == 0 {
                        f(&text[start..end], false);
                    } else if (caps == 1 || caps == all) && start >= base {
                        // `Capitalized` or `ALLCAPS`: one token, lower-cased.
                        f(&text[start..end], true);
                    } else {
                        split_camel(text, start, end, &mut f);
                    }
                }
            }
        }
        if let Some(start) = open {
            open_upper |= upper >> start.saturating_sub(base) != 0;
        }
        base += 64;
    }
    // Only a text whose length is a multiple of 64 can end inside a word.
    if let Some(start) = open {
        if open_upper {
            split_camel(text, start, n, &mut f);
        } else {
            f(&text[start..n], false);
        }
    }
}

/// A word with capitals: split at camelCase boundaries, each part passed to be lower-cased.
fn split_camel(text: &str, start: usize, end: usize, f: &mut impl FnMut(&str, bool)) {
    let word = &text.as_bytes()[start..end];
    let mut from = 0;
    for j in 1..word.len() {
        let (p, c) = (CLASS[word[j - 1] as usize], CLASS[word[j] as usize]);
        if c == UPPER
            && (p == LOWER
                || p == DIGIT
                || (p == UPPER && word.get(j + 1).is_some_and(|&b| CLASS[b as usize] == LOWER)))
        {
            f(&text[start + from..start + j], true);
            from = j;
        }
    }
    f(&text[start + from..end], true);
}

pub(crate) fn unicode_tokens(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    buf.clear();
    let mut prev: Option<char> = None;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_word_char(c) {
            if !buf.is_empty() {
                f(buf);
                buf.clear();
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            if c.is_uppercase() && !buf.is_empty() {
                let boundary = p.is_lowercase()
                    || p.is_numeric()
                    || (p.is_uppercase() && chars.peek().is_some_and(|n| n.is_lowercase()));
                if boundary {
                    f(buf);
                    buf.clear();
                }
            }
        }
        if c.is_ascii() {
            buf.push(c.to_ascii_lowercase());
        } else {
            buf.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    if !buf.is_empty() {
        f(buf);
        buf.clear();
    }
}

/// The tokens of `text` as owned strings.
#[cfg(test)]
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut buf = String::new();
    for_each_token(text, &mut buf, |t| out.push(t.to_owned()));
    out
}

#[cfg(test)]
mod tests {
    use super::tokens;

    #[test]
    fn splits_identifiers_on_separators_and_camel_case() {
        assert_eq!(
            tokens("get_file-contents.v2/list"),
            ["get", "file", "contents", "v2", "list"]
        );
        assert_eq!(tokens("getHTTPResponse"), ["get", "http", "response"]);
        assert_eq!(
            tokens("utf8String sha256 math.log10"),
            ["utf8", "string", "sha256", "math", "log10"]
        );
        assert_eq!(tokens("XMLHttpRequest"), ["xml", "http", "request"]);
        assert_eq!(tokens("ABC"), ["abc"]);
    }

    #[test]
    fn lower_cases_and_drops_punctuation() {
        assert_eq!(
            tokens("  Find the AREA, of a triangle!  "),
            ["find", "the", "area", "of", "a", "triangle"]
        );
        assert_eq!(tokens(""), Vec::<String>::new());
        assert_eq!(tokens(" \t\n "), Vec::<String>::new());
    }

    #[test]
    fn ascii_and_unicode_paths_agree() {
        let mut a = Vec::new();
        let mut u = Vec::new();
        let mut buf = String::new();
        let text = "getHTTPResponse utf8String XMLHttpRequest a_b-c.d/e  ABC aB Ab 1A2b __x__";
        super::ascii_tokens(text, &mut buf, |t| a.push(t.to_owned()));
        super::unicode_tokens(text, &mut buf, |t| u.push(t.to_owned()));
        assert_eq!(a, u);
    }

    #[test]
    fn ascii_path_agrees_with_unicode_path_on_every_fixture_text() {
        for name in [
            "bfcl-tool-retrieval.json",
            "github-mcp-tools.json",
            "github-mcp-queries.json",
        ] {
            let path = format!("{}/../../fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
            let text = std::fs::read_to_string(&path).expect("fixture");
            // Every ASCII line of the file, and every suffix of a few lines (all alignments).
            let lines: Vec<&str> = text.lines().filter(|l| l.is_ascii()).collect();
            let mut cases: Vec<&str> = lines.clone();
            for l in lines.iter().take(50) {
                for k in 0..l.len().min(24) {
                    cases.push(&l[k..]);
                }
            }
            let mut buf = String::new();
            for case in cases {
                let (mut a, mut u) = (Vec::new(), Vec::new());
                super::ascii_tokens(case, &mut buf, |t| a.push(t.to_owned()));
                super::unicode_tokens(case, &mut buf, |t| u.push(t.to_owned()));
                assert_eq!(a, u, "{case}");
            }
        }
    }

    #[test]
    fn ascii_path_agrees_with_unicode_path_on_random_text_of_every_length() {
        // Texts of 0..300 bytes (every position against the 64-byte blocks, words across block
        // edges, texts ending inside a word at a multiple of 64) from an alphabet weighted to make
        // camelCase, digits and runs of separators common.
        const ALPHABET: &[u8] = b"abcdefxyzABCDEFXYZ0129 _-./ \t\n!aeiouAEIOU";
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut buf = String::new();
        for case in 0..20_000 {
            let len = case % 300;
            let text: String = (0..len)
                .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize] as char)
                .collect();
            let (mut a, mut u) = (Vec::new(), Vec::new());
            super::ascii_tokens(&text, &mut buf, |t| a.push(t.to_owned()));
            super::unicode_tokens(&text, &mut buf, |t| u.push(t.to_owned()));
            assert_eq!(a, u, "{text:?}");
        }
        // A single word filling whole blocks, with and without a capital in its last block.
        for len in [64, 128, 192] {
            let lower = "a".repeat(len);
            assert_eq!(tokens(&lower), std::slice::from_ref(&lower));
            let camel = format!("{}B", "a".repeat(len - 1));
            assert_eq!(tokens(&camel), ["a".repeat(len - 1), "b".to_owned()]);
        }
    }

    #[test]
    fn non_ascii_text_gives_defined_tokens() {
        assert_eq!(tokens("Größe ÄNDERN"), ["größe", "ändern"]);
        assert_eq!(tokens("検索 ツール"), ["検索", "ツール"]);
        assert_eq!(tokens("🔍 search 🚀"), ["search"]);
        assert_eq!(tokens("cafe\u{301} x"), ["cafe\u{301}", "x"]);
        assert_eq!(tokens("a\u{FFFD}b"), ["a", "b"]);
    }
}
