//! Signing deliveries to handlers the Standard Webhooks way (<https://www.standardwebhooks.com>).
//!
//! Each delivery carries `webhook-id` (the message's id, the same on every retry, so handlers
//! can use it as an idempotency key), `webhook-timestamp` (Unix seconds) and
//! `webhook-signature`: `v1,` + base64 of HMAC-SHA256 over `{id}.{timestamp}.{body}` keyed with
//! the app's secret. Secrets are written `whsec_` + base64 of the key bytes, as the
//! specification's libraries expect, so a handler can verify with any of them.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub const SECRET_PREFIX: &str = "whsec_";
/// Key length of generated secrets (the specification recommends 24 to 64 bytes).
pub const SECRET_BYTES: usize = 32;

pub const HEADER_ID: &str = "webhook-id";
pub const HEADER_TIMESTAMP: &str = "webhook-timestamp";
pub const HEADER_SIGNATURE: &str = "webhook-signature";

/// An app's signing secret. `Debug` does not show it.
#[derive(Clone, PartialEq, Eq)]
pub struct WebhookSecret(Vec<u8>);

impl std::fmt::Debug for WebhookSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WebhookSecret(<redacted>)")
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    #[error("a webhook secret starts with whsec_ followed by base64")]
    Format,
    #[error("a webhook secret must have between 24 and 64 key bytes")]
    Length,
}

impl WebhookSecret {
    pub fn from_bytes(bytes: Vec<u8>) -> Result<WebhookSecret, SecretError> {
        if !(24..=64).contains(&bytes.len()) {
            return Err(SecretError::Length);
        }
        Ok(WebhookSecret(bytes))
    }

    /// Parses the `whsec_…` form.
    pub fn parse(text: &str) -> Result<WebhookSecret, SecretError> {
        let encoded = text
            .strip_prefix(SECRET_PREFIX)
            .ok_or(SecretError::Format)?;
        let bytes = STANDARD.decode(encoded).map_err(|_| SecretError::Format)?;
        WebhookSecret::from_bytes(bytes)
    }

    /// The `whsec_…` form handed to the app's owner.
    pub fn expose(&self) -> String {
        format!("{SECRET_PREFIX}{}", STANDARD.encode(&self.0))
    }

    /// The `webhook-signature` header value for one delivery.
    pub fn sign(&self, id: &str, timestamp: i64, body: &[u8]) -> String {
        // Any key length is valid for HMAC, so this cannot fail.
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC accepts any key");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }

    /// Checks a `webhook-signature` header (space-separated `v1,…` entries, any may match), in
    /// constant time per entry. Handlers written in Rust, the demo handler and tests use it.
    pub fn verify(&self, id: &str, timestamp: i64, body: &[u8], header: &str) -> bool {
        let expected = self.sign(id, timestamp, body);
        header
            .split(' ')
            .any(|candidate| constant_time_eq(candidate.as_bytes(), expected.as_bytes()))
    }

    /// The app's `IDENTITY_HEADER` for the managed-identity endpoint: HMAC-SHA256 of a fixed
    /// label keyed with this secret, base64url. Derived rather than stored, so regenerating the
    /// signing secret rotates the header too, and the header reveals nothing about the secret.
    pub fn identity_header(&self) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC accepts any key");
        mac.update(IDENTITY_HEADER_LABEL);
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// Checks an `X-IDENTITY-HEADER` value in constant time.
    pub fn verify_identity_header(&self, candidate: &str) -> bool {
        identity_headers_match(&self.identity_header(), candidate)
    }
}

/// Whether `candidate` is the identity header `expected` (one [`WebhookSecret::identity_header`]
/// gave), in constant time: for callers that keep the header rather than the secret.
pub fn identity_headers_match(expected: &str, candidate: &str) -> bool {
    constant_time_eq(candidate.as_bytes(), expected.as_bytes())
}

/// Whether `candidate` has the identity header's shape (43 base64url characters, a SHA-256
/// MAC), so malformed values are refused before anything is looked up.
pub fn is_identity_header_shaped(candidate: &str) -> bool {
    candidate.len() == 43
        && candidate
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What the identity header is derived for; the version lets a future scheme differ.
const IDENTITY_HEADER_LABEL: &[u8] = b"shoal identity header v1";

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example from the Standard Webhooks reference libraries' test suites.
    #[test]
    fn signature_matches_the_specification_example() {
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let body = br#"{"test": 2432232314}"#;
        let signature = secret.sign("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(secret.verify("msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, &signature));
    }

    #[test]
    fn verification_rejects_changed_id_timestamp_or_body() {
        let secret = WebhookSecret::from_bytes(vec![7; 32]).unwrap();
        let signature = secret.sign("id", 10, b"body");
        assert!(secret.verify("id", 10, b"body", &format!("v1,bogus {signature}")));
        assert!(!secret.verify("id2", 10, b"body", &signature));
        assert!(!secret.verify("id", 11, b"body", &signature));
        assert!(!secret.verify("id", 10, b"bodY", &signature));
    }

    #[test]
    fn secrets_round_trip_and_bad_ones_are_refused() {
        let secret = WebhookSecret::from_bytes(vec![1; 32]).unwrap();
        assert_eq!(WebhookSecret::parse(&secret.expose()).unwrap(), secret);
        assert_eq!(WebhookSecret::parse("abc"), Err(SecretError::Format));
        assert_eq!(WebhookSecret::parse("whsec_!!"), Err(SecretError::Format));
        assert_eq!(
            WebhookSecret::from_bytes(vec![1; 8]),
            Err(SecretError::Length)
        );
        assert_eq!(format!("{secret:?}"), "WebhookSecret(<redacted>)");
    }

    #[test]
    fn identity_headers_have_a_checkable_shape() {
        let header = WebhookSecret::from_bytes(vec![9; 32])
            .unwrap()
            .identity_header();
        assert!(is_identity_header_shaped(&header), "{header}");
        assert!(identity_headers_match(&header, &header));
        assert!(!identity_headers_match(&header, &header[1..]));
        let longer = format!("{header}x");
        let symbols = header.replace(|c: char| c.is_ascii_alphanumeric(), "+");
        for bad in ["", "short", longer.as_str(), symbols.as_str()] {
            assert!(!is_identity_header_shaped(bad), "{bad}");
        }
    }

    #[test]
    fn identity_header_is_derived_from_the_secret_and_changes_with_it() {
        let secret = WebhookSecret::from_bytes(vec![7; 32]).unwrap();
        let header = secret.identity_header();
        assert_eq!(header, secret.identity_header(), "stable");
        assert_eq!(header.len(), 43, "base64url of 32 bytes, unpadded");
        assert!(!header.contains(['+', '/', '=']));
        assert!(secret.verify_identity_header(&header));
        assert!(!secret.verify_identity_header(&header[1..]));
        assert!(!secret.verify_identity_header(""));
        let regenerated = WebhookSecret::from_bytes(vec![8; 32]).unwrap();
        assert_ne!(regenerated.identity_header(), header);
        assert!(!regenerated.verify_identity_header(&header));
        // Neither the signature scheme nor the exposed secret reveals the header.
        assert!(!secret.expose().contains(&header));
        assert!(!secret.sign("id", 1, b"").contains(&header));
    }
}
