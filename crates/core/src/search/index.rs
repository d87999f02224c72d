//! The BM25-lite index: built once from a tool list, immutable, queried on the JS thread.
//!
//! Each tool is a document with fields: its name, its description and (optionally) the names and
//! descriptions of its parameters. Scoring is BM25F: per field, term frequencies are normalized by
//! the field's length, weighted (name ×3 by default), summed, then saturated with `k1` and
//! multiplied by the term's IDF over the indexed list. Everything but the query is known at build
//! time, so each posting stores its final contribution ("impact") and a query is a sum of impacts.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::dictionary::TokenMap;
use super::stem::{stem_cached, Stem};
use super::stopwords::{REQUEST_WORDS, STOP_WORDS};
use super::tokenize::{for_each_raw_token, for_each_token};

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

/// What a build uses only while it runs, kept per thread for the next build: on the JS thread
/// the previous index is often still alive, so fresh maps and lists would land on freshly
/// mapped pages, and faulting them in cost more than clearing these.
#[derive(Default)]
struct Scratch {
    /// Token as typed → term id.
    words: TokenMap,
    /// (term, field counts) per doc, flattened.
    entries: Vec<(u32, [u16; FIELDS])>,
}

/// Most bytes of scratch a thread keeps between builds (a 1 024-tool build uses ~0.8 MB).
const SCRATCH_BYTES: usize = 4 << 20;

impl Scratch {
    /// Puts the scratch back for the next build on this thread, unless it grew too large.
    fn keep(self) {
        let bytes = self.words.heap_bytes()
            + self.entries.capacity() * std::mem::size_of::<(u32, [u16; FIELDS])>();
        if bytes <= SCRATCH_BYTES {
            SCRATCH.with(|s| s.set(Some(self)));
        }
    }
}

