//! The worker role: runs a listener for every enabled trigger function of the app instances it
//! hosts, delivers each message to the app's handler (signed, as a custom-handler request),
//! writes output bindings, settles the message by the Azure Functions rules, reports listener
//! statistics in heartbeats and metrics, and drains gracefully on shutdown.
//!
//! The runtime is built around a set of hosted [`AppInstance`]s. By default
//! ([`Hosting::Assigned`]) they are the instances the scheduler assigned to this worker, acted
//! on only under the current leader's epoch, each claimed before its listeners start and
//! released after they drain, and all stopped when the worker's own lease lapses;
//! [`Hosting::AllApps`] hosts one instance of every running app with no scheduler.

mod app_instance;
mod config;
mod connections;
mod error;
mod heartbeat;
mod hosting;
mod instances;
mod invocation;
mod lease;
mod metrics;
mod notifications;
mod outputs;
mod plan;
mod runtime;
pub mod server;
mod stats;
mod triggers;
mod watcher;

pub use config::{Hosting, LEASE_MARGIN, WorkerConfig};
pub use hosting::AppInstance;
pub use metrics::ListenerMetrics;
pub use runtime::{Worker, WorkerHandle};
pub use shoal_invoker::{HEADER_INSTANCE, HEADER_INVOCATION_ID, HEADER_WORKER};
pub use stats::StatsRegistry;
