//! The `ToolSearchIndex` class: an immutable index shared with the `search_tools` tools made
//! over it, its native memory reported to V8, and the query crossing (`_searchPacked`).

use std::cell::RefCell;
use std::rc::Rc;

use napi::bindgen_prelude::*;
use napi::{Env, JsValue, Unknown};
use napi_derive::napi;

use prism_tools_core::search::fuse::{
    reciprocal_rank_fusion, score_fusion, DEFAULT_RANKING_WEIGHT, DEFAULT_SCORE_SHARE,
    LEXICAL_DEPTH, MAX_RANKING_WEIGHT,
};
use prism_tools_core::search::packed::{
    encode_hits, joined_terms, ranking_docs, scored_ranking_docs, MAX_FUSED_RANKING,
};
use prism_tools_core::search::{clamp_count, SearchIndex, DEFAULT_TOP_K, MAX_TOP_K};

use super::raw::Raw;
use super::{invalid_input, typed};

pub(super) struct Shared {
    pub(super) index: SearchIndex,
    pub(super) query_bytes: usize,
    /// Scratch for string reads on the JS thread. Borrowed only around reads that run no JS
    /// (a string value's copy), never across a property read or a call.
    pub(super) buf: RefCell<Vec<u8>>,
}

/// An immutable BM25-lite index over a tool list. Created by `createToolSearchIndex`.
///
/// Its native memory (~1 MB for 1 024 tools) is reported to V8 as external memory, and given back
/// when the object is finalized: otherwise V8 sees a few small objects, collects rarely, and each
/// new index lands on freshly mapped pages while the old ones wait for a collection (measured:
/// ~40 % of a build's time in page faults in a loop of builds).
#[napi(custom_finalize)]
pub struct ToolSearchIndex {
    pub(super) shared: Rc<Shared>,
    /// Bytes reported to V8 for this index.
    external: i64,
}

impl ToolSearchIndex {
    pub(super) fn new(env: &Env, index: SearchIndex, query_bytes: usize) -> ToolSearchIndex {
        let external = i64::try_from(index.heap_bytes()).unwrap_or(i64::MAX);
        // Best effort: a failed report only leaves V8 collecting as it would have.
        let external = match env.adjust_external_memory(external) {
            Ok(_) => external,
            Err(_) => 0,
        };
        ToolSearchIndex {
            shared: Rc::new(Shared {
                index,
                query_bytes,
                buf: RefCell::new(Vec::new()),
            }),
            external,
        }
    }
}

impl ObjectFinalize for ToolSearchIndex {
    fn finalize(self, env: Env) -> Result<()> {
        if self.external > 0 {
            env.adjust_external_memory(-self.external)?;
        }
        Ok(())
    }
}

/// The host ranking's weight: absent or NaN gives the default, negative gives 0, above the cap
/// (+∞ too) gives the cap.
fn ranking_weight(value: Option<f64>) -> f32 {
    match value {
        None => DEFAULT_RANKING_WEIGHT,
        Some(v) if v.is_nan() => DEFAULT_RANKING_WEIGHT,
        Some(v) => v.clamp(0.0, f64::from(MAX_RANKING_WEIGHT)) as f32,
    }
}

#[napi]
impl ToolSearchIndex {
    /// The names of the indexed tools, by document (lib/search.js keeps them to name hits).
    #[napi(js_name = "_names")]
    pub fn names(&self) -> Vec<String> {
        let index = &self.shared.index;
        (0..index.size() as u32)
            .map(|d| index.name(d).to_owned())
            .collect()
    }

    /// The packed search behind `search` in lib/search.js (`prism_tools_core::search::packed`):
    /// the query string in (cut at the index's query bytes), hits out into the `Float64Array`
    /// `out`. Returns the query's terms joined by spaces when there are hits, `undefined` when
    /// there are none, and the length `out` needs when it is too short (nothing written).
    /// `ranking` is `undefined` or a `Uint32Array` of documents, best first (the host's ranking,
    /// mapped to documents by lib/search.js). With `scores` (a `Float32Array`, the ranking's
    /// cosines) the fusion is the score-based one and `weight` the embedding share (default 0.6).
    // One positional argument per value of the packed crossing (query, k, ranking, weight, out,
    // scores): napi-rs reads them without building an options object.
    #[allow(clippy::too_many_arguments)]
    #[napi(
        js_name = "_searchPacked",
        ts_return_type = "string | number | undefined"
    )]
    pub fn search_packed(
        &self,
        env: &Env,
        query: Unknown,
        k: Unknown,
        ranking: Unknown,
        weight: Unknown,
        out: Unknown,
        scores: Option<Unknown>,
    ) -> Result<Either3<String, f64, Undefined>> {
        let raw = Raw(env.raw());
        let shared = &self.shared;
        // A string value's copy runs no JS.
        let query = raw.string(
            query.raw(),
            shared.query_bytes,
            &mut shared.buf.borrow_mut(),
        )?;
        let Some((q, _)) = query else {
            return Err(invalid_input(
                raw,
                "ToolSearchIndex.search: query must be a string",
            ));
        };
        let k = clamp_count(raw.number(k.raw())?, DEFAULT_TOP_K, MAX_TOP_K);
        let index = &shared.index;
        let ranking = typed::read::<u32>(raw, ranking.raw(), "ranking", MAX_FUSED_RANKING)?;
        let (terms, hits) = match ranking {
            None => index.search(&q, k),
            Some(docs) => {
                let scores = match scores {
                    Some(s) => typed::read::<f32>(raw, s.raw(), "scores", MAX_FUSED_RANKING)?,
                    None => None,
                };
                let (terms, lexical) = index.search(&q, LEXICAL_DEPTH);
                let fused = match scores {
                    Some(scores) => {
                        let dense = scored_ranking_docs(&docs, &scores, index.size());
                        let share = raw
                            .number(weight.raw())?
                            .map_or(DEFAULT_SCORE_SHARE, |w| w as f32);
                        score_fusion(&lexical, &dense, share, k)
                    }
                    None => {
                        let dense = ranking_docs(docs, index.size());
                        let weight = ranking_weight(raw.number(weight.raw())?);
                        reciprocal_rank_fusion(&lexical, &dense, weight, k)
                    }
                };
                (terms, fused)
            }
        };
        if hits.is_empty() {
            return Ok(Either3::C(()));
        }
        let packed = encode_hits(index, &terms, &hits);
        match typed::write::<f64>(raw, out.raw(), "out", &packed)? {
            Some(true) => Ok(Either3::A(joined_terms(&terms))),
            Some(false) => Ok(Either3::B(packed.len() as f64)),
            None => Err(invalid_input(
                raw,
                "tool search: out must be a Float64Array",
            )),
        }
    }

    /// Number of indexed tools (distinct names; a repeated name keeps its first tool).
    #[napi(getter)]
    pub fn size(&self) -> u32 {
        self.shared.index.size() as u32
    }

    /// Native heap bytes the index holds (approximate); V8 is told the same figure.
    #[napi(getter)]
    pub fn memory_bytes(&self) -> f64 {
        self.shared.index.heap_bytes() as f64
    }
}