thread_local! {
    static SCRATCH: std::cell::Cell<Option<Scratch>> = const { std::cell::Cell::new(None) };
}

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
    /// Builds the index. Tools whose name was already seen are skipped (the first one wins), so
    /// `size()` counts distinct names. The caller enforces the tool cap.
    pub fn build<'a>(
        tools: impl IntoIterator<Item = ToolText<'a>>,
        scoring: Scoring,
    ) -> SearchIndex {
        Self::build_on(tools, scoring, Threads::Auto)
    }

    /// `build` with the threads chosen (the tests compare one and two).
    pub(crate) fn build_on<'a>(
        tools: impl IntoIterator<Item = ToolText<'a>>,
        scoring: Scoring,
        threads: Threads,
    ) -> SearchIndex {
        let mut names = TextList::default();
        let mut descriptions = TextList::default();
        let tools = tools.into_iter();
        // Distinct terms grow with the list: sized up front, the maps never rehash in the common case.
        let hint = tools.size_hint();
        let capacity = (hint.1.unwrap_or(hint.0) * 4).clamp(256, 8192);
        let mut seen: FxMap<&'a str, ()> =
            FxMap::with_capacity_and_hasher(hint.0, Default::default());
        let mut sources: Vec<u32> = Vec::with_capacity(hint.0);
        // The documents: the first tool of each name.
        let mut docs: Vec<ToolText<'a>> = Vec::with_capacity(hint.0);
        for (source, tool) in tools.enumerate() {
            if seen.insert(tool.name, ()).is_some() {
                continue;
            }
            sources.push(source as u32);
            names.push(tool.name);
            descriptions.push(tool.description);
            docs.push(tool);
        }
        let weights = [
            scoring.name_weight,
            scoring.description_weight,
            scoring.parameter_weight,
        ];
        // What only the build uses, from the thread's scratch (taken, so a build inside a build
        // would start its own).
        let mut scratch = SCRATCH.with(|s| s.take()).unwrap_or_default();
        let mut dict = Dictionary::new(scoring, capacity, &mut scratch.words);
        scratch.entries.clear();
        let mut counts = Counts {
            entries: &mut scratch.entries,
            doc_end: Vec::with_capacity(docs.len()),
            lens: Vec::with_capacity(docs.len()),
        };

        // A long list is read on two threads: this one indexes the first part while another
        // tokenizes the rest into counts of tokens as typed; their terms are resolved here, in the
        // order they first occur, so the index is the one a single thread builds.
        let split = match threads {
            #[cfg(test)]
            Threads::One => docs.len(),
            #[cfg(test)]
            Threads::Two => text_split(&docs),
            Threads::Auto => parallel_split(&docs),
        };
        let (own, rest) = docs.split_at(split);
        std::thread::scope(|scope| {
            let worker = if rest.is_empty() {
                None
            } else {
                std::thread::Builder::new()
                    .name("prism-tool-search".into())
                    .spawn_scoped(scope, || read_part(rest, weights, stop_lists(scoring)))
                    .ok()
            };
            counts.index(own, weights, &mut dict);
            // A worker that could not start or did not finish leaves its part to this thread.
            match worker.and_then(|w| w.join().ok()) {
                Some(part) => counts.merge(part, &mut dict),
                None => counts.index(rest, weights, &mut dict),
            }
        });
        let Dictionary {
            terms, stop_count, ..
        } = dict;
        let Counts {
            entries,
            doc_end,
            lens,
        } = counts;

        let n = names.len();
        let mut avg = [0f32; FIELDS];
        for l in &lens {
            for f in 0..FIELDS {
                avg[f] += l[f] as f32;
            }
        }
        for a in &mut avg {
            *a = if n == 0 { 0.0 } else { *a / n as f32 };
        }

        // Document frequency per term, then CSR offsets.
        let term_count = terms.len();
        let mut df = vec![0u32; term_count];
        for (id, _) in entries.iter() {
            df[*id as usize] += 1;
        }
        let mut post_start = Vec::with_capacity(term_count + 1);
        let mut acc = 0u32;
        post_start.push(0);
        for d in &df {
            acc += d;
            post_start.push(acc);
        }
        let mut fill: Vec<u32> = post_start[..term_count].to_vec();
        let mut post_doc = vec![0u32; entries.len()];
        let mut post_impact = vec![0f32; entries.len()];
        let k1 = scoring.k1;
        let idf: Vec<f32> = df
            .iter()
            .map(|&d| (1.0 + (n as f32 - d as f32 + 0.5) / (d as f32 + 0.5)).ln())
            .collect();
        let mut start = 0usize;
        for (doc, &end) in doc_end.iter().enumerate() {
            let len = lens[doc];
            let mut norm = [0f32; FIELDS];
            for f in 0..FIELDS {
                let b = match f {
                    0 => scoring.name_b,
                    1 => scoring.b,
                    _ => scoring.parameter_b,
                };
                norm[f] = if avg[f] > 0.0 {
                    1.0 - b + b * len[f] as f32 / avg[f]
                } else {
                    1.0
                };
            }
            for &(id, counts) in &entries[start..end as usize] {
                let mut tf = 0f32;
                for f in 0..FIELDS {
                    if counts[f] > 0 {
                        tf += weights[f] * counts[f] as f32 / norm[f];
                    }
                }
                let impact = idf[id as usize] * tf * (k1 + 1.0) / (k1 + tf);
                let at = &mut fill[id as usize];
                post_doc[*at as usize] = doc as u32;
                post_impact[*at as usize] = impact;
                *at += 1;
            }
            start = end as usize;
        }
        scratch.keep();

        SearchIndex {
            scoring,
            names,
            descriptions,
            sources,
            terms,
            stop_count,
            post_start,
            post_doc,
            post_impact,
        }
    }

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

    /// Tokenizes a query: distinct terms in first-seen order, stop words dropped when the scoring
    /// drops them, looked up in the dictionary.
    pub fn query_terms(&self, query: &str) -> QueryTerms {
        let mut out = QueryTerms::default();
        let mut buf = String::new();
        let mut stem_buf = String::new();
        let mut seen_ids: Vec<u32> = Vec::new();
        for_each_token(query, &mut buf, |tok| {
            // As the build resolved each token: a stop word as typed, else the term of its stem.
            let id = match self.terms.get(tok).filter(|&id| id < self.stop_count) {
                Some(stop) => Some(stop),
                None => stem_cached(self.scoring.stem, tok, &mut stem_buf, |term| {
                    self.terms.get(term)
                }),
            };
            // Stop words, and terms the index has never seen, cannot match anything: dropped.
            if let Some(id) = id.filter(|&id| id >= self.stop_count) {
                if !seen_ids.contains(&id) {
                    seen_ids.push(id);
                    out.surface.push(tok.to_owned());
                    out.ids.push(Some(id));
                }
            }
        });
        out
    }

    /// The top `k` hits for `terms`: highest score first, ties in input order; only tools that
    /// match at least one term.
    pub fn search_terms(&self, terms: &QueryTerms, k: usize) -> Vec<Hit> {
        let n = self.names.len();
        if k == 0 || n == 0 || terms.is_empty() {
            return Vec::new();
        }
        let mut acc = vec![0f32; n];
        let mut touched: Vec<u32> = Vec::new();
        for id in terms.ids.iter().flatten() {
            let (s, e) = (
                self.post_start[*id as usize] as usize,
                self.post_start[*id as usize + 1] as usize,
            );
            for p in s..e {
                let d = self.post_doc[p];
                let a = &mut acc[d as usize];
                if *a == 0.0 {
                    touched.push(d);
                }
                *a += self.post_impact[p];
            }
        }
        if self.scoring.coord > 0.0 {
            // Coordination: each doc's share of the query's terms, counted per posting list.
            let mut count = vec![0u16; n];
            for id in terms.ids.iter().flatten() {
                let (s, e) = (
                    self.post_start[*id as usize] as usize,
                    self.post_start[*id as usize + 1] as usize,
                );
                for &d in &self.post_doc[s..e] {
                    count[d as usize] += 1;
                }
            }
            let q = terms.ids.iter().flatten().count() as f32;
            for &d in &touched {
                acc[d as usize] *= (f32::from(count[d as usize]) / q).powf(self.scoring.coord);
            }
        }
        let mut hits: Vec<Hit> = touched
            .into_iter()
            .map(|doc| Hit {
                doc,
                score: acc[doc as usize],
            })
            .collect();
        let better = |a: &Hit, b: &Hit| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc));
        if hits.len() > k {
            hits.select_nth_unstable_by(k - 1, better);
            hits.truncate(k);
        }
        hits.sort_unstable_by(better);
        hits
    }

    /// Convenience: tokenize and search.
    pub fn search(&self, query: &str, k: usize) -> (QueryTerms, Vec<Hit>) {
        let terms = self.query_terms(query);
        let hits = self.search_terms(&terms, k);
        (terms, hits)
    }

    /// Which query terms (indexes into `terms.surface`) occur in `doc`, in query order.
    pub fn matched(&self, terms: &QueryTerms, doc: u32) -> Vec<usize> {
        let mut out = Vec::new();
        for (i, id) in terms.ids.iter().enumerate() {
            if let Some(id) = id {
                let (s, e) = (
                    self.post_start[*id as usize] as usize,
                    self.post_start[*id as usize + 1] as usize,
                );
                if self.post_doc[s..e].binary_search(&doc).is_ok() {
                    out.push(i);
                }
            }
        }
        out
    }
}

