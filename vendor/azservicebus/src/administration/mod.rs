//! Administration primitives including subscription rule filters.

mod rules;
pub use rules::*; // re-export to match the namespace
