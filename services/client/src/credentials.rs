//! Bearer tokens: one given as is, or a service principal's client id and secret traded at
//! Shoal's token endpoint (`POST /oauth2/token`, client credentials) for tokens that are
//! renewed before they expire, so a long Terraform apply never runs out of one.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde::Deserialize;
use tokio::sync::Mutex;
use url::Url;

/// The scope Shoal's token endpoint issues management tokens for.
pub const SCOPE: &str = "api://shoal/.default";

/// A token is renewed once less than this much of its life is left.
const RENEW_MARGIN: Duration = Duration::from_secs(120);

pub enum Credentials {
    Token(String),
    ClientSecret {
        client_id: String,
        client_secret: String,
        cached: Mutex<Option<CachedToken>>,
    },
}

pub struct CachedToken {
    token: String,
    renew_at: Instant,
}

/// Why the token endpoint gave no token.
#[derive(Clone, Debug)]
pub enum TokenError {
    Unreachable {
        url: String,
        reason: String,
    },
    /// A success whose body is not a token response.
    UnexpectedBody {
        url: String,
        reason: String,
    },
    /// A refusal (a wrong secret, an unknown client id), with the OAuth error it named.
    Refused {
        url: String,
        client_id: String,
        status: StatusCode,
        error: String,
        description: String,
    },
}

impl std::fmt::Display for TokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TokenError::Unreachable { url, reason } => write!(f, "POST {url}: {reason}"),
            TokenError::UnexpectedBody { url, reason } => write!(
                f,
                "the token endpoint {url} answered an unexpected body: {reason}"
            ),
            TokenError::Refused {
                url,
                client_id,
                status,
                error,
                description,
            } => write!(
                f,
                "the token endpoint {url} refused client id {client_id}: {status} {error} \
                 {description}"
            ),
        }
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    /// Absent, the token is fetched again for every call rather than cached on a guess.
    #[serde(default)]
    expires_in: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct OAuthError {
    error: String,
    error_description: String,
}

impl std::fmt::Debug for Credentials {
    // Never prints the token or the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Token(_) => f.write_str("Credentials::Token(..)"),
            Credentials::ClientSecret { client_id, .. } => {
                write!(f, "Credentials::ClientSecret({client_id}, ..)")
            }
        }
    }
}

impl Credentials {
    pub fn client_secret(client_id: String, client_secret: String) -> Credentials {
        Credentials::ClientSecret {
            client_id,
            client_secret,
            cached: Mutex::new(None),
        }
    }

    /// A bearer token valid for at least [`RENEW_MARGIN`] (or for its whole, shorter, life);
    /// `token_url` is the API's `/oauth2/token`.
    pub async fn bearer(
        &self,
        http: &reqwest::Client,
        token_url: &Url,
    ) -> Result<String, TokenError> {
        match self {
            Credentials::Token(token) => Ok(token.clone()),
            Credentials::ClientSecret {
                client_id,
                client_secret,
                cached,
            } => {
                let mut cached = cached.lock().await;
                if let Some(token) = cached.as_ref()
                    && Instant::now() < token.renew_at
                {
                    return Ok(token.token.clone());
                }
                let issued = request_token(http, token_url, client_id, client_secret).await?;
                let token = issued.access_token.clone();
                *cached = Some(CachedToken {
                    token: issued.access_token,
                    renew_at: renew_at(Instant::now(), Duration::from_secs(issued.expires_in)),
                });
                Ok(token)
            }
        }
    }
}

/// When to renew a token issued at `issued` that lives `lifetime`: [`RENEW_MARGIN`] before it
/// expires, or halfway through a life shorter than twice the margin.
fn renew_at(issued: Instant, lifetime: Duration) -> Instant {
    if lifetime > RENEW_MARGIN * 2 {
        issued + (lifetime - RENEW_MARGIN)
    } else {
        issued + lifetime / 2
    }
}

async fn request_token(
    http: &reqwest::Client,
    url: &Url,
    client_id: &str,
    client_secret: &str,
) -> Result<TokenResponse, TokenError> {
    let unreachable = |e: reqwest::Error| TokenError::Unreachable {
        url: url.to_string(),
        reason: e.to_string(),
    };
    let response = http
        .post(url.clone())
        .timeout(Duration::from_secs(30))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", client_id),
            ("client_secret", client_secret),
            ("scope", SCOPE),
        ])
        .send()
        .await
        .map_err(unreachable)?;
    let status = response.status();
    let body = response.bytes().await.map_err(unreachable)?;
    if status.is_success() {
        return serde_json::from_slice(&body).map_err(|e| TokenError::UnexpectedBody {
            url: url.to_string(),
            reason: e.to_string(),
        });
    }
    let error: OAuthError = serde_json::from_slice(&body).unwrap_or_default();
    Err(TokenError::Refused {
        url: url.to_string(),
        client_id: client_id.to_owned(),
        status,
        error: error.error,
        description: error.error_description,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_renewed_before_they_expire() {
        let t0 = Instant::now();
        let cases = [
            (3600, 3600 - 120),
            (241, 241 - 120),
            (240, 120),
            (60, 30),
            (0, 0),
        ];
        for (lifetime, renew_after) in cases {
            assert_eq!(
                renew_at(t0, Duration::from_secs(lifetime)),
                t0 + Duration::from_secs(renew_after),
                "{lifetime}s"
            );
        }
    }
}