/// Lists of at least this many tools are read on two threads (when the machine has two).
const PARALLEL_DOCS: usize = 256;

/// How many threads a build reads its list on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Threads {
    #[cfg(test)]
    One,
    #[cfg(test)]
    Two,
    /// Two for a long list on a machine with two cores or more, else one.
    Auto,
}

/// Where the list is cut between this thread and the worker (`text_split`); `docs.len()` (nothing
/// for the worker) for a short list or a single core.
fn parallel_split(docs: &[ToolText]) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if docs.len() < PARALLEL_DOCS || cores < 2 {
        return docs.len();
    }
    text_split(docs)
}

#[cfg(test)]
pub(crate) fn text_split_for_tests(docs: &[ToolText]) -> usize {
    text_split(docs)
}

/// At ~45 % of the text: this thread also resolves the worker's tokens afterwards.
fn text_split(docs: &[ToolText]) -> usize {
    let bytes = |t: &ToolText| t.name.len() + t.description.len() + t.parameters.len();
    let total: usize = docs.iter().map(bytes).sum();
    let mut acc = 0;
    for (i, t) in docs.iter().enumerate() {
        acc += bytes(t);
        if acc * 20 >= total * 9 {
            return i + 1;
        }
    }
    docs.len()
}

/// The stop words (and request words) a scoring drops, as typed.
fn stop_lists(scoring: Scoring) -> [&'static [&'static str]; 2] {
    match (scoring.stop_words, scoring.request_words) {
        (false, _) => [&[], &[]],
        (true, false) => [STOP_WORDS, &[]],
        (true, true) => [STOP_WORDS, REQUEST_WORDS],
    }
}

