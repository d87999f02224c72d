//! The hybrid-scoring seam: reciprocal rank fusion (RRF) of the lexical ranking with a ranking the
//! host computes itself (for example from its own embeddings). Off unless the host passes one;
//! the package never computes or requires embeddings. Fusion works on ranks only, so the two
//! scores never need a common scale.

use super::index::Hit;

/// The RRF constant: a document at rank `r` (1-based) in a list adds `1 / (RRF_K + r)`.
pub const RRF_K: f32 = 60.0;

/// Fuses the lexical `hits` (best first) with `dense` (document ids, best first, distinct) and
/// returns the top `k`: higher fused score first, ties by first appearance (lexical, then dense).
pub fn reciprocal_rank_fusion(hits: &[Hit], dense: &[u32], k: usize) -> Vec<Hit> {
    let mut out: Vec<Hit> = Vec::with_capacity(hits.len() + dense.len());
    for (r, h) in hits.iter().enumerate() {
        out.push(Hit {
            doc: h.doc,
            score: 1.0 / (RRF_K + r as f32 + 1.0),
        });
    }
    for (r, &doc) in dense.iter().enumerate() {
        let add = 1.0 / (RRF_K + r as f32 + 1.0);
        match out.iter_mut().find(|h| h.doc == doc) {
            Some(h) => h.score += add,
            None => out.push(Hit { doc, score: add }),
        }
    }
    // A stable sort keeps first appearance among equal scores.
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
        let fused = reciprocal_rank_fusion(&lexical, &[2, 5], 10);
        let docs: Vec<u32> = fused.iter().map(|h| h.doc).collect();
        // 2 is in both lists, so it passes 0 (first in one list only); 5 is dense-only.
        assert_eq!(docs, vec![2, 0, 1, 5]);
        assert!((fused[0].score - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-6);
    }

    #[test]
    fn no_dense_ranking_keeps_the_lexical_order_and_k_cuts() {
        let lexical = [hit(3), hit(1), hit(2)];
        let docs: Vec<u32> = reciprocal_rank_fusion(&lexical, &[], 2)
            .iter()
            .map(|h| h.doc)
            .collect();
        assert_eq!(docs, vec![3, 1]);
        assert!(reciprocal_rank_fusion(&lexical, &[4], 0).is_empty());
    }
}
