//! The BM25-lite index: built once from a tool list, immutable, queried on the JS thread.
//!
//! Each tool is a document with fields: its name, its description and (optionally) the names and
//! descriptions of its parameters. Scoring is BM25F: per field, term frequencies are normalized by
//! the field's length, weighted (name ×3 by default), summed, then saturated with `k1` and
//! multiplied by the term's IDF over the indexed list. Everything but the query is known at build
//! time, so each posting stores its final contribution ("impact") and a query is a sum of impacts.

mod build;
mod query;

#[cfg(test)]
pub(crate) use build::{text_split_for_tests, Threads};

use super::dictionary::TokenMap;
use super::stem::Stem;

/// Scoring choices. `Scoring::DEFAULT` is what the package ships; the others exist so the
/// evaluation can measure each choice against plain BM25.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scoring {
    pub k1: f32,
    /// Length normalization of the description and parameter fields.
    pub b: f32,
    /// Length normalization of the name field.
    pub name_b: f32,
    /// Length normalization of the parameter field.
    pub parameter_b: f32,
    /// Coordination: a hit's score is multiplied by (matched query terms / query terms) to this
    /// power; 0 turns it off.
    pub coord: f32,
    pub name_weight: f32,
    pub description_weight: f32,
    /// Weight of parameter names and descriptions; 0 leaves them out of the index.
    pub parameter_weight: f32,
    pub stem: Stem,
    pub stop_words: bool,
    /// Also drop the words of a request that never name a tool (`want`, `need`, `help`, …).
    pub request_words: bool,
}

impl Scoring {
    /// Plain BM25-lite as the product page describes it: name ×3, description ×1, no stemming,
    /// no stop words, no parameters.
    pub const PLAIN: Scoring = Scoring {
        k1: 1.2,
        b: 0.75,
        name_b: 0.75,
        parameter_b: 0.75,
        coord: 0.0,
        name_weight: 3.0,
        description_weight: 1.0,
        parameter_weight: 0.0,
        stem: Stem::None,
        stop_words: false,
        request_words: false,
    };

    /// The shipped scoring: plain BM25-lite plus stop words (and request words such as `want`),
    /// parameters as a weak field (×0.3) and Porter2 stemming. docs/search.md has the measurements
    /// behind each choice on the tuning halves of three sets, including the ones left out.
    pub const DEFAULT: Scoring = Scoring {
        stop_words: true,
        request_words: true,
        parameter_weight: 0.3,
        stem: Stem::Porter2,
        ..Scoring::PLAIN
    };
}

impl Default for Scoring {
    fn default() -> Self {
        Scoring::DEFAULT
    }
}

/// One tool as the index reads it.
#[derive(Clone, Copy, Debug, Default)]
pub struct ToolText<'a> {
    pub name: &'a str,
    pub description: &'a str,
    /// Parameter names and descriptions joined with spaces (empty when unknown).
    pub parameters: &'a str,
}

/// One search hit: the document (input position among unique names) and its score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub doc: u32,
    pub score: f32,
}

/// The terms of a query after tokenizing: each distinct term once, in first-seen order.
#[derive(Debug, Default)]
pub struct QueryTerms {
    /// The term as typed (lower-cased), used for `matched`.
    pub surface: Vec<String>,
    /// The term id in the index, `None` when the index has never seen it.
    ids: Vec<Option<u32>>,
}

impl QueryTerms {
    pub fn is_empty(&self) -> bool {
        self.surface.is_empty()
    }
}

const FIELDS: usize = 3;

pub struct SearchIndex {
    scoring: Scoring,
    /// Every name and description back to back (one allocation each, not two per tool).
    names: TextList,
    descriptions: TextList,
    /// Per document, the position of its tool in the list the index was built from.
    sources: Vec<u32>,
    /// Term (stem, or stop word) → id.
    terms: TokenMap,
    /// Stop words hold term ids `0..stop_count` and have no postings.
    stop_count: u32,
    /// CSR postings: term `t` owns `post_doc[post_start[t]..post_start[t + 1]]`, docs ascending.
    post_start: Vec<u32>,
    post_doc: Vec<u32>,
    post_impact: Vec<f32>,
}

/// Strings back to back in one buffer, each found by its end offset.
#[derive(Default)]
struct TextList {
    text: String,
    ends: Vec<u32>,
}

impl TextList {
    fn push(&mut self, s: &str) {
        self.text.push_str(s);
        self.ends.push(self.text.len() as u32);
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn heap_bytes(&self) -> usize {
        self.text.capacity() + self.ends.capacity() * std::mem::size_of::<u32>()
    }

    fn get(&self, i: u32) -> &str {
        let i = i as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.text[start..self.ends[i] as usize]
    }
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex")
            .field("size", &self.names.len())
            .field("terms", &self.terms.len())
            .finish()
    }
}

impl SearchIndex {
    /// Heap bytes the index holds (capacities, approximately), for reporting to the host's GC.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.names.heap_bytes()
            + self.descriptions.heap_bytes()
            + self.terms.heap_bytes()
            + self.sources.capacity() * size_of::<u32>()
            + self.post_start.capacity() * size_of::<u32>()
            + self.post_doc.capacity() * size_of::<u32>()
            + self.post_impact.capacity() * size_of::<f32>()
    }

    /// Number of indexed tools (distinct names).
    pub fn size(&self) -> usize {
        self.names.len()
    }

    pub fn name(&self, doc: u32) -> &str {
        self.names.get(doc)
    }

    /// The position in the built-from list of the tool `doc` is (the first tool of its name).
    pub fn source(&self, doc: u32) -> u32 {
        self.sources[doc as usize]
    }

    pub fn description(&self, doc: u32) -> &str {
        self.descriptions.get(doc)
    }
}

/// What `internals` answers: term and stop-word counts, the postings (starts, documents, impacts)
/// and the source of each document.
#[cfg(test)]
pub(crate) type Internals<'a> = (usize, u32, &'a [u32], &'a [u32], &'a [f32], Vec<u32>);

#[cfg(test)]
impl SearchIndex {
    /// Everything a query reads, for comparing two builds.
    pub(crate) fn internals(&self) -> Internals<'_> {
        (
            self.terms.len(),
            self.stop_count,
            &self.post_start,
            &self.post_doc,
            &self.post_impact,
            self.sources.clone(),
        )
    }
}
