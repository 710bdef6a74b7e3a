//! Which API, credential and tenant a command uses: `SHOAL_URL` and `SHOAL_TOKEN` when set,
//! else the profile `shoal login` saved; the tenant from `--tenant`, else the profile's, else
//! the one the token belongs to (`GET /v1/me`).

use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::Target;
use super::api::{Api, Call, http_client};
use super::failure::{AUTH, Failure};
use super::profiles::{Credential, Profiles, path};
use super::routes;

/// The scope Shoal's token endpoint issues management tokens for.
const SCOPE: &str = "api://shoal/.default";

/// A client for the command's tenant.
pub async fn connect(target: &Target) -> Result<Api, Failure> {
    let profile = Profiles::load()?.profiles.remove(&target.profile);
    let url = std::env::var("SHOAL_URL")
        .ok()
        .filter(|u| !u.is_empty())
        .or_else(|| profile.as_ref().map(|p| p.url.clone()));
    let credential = match std::env::var("SHOAL_TOKEN").ok().filter(|t| !t.is_empty()) {
        Some(token) => Some(Credential::Token { token }),
        None => profile.as_ref().map(|p| p.credential.clone()),
    };
    let (Some(url), Some(credential)) = (url, credential) else {
        return Err(not_logged_in(&target.profile));
    };
    let url = parse_url(&url)?;
    let http = http_client()?;
    let token = bearer(&http, &url, &credential).await?;
    let tenant = target
        .tenant
        .clone()
        .or_else(|| profile.and_then(|p| p.tenant));
    let mut api = Api::new(http, url, token, tenant.unwrap_or_default());
    if api.tenant.is_empty() {
        api.tenant = token_tenant(&api).await?;
    }
    Ok(api)
}

fn not_logged_in(profile: &str) -> Failure {
    let file = path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "the profiles file".to_owned());
    Failure::new(
        AUTH,
        format!(
            "not logged in: no profile {profile:?} in {file}. Run `shoal login --url URL \
             --token TOKEN` (or `--client-id ID --client-secret -` for a service principal), \
             or set SHOAL_URL and SHOAL_TOKEN"
        ),
    )
}

/// The API's base URL as given to `--url` or `SHOAL_URL`.
pub fn parse_url(text: &str) -> Result<Url, Failure> {
    let url =
        Url::parse(text).map_err(|e| Failure::usage(format!("--url {text}: not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.cannot_be_a_base() {
        return Err(Failure::usage(format!(
            "--url {text}: must be an http(s) URL such as https://shoal.example.com"
        )));
    }
    let mut url = url;
    if !url.path().ends_with('/') {
        // A base with a path (`https://example.com/shoal`) keeps it when routes are joined.
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct TokenError {
    error: String,
    error_description: String,
}

/// A bearer token: the one saved, or one issued now for the client credentials.
pub async fn bearer(
    http: &reqwest::Client,
    url: &Url,
    credential: &Credential,
) -> Result<String, Failure> {
    let (client_id, client_secret) = match credential {
        Credential::Token { token } => return Ok(token.clone()),
        Credential::ClientSecret {
            client_id,
            client_secret,
        } => (client_id, client_secret),
    };
    let endpoint = url
        .join("oauth2/token")
        .map_err(|e| Failure::usage(format!("{url}: {e}")))?;
    let response = http
        .post(endpoint.clone())
        .timeout(Duration::from_secs(30))
        .form(&[
            ("grant_type", "client_credentials"),
            ("client_id", client_id.as_str()),
            ("client_secret", client_secret.as_str()),
            ("scope", SCOPE),
        ])
        .send()
        .await
        .map_err(|e| Failure::new(AUTH, format!("cannot reach {endpoint}: {e}")))?;
    let status = response.status();
    let body = response.bytes().await.unwrap_or_default();
    if status.is_success() {
        return serde_json::from_slice::<TokenResponse>(&body)
            .map(|t| t.access_token)
            .map_err(|e| {
                Failure::new(AUTH, format!("{endpoint} answered an unexpected body: {e}"))
            });
    }
    let error: TokenError = serde_json::from_slice(&body).unwrap_or_default();
    Err(Failure::new(
        AUTH,
        format!(
            "{endpoint} refused client id {client_id}: {status} {} {}",
            error.error, error.error_description
        ),
    ))
}

/// Who the token names (`GET /v1/me`).
pub async fn me(api: &Api) -> Result<serde_json::Value, Failure> {
    Ok(api.send(Call::new(routes::ME, &[])).await?.body)
}

async fn token_tenant(api: &Api) -> Result<String, Failure> {
    let me = me(api).await?;
    match me["tenant"].as_str() {
        Some(tenant) => Ok(tenant.to_owned()),
        None => Err(Failure::usage(
            "the token names no tenant (a platform administrator's): pass --tenant NAME",
        )),
    }
}
