//! Tool search: a BM25-lite index over tool names and descriptions, the text of the generated
//! `search_tools` tool, and fail-closed progressive disclosure. Plain Rust, no napi types.

mod dictionary;
pub mod format;
pub mod fuse;
mod hash;
pub mod index;
pub mod packed;
pub mod select;
pub mod stem;
pub mod stopwords;
pub mod tokenize;

#[cfg(test)]
mod eval;

pub use index::{Scoring, SearchIndex, ToolText};

/// Tools disclosed per turn (`topK`) and results per search when no `k` is given.
pub const DEFAULT_TOP_K: usize = 16;
/// Hard cap on `topK` and on `k`: larger values clamp to it.
pub const MAX_TOP_K: usize = 64;
/// Results of one `search_tools` call when the model gives no `k`.
pub const SEARCH_TOOLS_DEFAULT_K: usize = 8;
/// Most tools an index holds by default; more fails closed to full disclosure.
pub const MAX_INDEXED_TOOLS: usize = 1024;
/// The largest `maxTools` an index may be given (MCP gateways carry thousands of tools).
pub const HARD_MAX_INDEXED_TOOLS: usize = 16384;
/// Query bytes used by default; longer queries are truncated at a UTF-8 boundary.
pub const DEFAULT_QUERY_BYTES: usize = 4096;
/// Hard cap on the query-bytes option.
pub const MAX_QUERY_BYTES: usize = 65536;
/// Most tool names kept activated for a session (the newest win).
pub const MAX_ACTIVATED_NAMES: usize = 128;
/// Characters of a description shown in a `search_tools` line.
pub const DESCRIPTION_CHARS: usize = 160;
/// The name of the generated tool.
pub const SEARCH_TOOLS_NAME: &str = "search_tools";

/// Clamps a host- or model-supplied count: NaN or absent gives `default`; values are floored;
/// zero or less gives 0; anything above `max` (including +∞) gives `max`.
pub fn clamp_count(value: Option<f64>, default: usize, max: usize) -> usize {
    match value {
        None => default.min(max),
        Some(v) if v.is_nan() => default.min(max),
        Some(v) => {
            let v = v.floor();
            if v <= 0.0 {
                0
            } else if v >= max as f64 {
                max
            } else {
                v as usize
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_clamp_as_documented() {
        assert_eq!(clamp_count(None, 16, 64), 16);
        assert_eq!(clamp_count(Some(f64::NAN), 16, 64), 16);
        assert_eq!(clamp_count(Some(0.0), 16, 64), 0);
        assert_eq!(clamp_count(Some(-3.0), 16, 64), 0);
        assert_eq!(clamp_count(Some(f64::NEG_INFINITY), 16, 64), 0);
        assert_eq!(clamp_count(Some(2.9), 16, 64), 2);
        assert_eq!(clamp_count(Some(0.5), 16, 64), 0);
        assert_eq!(clamp_count(Some(1e300), 16, 64), 64);
        assert_eq!(clamp_count(Some(f64::INFINITY), 16, 64), 64);
        assert_eq!(clamp_count(Some(64.0), 16, 64), 64);
    }
}
