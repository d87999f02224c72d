//! The secret matcher: leftmost-longest, non-overlapping matching of a set of byte strings (the
//! encoded secrets, `crate::redact_units`) in a text, built and run in time linear in both.
//!
//! Secrets up to [`LONG_SECRET_BYTES`] share one Aho–Corasick automaton; each longer one gets a
//! Knuth–Morris–Pratt scanner. The crate's NFA spends about 100 ns per byte of pattern on its
//! states and failure links (a 1 MB secret took 90–160 ms to build); a KMP table costs a few ns per
//! byte. Both are linear to search; the automaton is the faster one for many short secrets.
//!
//! The matches of the parts are merged into one leftmost-longest sequence: at each step the match
//! that starts first wins, the longer one on a tie (a long secret is longer than any short one).
//! A KMP scanner only ever moves forward; the automaton searches again from the end of a long
//! match that passed its candidate, which it found at most [`LONG_SECRET_BYTES`] before that end,
//! so the text read twice is shorter than the long matches that caused it: the search is linear.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Input, MatchKind};

/// Secrets longer than this (in encoded bytes) are matched by a KMP scanner of their own.
pub const LONG_SECRET_BYTES: usize = 4096;

/// A set of non-empty patterns, matched leftmost-longest.
#[derive(Debug, Clone)]
pub struct Matcher {
    short: Option<AhoCorasick>,
    long: Vec<Kmp>,
}

/// The automaton over the short patterns, built in time linear in their total length: the
/// contiguous NFA. The builder's default for up to 100 patterns is a DFA, whose rows are filled by
/// walking failure links from every state for every byte class: quadratic for a periodic secret
/// (`"x".repeat(n)`: 32 000 characters took seconds). Search speed is about the same, the
/// prefilter doing most of the work (bench/redact.bench.mjs).
fn automaton(patterns: &[&[u8]]) -> Option<AhoCorasick> {
    if patterns.is_empty() {
        return None;
    }
    let build = |kind| {
        AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(kind))
            .build(patterns)
    };
    build(AhoCorasickKind::ContiguousNFA)
        .or_else(|_| build(AhoCorasickKind::NoncontiguousNFA))
        .ok()
}

impl Matcher {
    /// The matcher of `patterns` (non-empty, distinct); `None` when there are none.
    pub fn new(patterns: Vec<Vec<u8>>) -> Option<Self> {
        if patterns.is_empty() {
            return None;
        }
        let (long, short): (Vec<_>, Vec<_>) = patterns
            .into_iter()
            .partition(|p| p.len() > LONG_SECRET_BYTES);
        let short_refs: Vec<&[u8]> = short.iter().map(Vec::as_slice).collect();
        Some(Matcher {
            short: automaton(&short_refs),
            long: long.into_iter().map(Kmp::new).collect(),
        })
    }

    /// The matches in `hay`, as byte ranges, left to right.
    pub fn find_iter<'m, 'h>(&'m self, hay: &'h [u8]) -> Matches<'m, 'h> {
        Matches {
            matcher: self,
            hay,
            at: 0,
            short: Pending::Unknown,
            long: self.long.iter().map(|_| Scan::default()).collect(),
        }
    }
}

/// The next match of one part at or after the position asked.
#[derive(Clone, Copy)]
enum Pending {
    Unknown,
    At(usize, usize),
    None,
}

/// Where a KMP scanner is in the text: the next byte to read, the pattern bytes matched before it,
/// and the start of the occurrence found last.
#[derive(Default)]
struct Scan {
    pos: usize,
    state: usize,
    found: Option<usize>,
    done: bool,
}

pub struct Matches<'m, 'h> {
    matcher: &'m Matcher,
    hay: &'h [u8],
    at: usize,
    short: Pending,
    long: Vec<Scan>,
}

impl Iterator for Matches<'_, '_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let at = self.at;
        let mut best = self.next_short(at);
        for (kmp, scan) in self.matcher.long.iter().zip(self.long.iter_mut()) {
            while !scan.done && scan.found.is_none_or(|s| s < at) {
                scan.found = kmp.next(self.hay, scan);
            }
            if let Some(start) = scan.found.filter(|&s| s >= at) {
                let end = start + kmp.pattern.len();
                // Leftmost first; on the same start the longer.
                if best.is_none_or(|(s, e)| start < s || (start == s && end > e)) {
                    best = Some((start, end));
                }
            }
        }
        let (_, end) = best?;
        self.at = end;
        best
    }
}

impl Matches<'_, '_> {
    /// The automaton's leftmost-longest match starting at or after `at`, searched again only when
    /// the one found before starts earlier (a long match went past it).
    fn next_short(&mut self, at: usize) -> Option<(usize, usize)> {
        let ac = self.matcher.short.as_ref()?;
        let stale = match self.short {
            Pending::Unknown => true,
            Pending::At(s, _) => s < at,
            Pending::None => false,
        };
        if stale {
            self.short = match ac.find(Input::new(self.hay).range(at..)) {
                Some(m) => Pending::At(m.start(), m.end()),
                None => Pending::None,
            };
        }
        match self.short {
            Pending::At(s, e) => Some((s, e)),
            _ => None,
        }
    }
}

