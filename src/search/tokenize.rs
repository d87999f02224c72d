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

/// Per-byte class masks of eight ASCII bytes (SWAR): the high bit of each byte is set where the
/// byte is a letter or digit (`alnum`) or an upper-case letter (`upper`).
struct Masks {
    alnum: u64,
    upper: u64,
}

impl Masks {
    #[inline]
    fn of(bytes: &[u8], i: usize) -> Masks {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[i..i + 8]);
        let x = u64::from_le_bytes(w);
        // For bytes below 0x80 (the text is ASCII), `x + (0x80 - lo)` has the high bit set exactly
        // when the byte is >= lo, and no lane carries into the next.
        let between = |lo: u8, hi: u8| -> u64 {
            let ge_lo = x.wrapping_add(0x0101_0101_0101_0101 * u64::from(0x80 - lo));
            let gt_hi = x.wrapping_add(0x0101_0101_0101_0101 * u64::from(0x7f - hi));
            ge_lo & !gt_hi & HIGH
        };
        let upper = between(b'A', b'Z');
        Masks {
            alnum: between(b'0', b'9') | upper | between(b'a', b'z'),
            upper,
        }
    }
}

/// The same rules as `unicode_tokens`, over ASCII text (most tool text), without decoding;
/// parts already in lower case are passed as slices of `text`.
pub(crate) fn ascii_tokens(text: &str, buf: &mut String, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    buf.clear();
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        // Skip separators, eight bytes at a time where they fit.
        while i + 8 <= n {
            let alnum = Masks::of(bytes, i).alnum;
            if alnum != 0 {
                i += alnum.trailing_zeros() as usize / 8;
                break;
            }
            i += 8;
        }
        while i < n && CLASS[bytes[i] as usize] == SEP {
            i += 1;
        }
        if i == n {
            break;
        }
        let start = i;
        let mut upper = false;
        let mut open = true;
        while open && i + 8 <= n {
            let m = Masks::of(bytes, i);
            let sep = !m.alnum & HIGH;
            if sep == 0 {
                upper |= m.upper != 0;
                i += 8;
            } else {
                let k = sep.trailing_zeros() as usize / 8;
                upper |= m.upper & ((1u64 << (k * 8)) - 1) != 0;
                i += k;
                open = false;
            }
        }
        while open && i < n {
            let c = CLASS[bytes[i] as usize];
            if c == SEP {
                break;
            }
            upper |= c == UPPER;
            i += 1;
        }
        if !upper {
            f(&text[start..i]);
            continue;
        }
        let word = &bytes[start..i];
        let mut from = 0;
        for j in 1..word.len() {
            let (p, c) = (CLASS[word[j - 1] as usize], CLASS[word[j] as usize]);
            if c == UPPER
                && (p == LOWER
                    || p == DIGIT
                    || (p == UPPER && word.get(j + 1).is_some_and(|&b| CLASS[b as usize] == LOWER)))
            {
                emit_ascii(&text[start + from..start + j], buf, &mut f);
                from = j;
            }
        }
        emit_ascii(&text[start + from..i], buf, &mut f);
    }
}

#[inline]
fn emit_ascii(part: &str, buf: &mut String, f: &mut impl FnMut(&str)) {
    buf.clear();
    buf.push_str(part);
    buf.make_ascii_lowercase();
    f(buf);
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
            let path = format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
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
    fn non_ascii_text_gives_defined_tokens() {
        assert_eq!(tokens("Größe ÄNDERN"), ["größe", "ändern"]);
        assert_eq!(tokens("検索 ツール"), ["検索", "ツール"]);
        assert_eq!(tokens("🔍 search 🚀"), ["search"]);
        assert_eq!(tokens("cafe\u{301} x"), ["cafe\u{301}", "x"]);
        assert_eq!(tokens("a\u{FFFD}b"), ["a", "b"]);
    }
}
