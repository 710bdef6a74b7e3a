//! The librdkafka client properties of one connection, as the domain resolves them from a
//! binding and the app's settings.

use std::collections::BTreeMap;
use std::fmt;

use rdkafka::ClientConfig;

use crate::error::Redactor;

/// librdkafka client properties (`bootstrap.servers`, `security.protocol`, `sasl.mechanisms`,
/// `sasl.username`, `sasl.password`, `ssl.ca.pem` …), passed to librdkafka as they are; see
/// librdkafka's CONFIGURATION.md for the names. The clients of this module add their own
/// (group, commit and delivery settings) on top, and theirs win.
///
/// `Debug` masks every secret value (see [`KafkaProperties::is_secret`]), so the properties can
/// be logged.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct KafkaProperties(BTreeMap<String, String>);

const MASK: &str = "***";

impl KafkaProperties {
    pub fn new() -> KafkaProperties {
        KafkaProperties::default()
    }

    /// Sets `key` to `value`, replacing an earlier value.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.0.insert(key.into(), value.into());
        self
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Every property, ordered by name, secrets included.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether the value of property `key` is a secret: passwords, private keys and client
    /// secrets, and the OAUTHBEARER configuration (which may carry a client secret).
    pub fn is_secret(key: &str) -> bool {
        let key = key.to_ascii_lowercase();
        key.contains("password")
            || key.ends_with(".secret")
            || key.starts_with("ssl.key.")
            || key == "ssl_key"
            || key == "sasl.oauthbearer.config"
    }

    /// The secret values, for scrubbing them from error messages.
    pub(crate) fn redactor(&self) -> Redactor {
        Redactor::new(
            self.0
                .iter()
                .filter(|(k, _)| KafkaProperties::is_secret(k))
                .map(|(_, v)| v.clone()),
        )
    }

    /// A librdkafka configuration with these properties, then `overrides` on top.
    pub(crate) fn client_config(&self, overrides: &[(&str, &str)]) -> ClientConfig {
        let mut config = ClientConfig::new();
        for (key, value) in &self.0 {
            config.set(key, value);
        }
        for (key, value) in overrides {
            config.set(*key, *value);
        }
        config
    }
}

impl fmt::Debug for KafkaProperties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| {
                let shown = if KafkaProperties::is_secret(k) {
                    MASK
                } else {
                    v.as_str()
                };
                (k, shown)
            }))
            .finish()
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for KafkaProperties {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        KafkaProperties(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_masks_every_secret_value() {
        let secrets = [
            ("sasl.password", "Endpoint=sb://ns/;SharedAccessKey=k3y"),
            ("ssl.key.password", "pw-1"),
            ("ssl.key.pem", "-----BEGIN PRIVATE KEY-----"),
            ("ssl.keystore.password", "pw-2"),
            ("sasl.oauthbearer.client.secret", "cs-3"),
            ("sasl.oauthbearer.config", "clientSecret=cs-4"),
        ];
        let mut props: KafkaProperties = secrets.into_iter().collect();
        props
            .set("bootstrap.servers", "ns.servicebus.windows.net:9093")
            .set("sasl.username", "$ConnectionString");

        let shown = format!("{props:?}");

        for (key, value) in secrets {
            assert!(!shown.contains(value), "{key} leaked: {shown}");
            assert!(shown.contains(&format!("\"{key}\": \"***\"")), "{shown}");
        }
        assert!(shown.contains("ns.servicebus.windows.net:9093"), "{shown}");
        assert!(shown.contains("$ConnectionString"), "{shown}");
    }

    #[test]
    fn overrides_win_over_the_properties() {
        let mut props = KafkaProperties::new();
        props
            .set("enable.auto.commit", "true")
            .set("client.id", "a");
        let config = props.client_config(&[("enable.auto.commit", "false")]);
        assert_eq!(config.get("enable.auto.commit"), Some("false"));
        assert_eq!(config.get("client.id"), Some("a"));
    }

    #[test]
    fn redactor_scrubs_secret_values_only() {
        let mut props = KafkaProperties::new();
        props
            .set("sasl.password", "very-secret-value")
            .set("sasl.username", "$ConnectionString");
        let scrubbed = props
            .redactor()
            .redact("auth as $ConnectionString with very-secret-value failed");
        assert_eq!(scrubbed, "auth as $ConnectionString with <redacted> failed");
    }
}
