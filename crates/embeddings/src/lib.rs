//! The Node.js binding of the embedding model (its own addon, so the main one's build and size do
//! not change). Loading and embedding run as napi AsyncTasks on the libuv pool: the event loop never
//! waits for a forward pass.

pub mod model;
pub mod pins;
pub mod rank;
