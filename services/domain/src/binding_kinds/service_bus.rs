//! Azure Service Bus: the `serviceBusTrigger` and the `serviceBus` output, in the binding
//! shape of Azure Functions' Service Bus extension (azure-sdk-for-net
//! `Microsoft.Azure.WebJobs.Extensions.ServiceBus`, `src/ServiceBusTriggerAttribute.cs` and
//! `src/ServiceBusAttribute.cs`: `queueName`, or `topicName` with `subscriptionName`,
//! `connection`, `isSessionsEnabled`, `autoCompleteMessages`; batches by `isBatched` or
//! `"cardinality": "many"`), with `host.json`'s `extensions.serviceBus`. Shoal adds `entity`: the
//! settings of the queue or subscription, checked on write and applied by the scheduler's
//! entity upkeep when the connection may manage it.
//!
//! `crate::host_config` reads the `serviceBus` section itself into a typed section; this kind
//! is handed it as JSON like any other kind's section. The message rules (metadata,
//! settlement, parked retries) are `crate::service_bus_trigger`'s; this is what the binding
//! table asks of the kinds.
//!
//! A trigger scales on its entity's active messages, as Azure's `ServiceBusTargetScaler` does
//! (see [`kinds`]); a message that fails for good goes to the entity's dead-letter queue.

pub mod entity;
mod kinds;

use serde_json::Value;

use crate::binding_kinds::{Cardinality, KindBinding, typed_if};
use crate::service_bus_entity::settings::EntitySettings;

pub use entity::{EntityPath, check_output_entity, output_entity, trigger_entity};
pub use kinds::{OUTPUT, TRIGGER};

/// The trigger's `type`.
pub const TRIGGER_TYPE: &str = "serviceBusTrigger";
/// The output's `type`.
pub const OUTPUT_TYPE: &str = "serviceBus";
/// The `host.json` section both read, under `extensions`.
pub const HOST_SECTION: &str = "serviceBus";

binding_struct!(
    /// `serviceBusTrigger`: a queue, or a topic subscription, of a Service Bus namespace.
    ServiceBusTriggerBinding {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        queue_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subscription_name: Option<String>,
        /// Empty means `AzureWebJobsServiceBus`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
        #[serde(default, skip_serializing_if = "is_false")]
        is_sessions_enabled: bool,
        /// Batched execution; also set by Azure's `"cardinality": "many"`.
        #[serde(default, skip_serializing_if = "is_false")]
        is_batched: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cardinality: Option<Cardinality>,
        /// Overrides `hostConfig.extensions.serviceBus.autoCompleteMessages` for this function.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        auto_complete_messages: Option<bool>,
        /// Settings of the queue or subscription (and the namespace's tier), checked on write,
        /// compared with the live entity by diagnostics and applied when the connection may
        /// manage it. A Shoal extension: Azure Functions leaves entities to ARM/Bicep.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        entity: Option<EntitySettings>,
    }
);

binding_struct!(
    /// `serviceBus` (out): sends the handler's output to a queue or topic.
    ServiceBusOutputBinding {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        queue_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        topic_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
    }
);

impl ServiceBusTriggerBinding {
    /// Whether it runs on batches: `isBatched`, or Azure's `"cardinality": "many"`, which
    /// implies it (the two were checked not to contradict each other when read).
    pub fn batched(&self) -> bool {
        self.is_batched || self.cardinality == Some(Cardinality::Many)
    }
}

/// Whether a trigger written as `properties` runs on batches (see
/// [`ServiceBusTriggerBinding::batched`]).
fn batched(properties: &serde_json::Map<String, Value>) -> bool {
    properties.get("isBatched") == Some(&Value::Bool(true))
        || properties.get("cardinality").and_then(Value::as_str) == Some("many")
}

/// A `serviceBusTrigger`'s properties; None for a binding of another type.
pub fn trigger(binding: &KindBinding) -> Option<Result<ServiceBusTriggerBinding, String>> {
    typed_if(binding, TRIGGER_TYPE)
}

/// A `serviceBus` output's properties; None for a binding of another type.
pub fn output(binding: &KindBinding) -> Option<Result<ServiceBusOutputBinding, String>> {
    typed_if(binding, OUTPUT_TYPE)
}

/// `false` flags are the default, so reads return them only when they are set, which keeps a
/// read equal to what was written in the usual case of leaving them out.
fn is_false(flag: &bool) -> bool {
    !*flag
}
