//! The token dictionaries of a build: token → term id.
//!
//! Almost every token is at most 16 bytes. Those are keyed by their bytes packed into a `u128`
//! (zero-padded; a token never holds a NUL byte, so the padding is unambiguous), which hashes in two
//! mixes and compares without following a pointer; longer tokens fall back to a map of strings.
//! One lookup per token of every tool is most of a build.

use super::hash::FxMap;

/// Token → term id: the index keeps two (terms after stemming, and tokens as typed) for queries.
#[derive(Default)]
pub(crate) struct TokenMap {
    short: FxMap<u128, u32>,
    long: FxMap<Box<str>, u32>,
}

impl TokenMap {
    pub(crate) fn with_capacity(n: usize) -> TokenMap {
        TokenMap {
            short: FxMap::with_capacity_and_hasher(n, Default::default()),
            long: FxMap::default(),
        }
    }

    /// The token's bytes as a little-endian `u128`, zero-padded; `None` over 16 bytes. Built
    /// from (overlapping) register-sized reads: a byte copy into a stack array and one wide read
    /// back stalls on store forwarding, and that was most of a build.
    #[inline]
    pub(crate) fn pack(tok: &str) -> Option<u128> {
        let b = tok.as_bytes();
        let n = b.len();
        let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let half = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"));
        let lo = match n {
            0 => 0,
            1..=3 => {
                u64::from(b[0])
                    | u64::from(b[n / 2]) << (8 * (n / 2))
                    | u64::from(b[n - 1]) << (8 * (n - 1))
            }
            // Two 4-byte reads that overlap where n < 8: the shared bytes are the same bytes.
            4..=7 => u64::from(half(0)) | u64::from(half(n - 4)) << (8 * (n - 4)),
            8..=16 => word(0),
            _ => return None,
        };
        let hi = match n {
            9..=16 => word(n - 8) >> (8 * (16 - n)),
            _ => 0,
        };
        Some(u128::from(lo) | u128::from(hi) << 64)
    }

    /// A packed ASCII token lower-cased in place: `A..Z` gain bit 0x20 (SWAR; every byte of an
    /// ASCII token and of the zero padding is below 0x80, so no lane carries into the next).
    #[inline]
    pub(crate) fn fold_ascii(key: u128) -> u128 {
        const HIGH: u64 = 0x8080_8080_8080_8080;
        const ONES: u64 = 0x0101_0101_0101_0101;
        let fold = |x: u64| {
            let ge_a = x.wrapping_add(ONES * u64::from(0x80 - b'A'));
            let gt_z = x.wrapping_add(ONES * u64::from(0x7f - b'Z'));
            x | ((ge_a & !gt_z & HIGH) >> 2)
        };
        u128::from(fold(key as u64)) | u128::from(fold((key >> 64) as u64)) << 64
    }

    /// The id of a short token by its packed key (`pack`, `fold_ascii`).
    #[inline]
    pub(crate) fn get_packed(&self, key: u128) -> Option<u32> {
        self.short.get(&key).copied()
    }

    /// The id of a raw token (`fold`: ASCII with capitals, lower-cased in the key) when it is at
    /// most 16 bytes and present; `None` otherwise (a longer token is looked up by `get`).
    #[inline]
    pub(crate) fn get_raw(&self, raw: &str, fold: bool) -> Option<u32> {
        let key = Self::pack(raw)?;
        self.get_packed(if fold { Self::fold_ascii(key) } else { key })
    }

    #[inline]
    pub(crate) fn get(&self, tok: &str) -> Option<u32> {
        match Self::pack(tok) {
            Some(k) => self.short.get(&k).copied(),
            None => self.long.get(tok).copied(),
        }
    }

    pub(crate) fn insert(&mut self, tok: &str, id: u32) {
        match Self::pack(tok) {
            Some(k) => self.short.insert(k, id),
            None => self.long.insert(tok.into(), id),
        };
    }

