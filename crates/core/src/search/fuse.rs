//! The hybrid-scoring seam: reciprocal rank fusion (RRF) of the lexical ranking with an embedding
//! ranking: a host's own (`search(query, { ranking })`) or the shipped model's (a hybrid index,
//! lib/search-hybrid.js, and its `search_tools`). Off unless one is given; lexical search never
//! needs embeddings. Fusion works on ranks only, so the two scores never need a common scale.
//!
//! The constants were chosen on the tuning halves of the three retrieval sets with a real embedding
//! ranking (all-MiniLM-L6-v2, `fixtures/minilm-rankings.json`); docs/search.md has the table. A
//! small `RRF_K` lets the top few ranks of either list decide, and the host's list counts 1.5×:
//! on requests that share no word with the right tool, only the host's list can find it.

use super::index::Hit;

/// The RRF constant: a document at rank `r` (1-based) in a list adds `weight / (RRF_K + r)`.
pub const RRF_K: f32 = 5.0;
/// Lexical hits read for fusion.
pub const LEXICAL_DEPTH: usize = 32;
/// The host ranking's weight when the host gives none (the lexical list's is 1).
pub const DEFAULT_RANKING_WEIGHT: f32 = 1.5;
/// Largest host weight; larger values clamp to it.
pub const MAX_RANKING_WEIGHT: f32 = 100.0;

/// Fuses the lexical `hits` (best first) with `dense` (document ids, best first, distinct) weighted
/// by `weight`, and returns the top `k`: higher fused score first, ties by first appearance
/// (lexical, then dense). A weight of 0 leaves the lexical order as it is.
pub fn reciprocal_rank_fusion(hits: &[Hit], dense: &[u32], weight: f32, k: usize) -> Vec<Hit> {
    fuse_with(hits, dense, weight, k, RRF_K, LEXICAL_DEPTH)
}

/// `reciprocal_rank_fusion` with its constants as parameters, for the evaluation's sweep.
pub(crate) fn fuse_with(
    hits: &[Hit],
    dense: &[u32],
    weight: f32,
    k: usize,
    rrf_k: f32,
    depth: usize,
) -> Vec<Hit> {
    let mut out: Vec<Hit> = Vec::with_capacity(hits.len().min(depth) + dense.len());
    for (r, h) in hits.iter().take(depth).enumerate() {
        out.push(Hit {
            doc: h.doc,
            score: 1.0 / (rrf_k + r as f32 + 1.0),
        });
    }
    if weight > 0.0 {
        for (r, &doc) in dense.iter().enumerate() {
            let add = weight / (rrf_k + r as f32 + 1.0);
            match out.iter_mut().find(|h| h.doc == doc) {
                Some(h) => h.score += add,
                None => out.push(Hit { doc, score: add }),
            }
        }
    }
    // A stable sort keeps first appearance among equal scores.
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out.truncate(k);
    out
}

/// The embedding share of the score-based fusion when the host gives none (measured on the
/// held-out requests of the issue that asked for it: recall@5 as RRF's, recall@1 higher).
pub const DEFAULT_SCORE_SHARE: f32 = 0.6;

