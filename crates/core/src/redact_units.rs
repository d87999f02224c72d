//! The byte form the secret matcher runs on: each UTF-16 code unit of a JS string written alone as
//! UTF-8 would write its code point, a surrogate included (1 to 3 bytes; CESU-8 with lone
//! surrogates allowed). JS strings are sequences of code units and a secret is found wherever its
//! units are, a lone surrogate or half of a pair included; UTF-8 cannot say that, this form can:
//!
//! - every unit starts with a lead byte and goes on with continuation bytes (`10xxxxxx`), so a
//!   match of one encoded secret in an encoded text begins and ends on unit boundaries, and matches
//!   in bytes are exactly matches in units, in the same order (leftmost-longest stays so);
//! - text with no character above U+FFFF has the same bytes as its UTF-8, so Rust text without one
//!   (and any text when no secret holds a surrogate) is matched as it is, without a copy.

/// Appends the encoded form of `units` to `out`.
pub fn encode_units(units: &[u16], out: &mut Vec<u8>) {
    out.reserve(units.len());
    for &u in units {
        let c = u as u32;
        if c < 0x80 {
            out.push(c as u8);
        } else if c < 0x800 {
            out.extend_from_slice(&[0xC0 | (c >> 6) as u8, 0x80 | (c & 0x3F) as u8]);
        } else {
            out.extend_from_slice(&[
                0xE0 | (c >> 12) as u8,
                0x80 | ((c >> 6) & 0x3F) as u8,
                0x80 | (c & 0x3F) as u8,
            ]);
        }
    }
}

/// Whether `c` is a UTF-16 surrogate (half of a pair, or a lone one).
pub fn is_surrogate(c: u16) -> bool {
    (0xD800..0xE000).contains(&c)
}

/// Maps byte offsets of the encoded form to unit offsets, walking forward once: asked for
/// increasing offsets, the whole walk is linear in the text.
pub struct UnitCursor<'a> {
    bytes: &'a [u8],
    byte: usize,
    unit: usize,
}

impl<'a> UnitCursor<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        UnitCursor {
            bytes,
            byte: 0,
            unit: 0,
        }
    }

    /// The unit offset of byte offset `at` (a unit boundary, not before the last one asked).
    pub fn unit_at(&mut self, at: usize) -> usize {
        debug_assert!(at >= self.byte);
        // A unit begins at each byte that is not a continuation byte.
        self.unit += self.bytes[self.byte..at]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        self.byte = at;
        self.unit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(units: &[u16]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_units(units, &mut out);
        out
    }

    #[test]
    fn bmp_text_is_its_utf8() {
        let s = "a é € \u{FFFD} 中";
        let units: Vec<u16> = s.encode_utf16().collect();
        assert_eq!(enc(&units), s.as_bytes());
    }

    #[test]
    fn surrogates_are_three_bytes_each() {
        assert_eq!(enc(&[0xD83D, 0xDE00]), [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]);
        assert_eq!(enc(&[0xDC00]), [0xED, 0xB0, 0x80]);
    }

    #[test]
    fn cursor_counts_units() {
        let units: Vec<u16> = "aé😀b".encode_utf16().collect();
        let bytes = enc(&units);
        let mut c = UnitCursor::new(&bytes);
        assert_eq!(c.unit_at(0), 0);
        assert_eq!(c.unit_at(1), 1);
        assert_eq!(c.unit_at(3), 2);
        assert_eq!(c.unit_at(9), 4);
        assert_eq!(c.unit_at(10), 5);
    }
}
