//! The property structs of each binding type, as `function.json` spells them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::binding_kinds::binding_struct;

/// Data flow of a binding, as `function.json` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    In,
    Out,
    InOut,
}

pub use crate::binding_kinds::DataType;

pub use crate::binding_kinds::Cardinality;

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
