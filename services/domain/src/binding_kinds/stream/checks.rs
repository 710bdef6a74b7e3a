//! What the stream kinds check of their properties beyond what serde reads: names, consumer
//! groups, and a Kafka client's protocol, sign-in and TLS material.

use super::KafkaClientSettings;
use crate::binding_expressions::output_name;
use crate::names::SettingName;
use crate::validation::{Problems, join_path};

/// What Kafka topics are made of.
fn stream_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')
}

/// Service Bus and Event Hubs entity names: letters, digits, `.`, `-`, `_` (and `/` for Service
/// Bus paths), starting and ending with a letter or digit; or a `%Setting%` reference.
pub(super) fn check_entity_name(
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

pub(super) fn check_consumer_group(problems: &mut Problems, path: &str, group: &str) {
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
pub(super) fn check_kafka(
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