    /// Empties the map, keeping its memory, with room for at least `n` tokens.
    pub(crate) fn clear_for(&mut self, n: usize) {
        self.short.clear();
        self.long.clear();
        self.short.reserve(n);
    }

    pub(crate) fn len(&self) -> usize {
        self.short.len() + self.long.len()
    }

    /// Heap bytes held, approximately: each map's slots (key, value, control byte) and the long
    /// tokens' text.
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.short.capacity() * (size_of::<(u128, u32)>() + 1)
            + self.long.capacity() * (size_of::<(Box<str>, u32)>() + 1)
            + self.long.keys().map(|k| k.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod token_map_tests {
    use super::*;

    #[test]
    fn fold_ascii_is_the_packed_lower_case_token() {
        let mut all = String::new();
        for b in 1u8..0x80 {
            all.push(b as char);
        }
        for tok in [
            "A",
            "Get",
            "HTTP",
            "XMLHttp",
            "@[`{",
            "Z9z",
            "abcdefghijklmnop",
            "ABCDEFGHIJKLMNOP",
        ]
        .into_iter()
        .chain(
            all.as_bytes()
                .chunks(16)
                .map(|c| std::str::from_utf8(c).unwrap()),
        ) {
            let lower = tok.to_ascii_lowercase();
            assert_eq!(
                TokenMap::pack(tok).map(TokenMap::fold_ascii),
                TokenMap::pack(&lower),
                "{tok:?}"
            );
        }
    }

    #[test]
    fn pack_is_the_zero_padded_bytes_for_every_length() {
        let text = "abcdefghijklmnopqrstu";
        for n in 0..=text.len() {
            let tok = &text[..n];
            let want = (n <= 16).then(|| {
                let mut a = [0u8; 16];
                a[..n].copy_from_slice(tok.as_bytes());
                u128::from_le_bytes(a)
            });
            assert_eq!(TokenMap::pack(tok), want, "length {n}");
        }
        // Multi-byte UTF-8 packs its bytes too; distinct tokens never share a key.
        assert_ne!(TokenMap::pack("größe"), TokenMap::pack("grosse"));
        let mut m = TokenMap::default();
        for (i, t) in [
            "a",
            "ab",
            "abc",
            "abcdefghijklmnop",
            "abcdefghijklmnopq",
            "ツール",
        ]
        .iter()
        .enumerate()
        {
            m.insert(t, i as u32);
        }
        assert_eq!(m.len(), 6);
        assert_eq!(m.get("abcdefghijklmnopq"), Some(4));
        assert_eq!(m.get("abcdefghijklmnop"), Some(3));
        assert_eq!(m.get("abcd"), None);
        assert_eq!(m.get("ツール"), Some(5));
    }

    /// Differential: 20 000 random tokens (1–24 bytes over a small alphabet, so many share
    /// prefixes and lengths; ASCII and multi-byte letters) against a map of whole strings.
    #[test]
    fn agrees_with_a_map_of_strings_on_random_tokens() {
        const LETTERS: [&str; 8] = ["a", "b", "e", "z", "0", "9", "é", "ツ"];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut tokens: Vec<String> = Vec::new();
        for _ in 0..20_000 {
            let len = 1 + (next() % 16) as usize + (next() % 9) as usize;
            let mut t = String::new();
            while t.len() < len {
                t.push_str(LETTERS[(next() % 8) as usize]);
            }
            tokens.push(t);
        }
        let mut ours = TokenMap::with_capacity(256);
        let mut plain: std::collections::HashMap<&str, u32> = Default::default();
        for (i, t) in tokens.iter().enumerate().filter(|(i, _)| i % 2 == 0) {
            if !plain.contains_key(t.as_str()) {
                plain.insert(t, i as u32);
                ours.insert(t, i as u32);
            }
        }
        assert_eq!(ours.len(), plain.len());
        for t in &tokens {
            assert_eq!(ours.get(t), plain.get(t.as_str()).copied(), "{t:?}");
        }
    }
}
