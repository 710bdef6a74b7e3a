//! Which API, credential and tenant a command uses: `SHOAL_URL` and `SHOAL_TOKEN` when set,
//! else the profile `shoal login` saved; the tenant from `--tenant`, else the profile's, else
//! the one the token belongs to (`GET /v1/me`).

use shoal_client::routes;
use url::Url;

use super::Target;
use super::api::{Api, Call};
use super::failure::{AUTH, Failure};
use super::profiles::{Credential, Profiles, path};

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
    let tenant = target
        .tenant
        .clone()
        .or_else(|| profile.and_then(|p| p.tenant));
    let mut api = Api::new(url, credential.into(), tenant.unwrap_or_default())?;
    api.sign_in().await?;
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
