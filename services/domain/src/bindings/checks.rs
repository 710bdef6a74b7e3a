//! Per-type reading of binding properties and the checks serde cannot express.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::known_type_names;
use super::{
    Binding, EventHubOutputBinding, EventHubTriggerBinding, KafkaClientSettings,
    KafkaOutputBinding, KafkaTriggerBinding,
};
use crate::binding_expressions::{Template, output_name};
use crate::binding_kinds::{self, KindBinding};
use crate::names::SettingName;
use crate::validation::{Problems, from_json, join_path};

/// The target names of an output binding that may hold binding expressions, by property.
pub(super) fn output_templates(binding: &Binding) -> Vec<(&'static str, Template)> {
    let written: Vec<(&'static str, &str)> = match binding {
        Binding::Kafka(b) => vec![("topic", b.topic.as_str())],
        Binding::Kind(b) => b.kind().output_names(b.properties()),
        _ => Vec::new(),
    };
    written
        .into_iter()
        .filter_map(|(field, name)| Template::parse(name).ok().map(|t| (field, t)))
        .collect()
}

pub(super) fn unknown_type_message(written: &str) -> String {
    if let Some(known) = known_type_names().find(|k| k.eq_ignore_ascii_case(written)) {
        return format!("unknown binding type \"{written}\", did you mean \"{known}\"?");
    }
    let known: Vec<&str> = known_type_names().collect();
    format!(
        "unknown binding type \"{written}\"; known types: {}",
        known.join(", ")
    )
}

fn props<T: DeserializeOwned>(
    properties: Map<String, Value>,
    prefix: &str,
    problems: &mut Problems,
) -> Option<T> {
    from_json(Value::Object(properties), prefix)
        .map_err(|err| problems.absorb(err))
        .ok()
}

/// Reads the properties of a binding of type `t` and applies the checks serde cannot express.
pub(super) fn read_properties(
    t: &str,
    properties: Map<String, Value>,
    prefix: &str,
    problems: &mut Problems,
) -> Option<Binding> {
    let path = |field: &str| join_path(prefix, field);
    let binding = match t {
        "eventHubTrigger" => {
            let b: EventHubTriggerBinding = props(properties, prefix, problems)?;
            if let Some(name) = &b.event_hub_name {
                check_entity_name(problems, &path("eventHubName"), name, 256, false);
            }
            if let Some(group) = &b.consumer_group {
                check_consumer_group(problems, &path("consumerGroup"), group);
            }
            Binding::EventHubTrigger(b)
        }
        "eventHub" => {
            let b: EventHubOutputBinding = props(properties, prefix, problems)?;
            if let Some(name) = &b.event_hub_name {
                if name.contains(['{', '}']) {
                    // Azure binds `EventHubAttribute.EventHubName` as written: it is not
                    // `[AutoResolve]` (azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.EventHubs`,
                    // `src/EventHubAttribute.cs`, `Config/EventHubExtensionConfigProvider.cs`).
                    problems.push(
                        path("eventHubName"),
                        "binding expressions are not resolved in an eventHub output's eventHubName (Azure Functions binds it as written); name the event hub, or use a %Setting% reference",
                    );
                } else {
                    check_entity_name(problems, &path("eventHubName"), name, 256, false);
                }
            }
            Binding::EventHub(b)
        }
        "kafkaTrigger" => {
            let b: KafkaTriggerBinding = props(properties, prefix, problems)?;
            check_kafka(problems, prefix, &b.client(), false);
            if let Some(group) = &b.consumer_group {
                check_consumer_group(problems, &path("consumerGroup"), group);
            }
            if b.lag_threshold == Some(0) {
                problems.push(path("lagThreshold"), "must be at least 1");
            }
            Binding::KafkaTrigger(b)
        }
        "kafka" => {
            let b: KafkaOutputBinding = props(properties, prefix, problems)?;
            check_kafka(problems, prefix, &b.client(), true);
            Binding::Kafka(b)
        }
        t => {
            let kind = binding_kinds::find(t)?;
            let binding = KindBinding::read(kind, properties, prefix, problems)?;
            // A kind's connection property may have its own name (`connectionStringSetting`).
            if let Some((field, setting)) = kind.connection(binding.properties()) {
                check_connection(problems, &path(field), Some(setting));
            }
            return Some(Binding::Kind(binding));
        }
    };
    check_connection(problems, &path("connection"), binding.connection());
    Some(binding)
}

/// What Kafka topics are made of.
fn stream_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')
}

/// `connection` names an app setting or a prefix of settings, so it must be a valid setting name.
fn check_connection(problems: &mut Problems, path: &str, connection: Option<&str>) {
    if let Some(connection) = connection {
        binding_kinds::check_setting_name(problems, path, connection);
    }
}

/// Service Bus and Event Hubs entity names: letters, digits, `.`, `-`, `_` (and `/` for Service
/// Bus paths), starting and ending with a letter or digit; or a `%Setting%` reference.
fn check_entity_name(
    problems: &mut Problems,
    path: &str,
    name: &str,
    max: usize,
    allow_slash: bool,
) {
    if is_setting_reference(name) {
        return;
    }
    let valid_chars = name.chars().all(|c| {
        c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') || (allow_slash && c == '/')
    });
    let valid_ends = name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if name.is_empty() || name.len() > max || !valid_chars || !valid_ends {
        let extra = if allow_slash {
            ", '_' and '/'"
        } else {
            " and '_'"
        };
        problems.push(
            path,
            format!(
                "must be 1 to {max} letters, digits, '.', '-'{extra}, starting and ending with a letter or digit (or an app setting reference like %Name%)"
            ),
        );
    }
}

