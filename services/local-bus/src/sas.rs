//! Shared access signatures as Service Bus checks them: `SharedAccessSignature
//! sr=<resource>&sig=<signature>&se=<expiry>&skn=<policy>`, the signature being
//! base64(HMAC-SHA256(key, url-encode(sr) + "\n" + se)) — the token the SDKs build
//! (`azure-sdk-for-python` `servicebus/_pyamqp/utils.py` `generate_sas_token`; .NET's
//! `SharedAccessSignature.BuildSignature` uses `WebUtility.UrlEncode`, which differs only in the
//! characters it leaves unescaped, so both encodings are accepted).
//!
//! The audience (`sr`) covers an entity when, scheme and host aside, its path is the entity's
//! path or a prefix of it ending at a `/` (a namespace-wide token has an empty path). The host is
//! not compared: the stand-in answers to whatever name it was reached by (`127.0.0.1`,
//! `localhost`, a container name).

use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use sha2::Sha256;

use crate::config::{Rights, SasPolicy};

/// Python's `quote_plus`: everything but letters, digits and `_.-~` is escaped.
const PYTHON_QUOTE_PLUS: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'_')
    .remove(b'.')
    .remove(b'-')
    .remove(b'~');
/// .NET's `WebUtility.UrlEncode`: letters, digits and `-_.!*()` stay.
const DOTNET_URL_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'!')
    .remove(b'*')
    .remove(b'(')
    .remove(b')');

/// Why a token was refused; the text goes back to the client.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SasError {
    #[error("the token is not a SharedAccessSignature")]
    Malformed,
    #[error("the token names no known policy")]
    UnknownPolicy,
    #[error("the token's signature does not match")]
    BadSignature,
    #[error("the token has expired")]
    Expired,
    #[error("the token's audience does not cover {0}")]
    WrongAudience(String),
    #[error("the policy lacks the {0} right")]
    MissingRight(&'static str),
}

/// A verified token: what it grants, where, until when.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    /// The audience's path, lower-cased, without leading or trailing `/`.
    pub path: String,
    pub rights: Rights,
    pub expires_at: DateTime<Utc>,
}

impl Grant {
    /// Whether this grant lets its holder do what `needed` asks on `entity_path` at `now`.
    pub fn allows(
        &self,
        entity_path: &str,
        needed: Rights,
        now: DateTime<Utc>,
    ) -> Result<(), SasError> {
        if self.expires_at <= now {
            return Err(SasError::Expired);
        }
        if !covers(&self.path, entity_path) {
            return Err(SasError::WrongAudience(entity_path.to_owned()));
        }
        check_rights(self.rights, needed)
    }
}

fn check_rights(rights: Rights, needed: Rights) -> Result<(), SasError> {
    if needed.manage && !rights.manage {
        return Err(SasError::MissingRight("Manage"));
    }
    if needed.send && !rights.send {
        return Err(SasError::MissingRight("Send"));
    }
    if needed.listen && !rights.listen {
        return Err(SasError::MissingRight("Listen"));
    }
    Ok(())
}

