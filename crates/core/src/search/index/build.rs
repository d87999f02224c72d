//! Building the index: documents from the tool list (first tool of each name), tokens resolved to
//! terms through the build's dictionary, a long list read on two threads, then the CSR postings
//! with each posting's final BM25F impact.

use super::{Scoring, SearchIndex, TextList, ToolText, FIELDS};
use crate::search::dictionary::TokenMap;
use crate::search::hash::FxMap;
use crate::search::stem::{stem_cached, Stem};
use crate::search::stopwords::{REQUEST_WORDS, STOP_WORDS};
use crate::search::tokenize::for_each_raw_token;

/// What a build uses only while it runs, kept per thread for the next build: on the JS thread
/// the previous index is often still alive, so fresh maps and lists would land on freshly
/// mapped pages, and faulting them in cost more than clearing these.
#[derive(Default)]
struct Scratch {
    /// Token as typed → term id.
    words: TokenMap,
    /// (term, field counts) per doc, flattened.
    entries: Entries,
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
    slots: Slots,
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
            slots: Slots::with_len(stop_count as usize),
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
            if let Some(id) = self.words.get_raw(raw, fold) {
                return id;
            }
        }
        let tok = folded(raw, fold, &mut self.lower);
        // Stop words are matched as typed, before stemming (`please` → `pleas`).
        let stop_count = self.stop_count;
        let id = match self.terms.get(tok).filter(|&id| id < stop_count) {
            Some(id) => id,
            None => {
                let (terms, slots) = (&mut self.terms, &mut self.slots);
                stem_cached(
                    self.scoring.stem,
                    tok,
                    &mut self.stem_buf,
                    |term| match terms.get(term) {
                        Some(id) => id,
                        None => {
                            let id = terms.len() as u32;
                            terms.insert(term, id);
                            slots.grow();
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
    fn count(&mut self, doc: u32, id: u32, counts: [u16; FIELDS], entries: &mut Entries) {
        let have = self.slots.entry(doc, id, entries);
        for f in 0..FIELDS {
            have[f] = have[f].saturating_add(counts[f]);
        }
    }
}

/// Entries of (term, field counts), flattened per document.
type Entries = Vec<(u32, [u16; FIELDS])>;

/// Per term (or token): the last document it occurred in and the slot of its entry there, so the
/// counts of one term in one document share one entry.
struct Slots {
    last_doc: Vec<u32>,
    slot: Vec<u32>,
}

impl Slots {
    fn with_len(n: usize) -> Slots {
        Slots {
            last_doc: vec![u32::MAX; n],
            slot: vec![0; n],
        }
    }

    /// Makes room for the next id.
    fn grow(&mut self) {
        self.last_doc.push(u32::MAX);
        self.slot.push(0);
    }

    /// The field counts of `id` in document `doc`: a new zeroed entry at the end of `entries`
    /// the first time in that document.
    #[inline]
    fn entry<'e>(&mut self, doc: u32, id: u32, entries: &'e mut Entries) -> &'e mut [u16; FIELDS] {
        let i = id as usize;
        if self.last_doc[i] != doc {
            self.last_doc[i] = doc;
            self.slot[i] = entries.len() as u32;
            entries.push((id, [0; FIELDS]));
        }
        &mut entries[self.slot[i] as usize].1
    }
}

/// `raw` lower-cased into `buf` when `fold` (ASCII with capitals), else `raw` itself.
#[inline]
fn folded<'t>(raw: &'t str, fold: bool, buf: &'t mut String) -> &'t str {
    if !fold {
        return raw;
    }
    buf.clear();
    buf.push_str(raw);
    buf.make_ascii_lowercase();
    buf
}

/// Calls `each(field, token, fold)` for every raw token of the fields of `tool` that have a
/// weight (see `for_each_raw_token`), name first.
#[inline]
fn for_each_field_token(
    tool: &ToolText,
    weights: [f32; FIELDS],
    buf: &mut String,
    mut each: impl FnMut(usize, &str, bool),
) {
    let texts = [tool.name, tool.description, tool.parameters];
    for (field, text) in texts.iter().enumerate() {
        if weights[field] <= 0.0 || text.is_empty() {
            continue;
        }
        for_each_raw_token(text, buf, |raw, fold| each(field, raw, fold));
    }
}

/// The documents indexed so far: all (term, field counts) per doc, flattened (`doc_end[d]` closes
/// doc d), and each doc's field lengths.
struct Counts<'e> {
    entries: &'e mut Entries,
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
            for_each_field_token(tool, weights, &mut buf, |field, raw, fold| {
                let id = dict.resolve(raw, fold);
                if id < dict.stop_count {
                    return;
                }
                let mut one = [0u16; FIELDS];
                one[field] = 1;
                dict.count(doc, id, one, self.entries);
                len[field] += 1;
            });
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
    entries: Entries,
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
    let mut slots = Slots::with_len(0);
    let (mut buf, mut lower) = (String::new(), String::new());
    for (doc, tool) in docs.iter().enumerate() {
        let doc = doc as u32;
        let mut len = [0u32; FIELDS];
        for_each_field_token(tool, weights, &mut buf, |field, raw, fold| {
            let id = match local.get_raw(raw, fold) {
                Some(id) => id,
                None => {
                    let tok = folded(raw, fold, &mut lower);
                    if stop.get(tok).is_some() {
                        return;
                    }
                    match local.get(tok) {
                        Some(id) => id,
                        None => {
                            let id = part.tokens.len() as u32;
                            local.insert(tok, id);
                            part.tokens.push(tok);
                            slots.grow();
                            id
                        }
                    }
                }
            };
            let c = &mut slots.entry(doc, id, &mut part.entries)[field];
            *c = c.saturating_add(1);
            len[field] += 1;
        });
        part.doc_end.push(part.entries.len() as u32);
        part.lens.push(len);
    }
    part
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::index::Hit;

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
