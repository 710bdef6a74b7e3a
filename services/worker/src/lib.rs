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
//!
//! Modules, from the top: `runtime` (the reconcile loop, heartbeats, drain) reads
//! `hosted_apps` (what to host), decides with `plan` (pure) and applies the plan through
//! `supervisor` (instance tasks and claims), which runs `app_instance` per instance: a listener
//! per function from `triggers` (each trigger kind behind one trait; Storage Queues first),
//! calling handlers through `invocation` and writing `outputs`. The runtime knows no trigger
//! kind; a kind knows no claims or leases.

mod app_instance;
mod attempt_failure;
mod bind_error;
mod breaker;
mod concurrency;
mod config;
mod connections;
mod error;
mod heartbeat;
mod hosted_apps;
mod invocation;
mod lease;
mod metrics;
mod notifications;
mod outputs;
mod plan;
mod runtime;
pub mod server;
mod spans;
mod stats;
mod supervisor;
mod triggers;
mod watcher;

pub use config::{
    DEFAULT_MAX_HELD_BYTES, DEFAULT_MAX_MESSAGE_BYTES, Hosting, LEASE_MARGIN, WorkerConfig,
};
pub use hosted_apps::AppInstance;
pub use metrics::ListenerMetrics;
pub use runtime::{Worker, WorkerHandle};
pub use shoal_invoker::{HEADER_INSTANCE, HEADER_INVOCATION_ID, HEADER_WORKER};
pub use stats::StatsRegistry;
