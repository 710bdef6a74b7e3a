//! What Shoal's token endpoints hand out and where clients find them: the public base URL the
//! discovery document and identity endpoints are built from, the lifetime of issued tokens, and
//! a throttle on failed client authentications so secrets cannot be guessed quickly.

use std::time::Duration;

use url::Url;

use crate::throttle::Throttle;

/// Lifetime of tokens from `POST /oauth2/token` and the managed-identity endpoint, unless
/// configured otherwise (as Entra ID's default access-token lifetime).
pub const DEFAULT_TOKEN_LIFETIME: Duration = Duration::from_secs(3600);

/// Failed authentications a client id may have in a burst, and how fast it earns one back.
const FAILURE_BURST: u32 = 10;
const FAILURE_REFILL: Duration = Duration::from_secs(6);

/// How Shoal issues its own tokens (part of [`crate::IdentityConfig`]).
#[derive(Debug, Clone)]
pub struct TokenConfig {
    /// Where clients reach this API (`--public-url`): discovery's `jwks_uri` and
    /// `token_endpoint`, and apps' `IDENTITY_ENDPOINT`. Default `http://<bound address>`.
    pub public_url: Option<Url>,
    /// Lifetime of issued tokens (`--token-lifetime`, at most 24 h).
    pub lifetime: Duration,
    /// How often the signing keys are re-read to pick up another process's rotation.
    pub key_reload_interval: Duration,
}

impl Default for TokenConfig {
    fn default() -> Self {
        TokenConfig {
            public_url: None,
            lifetime: DEFAULT_TOKEN_LIFETIME,
            key_reload_interval: crate::tokens::rotation::DEFAULT_RELOAD_INTERVAL,
        }
    }
}

/// The token endpoints' settings as the handlers use them.
#[derive(Debug)]
pub struct Issuance {
    /// The public base URL without a trailing slash.
    pub public_url: String,
    pub lifetime: Duration,
    /// Failed client authentications per client id.
    pub client_failures: Throttle,
}

impl Issuance {
    pub fn new(public_url: &Url, lifetime: Duration) -> Issuance {
        Issuance {
            public_url: public_url.as_str().trim_end_matches('/').to_string(),
            lifetime: lifetime.min(crate::tokens::MAX_TTL),
            client_failures: Throttle::new(FAILURE_BURST, FAILURE_REFILL),
        }
    }

    /// An absolute URL for a path of this API (`path` starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.public_url)
    }
}

impl Default for Issuance {
    fn default() -> Self {
        let url = Url::parse("http://127.0.0.1:8080").expect("a valid URL");
        Issuance::new(&url, DEFAULT_TOKEN_LIFETIME)
    }
}

/// Whether a requested `scope` or `resource` names Shoal's audience: `api://shoal`, with or
/// without `/.default` (how v2 scopes name a whole resource) or a trailing slash.
pub fn names_audience(audience: &str, requested: &str) -> bool {
    let requested = requested.strip_suffix("/.default").unwrap_or(requested);
    let trim = |s: &str| s.trim_end_matches('/').to_string();
    !requested.is_empty() && trim(requested) == trim(audience)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_and_resources_naming_the_audience() {
        for ok in ["api://shoal", "api://shoal/", "api://shoal/.default"] {
            assert!(names_audience("api://shoal", ok), "{ok}");
        }
        for bad in [
            "",
            "/.default",
            "api://shoal/read",
            "api://shoalx",
            "api://other/.default",
            "https://management.azure.com/.default",
            "api://shoal/.default/.default",
        ] {
            assert!(!names_audience("api://shoal", bad), "{bad}");
        }
    }

    #[test]
    fn public_urls_are_joined_without_double_slashes() {
        let issuance = Issuance::new(
            &Url::parse("https://shoal.example.com/").unwrap(),
            Duration::from_secs(60),
        );
        assert_eq!(
            issuance.url("/oauth2/token"),
            "https://shoal.example.com/oauth2/token"
        );
        let prefixed = Issuance::new(
            &Url::parse("https://example.com/shoal/").unwrap(),
            Duration::from_secs(48 * 3600),
        );
        assert_eq!(prefixed.url("/msi"), "https://example.com/shoal/msi");
        assert_eq!(prefixed.lifetime, crate::tokens::MAX_TTL, "capped");
    }
}