/// The score-based fusion, the option beside RRF: each tool scores `share ×` its cosine min–max
/// normalised over `dense` plus `(1 − share) ×` its BM25 score over the top lexical score; a tool
/// in one list only gets 0 from the other. `dense` is (document, cosine), best first, distinct;
/// `share` is clamped to 0…1. Ties keep first appearance (lexical, then dense).
pub fn score_fusion(hits: &[Hit], dense: &[(u32, f32)], share: f32, k: usize) -> Vec<Hit> {
    let share = if share.is_nan() {
        DEFAULT_SCORE_SHARE
    } else {
        share.clamp(0.0, 1.0)
    };
    let top = hits
        .iter()
        .take(LEXICAL_DEPTH)
        .map(|h| h.score)
        .fold(0.0f32, f32::max);
    let (lo, hi) = dense
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), d| {
            (lo.min(d.1), hi.max(d.1))
        });
    let span = hi - lo;
    let mut out: Vec<Hit> = Vec::with_capacity(hits.len().min(LEXICAL_DEPTH) + dense.len());
    for h in hits.iter().take(LEXICAL_DEPTH) {
        let lexical = if top > 0.0 { h.score / top } else { 0.0 };
        out.push(Hit {
            doc: h.doc,
            score: (1.0 - share) * lexical,
        });
    }
    for &(doc, cosine) in dense {
        // One cosine for every entry (span 0) counts as the best.
        let norm = if span > 0.0 {
            (cosine - lo) / span
        } else {
            1.0
        };
        let add = share * norm;
        match out.iter_mut().find(|h| h.doc == doc) {
            Some(h) => h.score += add,
            None => out.push(Hit { doc, score: add }),
        }
    }
    out.sort_by(|a, b| b.score.total_cmp(&a.score));
    out.truncate(k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(doc: u32) -> Hit {
        Hit { doc, score: 1.0 }
    }

    #[test]
    fn agreement_wins_and_either_list_alone_still_counts() {
        let lexical = [hit(0), hit(1), hit(2)];
        let fused = reciprocal_rank_fusion(&lexical, &[2, 5], 1.0, 10);
        let docs: Vec<u32> = fused.iter().map(|h| h.doc).collect();
        // 2 is in both lists, so it passes 0 (first in one list only); 5 is dense-only.
        assert_eq!(docs, vec![2, 0, 1, 5]);
        assert!((fused[0].score - (1.0 / 8.0 + 1.0 / 6.0)).abs() < 1e-6);
        // The host's weight: at 3, its second choice passes the lexical second.
        let docs: Vec<u32> = reciprocal_rank_fusion(&lexical, &[2, 5], 3.0, 10)
            .iter()
            .map(|h| h.doc)
            .collect();
        assert_eq!(docs, vec![2, 5, 0, 1]);
    }

    #[test]
    fn score_fusion_weighs_normalised_scores() {
        let lexical = [Hit { doc: 0, score: 4.0 }, Hit { doc: 1, score: 2.0 }];
        // Cosines 0.9 (doc 2), 0.5 (doc 1), 0.1 (doc 3): normalised 1, 0.5, 0.
        let dense = [(2, 0.9), (1, 0.5), (3, 0.1)];
        let fused = score_fusion(&lexical, &dense, 0.6, 10);
        let docs: Vec<u32> = fused.iter().map(|h| h.doc).collect();
        // doc 2: 0.6; doc 1: 0.4 × 0.5 + 0.6 × 0.5 = 0.5; doc 0: 0.4; doc 3: 0.
        assert_eq!(docs, vec![2, 1, 0, 3]);
        assert!((fused[1].score - 0.5).abs() < 1e-6);
        // Share 0 keeps the lexical order first; NaN gives the default share.
        let docs: Vec<u32> = score_fusion(&lexical, &dense, 0.0, 2)
            .iter()
            .map(|h| h.doc)
            .collect();
        assert_eq!(docs, vec![0, 1]);
        assert_eq!(score_fusion(&lexical, &dense, f32::NAN, 10), fused);
        // No lexical hits: the embedding order alone.
        let docs: Vec<u32> = score_fusion(&[], &dense, 0.6, 10)
            .iter()
            .map(|h| h.doc)
            .collect();
        assert_eq!(docs, vec![2, 1, 3]);
    }

    #[test]
    fn weight_zero_and_depth() {
        let lexical: Vec<Hit> = (0..40).map(hit).collect();
        let fused = reciprocal_rank_fusion(&lexical, &[39, 50], 0.0, 64);
        let docs: Vec<u32> = fused.iter().map(|h| h.doc).collect();
        // Only the first LEXICAL_DEPTH lexical hits are read; weight 0 adds nothing.
        assert_eq!(docs, (0..LEXICAL_DEPTH as u32).collect::<Vec<_>>());
    }

    #[test]
    fn no_dense_ranking_keeps_the_lexical_order_and_k_cuts() {
        let lexical = [hit(3), hit(1), hit(2)];
        let docs: Vec<u32> = reciprocal_rank_fusion(&lexical, &[], 1.5, 2)
            .iter()
            .map(|h| h.doc)
            .collect();
        assert_eq!(docs, vec![3, 1]);
        assert!(reciprocal_rank_fusion(&lexical, &[4], 1.5, 0).is_empty());
    }
}
