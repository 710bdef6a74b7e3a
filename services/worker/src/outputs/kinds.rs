//! The output bindings the worker writes, one module a kind (the binding types of
//! `shoal_domain::binding_kinds`), each implementing [`OutputKind`] and a line in [`KINDS`].
//!
//! A bound output writes in two steps, so that one invocation's outputs are all or nothing as
//! far as the handler's answer goes: [`KindTarget::prepare`] makes (and checks) the messages
//! of every output first, and only then does each prepared write go out. A value a target
//! cannot send (a malformed Service Bus message, RabbitMQ `binary` text that is not base64)
//! fails the invocation before anything is written.

use futures::future::BoxFuture;
use serde_json::Value;
use shoal_domain::binding_kinds::KindBinding;
use shoal_domain::trace_context::TraceContext;

use crate::config::WorkerConfig;
use crate::error::OutputWriteError;
use crate::hosted_apps::HostedApp;
use crate::watcher::WriteWatcher;

mod rabbitmq;
mod service_bus;
mod storage_queue;
mod stream;

/// Every kind of output the worker writes.
const KINDS: &[&dyn OutputKind] = &[
    &storage_queue::QueueOutput,
    &service_bus::ServiceBusOutput,
    &stream::EVENT_HUB,
    &stream::KAFKA,
    &rabbitmq::RabbitMqOutput,
];

/// A kind of output binding.
pub trait OutputKind: Send + Sync {
    /// The `function.json` type it writes (`queue`, `rabbitMQ`).
    fn binding_type(&self) -> &'static str;

    /// Binds `binding` to its target (connected on first use), or says why it cannot be,
    /// never naming a secret value.
    fn bind(
        &self,
        binding: &KindBinding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Bound, String>;
}

/// An output bound to its target, and its target's name as written when that has binding
/// expressions (resolved for each invocation).
pub struct Bound {
    pub target: Box<dyn KindTarget>,
    pub name: Option<String>,
}

/// Where a bound output writes.
pub trait KindTarget: Send + Sync {
    /// The name to write to for one invocation: `resolved`, what the expressions of
    /// `written` resolved to, checked (and normalised, where the service does) as this
    /// target's names are.
    fn check_name(&self, written: &str, resolved: String) -> Result<String, String>;

    /// The messages `value` stands for, each carrying `trace` where the service has a place
    /// for it, checked and ready to write; nothing is written yet.
    fn prepare<'a>(
        &'a self,
        value: &'a Value,
        trace: &'a TraceContext,
    ) -> Result<Prepared<'a>, OutputWriteError>;
}

/// A target's messages, made and checked: writing them to the name resolved for this
/// invocation (None: the bound target), Storage queue listeners on this worker woken through
/// the watcher, says how many were written.
pub type Prepared<'a> = Box<
    dyn FnOnce(Option<String>, &'a WriteWatcher) -> BoxFuture<'a, Result<usize, OutputWriteError>>
        + Send
        + 'a,
>;

/// The output kind that writes `binding`'s type, if the worker has one.
pub fn kind_of(binding: &KindBinding) -> Option<&'static dyn OutputKind> {
    let type_name = binding.kind().type_name();
    KINDS
        .iter()
        .copied()
        .find(|kind| kind.binding_type() == type_name)
}
