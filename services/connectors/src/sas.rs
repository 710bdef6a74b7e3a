//! Account shared access signatures, computed from an account key.
//!
//! The official Rust SDK has no shared-key authentication, so a connection string with an
//! `AccountKey` is turned into an account SAS here and appended to every request. The
//! string-to-sign is the documented one for service versions 2020-12-06 and later
//! (<https://learn.microsoft.com/rest/api/storageservices/create-account-sas>):
//!
//! ```text
//! account \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n ses \n
//! ```
//!
//! signed with HMAC-SHA256 under the base64-decoded account key.

use std::sync::{Arc, RwLock};

use aws_lc_rs::hmac;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Everything but RFC 3986 unreserved characters is escaped in query values.
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The account SAS a worker needs: queues only (`ss=q`), service/container/object resource
/// types, and read (properties), write + create (create queue), add (enqueue), update (update
/// message) and process (receive, delete message) — nothing that deletes or lists queues.
pub(crate) const PERMISSIONS: &str = "rwacup";
pub(crate) const SERVICES: &str = "q";
pub(crate) const RESOURCE_TYPES: &str = "sco";

/// How long a signature Shoal computes is valid, and how long before its expiry it is replaced.
pub(crate) const LIFETIME: TimeDelta = TimeDelta::hours(24);
pub(crate) const REFRESH_MARGIN: TimeDelta = TimeDelta::hours(1);
/// Start slightly in the past so a storage clock behind ours accepts a fresh signature.
pub(crate) const CLOCK_SKEW: TimeDelta = TimeDelta::minutes(15);

/// The signed fields of an account SAS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AccountSas<'a> {
    pub account: &'a str,
    pub permissions: &'a str,
    pub services: &'a str,
    pub resource_types: &'a str,
    pub start: Option<DateTime<Utc>>,
    pub expiry: DateTime<Utc>,
    /// `https` or `https,http`; `None` allows both.
    pub protocol: Option<&'a str>,
    pub version: &'a str,
}