fn check_consumer_group(problems: &mut Problems, path: &str, group: &str) {
    if group.is_empty() || group.len() > 50 || group.chars().any(char::is_control) {
        problems.push(path, "must be 1 to 50 characters");
    }
}

fn is_setting_reference(value: &str) -> bool {
    value
        .strip_prefix('%')
        .and_then(|rest| rest.strip_suffix('%'))
        .is_some_and(|name| SettingName::parse(name).is_ok())
}

/// `output`: an output binding's topic may hold binding expressions.
fn check_kafka(
    problems: &mut Problems,
    prefix: &str,
    binding: &KafkaClientSettings<'_>,
    output: bool,
) {
    let path = |field: &str| join_path(prefix, field);
    if binding.broker_list.trim().is_empty() {
        problems.push(path("brokerList"), "must not be empty");
    }
    if output {
        match output_name(binding.topic, stream_char, "a Kafka topic name") {
            Ok(Some(_)) => return check_kafka_client(problems, prefix, binding),
            Ok(None) => {}
            Err(message) => {
                problems.push(path("topic"), message);
                return check_kafka_client(problems, prefix, binding);
            }
        }
    }
    let topic_ok = is_setting_reference(binding.topic)
        || (!binding.topic.is_empty()
            && binding.topic.len() <= 249
            && binding
                .topic
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')));
    if !topic_ok {
        problems.push(path("topic"), "must be 1 to 249 letters, digits, '.', '_' and '-' (or an app setting reference like %Topic%)");
    }
    check_kafka_client(problems, prefix, binding);
}

/// Everything of a Kafka binding's client but its topic.
fn check_kafka_client(problems: &mut Problems, prefix: &str, binding: &KafkaClientSettings<'_>) {
    let path = |field: &str| join_path(prefix, field);
    let choices: [(&str, &Option<&str>, &[&str]); 2] = [
        (
            "protocol",
            &binding.protocol,
            &["plaintext", "ssl", "saslPlaintext", "saslSsl"],
        ),
        (
            "authenticationMode",
            &binding.authentication_mode,
            &[
                "gssapi",
                "plain",
                "scramSha256",
                "scramSha512",
                "oauthBearer",
            ],
        ),
    ];
    for (field, value, allowed) in choices {
        if let Some(value) = value {
            let normalized = value.replace(['_', '-'], "");
            if !allowed.iter().any(|a| a.eq_ignore_ascii_case(&normalized)) {
                problems.push(
                    path(field),
                    format!("must be one of {}", allowed.join(", ")),
                );
            }
        }
    }
    if let Some(password) = binding.password
        && !is_setting_reference(password)
    {
        problems.push(
                path("password"),
                "must be an app setting reference like %KafkaPassword% so the secret stays in app settings",
            );
    }
    check_kafka_ssl(problems, prefix, binding);
}

/// The TLS material: secrets only by reference, no worker file paths, and nothing that the
/// protocol would leave unused.
fn check_kafka_ssl(problems: &mut Problems, prefix: &str, binding: &KafkaClientSettings<'_>) {
    let path = |field: &str| join_path(prefix, field);
    let ssl = binding.ssl;
    let locations = [
        ("sslCaLocation", &ssl.ca_location, "sslCaPEM"),
        (
            "sslCertificateLocation",
            &ssl.certificate_location,
            "sslCertificatePEM",
        ),
        ("sslKeyLocation", &ssl.key_location, "sslKeyPEM"),
    ];
    for (field, value, instead) in locations {
        if value.is_some() {
            problems.push(
                path(field),
                format!("names a file on Shoal's workers, where apps cannot place files; put the PEM text in an app setting and reference it with {instead}"),
            );
        }
    }
    let secrets = [
        ("sslKeyPEM", &ssl.key_pem, "%KafkaClientKey%"),
        (
            "sslCertificateandKeyPEM",
            &ssl.certificate_and_key_pem,
            "%KafkaClientCertificateAndKey%",
        ),
        (
            "sslKeyPassword",
            &ssl.key_password,
            "%KafkaClientKeyPassword%",
        ),
    ];
    for (field, value, example) in secrets {
        if let Some(value) = value
            && !is_setting_reference(value)
        {
            problems.push(
                path(field),
                format!("must be an app setting reference like {example} so the secret stays in app settings"),
            );
        }
    }
    if ssl.certificate_and_key_pem.is_some()
        && (ssl.certificate_pem.is_some() || ssl.key_pem.is_some())
    {
        problems.push(
            path("sslCertificateandKeyPEM"),
            "set either sslCertificateandKeyPEM or sslCertificatePEM with sslKeyPEM, not both",
        );
    }
    let pem = [
        ("sslCaPEM", &ssl.ca_pem),
        ("sslCertificatePEM", &ssl.certificate_pem),
        ("sslKeyPEM", &ssl.key_pem),
        ("sslCertificateandKeyPEM", &ssl.certificate_and_key_pem),
        ("sslKeyPassword", &ssl.key_password),
    ];
    let uses_tls = binding.protocol.is_some_and(|p| {
        let p = p.replace(['_', '-'], "");
        p.eq_ignore_ascii_case("ssl") || p.eq_ignore_ascii_case("saslSsl")
    });
    if !uses_tls && let Some((field, _)) = pem.iter().find(|(_, value)| value.is_some()) {
        problems.push(
            path(field),
            "takes effect only over TLS: set protocol to ssl or saslSsl",
        );
    }
}
