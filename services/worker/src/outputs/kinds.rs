//! The output bindings of the kinds in `shoal_domain::binding_kinds`: each is a module
//! implementing [`OutputKind`] and a line in [`KINDS`].

use futures::future::BoxFuture;
use serde_json::Value;
use shoal_domain::binding_kinds::KindBinding;

use crate::config::WorkerConfig;
use crate::error::OutputWriteError;
use crate::hosted_apps::HostedApp;

mod rabbitmq;

/// Every kind of output of `binding_kinds` the worker writes.
const KINDS: &[&dyn OutputKind] = &[&rabbitmq::RabbitMqOutput];

/// A kind of output binding.
pub trait OutputKind: Send + Sync {
    /// The `function.json` type it writes (`rabbitMQ`).
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

/// An output bound to its target, and its target's name as written when that may hold
/// binding expressions (resolved for each invocation).
pub struct Bound {
    pub target: Box<dyn KindTarget>,
    pub name: Option<String>,
}

/// Where a bound output writes.
pub trait KindTarget: Send + Sync {
    /// Whether `resolved`, what the name's expressions resolved to, is a valid target name.
    fn check_name(&self, resolved: &str) -> Result<(), String>;

    /// Writes the messages `value` stands for to `name` (None: the bound target); how many.
    fn write<'a>(
        &'a self,
        name: Option<&'a str>,
        value: &'a Value,
    ) -> BoxFuture<'a, Result<usize, OutputWriteError>>;
}

/// The output kind that writes `binding`'s type, if the worker has one.
pub fn kind_of(binding: &KindBinding) -> Option<&'static dyn OutputKind> {
    let type_name = binding.kind().type_name();
    KINDS
        .iter()
        .copied()
        .find(|kind| kind.binding_type() == type_name)
}