/// The build's dictionary: terms (stems, or stop words, which hold ids `0..stop_count`) and, when
/// stemming, tokens as typed → term id.
struct Dictionary<'s> {
    scoring: Scoring,
    terms: TokenMap,
    stop_count: u32,
    words: &'s mut TokenMap,
    /// Per term: the last doc it occurred in and its slot in that doc's entries.
    last_doc: Vec<u32>,
    slot: Vec<u32>,
    lower: String,
    stem_buf: String,
}

impl<'s> Dictionary<'s> {
    fn new(scoring: Scoring, capacity: usize, words: &'s mut TokenMap) -> Dictionary<'s> {
        let mut terms = TokenMap::with_capacity(capacity);
        // Stop words take the first ids, so one dictionary lookup also tells a stop word.
        let mut stop_count = 0u32;
        for w in stop_lists(scoring).iter().copied().flatten() {
            terms.insert(w, stop_count);
            stop_count += 1;
        }
        let stemming = scoring.stem != Stem::None;
        // Token as typed → term id, when stemming: for this build only. Queries go through the
        // per-thread stem cache instead, so an index does not hold a second dictionary while it
        // waits for its finalizer.
        words.clear_for(if stemming { capacity } else { 0 });
        Dictionary {
            scoring,
            terms,
            stop_count,
            words,
            last_doc: vec![u32::MAX; stop_count as usize],
            slot: vec![0; stop_count as usize],
            lower: String::new(),
            stem_buf: String::new(),
        }
    }

    /// The term id of a token (`fold`: ASCII with capitals, to lower-case); ids below
    /// `stop_count` are stop words.
    #[inline]
    fn resolve(&mut self, raw: &str, fold: bool) -> u32 {
        let stemming = self.scoring.stem != Stem::None;
        // Stemming is the costly step: each distinct token is stemmed once, then found in `words`
        // by its packed key, lower-cased in a register.
        if stemming {
            if let Some(key) = TokenMap::pack(raw) {
                let key = if fold { TokenMap::fold_ascii(key) } else { key };
                if let Some(id) = self.words.get_packed(key) {
                    return id;
                }
            }
        }
        let tok: &str = if fold {
            self.lower.clear();
            self.lower.push_str(raw);
            self.lower.make_ascii_lowercase();
            &self.lower
        } else {
            raw
        };
        // Stop words are matched as typed, before stemming (`please` → `pleas`).
        let stop_count = self.stop_count;
        let id = match self.terms.get(tok).filter(|&id| id < stop_count) {
            Some(id) => id,
            None => {
                let (terms, last_doc, slot) = (&mut self.terms, &mut self.last_doc, &mut self.slot);
                stem_cached(
                    self.scoring.stem,
                    tok,
                    &mut self.stem_buf,
                    |term| match terms.get(term) {
                        Some(id) => id,
                        None => {
                            let id = terms.len() as u32;
                            terms.insert(term, id);
                            last_doc.push(u32::MAX);
                            slot.push(0);
                            id
                        }
                    },
                )
            }
        };
        if stemming {
            self.words.insert(tok, id);
        }
        id
    }

    /// Adds `counts` of term `id` to document `doc`, whose entries start at the end of `entries`
    /// when it is new.
    #[inline]
    fn count(
        &mut self,
        doc: u32,
        id: u32,
        counts: [u16; FIELDS],
        entries: &mut Vec<(u32, [u16; FIELDS])>,
    ) {
        let i = id as usize;
        if self.last_doc[i] != doc {
            self.last_doc[i] = doc;
            self.slot[i] = entries.len() as u32;
            entries.push((id, counts));
        } else {
            let have = &mut entries[self.slot[i] as usize].1;
            for f in 0..FIELDS {
                have[f] = have[f].saturating_add(counts[f]);
            }
        }
    }
}

/// The documents indexed so far: all (term, field counts) per doc, flattened (`doc_end[d]` closes
/// doc d), and each doc's field lengths.
struct Counts<'e> {
    entries: &'e mut Vec<(u32, [u16; FIELDS])>,
    doc_end: Vec<u32>,
    lens: Vec<[u32; FIELDS]>,
}

