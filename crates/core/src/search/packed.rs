//! The packed typed-array protocol of tool search: the one place that says how tool text crosses
//! into Rust and how hits cross back, in plain Rust (the binding only moves the arrays, and
//! lib/search.js is the JS half). A Node-API call costs more than the work it carries, so a build
//! and a query each cross in a few bulk values instead of one call per field:
//!
//! - **Build** (`_buildToolSearchIndex(texts, lengths, count, queryBytes, positions)`): `texts`
//!   is an array of strings (chunks of whole tools) holding, per tool, back to back, its name, its
//!   description (cut by JS to at most [`TEXT_UNITS`] UTF-16 units) and its parameter text
//!   ([`ParameterText`]); `lengths` is a `Uint32Array` of [`FIELDS_PER_TOOL`] lengths per tool in
//!   UTF-16 code units. The text crosses as UTF-16 and each segment is decoded on its own
//!   ([`decode_tools`]), so a lone surrogate is seen exactly. `positions` (a `Uint32Array` of at
//!   least `count` entries) receives, per indexed document, its tool's position in the list
//!   ([`positions`]).
//! - **Query** (`_searchPacked(query, k, ranking, weight, out)`): `ranking` is `undefined` or a
//!   `Uint32Array` of documents, best first (read by [`ranking_docs`]); hits come back in the
//!   `Float64Array` `out` as [`encode_hits`] lays them out, and the query's terms as one string
//!   joined by spaces ([`TERM_SEPARATOR`]).
//!
//! Malformed input (lengths that do not cover the text, a document out of range) is refused or
//! skipped here, never a panic.

use std::ops::Range;

use super::index::{Hit, QueryTerms};
use super::{SearchIndex, ToolText};
use crate::text::utf8_prefix;

/// Lengths per tool in the build's `lengths` array: name, description, parameter text.
pub const FIELDS_PER_TOOL: usize = 3;
/// Bytes of a description, and of a tool's parameter text, that are indexed (cut on a character
/// boundary).
pub const INDEXED_TEXT_BYTES: usize = 16 * 1024;
/// UTF-16 units of a description (and of each parameter key and description) that JS sends: never
/// fewer than [`INDEXED_TEXT_BYTES`] bytes of UTF-8, so the cut that counts is made here.
pub const TEXT_UNITS: usize = 16 * 1024;
/// Parameters of one tool that are indexed (the first ones, in key order).
pub const INDEXED_PARAMETERS: usize = 64;
/// Entries of a host-supplied ranking read for fusion; later ones are ignored.
pub const MAX_FUSED_RANKING: usize = 256;
/// Values per hit in `out` before its matched term positions: document, score, matched count.
pub const HIT_HEADER: usize = 3;
/// What joins the query's terms in the string a query returns (a token never holds one).
pub const TERM_SEPARATOR: &str = " ";

/// A tool's parameter text as both readers join it: `key description ` per parameter (the
/// description only when it is a string), the first [`INDEXED_PARAMETERS`] parameters, no more
/// added once [`INDEXED_TEXT_BYTES`] are held, then cut to that many bytes.
#[derive(Default)]
pub struct ParameterText(String);

impl ParameterText {
    /// Whether no further parameter is read.
    pub fn is_full(&self, read: usize) -> bool {
        read >= INDEXED_PARAMETERS || self.0.len() >= INDEXED_TEXT_BYTES
    }

    pub fn push(&mut self, part: &str) {
        self.0.push_str(part);
        self.0.push(' ');
    }

    pub fn finish(self) -> String {
        let kept = utf8_prefix(&self.0, INDEXED_TEXT_BYTES);
        if kept.len() == self.0.len() {
            self.0
        } else {
            kept.to_owned()
        }
    }
}

/// A packed tool list, decoded: the tools' text as UTF-8 and, per tool, the byte ranges of its
/// name, description and parameter text and whether its name is well-formed (no lone surrogate).
#[derive(Debug)]
pub struct PackedTools {
    text: String,
    spans: Vec<[Range<usize>; FIELDS_PER_TOOL]>,
    well_formed: Vec<bool>,
}

impl PackedTools {
    /// Each tool as the index reads it, with its position in the list. A tool whose name holds a
    /// lone surrogate is left out: its U+FFFD text could equal another tool's name.
    pub fn tools(&self) -> Vec<(usize, ToolText<'_>)> {
        let cut = |r: &Range<usize>| utf8_prefix(&self.text[r.clone()], INDEXED_TEXT_BYTES);
        self.spans
            .iter()
            .zip(&self.well_formed)
            .enumerate()
            .filter(|(_, (_, ok))| **ok)
            .map(|(i, ([n, d, p], _))| {
                let tool = ToolText {
                    name: &self.text[n.clone()],
                    description: cut(d),
                    parameters: cut(p),
                };
                (i, tool)
            })
            .collect()
    }
}

