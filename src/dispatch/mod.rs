//! The dispatch state machine's pure parts: the order of the steps, the blocked reasons with their
//! public messages and codes, and the clock. The interpreter that runs the steps against host
//! objects lives in `js::dispatch`.

pub mod clock;
pub mod reasons;
pub mod steps;
