//! A Kafka binding's TLS material (`sslCaPEM` …) turned into librdkafka's PEM properties.

use std::collections::BTreeMap;

use super::resolve_secure;
use crate::binding_kinds::stream::KafkaSsl;

/// The TLS material as librdkafka takes it, as the Kafka extension sets it
/// (`KafkaProducerFactory.GetProducerConfig`, `Azure/azure-functions-kafka-extension`): every
/// certificate of `sslCaPEM` as `ssl.ca.pem`, `sslCertificateandKeyPEM` split into
/// certificate and key (its `PEMExtractor`). Errors name the field, never the text.
pub(super) fn ssl_properties(
    ssl: &KafkaSsl,
    settings: &BTreeMap<String, String>,
) -> Result<Vec<(String, String)>, String> {
    let resolve = |field: &str, value: &Option<String>| -> Result<Option<String>, String> {
        value
            .as_deref()
            .map(|v| resolve_secure(v, settings).map_err(|e| format!("{field}: {e}")))
            .transpose()
    };
    let blocks = |field: &str, text: &str, label: &str| -> Result<String, String> {
        let found = pem_blocks(text, label);
        if found.is_empty() {
            return Err(format!(
                "{field} holds no PEM {}",
                label.to_ascii_lowercase()
            ));
        }
        Ok(found.join("\n"))
    };
    let mut out = Vec::new();
    if let Some(ca) = resolve("sslCaPEM", &ssl.ca_pem)? {
        out.push(("ssl.ca.pem".into(), blocks("sslCaPEM", &ca, "CERTIFICATE")?));
    }
    if let Some(certificate) = resolve("sslCertificatePEM", &ssl.certificate_pem)? {
        let certificate = blocks("sslCertificatePEM", &certificate, "CERTIFICATE")?;
        out.push(("ssl.certificate.pem".into(), certificate));
    }
    if let Some(key) = resolve("sslKeyPEM", &ssl.key_pem)? {
        out.push((
            "ssl.key.pem".into(),
            blocks("sslKeyPEM", &key, "PRIVATE KEY")?,
        ));
    }
    if let Some(both) = resolve("sslCertificateandKeyPEM", &ssl.certificate_and_key_pem)? {
        let field = "sslCertificateandKeyPEM";
        out.push((
            "ssl.certificate.pem".into(),
            blocks(field, &both, "CERTIFICATE")?,
        ));
        out.push(("ssl.key.pem".into(), blocks(field, &both, "PRIVATE KEY")?));
    }
    if let Some(password) = resolve("sslKeyPassword", &ssl.key_password)? {
        out.push(("ssl.key.password".into(), password));
    }
    Ok(out)
}

/// The `-----BEGIN …<label>-----` … `-----END …<label>-----` blocks of `text`, in order; a label
/// of `PRIVATE KEY` also takes `RSA PRIVATE KEY`, `EC PRIVATE KEY` and `ENCRYPTED PRIVATE KEY`.
fn pem_blocks<'t>(text: &'t str, label: &str) -> Vec<&'t str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("-----BEGIN ") {
        let block = &rest[start..];
        let Some(label_end) = block["-----BEGIN ".len()..].find("-----") else {
            break;
        };
        let this = &block["-----BEGIN ".len().."-----BEGIN ".len() + label_end];
        let end_marker = format!("-----END {this}-----");
        let Some(end) = block.find(&end_marker) else {
            break;
        };
        let whole = &block[..end + end_marker.len()];
        if this.ends_with(label) {
            found.push(whole);
        }
        rest = &block[end + end_marker.len()..];
    }
    found
}
