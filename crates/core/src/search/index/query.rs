//! Querying the index: a query's terms as the build resolved its tokens, the top `k` documents by
//! summed impacts, and which terms each hit matched.

use super::{Hit, QueryTerms, SearchIndex};
use crate::search::stem::stem_cached;
use crate::search::tokenize::for_each_token;

impl SearchIndex {
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
