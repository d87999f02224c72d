//! Ranking tools by the cosine of their embedding with a query's. The vectors are unit length
//! (model.rs normalises them), so the cosine is the dot product. Here and not in the core crate:
//! the core crate's dependencies would change the features candle is built with (a second full
//! build of it for no gain).

/// The `depth` rows of `vectors` (row-major, `dim` floats each) closest to `query`, best first,
/// as (row, cosine); equal cosines keep row order.
pub fn top_by_cosine(query: &[f32], vectors: &[f32], dim: usize, depth: usize) -> Vec<(u32, f32)> {
    if dim == 0 || query.len() != dim {
        return Vec::new();
    }
    let mut scored: Vec<(u32, f32)> = vectors
        .chunks_exact(dim)
        .enumerate()
        .map(|(i, row)| (i as u32, dot(query, row)))
        .collect();
    let depth = depth.min(scored.len());
    if depth == 0 {
        return Vec::new();
    }
    let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    // A partial selection, then a sort of the kept part: O(n) for 10 000 tools and depth 32.
    if depth < scored.len() {
        scored.select_nth_unstable_by(depth - 1, order);
        scored.truncate(depth);
    }
    scored.sort_by(order);
    scored
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight partial sums: the compiler vectorises this; one running sum it cannot reorder.
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut sum: f32 = acc.iter().sum();
    for (x, y) in ra.iter().zip(rb) {
        sum += x * y;
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_first_ties_in_row_order_and_depth_cuts() {
        // Rows: [1,0], [0,1], [1,0] again, [0.6,0.8].
        let vectors = [1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.6, 0.8];
        let top = top_by_cosine(&[1.0, 0.0], &vectors, 2, 3);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![0, 2, 3]);
        assert!((top[2].1 - 0.6).abs() < 1e-6);
        assert_eq!(top_by_cosine(&[1.0, 0.0], &vectors, 2, 99).len(), 4);
        assert!(top_by_cosine(&[1.0, 0.0], &vectors, 2, 0).is_empty());
        // A query of the wrong width ranks nothing rather than reading past a row.
        assert!(top_by_cosine(&[1.0], &vectors, 2, 3).is_empty());
    }

    #[test]
    fn the_dot_product_covers_the_remainder() {
        let a: Vec<f32> = (0..19).map(|i| i as f32).collect();
        let expected: f32 = a.iter().map(|x| x * x).sum();
        assert_eq!(dot(&a, &a), expected);
    }
}
