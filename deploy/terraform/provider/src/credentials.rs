//! How the provider authenticates: a bearer token given as is, or a service principal's client
//! id and secret traded at Shoal's token endpoint (`POST /oauth2/token`, client credentials)
//! for tokens that are renewed before they expire, so a long apply never runs out of one.

use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::sync::Mutex;

use crate::problem::ApiError;

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

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    expires_in: u64,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TokenError {
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

    /// A bearer token valid for at least [`RENEW_MARGIN`] (or for its whole, shorter, life).
    pub async fn bearer(&self, http: &reqwest::Client, endpoint: &str) -> Result<String, ApiError> {
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
                let issued = request_token(http, endpoint, client_id, client_secret).await?;
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
    endpoint: &str,
    client_id: &str,
    client_secret: &str,
) -> Result<TokenResponse, ApiError> {
    let url = format!("{endpoint}/oauth2/token");
    let response = http
        .post(&url)
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", client_id),
            ("client_secret", client_secret),
            ("scope", SCOPE),
        ])
        .send()
        .await
        .map_err(|e| ApiError::Transport(format!("POST {url}: {e}")))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| ApiError::Transport(format!("POST {url}: {e}")))?;
    if status.is_success() {
        return serde_json::from_slice(&body).map_err(|e| {
            ApiError::Auth(format!(
                "the token endpoint {url} answered an unexpected body: {e}"
            ))
        });
    }
    let error: TokenError = serde_json::from_slice(&body).unwrap_or_default();
    Err(ApiError::Auth(format!(
        "the token endpoint {url} refused client id {client_id}: {status} {} {}",
        error.error, error.error_description
    )))
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
