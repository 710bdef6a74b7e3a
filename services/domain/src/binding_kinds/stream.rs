//! The stream kinds: `kafkaTrigger` and `kafka`, in the binding shape of
//! Azure/azure-functions-kafka-extension (`KafkaTriggerAttribute`, `KafkaAttribute`), and
//! `eventHubTrigger` and `eventHub`, in that of azure-sdk-for-net
//! `Microsoft.Azure.WebJobs.Extensions.EventHubs` (`EventHubTriggerAttribute`,
//! `EventHubAttribute`), read through the event hub's Kafka endpoint. Where each reads and
//! writes is [`source`]'s; the event rules (payload, checkpoints, dead letters, retries) are
//! `crate::stream_trigger`'s.

mod checks;
mod kinds;
pub mod source;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::binding_kinds::{Cardinality, KindBinding, typed_if};
use source::{StreamTarget, event_hub_client, kafka_client};

pub use kinds::{EVENT_HUB_OUTPUT, EVENT_HUB_TRIGGER, KAFKA_OUTPUT, KAFKA_TRIGGER};

/// The Kafka trigger's `type`.
pub const KAFKA_TRIGGER_TYPE: &str = "kafkaTrigger";
/// The Kafka output's `type`.
pub const KAFKA_OUTPUT_TYPE: &str = "kafka";
/// The Event Hubs trigger's `type`.
pub const EVENT_HUB_TRIGGER_TYPE: &str = "eventHubTrigger";
/// The Event Hubs output's `type`.
pub const EVENT_HUB_OUTPUT_TYPE: &str = "eventHub";
/// The `host.json` section the Event Hubs trigger reads, under `extensions`.
pub const HOST_SECTION: &str = "eventHubs";
/// Azure's default `lagThreshold` for `kafkaTrigger`.
pub const DEFAULT_KAFKA_LAG_THRESHOLD: u32 = 1000;

/// A `kafkaTrigger`'s properties; None for a binding of another type.
pub fn kafka_trigger(binding: &KindBinding) -> Option<Result<KafkaTriggerBinding, String>> {
    typed_if(binding, KAFKA_TRIGGER_TYPE)
}

/// A `kafka` output's properties; None for a binding of another type.
pub fn kafka_output(binding: &KindBinding) -> Option<Result<KafkaOutputBinding, String>> {
    typed_if(binding, KAFKA_OUTPUT_TYPE)
}

/// An `eventHubTrigger`'s properties; None for a binding of another type.
pub fn event_hub_trigger(binding: &KindBinding) -> Option<Result<EventHubTriggerBinding, String>> {
    typed_if(binding, EVENT_HUB_TRIGGER_TYPE)
}

/// An `eventHub` output's properties; None for a binding of another type.
pub fn event_hub_output(binding: &KindBinding) -> Option<Result<EventHubOutputBinding, String>> {
    typed_if(binding, EVENT_HUB_OUTPUT_TYPE)
}

/// Whether a binding reads or writes an event hub (rather than a Kafka topic).
pub fn is_event_hubs(binding: &KindBinding) -> bool {
    matches!(
        binding.kind().type_name(),
        EVENT_HUB_TRIGGER_TYPE | EVENT_HUB_OUTPUT_TYPE
    )
}

/// Whether a binding is one of the stream kinds', trigger or output.
pub fn is_stream(binding: &KindBinding) -> bool {
    is_event_hubs(binding)
        || matches!(
            binding.kind().type_name(),
            KAFKA_TRIGGER_TYPE | KAFKA_OUTPUT_TYPE
        )
}

/// The topic and client any stream binding, trigger or output, connects with: how it signs in,
/// without a trigger's consumer group and batching (an output's target; diagnostics'
/// `connections`). None for a binding of another kind; errors name settings and properties,
/// never values.
pub fn client(
    binding: &KindBinding,
    settings: &BTreeMap<String, String>,
) -> Option<Result<StreamTarget, String>> {
    let event_hub =
        |connection: Option<&str>, name: Option<&str>| event_hub_client(connection, name, settings);
    let resolved = if let Some(b) = kafka_trigger(binding) {
        b.and_then(|b| kafka_client(&b.client(), settings))
    } else if let Some(b) = kafka_output(binding) {
        b.and_then(|b| kafka_client(&b.client(), settings))
    } else if let Some(b) = event_hub_trigger(binding) {
        b.and_then(|b| event_hub(b.connection.as_deref(), b.event_hub_name.as_deref()))
    } else if let Some(b) = event_hub_output(binding) {
        b.and_then(|b| event_hub(b.connection.as_deref(), b.event_hub_name.as_deref()))
    } else {
        return None;
    };
    Some(resolved.map(|(topic, properties)| StreamTarget { topic, properties }))
}

binding_struct!(
    /// `eventHubTrigger`: events from an event hub partition set.
    EventHubTriggerBinding {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event_hub_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        consumer_group: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cardinality: Option<Cardinality>,
    }
);