/// A Knuth–Morris–Pratt scanner for one pattern: `border[i]` is the length of the longest proper
/// border (prefix that is also a suffix) of `pattern[..=i]`.
#[derive(Debug, Clone)]
struct Kmp {
    pattern: Vec<u8>,
    border: Vec<u32>,
}

impl Kmp {
    fn new(pattern: Vec<u8>) -> Self {
        let mut border = vec![0u32; pattern.len()];
        let mut k = 0usize;
        for i in 1..pattern.len() {
            while k > 0 && pattern[i] != pattern[k] {
                k = border[k - 1] as usize;
            }
            if pattern[i] == pattern[k] {
                k += 1;
            }
            border[i] = k as u32;
        }
        Kmp { pattern, border }
    }

    /// The start of the next occurrence (overlapping ones included) from where `scan` stopped.
    fn next(&self, hay: &[u8], scan: &mut Scan) -> Option<usize> {
        let p = &self.pattern;
        while scan.pos < hay.len() {
            if scan.state == 0 {
                // Nothing matched yet: skip to the next byte that can begin the pattern.
                match memchr::memchr(p[0], &hay[scan.pos..]) {
                    Some(i) => scan.pos += i,
                    None => break,
                }
            }
            let b = hay[scan.pos];
            while scan.state > 0 && p[scan.state] != b {
                scan.state = self.border[scan.state - 1] as usize;
            }
            if p[scan.state] == b {
                scan.state += 1;
            }
            scan.pos += 1;
            if scan.state == p.len() {
                scan.state = self.border[p.len() - 1] as usize;
                return Some(scan.pos - p.len());
            }
        }
        scan.pos = hay.len();
        scan.done = true;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(patterns: &[&[u8]], hay: &[u8]) -> Vec<(usize, usize)> {
        let m = Matcher::new(patterns.iter().map(|p| p.to_vec()).collect()).unwrap();
        m.find_iter(hay).collect()
    }

    /// Leftmost-longest, the plain way.
    fn model(patterns: &[&[u8]], hay: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < hay.len() {
            match patterns
                .iter()
                .filter(|p| hay[i..].starts_with(p))
                .map(|p| p.len())
                .max()
            {
                Some(n) => {
                    out.push((i, i + n));
                    i += n;
                }
                None => i += 1,
            }
        }
        out
    }

    #[test]
    fn kmp_finds_overlapping_occurrences_in_order() {
        let k = Kmp::new(b"abab".to_vec());
        let mut scan = Scan::default();
        let hay = b"xababab abab";
        let mut found = Vec::new();
        while let Some(s) = k.next(hay, &mut scan) {
            found.push(s);
        }
        assert_eq!(found, [1, 3, 8]);
    }

    #[test]
    fn long_and_short_secrets_merge_leftmost_longest() {
        let long = vec![b'x'; LONG_SECRET_BYTES + 1];
        let long_ab: Vec<u8> = b"ab".repeat(LONG_SECRET_BYTES);
        let pats: [&[u8]; 4] = [&long, &long_ab, b"xx", b"ba"];
        // A short match before a long one, a long one over short ones, a long one cut short.
        let mut hay = b"yxxxy".to_vec();
        hay.extend_from_slice(&long);
        hay.extend_from_slice(b"x");
        hay.extend_from_slice(&long_ab);
        hay.extend_from_slice(&long_ab[..100]);
        hay.extend_from_slice(&long[..LONG_SECRET_BYTES]);
        assert_eq!(matches(&pats, &hay), model(&pats, &hay));
        assert!(matches(&pats, &hay).contains(&(5, 5 + long.len())));
    }

    #[test]
    fn agrees_with_the_model_on_seeded_inputs() {
        // Small alphabet, patterns around the long/short line, periodic texts: where merging
        // goes wrong if anything does.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        for _ in 0..100 {
            let mut pats: Vec<Vec<u8>> = Vec::new();
            for _ in 0..=next(4) {
                let len = match next(3) {
                    0 => 1 + next(4) as usize,
                    1 => LONG_SECRET_BYTES - 2 + next(5) as usize,
                    _ => LONG_SECRET_BYTES + next(3000) as usize,
                };
                let period = 1 + next(3) as usize;
                let unit: Vec<u8> = (0..period).map(|_| b'a' + next(2) as u8).collect();
                let p: Vec<u8> = unit.iter().cycle().take(len).copied().collect();
                if !pats.contains(&p) {
                    pats.push(p);
                }
            }
            let mut hay = Vec::new();
            while hay.len() < 3 * LONG_SECRET_BYTES {
                let p = &pats[next(pats.len() as u64) as usize];
                let cut = next(p.len() as u64 + 1) as usize;
                hay.extend_from_slice(&p[..cut.max(p.len() * next(2) as usize)]);
                hay.push(b'a' + next(3) as u8);
            }
            let refs: Vec<&[u8]> = pats.iter().map(Vec::as_slice).collect();
            assert_eq!(matches(&refs, &hay), model(&refs, &hay));
        }
    }
}