impl Counts<'_> {
    /// Indexes documents on this thread.
    fn index(&mut self, tools: &[ToolText], weights: [f32; FIELDS], dict: &mut Dictionary) {
        let mut buf = String::new();
        for tool in tools {
            let doc = self.doc_end.len() as u32;
            let mut len = [0u32; FIELDS];
            let texts = [tool.name, tool.description, tool.parameters];
            for (field, text) in texts.iter().enumerate() {
                if weights[field] <= 0.0 || text.is_empty() {
                    continue;
                }
                for_each_raw_token(text, &mut buf, |raw, fold| {
                    let id = dict.resolve(raw, fold);
                    if id < dict.stop_count {
                        return;
                    }
                    let mut one = [0u16; FIELDS];
                    one[field] = 1;
                    dict.count(doc, id, one, self.entries);
                    len[field] += 1;
                });
            }
            self.doc_end.push(self.entries.len() as u32);
            self.lens.push(len);
        }
    }

    /// Appends the worker's documents: each token resolved to its term in first-seen order (so
    /// term ids are the ones one thread assigns), counts of tokens with the same term summed, and
    /// tokens whose stem is a stop word dropped from the entries and the field lengths.
    fn merge(&mut self, part: Part, dict: &mut Dictionary) {
        let ids: Vec<u32> = (0..part.tokens.len() as u32)
            .map(|t| dict.resolve(part.tokens.get(t), false))
            .collect();
        let mut start = 0usize;
        for (d, &end) in part.doc_end.iter().enumerate() {
            let doc = self.doc_end.len() as u32;
            let mut len = part.lens[d];
            for &(token, counts) in &part.entries[start..end as usize] {
                let id = ids[token as usize];
                if id < dict.stop_count {
                    for f in 0..FIELDS {
                        len[f] -= u32::from(counts[f]);
                    }
                    continue;
                }
                dict.count(doc, id, counts, self.entries);
            }
            start = end as usize;
            self.doc_end.push(self.entries.len() as u32);
            self.lens.push(len);
        }
    }
}

/// A run of documents read on the worker thread: their tokens as typed (lower-cased, stop words
/// left out), each once in first-seen order, and per document the counts of each token.
struct Part {
    tokens: TextList,
    /// (token, field counts), flattened; `doc_end[d]` closes the part's doc d.
    entries: Vec<(u32, [u16; FIELDS])>,
    doc_end: Vec<u32>,
    lens: Vec<[u32; FIELDS]>,
}

