//! The Node.js binding of the embedding model: its own addon, so the main one's build, size and
//! musl build do not change. Loading and embedding run as napi AsyncTasks on libuv's thread pool:
//! the event loop never waits for a forward pass. Only paths, strings and typed arrays cross.

pub mod model;
pub mod pins;
pub mod rank;

use std::path::PathBuf;
use std::sync::Arc;

use napi::bindgen_prelude::{AsyncTask, Float32Array, Uint32Array};
use napi::{Env, Error, Result, Status, Task};
use napi_derive::napi;

use model::Model;

fn fail(e: impl std::fmt::Display) -> Error {
    Error::new(Status::GenericFailure, e.to_string())
}

/// The loaded model, shared by every task that embeds with it.
#[napi]
pub struct EmbeddingModel {
    model: Arc<Model>,
}

#[napi]
impl EmbeddingModel {
    /// Floats per embedding (384).
    #[napi(getter)]
    pub fn dimension(&self) -> u32 {
        self.model.dimension() as u32
    }

    /// The unit embeddings of `texts`, row after row (`texts.length × dimension` floats), computed
    /// on the thread pool in batches.
    #[napi(ts_return_type = "Promise<Float32Array>")]
    pub fn embed(&self, texts: Vec<String>) -> AsyncTask<EmbedTask> {
        AsyncTask::new(EmbedTask {
            model: self.model.clone(),
            texts,
        })
    }

    /// Embeds `query` and ranks the rows of `vectors` by cosine, on the thread pool: the `depth`
    /// best rows and their cosines.
    #[napi(ts_return_type = "Promise<CosineRanking>")]
    pub fn rank(&self, query: String, vectors: &VectorSet, depth: u32) -> AsyncTask<RankTask> {
        AsyncTask::new(RankTask {
            model: self.model.clone(),
            query,
            vectors: vectors.rows.clone(),
            depth: depth as usize,
        })
    }
}

/// A tool list's embeddings, copied once into native memory so each query's ranking reads them
/// off the JS thread.
#[napi]
pub struct VectorSet {
    rows: Arc<Vec<f32>>,
}

#[napi]
impl VectorSet {
    #[napi(constructor)]
    pub fn new(vectors: Float32Array) -> Self {
        VectorSet {
            rows: Arc::new(vectors.to_vec()),
        }
    }
}

#[napi(object)]
pub struct CosineRanking {
    /// Row numbers, best first.
    pub rows: Uint32Array,
    /// Their cosines with the query.
    pub scores: Float32Array,
}

pub struct LoadTask {
    dir: PathBuf,
}

impl Task for LoadTask {
    type Output = Model;
    type JsValue = EmbeddingModel;

    fn compute(&mut self) -> Result<Model> {
        // Read here, on the pool: 45 MB of weights never pass through the JS thread.
        let read = |name: &str| {
            std::fs::read(self.dir.join(name)).map_err(|e| fail(format!("{name}: {e}")))
        };
        let weights = read(pins::WEIGHTS_FILE)?;
        let tokenizer = read(pins::TOKENIZER_FILE)?;
        let config = read(pins::CONFIG_FILE)?;
        Model::load(weights, &tokenizer, &config).map_err(fail)
    }

    fn resolve(&mut self, _env: Env, model: Model) -> Result<EmbeddingModel> {
        Ok(EmbeddingModel {
            model: Arc::new(model),
        })
    }
}

/// Loads the model package's files from `dir`, checking each against the sha256 pinned in this
/// binary before parsing it.
#[napi(ts_return_type = "Promise<EmbeddingModel>")]
pub fn load_model(dir: String) -> AsyncTask<LoadTask> {
    AsyncTask::new(LoadTask {
        dir: PathBuf::from(dir),
    })
}

pub struct EmbedTask {
    model: Arc<Model>,
    texts: Vec<String>,
}

impl Task for EmbedTask {
    type Output = Vec<f32>;
    type JsValue = Float32Array;

    fn compute(&mut self) -> Result<Vec<f32>> {
        self.model.embed(&self.texts).map_err(fail)
    }

    fn resolve(&mut self, _env: Env, output: Vec<f32>) -> Result<Float32Array> {
        Ok(Float32Array::new(output))
    }
}

pub struct RankTask {
    model: Arc<Model>,
    query: String,
    vectors: Arc<Vec<f32>>,
    depth: usize,
}

impl Task for RankTask {
    type Output = Vec<(u32, f32)>;
    type JsValue = CosineRanking;

    fn compute(&mut self) -> Result<Self::Output> {
        let q = self
            .model
            .embed(std::slice::from_ref(&self.query))
            .map_err(fail)?;
        Ok(rank::top_by_cosine(
            &q,
            &self.vectors,
            self.model.dimension(),
            self.depth,
        ))
    }

    fn resolve(&mut self, _env: Env, top: Self::Output) -> Result<CosineRanking> {
        Ok(CosineRanking {
            rows: Uint32Array::new(top.iter().map(|t| t.0).collect()),
            scores: Float32Array::new(top.iter().map(|t| t.1).collect()),
        })
    }
}

/// The digests this binary checks the model package against (for diagnostics and the build script).
#[napi]
pub fn model_pins() -> Vec<String> {
    vec![
        format!("{} {}", pins::WEIGHTS_FILE, pins::WEIGHTS_SHA256),
        format!("{} {}", pins::TOKENIZER_FILE, pins::TOKENIZER_SHA256),
        format!("{} {}", pins::CONFIG_FILE, pins::CONFIG_SHA256),
    ]
}
