//! Service Bus shared access signatures: `SharedAccessSignature sr=<resource>&sig=<signature>
//! &se=<expiry>&skn=<key name>`, where the signature is the base64 HMAC-SHA256 of
//! `"<resource>\n<expiry>"` keyed with the key's UTF-8 bytes (Service Bus keys are used as
//! written, not base64-decoded like storage keys). The resource is the URL-encoded entity URL;
//! a token for a URL is valid for every path below it. As the SDKs sign it:
//! `Azure.Messaging.ServiceBus/src/Authorization/SharedAccessSignature.cs` and
//! `azure-servicebus`'s `_common/utils.py` `generate_sas_token`.

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// What `WebUtility.UrlEncode` and Python's `quote(safe="")` leave alone in `sr`: letters,
/// digits, `-`, `_` and `.`.
const RESOURCE: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.');

/// The `Authorization` header value for `resource` (a URL), valid until `expiry` (Unix seconds).
pub(crate) fn token(resource: &str, key_name: &str, key: &str, expiry: i64) -> String {
    let encoded = utf8_percent_encode(resource, RESOURCE).to_string();
    let key = hmac::Key::new(hmac::HMAC_SHA256, key.as_bytes());
    let signature = STANDARD.encode(hmac::sign(&key, format!("{encoded}\n{expiry}").as_bytes()));
    format!(
        "SharedAccessSignature sr={encoded}&sig={}&se={expiry}&skn={}",
        utf8_percent_encode(&signature, NON_ALPHANUMERIC),
        utf8_percent_encode(key_name, NON_ALPHANUMERIC),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expected signature was computed independently:
    /// `printf 'https%3A%2F%2Fcontoso.servicebus.windows.net%2Forders\n1700000000' |
    ///  openssl dgst -sha256 -mac HMAC -macopt key:secret-key -binary | base64`.
    #[test]
    fn signs_resource_and_expiry_with_the_key_as_written() {
        let token = token(
            "https://contoso.servicebus.windows.net/orders",
            "RootManageSharedAccessKey",
            "secret-key",
            1_700_000_000,
        );
        // S+hHcrX/YHhLvxY23CbU3i+4nsG1RefbGy8Uc2xg6/U=, URL-encoded.
        let expected_sig = "S%2BhHcrX%2FYHhLvxY23CbU3i%2B4nsG1RefbGy8Uc2xg6%2FU%3D";
        assert_eq!(
            token,
            format!(
                "SharedAccessSignature sr=https%3A%2F%2Fcontoso.servicebus.windows.net%2Forders&sig={expected_sig}&se=1700000000&skn=RootManageSharedAccessKey"
            )
        );
    }
}