/// Whether a token for `audience_path` covers `entity_path` (both as [`normalize_path`] leaves them).
pub fn covers(audience_path: &str, entity_path: &str) -> bool {
    let entity = normalize_path(entity_path);
    audience_path.is_empty()
        || entity == audience_path
        || entity
            .strip_prefix(audience_path)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Lower-case, no leading or trailing slashes.
pub fn normalize_path(path: &str) -> String {
    path.trim_matches('/').to_lowercase()
}

/// The path part of an audience URI (`sb://host:port/queue` → `queue`).
pub fn audience_path(audience: &str) -> String {
    let without_scheme = audience
        .split_once("://")
        .map_or(audience, |(_, rest)| rest);
    let path = without_scheme.split_once('/').map_or("", |(_, path)| path);
    let path = path.split(['?', '#']).next().unwrap_or("");
    normalize_path(path)
}

/// The entity path an AMQP address names, whether a bare path (`orders`) or a URL
/// (`amqps://host:port/orders`, as the Python SDK writes link targets).
pub fn address_path(address: &str) -> String {
    if address.contains("://") {
        audience_path(address)
    } else {
        normalize_path(address)
    }
}

/// Checks a `SharedAccessSignature …` token against the namespace's policies at `now`.
pub fn verify(token: &str, policies: &[SasPolicy], now: DateTime<Utc>) -> Result<Grant, SasError> {
    let fields = token
        .trim()
        .strip_prefix("SharedAccessSignature ")
        .ok_or(SasError::Malformed)?;
    let (mut sr, mut sig, mut se, mut skn) = (None, None, None, None);
    for pair in fields.split('&') {
        let (key, value) = pair.split_once('=').ok_or(SasError::Malformed)?;
        let value = decode(value)?;
        match key {
            "sr" => sr = Some(value),
            "sig" => sig = Some(value),
            "se" => se = Some(value),
            "skn" => skn = Some(value),
            _ => {}
        }
    }
    let (sr, sig, se, skn) = (
        sr.ok_or(SasError::Malformed)?,
        sig.ok_or(SasError::Malformed)?,
        se.ok_or(SasError::Malformed)?,
        skn.ok_or(SasError::Malformed)?,
    );
    // Python double-encodes the policy name (quote_plus, then urlencode); decode once more.
    let skn = decode(&skn)?;
    let policy = policies
        .iter()
        .find(|p| p.name == skn)
        .ok_or(SasError::UnknownPolicy)?;
    let signature = base64::engine::general_purpose::STANDARD
        .decode(sig.as_bytes())
        .map_err(|_| SasError::BadSignature)?;
    let signed = [PYTHON_QUOTE_PLUS, DOTNET_URL_ENCODE].iter().any(|set| {
        let text = format!("{}\n{se}", utf8_percent_encode(&sr, set));
        let lower = text.to_lowercase();
        // Some SDKs (Rust's) send lower-case escapes; the signature is over what they encoded.
        [text, lower].iter().any(|message| {
            let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(policy.key.as_bytes()) else {
                return false;
            };
            mac.update(message.as_bytes());
            mac.verify_slice(&signature).is_ok()
        })
    });
    if !signed {
        return Err(SasError::BadSignature);
    }
    let expiry: i64 = se.parse().map_err(|_| SasError::Malformed)?;
    let expires_at = DateTime::from_timestamp(expiry, 0).ok_or(SasError::Malformed)?;
    if expires_at <= now {
        return Err(SasError::Expired);
    }
    Ok(Grant {
        path: audience_path(&sr),
        rights: policy.rights,
        expires_at,
    })
}

fn decode(value: &str) -> Result<String, SasError> {
    let spaced = value.replace('+', " ");
    percent_decode_str(&spaced)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| SasError::Malformed)
}

