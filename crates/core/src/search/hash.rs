//! The hasher of the search maps: a small, fast, non-cryptographic mix for keys that are strings
//! or packed short tokens (`dictionary::TokenMap`), never attacker-chosen in bulk beyond one tool
//! list of at most 1 024 tools.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A small, fast, non-cryptographic hasher (the FxHash mix) for the term dictionary.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut tail = [0u8; 8];
            tail[..rest.len()].copy_from_slice(rest);
            let v = u64::from_le_bytes(tail) ^ ((rest.len() as u64) << 59);
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
    }
    /// A no-op: the maps of this module are keyed by strings or packed tokens, and `str` hashing
    /// ends each key with a `0xFF` byte through `write_u8`, which a map of whole strings does not
    /// need.
    #[inline]
    fn write_u8(&mut self, _: u8) {}
    /// A packed short token (`TokenMap`): two mixes.
    #[inline]
    fn write_u128(&mut self, v: u128) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        self.0 = (self.0.rotate_left(5) ^ v as u64).wrapping_mul(K);
        self.0 = (self.0.rotate_left(5) ^ (v >> 64) as u64).wrapping_mul(K);
    }
    /// Rotated: a multiply only carries upward, so the low bits the table indexes with would
    /// otherwise depend on the low bytes of the key alone (the first letters of a packed token).
    #[inline]
    fn finish(&self) -> u64 {
        self.0.rotate_left(26)
    }
}

pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
