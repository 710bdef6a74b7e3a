//! How a stream binding (`kafkaTrigger`, `kafka`, `eventHubTrigger`, `eventHub`) signs in: the
//! security protocol, SASL mechanism and user name its client connects with, and the brokers
//! it reaches, read from the same client properties its listener or producer uses — never the
//! password, connection string or private key among them.

use std::collections::BTreeMap;

use super::{ConnectionSignIn, SignInKind};
use crate::binding_kinds::stream;
use crate::binding_kinds::stream::source::{
    DEFAULT_EVENT_HUBS_CONNECTION, StreamTarget, event_hubs_connection,
};
use crate::bindings::Binding;
use crate::diagnostics::{Check, CheckStatus};

/// librdkafka's `security.protocol` when the binding sets no `protocol`.
const DEFAULT_PROTOCOL: &str = "PLAINTEXT";
/// librdkafka's `sasl.mechanisms` when the binding sets no `authenticationMode`.
const DEFAULT_MECHANISM: &str = "GSSAPI";

/// The sign-in of a stream binding, and a check when it cannot sign in. `None` when its client
/// cannot be resolved: the `stream` check already says why, as a queue connection that does
/// not resolve has only its `connection` check.
pub(super) fn stream_sign_in(
    function: &str,
    binding: &Binding,
    settings: &BTreeMap<String, String>,
) -> Option<(ConnectionSignIn, Option<Check>)> {
    let client = stream::client(binding, settings)?.ok()?;
    let property = |key: &str| property(&client, key);
    let protocol = property("security.protocol").unwrap_or(DEFAULT_PROTOCOL);
    let event_hubs = stream::is_event_hubs(binding);
    let mut entry = ConnectionSignIn::new(
        function,
        binding,
        connection_name(binding, settings),
        SignInKind::Anonymous,
    );
    entry.protocol = Some(protocol.to_owned());
    entry.brokers = Some(
        property("bootstrap.servers")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|broker| !broker.is_empty())
            .map(str::to_owned)
            .collect(),
    );
    let mut check = None;
    // librdkafka reads the mechanism and the user only for the SASL protocols; with the
    // others they are ignored, so reporting them would say something that does not happen.
    if protocol.starts_with("SASL_") {
        let mechanism = property("sasl.mechanisms").unwrap_or(DEFAULT_MECHANISM);
        entry.signs_in_as = if event_hubs {
            SignInKind::ConnectionString
        } else {
            SignInKind::Password
        };
        entry.mechanism = Some(mechanism.to_owned());
        entry.username = property("sasl.username").map(str::to_owned);
        if mechanism == DEFAULT_MECHANISM {
            let error = format!(
                "protocol {protocol} without authenticationMode signs in with librdkafka's default mechanism, GSSAPI (Kerberos), which Shoal's Kafka client is built without; set authenticationMode plain, scramSha256 or scramSha512"
            );
            check = Some(Check {
                function: Some(function.to_owned()),
                binding: Some(binding.name().to_string()),
                key: None,
                subject: "stream".to_owned(),
                status: CheckStatus::Error,
                detail: error.clone(),
            });
            entry.error = Some(error);
        }
    } else if protocol == "SSL" && property("ssl.certificate.pem").is_some() {
        entry.signs_in_as = SignInKind::ClientCertificate;
    }
    Some((entry, check))
}

fn property<'a>(client: &'a StreamTarget, key: &str) -> Option<&'a str> {
    client
        .properties
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// An event hub's connection is the setting its connection string was found in; a Kafka
/// binding has none, so its `brokerList` as written stands for it (a setting's name, a
/// `%Setting%` reference, or the brokers themselves — never a secret).
fn connection_name(binding: &Binding, settings: &BTreeMap<String, String>) -> String {
    if !stream::is_event_hubs(binding) {
        let broker_list = binding.properties().get("brokerList");
        return broker_list
            .and_then(|b| b.as_str())
            .unwrap_or_default()
            .to_owned();
    }
    event_hubs_connection(binding.connection(), settings).map_or_else(
        |_| {
            binding
                .connection()
                .unwrap_or(DEFAULT_EVENT_HUBS_CONNECTION)
                .to_owned()
        },
        |connection| connection.setting,
    )
}

#[cfg(test)]
mod tests;