fn iso8601(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl AccountSas<'_> {
    pub(crate) fn string_to_sign(&self) -> String {
        [
            self.account,
            self.permissions,
            self.services,
            self.resource_types,
            &self.start.map(iso8601).unwrap_or_default(),
            &iso8601(self.expiry),
            "", // signed IP range: none
            self.protocol.unwrap_or_default(),
            self.version,
            "", // signed encryption scope: none
            "", // the string ends with a newline
        ]
        .join("\n")
    }

    /// The base64 signature under the base64-decoded account `key`.
    pub(crate) fn signature(&self, key: &[u8]) -> String {
        let key = hmac::Key::new(hmac::HMAC_SHA256, key);
        STANDARD.encode(hmac::sign(&key, self.string_to_sign().as_bytes()).as_ref())
    }

    /// The query string (without `?`) that authorizes a request, values percent-encoded.
    pub(crate) fn query(&self, key: &[u8]) -> String {
        let mut pairs = vec![
            ("sv", self.version.to_owned()),
            ("ss", self.services.to_owned()),
            ("srt", self.resource_types.to_owned()),
            ("sp", self.permissions.to_owned()),
        ];
        if let Some(start) = self.start {
            pairs.push(("st", iso8601(start)));
        }
        pairs.push(("se", iso8601(self.expiry)));
        if let Some(protocol) = self.protocol {
            pairs.push(("spr", protocol.to_owned()));
        }
        pairs.push(("sig", self.signature(key)));
        pairs
            .iter()
            .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, QUERY_VALUE)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// An account SAS for queues with [`PERMISSIONS`], valid from now until `expiry`.
pub(crate) fn account_sas(
    account: &str,
    key_base64: &str,
    version: &str,
    expiry: DateTime<Utc>,
) -> Result<String, base64::DecodeError> {
    let key = STANDARD.decode(key_base64.trim())?;
    let sas = AccountSas {
        account,
        permissions: PERMISSIONS,
        services: SERVICES,
        resource_types: RESOURCE_TYPES,
        start: None,
        expiry: DateTime::from_timestamp(expiry.timestamp(), 0).unwrap_or(expiry),
        protocol: None,
        version,
    };
    Ok(sas.query(&key))
}

/// Signs account SAS tokens for one account and keeps the current one until less than
/// [`REFRESH_MARGIN`] of its [`LIFETIME`] remains, so long-running workers never send an expired
/// signature and never sign per request.
pub(crate) struct AccountSasSigner {
    account: String,
    key: Vec<u8>,
    version: &'static str,
    protocol: Option<&'static str>,
    current: RwLock<Signed>,
}

#[derive(Clone)]
struct Signed {
    query: Arc<str>,
    expiry: DateTime<Utc>,
}

impl AccountSasSigner {
    /// `key` is the account key as it appears in connection strings (base64).
    pub(crate) fn new(
        account: &str,
        key_base64: &str,
        version: &'static str,
        https_only: bool,
        now: DateTime<Utc>,
    ) -> Result<AccountSasSigner, base64::DecodeError> {
        let key = STANDARD.decode(key_base64.trim())?;
        let protocol = https_only.then_some("https");
        let current = RwLock::new(sign(account, &key, version, protocol, now));
        Ok(AccountSasSigner {
            account: account.to_owned(),
            key,
            version,
            protocol,
            current,
        })
    }

    /// The query string to append to a request made at `now`.
    pub(crate) fn query(&self, now: DateTime<Utc>) -> Arc<str> {
        {
            let current = self.current.read().unwrap_or_else(|e| e.into_inner());
            if !needs_refresh(current.expiry, now) {
                return current.query.clone();
            }
        }
        let mut current = self.current.write().unwrap_or_else(|e| e.into_inner());
        if needs_refresh(current.expiry, now) {
            *current = sign(&self.account, &self.key, self.version, self.protocol, now);
        }
        current.query.clone()
    }

    /// The expiry of the signature [`AccountSasSigner::query`] hands out now.
    #[cfg(test)]
    fn expiry(&self) -> DateTime<Utc> {
        self.current.read().unwrap().expiry
    }
}

fn needs_refresh(expiry: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    expiry - now < REFRESH_MARGIN
}

fn sign(
    account: &str,
    key: &[u8],
    version: &str,
    protocol: Option<&str>,
    now: DateTime<Utc>,
) -> Signed {
    // Whole seconds: the signed fields carry no fractions.
    let now = DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now);
    let expiry = now + LIFETIME;
    let sas = AccountSas {
        account,
        permissions: PERMISSIONS,
        services: SERVICES,
        resource_types: RESOURCE_TYPES,
        start: Some(now - CLOCK_SKEW),
        expiry,
        protocol,
        version,
    };
    Signed {
        query: sas.query(key).into(),
        expiry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    const DEV_KEY: &str =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    /// Expected signatures were computed outside this code, from the documented string-to-sign,
    /// with OpenSSL:
    ///
    /// ```sh
    /// printf '<string-to-sign>' | openssl dgst -sha256 -mac HMAC \
    ///   -macopt hexkey:$(echo -n "$KEY" | base64 -d | xxd -p -c 256) -binary | base64
    /// ```
    ///
    /// and the first one also with Azurite 3.35's own `generateAccountSASSignature` (the code
    /// that validates account SAS tokens in the emulator); both agree.
    #[test]
    fn account_sas_signature_matches_known_vectors() {
        let cases = [
            (
                AccountSas {
                    account: "devstoreaccount1",
                    permissions: "rwacup",
                    services: "q",
                    resource_types: "sco",
                    start: Some(at("2025-01-01T00:00:00Z")),
                    expiry: at("2025-01-02T00:00:00Z"),
                    protocol: None,
                    version: "2025-11-05",
                },
                DEV_KEY,
                "devstoreaccount1\nrwacup\nq\nsco\n2025-01-01T00:00:00Z\n2025-01-02T00:00:00Z\n\n\n2025-11-05\n\n",
                "YSuuD1NMuh7EEzp7jU8cT7dThOI67vWJWegFyujHBpI=",
            ),
            (
                AccountSas {
                    account: "contoso",
                    permissions: "rwacup",
                    services: "q",
                    resource_types: "sco",
                    start: Some(at("2026-03-01T12:00:00Z")),
                    expiry: at("2026-03-02T12:00:00Z"),
                    protocol: Some("https"),
                    version: "2025-11-05",
                },
                // base64 of "not-a-real-storage-account-key!!"
                "bm90LWEtcmVhbC1zdG9yYWdlLWFjY291bnQta2V5ISE=",
                "contoso\nrwacup\nq\nsco\n2026-03-01T12:00:00Z\n2026-03-02T12:00:00Z\n\nhttps\n2025-11-05\n\n",
                "amuOC7+SI9z8aYscXpjECoLkFzwM4laAnRm+chp7S3Y=",
            ),
        ];
        for (sas, key, string_to_sign, signature) in cases {
            let key = STANDARD.decode(key).unwrap();
            assert_eq!(sas.string_to_sign(), string_to_sign);
            assert_eq!(sas.signature(&key), signature);
        }
    }

    #[test]
    fn account_sas_query_is_percent_encoded() {
        let sas = AccountSas {
            account: "devstoreaccount1",
            permissions: "rwacup",
            services: "q",
            resource_types: "sco",
            start: Some(at("2025-01-01T00:00:00Z")),
            expiry: at("2025-01-02T00:00:00Z"),
            protocol: None,
            version: "2025-11-05",
        };
        assert_eq!(
            sas.query(&STANDARD.decode(DEV_KEY).unwrap()),
            "sv=2025-11-05&ss=q&srt=sco&sp=rwacup&st=2025-01-01T00%3A00%3A00Z&se=2025-01-02T00%3A00%3A00Z&sig=YSuuD1NMuh7EEzp7jU8cT7dThOI67vWJWegFyujHBpI%3D"
        );
    }

    #[test]
    fn signer_reuses_a_signature_until_an_hour_before_expiry() {
        let t0 = at("2026-01-01T00:00:00.750Z");
        let signer = AccountSasSigner::new("acct", DEV_KEY, "2025-11-05", false, t0).unwrap();
        let first = signer.query(t0);
        assert!(first.contains("st=2025-12-31T23%3A45%3A00Z"), "{first}");
        assert!(first.contains("se=2026-01-02T00%3A00%3A00Z"), "{first}");
        assert_eq!(signer.expiry(), at("2026-01-02T00:00:00Z"));

        let cases = [
            (TimeDelta::hours(1), false),
            (TimeDelta::hours(22), false),
            (TimeDelta::hours(23) - TimeDelta::seconds(1), false),
            (TimeDelta::hours(23) + TimeDelta::seconds(1), true),
        ];
        for (after, refreshed) in cases {
            let signer = AccountSasSigner::new("acct", DEV_KEY, "2025-11-05", false, t0).unwrap();
            let now = t0 + after;
            let query = signer.query(now);
            assert_eq!(query != first, refreshed, "{after}");
            assert!(signer.expiry() - now >= REFRESH_MARGIN, "{after}");
        }
    }

    #[test]
    fn https_only_signer_restricts_the_protocol() {
        let t0 = at("2026-01-01T00:00:00Z");
        let signer = AccountSasSigner::new("acct", DEV_KEY, "2025-11-05", true, t0).unwrap();
        assert!(signer.query(t0).contains("&spr=https&sig="));
    }

    #[test]
    fn invalid_key_is_refused() {
        let now = Utc::now();
        assert!(AccountSasSigner::new("acct", "not base64!", "2025-11-05", false, now).is_err());
    }
}
