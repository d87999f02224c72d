//! The dispatch state machine (SPEC section 3) as plain Rust, without Node: the order of the
//! steps, the blocked reasons with their public messages and codes, guardrail decisions, effect
//! transitions, the clock and the slab of dispatches in flight. The binding that performs its
//! commands lives in the binding crate (`crates/node/src/dispatch`) and `lib/dispatch-*.js`.

pub mod clock;
pub mod guard;
pub mod machine;
pub mod protocol;
pub mod reasons;
pub mod slab;
