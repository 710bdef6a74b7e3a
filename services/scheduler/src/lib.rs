//! The scheduler: one leader at a time (a lease in Postgres whose epoch fences its writes)
//! decides how many instances each app should run and places them on live workers.
//!
//! Each tick the leader reads the live workers and the apps, refreshes trigger metrics (queue
//! lengths, cached and staggered per storage account), lets the domain's pure scale math decide
//! and its placement place, and writes the changed assignments and decisions in one fenced
//! transaction; triggers on the tables notify the workers. Standbys poll the lease and take over
//! when it lapses.

pub mod catalog;
pub mod config;
pub mod entity_upkeep;
pub mod error;
pub mod planner;
pub mod runtime;
pub mod samples;
pub mod server;
pub mod tick;
pub mod trigger_metrics;

pub use config::SchedulerConfig;
pub use error::SchedulerError;
pub use runtime::{Scheduler, SchedulerHandle};
