//! The seam between the worker's runtime and a kind of trigger.
//!
//! The runtime hosts app instances (claims, leases, heartbeats, drain) and knows nothing of
//! what a trigger listens to. For every enabled function whose trigger has a kind, it
//! registers a statistics line, asks the kind to [`bind`](TriggerKind::bind) the trigger
//! (connect to its source), binds the function's outputs itself, and runs the bound
//! listener until the instance stops. A kind owns everything between its source and the
//! handler call:
//!
//! * **listen**: receive messages or events with the concurrency its settings allow, build
//!   each request body, and call [`FunctionHost::invoke_parking`] (a message it can hold
//!   while the handler cannot take it) or [`FunctionHost::invoke_partly`] (a batch);
//! * **settle**: act on the [`Outcome`] by its own rules (a Storage Queue deletes, poisons
//!   after `maxDequeueCount` or releases; a Service Bus queue completes, abandons or
//!   dead-letters and renews locks; an event stream checkpoints its partitions);
//! * **report statistics**: count on [`FunctionHost::stats`] what it received and how each
//!   ended, and its back-off; they travel in heartbeats and `/metrics`;
//! * **the metric for scaling**: keep the line's in-flight count current — the scheduler
//!   subtracts it from the source's backlog when scaling on visible messages only.
//!
//! On `stop` a listener receives no more but finishes what it holds; on `abandon` (drain
//! deadline passed, or the lease lapsed) it gives its messages back to the source at once.

use std::sync::Arc;

use futures::future::BoxFuture;
use shoal_domain::bindings::Binding;
use shoal_domain::trigger_source::{TriggerSource, resolve};
use tokio_util::sync::CancellationToken;

use crate::bind_error::BindError;
use crate::config::WorkerConfig;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::invocation::FunctionHost;
#[cfg(doc)]
use crate::invocation::Outcome;

/// A kind of trigger binding the worker can listen for.
pub trait TriggerKind: Send + Sync {
    /// The `function.json` type it handles (`queueTrigger`).
    fn binding_type(&self) -> &'static str;

    /// What a listener of `trigger` listens to (a queue's name), named in its statistics line
    /// and metrics. Best effort: shown even when the listener cannot start.
    fn source(&self, trigger: &Binding, app: &HostedApp) -> String;

    /// Connects to the trigger's source, or says why it cannot (never naming a secret value).
    /// `function` is the whole function, for settings beside the binding (`deadLetter`).
    fn bind(
        &self,
        function: &HostedFunction,
        trigger: &Binding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Box<dyn TriggerListener>, BindError>;
}

/// Where `trigger` reads from, resolved from the app's settings as the scheduler and the API
/// resolve it (`shoal_domain::trigger_source::resolve`), or why it cannot be.
pub fn source_of(trigger: &Binding, app: &HostedApp) -> Result<TriggerSource, BindError> {
    match resolve(trigger, &app.settings, &app.host) {
        Some(source) => source.map_err(|e| BindError::Source(e.to_string())),
        None => Err(BindError::Source(format!(
            "a {} reads from no source",
            trigger.type_name()
        ))),
    }
}

/// A bound trigger, ready to listen.
pub trait TriggerListener: Send {
    /// Runs until `stop`, then waits for the deliveries it started; `abandon` makes them give
    /// their messages back at once.
    fn listen(
        self: Box<Self>,
        function: Arc<FunctionHost>,
        stop: CancellationToken,
        abandon: CancellationToken,
    ) -> BoxFuture<'static, ()>;
}
