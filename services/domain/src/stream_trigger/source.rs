//! Where a stream trigger reads and a stream output writes, for a [`Binding`]: the rules are
//! the stream kinds' own (`crate::binding_kinds::stream::source`, re-exported here); this
//! hands an `eventHubTrigger` the app's `extensions.eventHubs`.

use std::collections::BTreeMap;

use crate::binding_kinds::stream;
pub use crate::binding_kinds::stream::source::*;
use crate::bindings::Binding;
use crate::host_config::HostConfig;
use crate::trigger_source::{TriggerSource, resolve};

/// The stream a `kafkaTrigger` or `eventHubTrigger` reads; errors name settings and
/// properties, never values.
pub fn stream_source(
    trigger: &Binding,
    settings: &BTreeMap<String, String>,
    host: &HostConfig,
) -> Result<StreamSource, String> {
    match resolve(trigger, settings, host) {
        Some(Ok(TriggerSource::Stream(source))) => Ok(source),
        Some(Err(e)) => Err(e.0),
        _ => Err(format!("{} is not a stream trigger", trigger.type_name())),
    }
}

/// The topic and client of a `kafka` or `eventHub` output binding.
pub fn stream_output(
    binding: &Binding,
    settings: &BTreeMap<String, String>,
) -> Result<StreamTarget, String> {
    match stream::client(binding, settings) {
        Some(target) if !binding.is_trigger() => target,
        _ => Err(format!("{} is not a stream output", binding.type_name())),
    }
}

/// The topic and client any stream binding, trigger or output, connects with: how it signs in,
/// without a trigger's consumer group and batching (diagnostics' `connections`).
pub fn stream_client(
    binding: &Binding,
    settings: &BTreeMap<String, String>,
) -> Result<StreamTarget, String> {
    stream::client(binding, settings)
        .unwrap_or_else(|| Err(format!("{} is not a stream binding", binding.type_name())))
}

#[cfg(test)]
mod tests;
