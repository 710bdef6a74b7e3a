//! `GET /.well-known/openid-configuration`: Shoal as an OpenID provider for the client
//! credentials grant — where its keys and token endpoint are and what it supports, so standard
//! libraries can discover and verify Shoal's tokens.

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use shoal_domain::connection::outbound::federation_issuer;

use crate::state::AppState;

pub const JWKS_PATH: &str = "/.well-known/jwks.json";
pub const TOKEN_PATH: &str = "/oauth2/token";

/// The discovery document. `issuer` is the configured issuer string (the tokens' `iss`); the
/// URLs are built from the public base URL.
pub async fn openid_configuration(State(state): State<AppState>) -> Json<Value> {
    Json(document(&state))
}

fn document(state: &AppState) -> Value {
    let issuance = &state.issuance;
    json!({
        "issuer": state.tokens.issuer(),
        "jwks_uri": issuance.url(JWKS_PATH),
        "token_endpoint": issuance.url(TOKEN_PATH),
        "grant_types_supported": ["client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "response_types_supported": ["token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "access_token_signing_alg_values_supported": ["ES256"],
        "scopes_supported": [format!("{}/.default", state.tokens.audience())],
        "claims_supported": ["iss", "aud", "sub", "iat", "nbf", "exp", "tid", "oid", "roles"],
    })
}

/// Where Shoal's federation issuer publishes its discovery document (see
/// `shoal_domain::connection::outbound::FEDERATION_PATH`).
pub const FEDERATION_DISCOVERY_PATH: &str = "/federation/.well-known/openid-configuration";

/// `GET /federation/.well-known/openid-configuration`: the discovery document of the issuer of
/// the client assertions apps' identities present to Entra ID (workload identity federation).
/// Entra reads it, then the JWK set, to check an assertion's signature; it is the same key set
/// Shoal's own tokens are signed with. The issuer is not the root document's, because that one
/// describes Shoal's access tokens and their configured `iss`.
pub async fn federation_configuration(State(state): State<AppState>) -> Json<Value> {
    let issuance = &state.issuance;
    Json(json!({
        "issuer": federation_issuer(&issuance.public_url),
        "jwks_uri": issuance.url(JWKS_PATH),
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"],
        "claims_supported": ["iss", "aud", "sub", "iat", "nbf", "exp", "jti"],
    }))
}