/// Builds a token as the Python SDK does; the stand-in's tests and tools use it.
pub fn sign(audience: &str, policy: &SasPolicy, expires_at: DateTime<Utc>) -> String {
    let se = expires_at.timestamp();
    let message = format!("{}\n{se}", utf8_percent_encode(audience, PYTHON_QUOTE_PLUS));
    let signature = match Hmac::<Sha256>::new_from_slice(policy.key.as_bytes()) {
        Ok(mut mac) => {
            mac.update(message.as_bytes());
            base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
        }
        // HMAC takes keys of any length; this arm cannot be reached.
        Err(_) => String::new(),
    };
    format!(
        "SharedAccessSignature sr={}&sig={}&se={se}&skn={}",
        utf8_percent_encode(audience, PYTHON_QUOTE_PLUS),
        utf8_percent_encode(&signature, PYTHON_QUOTE_PLUS),
        utf8_percent_encode(&policy.name, PYTHON_QUOTE_PLUS),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(name: &str, rights: Rights) -> SasPolicy {
        SasPolicy {
            name: name.to_owned(),
            key: format!("key-of-{name}"),
            rights,
        }
    }

    fn at(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_700_000_000 + secs, 0).expect("valid")
    }

    #[test]
    fn accepts_a_python_style_token() {
        // Built exactly as azure-servicebus 7.15's generate_sas_token builds it.
        let root = policy("RootManageSharedAccessKey", Rights::ALL);
        let token = sign("sb://127.0.0.1:5672/orders", &root, at(3600));
        let grant = verify(&token, &[root], at(0)).expect("valid");
        assert_eq!(grant.path, "orders");
        assert_eq!(grant.rights, Rights::ALL);
    }

    #[test]
    fn verify_table() {
        let root = policy("root", Rights::ALL);
        let listen = policy("listen", Rights::LISTEN);
        let policies = [root.clone(), listen.clone()];
        let forged = policy("root", Rights::ALL);
        let forged = SasPolicy {
            key: "wrong".into(),
            ..forged
        };
        let cases: Vec<(String, Result<(), SasError>)> = vec![
            (sign("sb://h/q", &root, at(10)), Ok(())),
            (
                sign("sb://h/q", &forged, at(10)),
                Err(SasError::BadSignature),
            ),
            (sign("sb://h/q", &root, at(-1)), Err(SasError::Expired)),
            (
                sign("sb://h/q", &policy("nobody", Rights::ALL), at(10)),
                Err(SasError::UnknownPolicy),
            ),
            ("Bearer abc".to_owned(), Err(SasError::Malformed)),
            (
                "SharedAccessSignature sr=x".to_owned(),
                Err(SasError::Malformed),
            ),
            (sign("sb://h/q", &listen, at(10)), Ok(())),
        ];
        for (token, expected) in cases {
            assert_eq!(
                verify(&token, &policies, at(0)).map(|_| ()),
                expected,
                "{token}"
            );
        }
    }

    #[test]
    fn grants_check_audience_rights_and_expiry() {
        let grant = |path: &str, rights| Grant {
            path: path.to_owned(),
            rights,
            expires_at: at(10),
        };
        let cases = [
            (grant("", Rights::ALL), "q", Rights::MANAGE, at(0), Ok(())),
            (grant("q", Rights::ALL), "Q", Rights::SEND, at(0), Ok(())),
            (
                grant("q", Rights::ALL),
                "q/$management",
                Rights::LISTEN,
                at(0),
                Ok(()),
            ),
            (
                grant("t", Rights::ALL),
                "t/Subscriptions/s",
                Rights::LISTEN,
                at(0),
                Ok(()),
            ),
            (
                grant("q", Rights::ALL),
                "qq",
                Rights::SEND,
                at(0),
                Err(SasError::WrongAudience("qq".into())),
            ),
            (
                grant("q", Rights::ALL),
                "q",
                Rights::SEND,
                at(10),
                Err(SasError::Expired),
            ),
            (
                grant("q", Rights::LISTEN),
                "q",
                Rights::SEND,
                at(0),
                Err(SasError::MissingRight("Send")),
            ),
            (
                grant("", Rights::LISTEN),
                "q",
                Rights::MANAGE,
                at(0),
                Err(SasError::MissingRight("Manage")),
            ),
            (
                grant("q", Rights::LISTEN),
                "q",
                Rights::LISTEN,
                at(0),
                Ok(()),
            ),
        ];
        for (grant, entity, needed, now, expected) in cases {
            assert_eq!(
                grant.allows(entity, needed, now),
                expected,
                "{grant:?} {entity}"
            );
        }
    }

    #[test]
    fn audience_paths() {
        let cases = [
            ("sb://127.0.0.1:5672/orders", "orders"),
            ("sb://ns.servicebus.windows.net/", ""),
            (
                "https://127.0.0.1:5672/Topic/Subscriptions/Sub/",
                "topic/subscriptions/sub",
            ),
            ("http://h/q?api-version=2021-05", "q"),
            ("h", ""),
        ];
        for (audience, path) in cases {
            assert_eq!(audience_path(audience), path, "{audience}");
        }
    }
}