/// Decodes the build's packed text: `units` (every chunk's UTF-16 code units, back to back) cut by
/// `lengths` ([`FIELDS_PER_TOOL`] per tool). `None` when the lengths are not whole tools or do not
/// add up to the text.
pub fn decode_tools(units: &[u16], lengths: &[u32]) -> Option<PackedTools> {
    let total = lengths
        .iter()
        .try_fold(0usize, |sum, &l| sum.checked_add(l as usize));
    if !lengths.len().is_multiple_of(FIELDS_PER_TOOL) || total != Some(units.len()) {
        return None;
    }
    let count = lengths.len() / FIELDS_PER_TOOL;
    let mut bytes: Vec<u8> = Vec::with_capacity(units.len() + units.len() / 4);
    let mut spans = Vec::with_capacity(count);
    let mut well_formed = Vec::with_capacity(count);
    let mut at = 0usize;
    for l in lengths.chunks_exact(FIELDS_PER_TOOL) {
        let mut span: [Range<usize>; FIELDS_PER_TOOL] = [0..0, 0..0, 0..0];
        let mut ok = true;
        for (f, &len) in l.iter().enumerate() {
            let start = bytes.len();
            let seg_ok = push_utf16(&mut bytes, &units[at..at + len as usize]);
            ok &= f != 0 || seg_ok;
            at += len as usize;
            span[f] = start..bytes.len();
        }
        spans.push(span);
        well_formed.push(ok);
    }
    let text = String::from_utf8(bytes).ok()?;
    Some(PackedTools {
        text,
        spans,
        well_formed,
    })
}

/// Appends `units` (one segment, decoded on its own) to `out` as UTF-8, a lone surrogate as
/// U+FFFD (as a single string crossing Node-API reads), and tells whether there was none.
fn push_utf16(out: &mut Vec<u8>, units: &[u16]) -> bool {
    let mut well_formed = true;
    let mut i = 0;
    while i < units.len() {
        let ascii = units[i..].iter().take_while(|&&u| u < 0x80).count();
        out.extend(units[i..i + ascii].iter().map(|&u| u as u8));
        i += ascii;
        let other = units[i..].iter().take_while(|&&u| u >= 0x80).count();
        for c in char::decode_utf16(units[i..i + other].iter().copied()) {
            let c = c.unwrap_or_else(|_| {
                well_formed = false;
                char::REPLACEMENT_CHARACTER
            });
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
        }
        i += other;
    }
    well_formed
}

/// Per document of `index`, the position in the input list of its tool: `indexed` is what the
/// index was built from (`PackedTools::tools`), which numbers well-formed tools only.
pub fn positions(index: &SearchIndex, indexed: &[(usize, ToolText)]) -> Vec<u32> {
    (0..index.size() as u32)
        .map(|doc| indexed[index.source(doc) as usize].0 as u32)
        .collect()
}