fn read_part(docs: &[ToolText], weights: [f32; FIELDS], stops: [&[&str]; 2]) -> Part {
    let mut stop = TokenMap::default();
    for w in stops.iter().copied().flatten() {
        stop.insert(w, 0);
    }
    let mut local = TokenMap::with_capacity((docs.len() * 4).clamp(256, 8192));
    let mut part = Part {
        tokens: TextList::default(),
        entries: Vec::new(),
        doc_end: Vec::with_capacity(docs.len()),
        lens: Vec::with_capacity(docs.len()),
    };
    let mut last_doc: Vec<u32> = Vec::new();
    let mut slot: Vec<u32> = Vec::new();
    let (mut buf, mut lower) = (String::new(), String::new());
    for (doc, tool) in docs.iter().enumerate() {
        let doc = doc as u32;
        let mut len = [0u32; FIELDS];
        let texts = [tool.name, tool.description, tool.parameters];
        for (field, text) in texts.iter().enumerate() {
            if weights[field] <= 0.0 || text.is_empty() {
                continue;
            }
            for_each_raw_token(text, &mut buf, |raw, fold| {
                let key =
                    TokenMap::pack(raw).map(|k| if fold { TokenMap::fold_ascii(k) } else { k });
                let found = key.and_then(|k| local.get_packed(k));
                let id = match found {
                    Some(id) => id,
                    None => {
                        let tok: &str = if fold {
                            lower.clear();
                            lower.push_str(raw);
                            lower.make_ascii_lowercase();
                            &lower
                        } else {
                            raw
                        };
                        if stop.get(tok).is_some() {
                            return;
                        }
                        match local.get(tok) {
                            Some(id) => id,
                            None => {
                                let id = part.tokens.len() as u32;
                                local.insert(tok, id);
                                part.tokens.push(tok);
                                last_doc.push(u32::MAX);
                                slot.push(0);
                                id
                            }
                        }
                    }
                };
                let i = id as usize;
                if last_doc[i] != doc {
                    last_doc[i] = doc;
                    slot[i] = part.entries.len() as u32;
                    part.entries.push((id, [0; FIELDS]));
                }
                let c = &mut part.entries[slot[i] as usize].1[field];
                *c = c.saturating_add(1);
                len[field] += 1;
            });
        }
        part.doc_end.push(part.entries.len() as u32);
        part.lens.push(len);
    }
    part
}

#[cfg(test)]
impl SearchIndex {
    /// Everything a query reads, for comparing two builds.
    pub(crate) fn internals(&self) -> (usize, u32, &[u32], &[u32], &[f32], Vec<u32>) {
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

#[cfg(test)]
mod scratch_tests {
    use super::*;

    fn tool<'a>(name: &'a str, description: &'a str) -> ToolText<'a> {
        ToolText {
            name,
            description,
            parameters: "",
        }
    }

    /// Every hit of a few queries, with exact scores.
    fn answers(index: &SearchIndex) -> Vec<(Vec<String>, Vec<Hit>)> {
        [
            "Get the WEATHER",
            "send emails",
            "createIssue on GitHub",
            "zzz",
        ]
        .iter()
        .map(|q| {
            let (terms, hits) = index.search(q, 16);
            (terms.surface, hits)
        })
        .collect()
    }

    #[test]
    fn a_build_after_another_on_the_same_thread_is_the_build_alone() {
        let list = [
            tool("get_weather", "Get the current Weather for a City"),
            tool("sendEmail", "Sends an EMAIL to one recipient"),
            tool(
                "github_createIssue",
                "Create an issue in a GitHub repository",
            ),
            tool("HTTPRequest", "Makes an HTTP request"),
        ];
        // On a thread of its own, so no earlier build left scratch behind.
        let alone =
            std::thread::spawn(move || answers(&SearchIndex::build(list, Scoring::DEFAULT)))
                .join()
                .unwrap();
        // A bigger, different list first (the scratch keeps its tokens and entries), then the list.
        let other: Vec<String> = (0..2000)
            .map(|i| format!("tool{i} Weather Sends City {i}"))
            .collect();
        let other_tools: Vec<ToolText> = other.iter().map(|s| tool(s, s)).collect();
        let before = SearchIndex::build(other_tools.iter().copied(), Scoring::DEFAULT);
        assert_eq!(before.size(), 2000);
        let after = SearchIndex::build(list, Scoring::DEFAULT);
        assert_eq!(answers(&after), alone);
        assert!(alone[0].1.first().is_some_and(|h| h.doc == 0));
    }
}