binding_struct!(
    /// `kafkaTrigger`: records from a Kafka topic.
    KafkaTriggerBinding {
        broker_list: String,
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        consumer_group: Option<String>,
        /// Lag per instance the scaler aims for; Azure's default is 1000.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lag_threshold: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cardinality: Option<Cardinality>,
        /// `plaintext`, `ssl`, `saslPlaintext` or `saslSsl` (any case, as Azure accepts).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol: Option<String>,
        /// `gssapi`, `plain`, `scramSha256`, `scramSha512` or `oauthBearer` (any case).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authentication_mode: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// Must be an app setting reference (`%KafkaPassword%`): bindings are returned unmasked.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        password: Option<String>,
        #[serde(flatten)]
        ssl: KafkaSsl,
    }
);

binding_struct!(
    /// `kafka` (out): produces the handler's output to a Kafka topic after a successful
    /// invocation; the client settings are the trigger's.
    KafkaOutputBinding {
        broker_list: String,
        topic: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        protocol: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        authentication_mode: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        username: Option<String>,
        /// Must be an app setting reference (`%KafkaPassword%`), as the trigger's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        password: Option<String>,
        #[serde(flatten)]
        ssl: KafkaSsl,
    }
);

/// The TLS material of a Kafka binding, by the Kafka extension's attribute names
/// (`KafkaTriggerAttribute`, `KafkaProducerFactory.GetProducerConfig` in
/// `Azure/azure-functions-kafka-extension`): PEM text, each written as the value or, as the
/// extension's `ResolveSecureSetting` allows, an app setting reference; the private key and its
/// password only as a reference. The `…Location` file paths are named so that they can be
/// refused with the reason: they are files on Shoal's workers, which tenants cannot place.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct KafkaSsl {
    /// CA certificates to verify the brokers with (`ssl.ca.pem`); every certificate in the text.
    #[serde(rename = "sslCaPEM", default, skip_serializing_if = "Option::is_none")]
    pub ca_pem: Option<String>,
    /// The client certificate (`ssl.certificate.pem`).
    #[serde(
        rename = "sslCertificatePEM",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub certificate_pem: Option<String>,
    /// The client's private key (`ssl.key.pem`); an app setting reference.
    #[serde(rename = "sslKeyPEM", default, skip_serializing_if = "Option::is_none")]
    pub key_pem: Option<String>,
    /// The client certificate and its private key in one text, split as the extension's
    /// `PEMExtractor` does; an app setting reference.
    #[serde(
        rename = "sslCertificateandKeyPEM",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub certificate_and_key_pem: Option<String>,
    /// The private key's password (`ssl.key.password`); an app setting reference.
    #[serde(
        rename = "sslKeyPassword",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub key_password: Option<String>,
    /// Refused: a file path on Shoal's workers (use `sslCaPEM`).
    #[serde(
        rename = "sslCaLocation",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub ca_location: Option<String>,
    /// Refused: a file path on Shoal's workers (use `sslCertificatePEM`).
    #[serde(
        rename = "sslCertificateLocation",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub certificate_location: Option<String>,
    /// Refused: a file path on Shoal's workers (use `sslKeyPEM`).
    #[serde(
        rename = "sslKeyLocation",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub key_location: Option<String>,
}

/// What a Kafka trigger and a Kafka output binding both say about the client, as written.
#[derive(Clone, Copy, Debug)]
pub struct KafkaClientSettings<'a> {
    pub broker_list: &'a str,
    pub topic: &'a str,
    pub protocol: Option<&'a str>,
    pub authentication_mode: Option<&'a str>,
    pub username: Option<&'a str>,
    pub password: Option<&'a str>,
    pub ssl: &'a KafkaSsl,
}

impl KafkaTriggerBinding {
    pub fn client(&self) -> KafkaClientSettings<'_> {
        KafkaClientSettings {
            broker_list: &self.broker_list,
            topic: &self.topic,
            protocol: self.protocol.as_deref(),
            authentication_mode: self.authentication_mode.as_deref(),
            username: self.username.as_deref(),
            password: self.password.as_deref(),
            ssl: &self.ssl,
        }
    }
}

impl KafkaOutputBinding {
    pub fn client(&self) -> KafkaClientSettings<'_> {
        KafkaClientSettings {
            broker_list: &self.broker_list,
            topic: &self.topic,
            protocol: self.protocol.as_deref(),
            authentication_mode: self.authentication_mode.as_deref(),
            username: self.username.as_deref(),
            password: self.password.as_deref(),
            ssl: &self.ssl,
        }
    }
}

binding_struct!(
    /// `eventHub` (out): sends the handler's output to an event hub through its Kafka endpoint.
    EventHubOutputBinding {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        event_hub_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        connection: Option<String>,
    }
);