/// A host ranking's documents as fusion reads them: the first [`MAX_FUSED_RANKING`] entries,
/// documents of the index only, each once, best first.
pub fn ranking_docs(docs: impl IntoIterator<Item = u32>, size: usize) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for d in docs.into_iter().take(MAX_FUSED_RANKING) {
        if (d as usize) < size && !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// A ranking with its scores (the score-based fusion): pairs of `docs` and `scores` read as
/// [`ranking_docs`] reads documents; a document without a score (a shorter `scores`) is dropped.
pub fn scored_ranking_docs(docs: &[u32], scores: &[f32], size: usize) -> Vec<(u32, f32)> {
    let mut out: Vec<(u32, f32)> = Vec::new();
    for (&d, &s) in docs.iter().zip(scores).take(MAX_FUSED_RANKING) {
        if (d as usize) < size && s.is_finite() && !out.iter().any(|p| p.0 == d) {
            out.push((d, s));
        }
    }
    out
}

/// The hits as `out` carries them: `[count, then per hit: doc, score, matched count, the matched
/// terms' positions in the query's terms…]`.
pub fn encode_hits(index: &SearchIndex, terms: &QueryTerms, hits: &[Hit]) -> Vec<f64> {
    let mut packed: Vec<f64> = Vec::with_capacity(1 + hits.len() * (HIT_HEADER + 1));
    packed.push(hits.len() as f64);
    for hit in hits {
        let matched = index.matched(terms, hit.doc);
        packed.push(f64::from(hit.doc));
        packed.push(f64::from(hit.score));
        packed.push(matched.len() as f64);
        packed.extend(matched.iter().map(|&t| t as f64));
    }
    packed
}

/// The query's terms as the query returns them, joined by [`TERM_SEPARATOR`].
pub fn joined_terms(terms: &QueryTerms) -> String {
    terms.surface.join(TERM_SEPARATOR)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::Scoring;

    fn utf16(s: &str) -> Vec<u16> {
        s.encode_utf16().collect()
    }

    /// Packs tools as lib/search.js does: (name, description, parameter text) in UTF-16 units.
    fn pack(tools: &[[&[u16]; 3]]) -> (Vec<u16>, Vec<u32>) {
        let (mut units, mut lengths) = (Vec::new(), Vec::new());
        for fields in tools {
            for f in fields {
                units.extend_from_slice(f);
                lengths.push(f.len() as u32);
            }
        }
        (units, lengths)
    }

    #[test]
    fn decodes_each_segment_on_its_own_and_leaves_out_lone_surrogate_names() {
        let (a, b, c) = (
            utf16("get_weather"),
            utf16("Weather é"),
            utf16("city The city "),
        );
        // `pay\ud800` and a description starting with `\udc00`: decoded together they would make
        // one valid pair; each segment on its own shows two lone surrogates.
        let mut bad_name = utf16("pay");
        bad_name.push(0xd800);
        let mut desc = vec![0xdc00];
        desc.extend(utf16(" invoice"));
        let (units, lengths) = pack(&[[&a, &b, &c], [&bad_name, &desc, &[]]]);
        let packed = decode_tools(&units, &lengths).expect("well-formed lengths");
        let tools = packed.tools();
        assert_eq!(tools.len(), 1);
        assert_eq!(tools[0].0, 0);
        assert_eq!(tools[0].1.name, "get_weather");
        assert_eq!(tools[0].1.description, "Weather é");
        assert_eq!(tools[0].1.parameters, "city The city ");
        assert_eq!(packed.text.matches('\u{FFFD}').count(), 2);
    }

    #[test]
    fn refuses_lengths_that_are_not_whole_tools_or_do_not_cover_the_text() {
        let units = utf16("abc");
        assert!(decode_tools(&units, &[1, 1, 1]).is_some());
        assert!(decode_tools(&units, &[1, 1]).is_none());
        assert!(decode_tools(&units, &[1, 1, 0]).is_none());
        assert!(decode_tools(&units, &[1, 1, 2]).is_none());
        assert!(decode_tools(&units, &[u32::MAX, 1, 1]).is_none());
        assert!(decode_tools(&[], &[]).is_some_and(|p| p.tools().is_empty()));
    }

    #[test]
    fn cuts_descriptions_and_parameter_text_to_the_indexed_bytes_on_a_boundary() {
        let long = utf16(&"é".repeat(10_000)); // 20 000 bytes of UTF-8
        let (units, lengths) = pack(&[[&utf16("t"), &long, &long]]);
        let packed = decode_tools(&units, &lengths).unwrap();
        let tool = packed.tools()[0].1;
        assert_eq!(tool.description.len(), INDEXED_TEXT_BYTES);
        assert_eq!(tool.parameters.len(), INDEXED_TEXT_BYTES);
        let mut text = ParameterText::default();
        let mut read = 0;
        while !text.is_full(read) {
            text.push("ab");
            read += 1;
        }
        assert_eq!(read, INDEXED_PARAMETERS);
        assert_eq!(text.finish(), "ab ".repeat(INDEXED_PARAMETERS));
    }

    #[test]
    fn lays_out_hits_and_maps_documents_back_to_list_positions() {
        let (a, b) = (utf16("send_email"), utf16("Send an email"));
        let (c, d) = (utf16("read_email"), utf16("Read an email"));
        let mut bad = utf16("x");
        bad.push(0xdfff);
        let (units, lengths) = pack(&[
            [&bad, &[], &[]],
            [&a, &b, &[]],
            [&a, &d, &[]],
            [&c, &d, &[]],
        ]);
        let packed = decode_tools(&units, &lengths).unwrap();
        let tools = packed.tools();
        let index = SearchIndex::build(tools.iter().map(|(_, t)| *t), Scoring::DEFAULT);
        // The lone-surrogate tool is left out and the repeated name keeps its first tool.
        assert_eq!(positions(&index, &tools), vec![1, 3]);
        let (terms, hits) = index.search("send email", 16);
        let out = encode_hits(&index, &terms, &hits);
        assert_eq!(joined_terms(&terms), "send email");
        assert_eq!(out[0], 2.0);
        assert_eq!(&out[1..2], &[0.0]);
        assert_eq!(&out[3..6], &[2.0, 0.0, 1.0]);
        assert_eq!(out[6], 1.0);
        assert_eq!(&out[8..], &[1.0, 1.0]);
        assert_eq!(out.len(), 1 + 2 * HIT_HEADER + 2 + 1);
    }

    #[test]
    fn reads_a_ranking_as_fusion_does() {
        assert_eq!(ranking_docs([3, 1, 3, 9, 0], 4), vec![3, 1, 0]);
        let long = (0..1000u32).map(|d| d % 300);
        assert_eq!(ranking_docs(long, 1000).len(), MAX_FUSED_RANKING);
        assert!(ranking_docs([], 0).is_empty());
    }
}
