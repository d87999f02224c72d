//! The JS boundary: napi exports and conversions between JS values and Rust.
//! Pure logic lives in the concern modules; only this tree knows napi details.
pub mod search;
