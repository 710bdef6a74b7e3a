//! Client assertions checked as Entra ID checks them for workload identity federation: the
//! assertion must match a federated credential of the client on issuer, subject and audience
//! exactly; its signature must verify with a key from the JWK set that the issuer's discovery
//! document (`{iss}/.well-known/openid-configuration`) names; and it must be within its
//! lifetime. The error codes are the AADSTS codes Entra answers these failures with.
//!
//! Unlike Entra, this stand-in accepts an `http://` issuer on a loopback address (the API under
//! test listens on plain HTTP); Entra requires HTTPS.

use hyper::StatusCode;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{DecodingKey, Validation, decode, decode_header};
use serde::Deserialize;

use super::FederatedCredential;

pub(super) const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// Clock skew Entra tolerates on `nbf` and `exp`.
const LEEWAY_SECS: u64 = 300;

pub(super) struct Refusal {
    pub status: StatusCode,
    pub error: &'static str,
    pub description: String,
    pub code: u32,
}

fn refuse(error: &'static str, code: u32, description: String) -> Refusal {
    Refusal {
        status: if error == "invalid_client" {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::BAD_REQUEST
        },
        error,
        description: format!("AADSTS{code}: {description}"),
        code,
    }
}

#[derive(Deserialize)]
struct Unverified {
    iss: Option<String>,
    sub: Option<String>,
    aud: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Discovery {
    issuer: String,
    jwks_uri: String,
}

/// The assertion's subject when a credential of `trusted` (the client's) accepts it.
pub(super) async fn verify(
    assertion: &str,
    trusted: &[FederatedCredential],
) -> Result<String, Refusal> {
    if trusted.is_empty() {
        return Err(refuse(
            "unauthorized_client",
            700016,
            "Application not found in the directory, or it has no federated identity credential."
                .into(),
        ));
    }
    let malformed = |e: String| {
        refuse(
            "invalid_client",
            50027,
            format!("JWT token is invalid or malformed: {e}"),
        )
    };
    let header = decode_header(assertion).map_err(|e| malformed(e.to_string()))?;
    let claims: Unverified = jsonwebtoken::dangerous::insecure_decode(assertion)
        .map_err(|e| malformed(e.to_string()))?
        .claims;
    let (Some(issuer), Some(subject)) = (claims.iss, claims.sub) else {
        return Err(malformed("iss and sub are required".into()));
    };
    let audiences: Vec<String> = match claims.aud {
        Some(serde_json::Value::String(a)) => vec![a],
        Some(serde_json::Value::Array(list)) => list
            .into_iter()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    };
    let by_issuer: Vec<&FederatedCredential> =
        trusted.iter().filter(|c| c.issuer == issuer).collect();
    if by_issuer.is_empty() {
        return Err(refuse(
            "invalid_client",
            700211,
            format!(
                "No matching federated identity record found for presented assertion issuer '{issuer}'."
            ),
        ));
    }
    let Some(credential) = by_issuer.iter().find(|c| c.subject == subject) else {
        return Err(refuse(
            "invalid_client",
            70021,
            format!(
                "No matching federated identity record found for presented assertion. Assertion Issuer: '{issuer}'. Assertion Subject: '{subject}'. Assertion Audience: '{}'.",
                audiences.join(",")
            ),
        ));
    };
    if !audiences.contains(&credential.audience) {
        return Err(refuse(
            "invalid_client",
            700212,
            format!(
                "No matching federated identity record found for presented assertion audience '{}'.",
                audiences.join(",")
            ),
        ));
    }
    let keys = keys_of(&issuer).await?;
    let kid = header.kid.unwrap_or_default();
    let jwk = keys.find(&kid).ok_or_else(|| {
        refuse(
            "invalid_client",
            50013,
            format!("Assertion failed signature validation: no key {kid} in the issuer's JWK set."),
        )
    })?;
    let key = DecodingKey::from_jwk(jwk).map_err(|e| malformed(e.to_string()))?;
    let mut validation = Validation::new(header.alg);
    validation.set_issuer(&[&issuer]);
    validation.set_audience(&[&credential.audience]);
    validation.set_required_spec_claims(&["exp", "iss", "sub", "aud"]);
    validation.validate_nbf = true;
    validation.leeway = LEEWAY_SECS;
    decode::<serde_json::Value>(assertion, &key, &validation).map_err(|e| {
        use jsonwebtoken::errors::ErrorKind;
        match e.kind() {
            ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => refuse(
                "invalid_client",
                700024,
                "Client assertion is not within its valid time range.".into(),
            ),
            _ => refuse(
                "invalid_client",
                50013,
                format!("Assertion failed signature validation: {e}"),
            ),
        }
    })?;
    Ok(subject)
}

/// The issuer's JWK set, found through its discovery document, which must name the same issuer.
async fn keys_of(issuer: &str) -> Result<JwkSet, Refusal> {
    let unreachable = |what: &str, e: String| {
        refuse(
            "invalid_client",
            700210,
            format!("An error occurred fetching the {what} of issuer '{issuer}': {e}"),
        )
    };
    let url =
        url::Url::parse(issuer).map_err(|e| unreachable("OpenID configuration", e.to_string()))?;
    let loopback = url
        .host_str()
        .is_some_and(|h| h == "127.0.0.1" || h == "localhost" || h == "[::1]");
    if url.scheme() != "https" && !loopback {
        return Err(unreachable(
            "OpenID configuration",
            "the issuer must be an https URL".into(),
        ));
    }
    let client = reqwest::Client::new();
    let discovery: Discovery = client
        .get(format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        ))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| unreachable("OpenID configuration", e.to_string()))?
        .json()
        .await
        .map_err(|e| unreachable("OpenID configuration", e.to_string()))?;
    if discovery.issuer != issuer {
        return Err(unreachable(
            "OpenID configuration",
            format!("it names the issuer '{}'", discovery.issuer),
        ));
    }
    client
        .get(&discovery.jwks_uri)
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| unreachable("JWK set", e.to_string()))?
        .json()
        .await
        .map_err(|e| unreachable("JWK set", e.to_string()))
}
