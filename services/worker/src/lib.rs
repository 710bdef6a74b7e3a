//! The worker role: runs a listener for every enabled trigger function of the app instances it
//! hosts, delivers each message to the app's handler (signed, as a custom-handler request),
//! writes output bindings, settles the message by the Azure Functions rules, reports listener
//! statistics in heartbeats and metrics, and drains gracefully on shutdown.
//!
//! The runtime is built around a set of hosted [`AppInstance`]s: today `--all-apps` hosts one
//! instance of every running app; the scheduler will hand out assignments instead.

mod config;
mod delivery;
mod heartbeat;
mod hosting;
mod hosting_task;
mod invoker;
mod listener;
mod metrics;
mod outputs;
mod runtime;
pub mod server;
mod stats;
mod watcher;

pub use config::{Hosting, WorkerConfig};
pub use hosting::AppInstance;
pub use metrics::ListenerMetrics;
pub use runtime::{Worker, WorkerHandle};
pub use stats::StatsRegistry;
