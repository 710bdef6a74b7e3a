//! The handler client lives in `shoal-invoker`, shared with the API's webhook ingress.

pub use shoal_invoker::*;
