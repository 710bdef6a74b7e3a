//! `POST /oauth2/token`: the OAuth 2.0 client credentials grant (RFC 6749 §4.4). A service
//! principal trades its client id and secret (in the form, or HTTP Basic) for a Shoal token for
//! `api://shoal/.default` (or `resource=api://shoal`). Errors are RFC 6749 §5.2 JSON, never
//! problem+json, and never repeat the secret. Failed authentications are throttled per client
//! id, so a secret cannot be guessed quickly.

use std::time::Instant;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use shoal_domain::names::TenantName;
use shoal_store::{StoreError, begin_platform, principals};
use uuid::Uuid;

mod request;

use request::{OAuthError, no_store, parse};

use crate::identity::Principal;
use crate::state::AppState;

#[derive(Debug, Serialize)]
pub struct TokenResponse {
    pub token_type: &'static str,
    pub access_token: String,
    pub expires_in: u64,
    pub ext_expires_in: u64,
}

/// Issue a token to a service principal (client credentials grant).
pub async fn token(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    match respond(&state, &headers, &body).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

async fn respond(
    state: &AppState,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Response, OAuthError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|v| v.to_str().unwrap_or(""));
    let request = parse(content_type, authorization, body, state.tokens.audience())?;
    let throttle = &state.issuance.client_failures;
    if let Err(wait) = throttle.check(&request.client_id, Instant::now()) {
        return Err(OAuthError::unavailable(
            StatusCode::TOO_MANY_REQUESTS,
            "too many failed authentications for this client; retry later",
            wait.as_secs(),
        ));
    }
    let Ok(client_id) = Uuid::parse_str(&request.client_id) else {
        return Err(OAuthError::invalid_client(
            "the client id is not known or the secret is wrong",
            request.basic,
        ));
    };
    if !state.tokens.has_keys() {
        state.refresh_keys().await;
    }
    let record = match authenticate(state, client_id, &request.secret).await {
        Ok(record) => record,
        Err(err) => {
            tracing::warn!(error = %err, "client authentication could not be checked");
            return Err(OAuthError::unavailable(
                StatusCode::SERVICE_UNAVAILABLE,
                "the service is temporarily unavailable; retry later",
                5,
            ));
        }
    };
    let Some(record) = record else {
        throttle.record_failure(&request.client_id, Instant::now());
        tracing::info!(client_id = %client_id, "client authentication failed");
        return Err(OAuthError::invalid_client(
            "the client id is not known or the secret is wrong",
            request.basic,
        ));
    };
    let tenant = TenantName::parse(&record.tenant).map_err(|_| {
        OAuthError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "internal error",
        )
    })?;
    let lifetime = state.issuance.lifetime;
    let access_token = state
        .tokens
        .issue(
            &Principal::Registered {
                id: record.id,
                tenant,
            },
            lifetime,
        )
        .map_err(|_| {
            OAuthError::unavailable(
                StatusCode::SERVICE_UNAVAILABLE,
                "no signing key is loaded yet; retry later",
                5,
            )
        })?;
    let body = TokenResponse {
        token_type: "Bearer",
        access_token,
        expires_in: lifetime.as_secs(),
        ext_expires_in: lifetime.as_secs(),
    };
    Ok((StatusCode::OK, no_store(), Json(body)).into_response())
}

async fn authenticate(
    state: &AppState,
    client_id: Uuid,
    secret: &str,
) -> Result<Option<principals::PrincipalRecord>, StoreError> {
    let mut tx = begin_platform(&state.pool).await?;
    let record = principals::authenticate_client(&mut tx, client_id, secret).await?;
    shoal_store::commit(tx).await?;
    Ok(record)
}
