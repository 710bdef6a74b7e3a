//! Who is calling: the bearer token verified into a [`Principal`], admitted by the request
//! throttle, and extracted, together with the role assignments it holds, as a [`Caller`].
//! What the caller may do is decided in `access`.

use std::time::{Duration, Instant};

use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::header;
use axum::http::request::Parts;
use shoal_domain::names::TenantName;
use shoal_domain::rate_limit::RetryAfter;

use crate::access::Caller;
use crate::error::ApiError;
use crate::identity::Principal;
use crate::state::AppState;
use crate::throttle::Refusal;
use crate::tokens::TokenError;

/// The token of an `Authorization: Bearer …` header.
pub fn bearer_token(parts: &Parts) -> Result<&str, ApiError> {
    let value = parts.headers.get(header::AUTHORIZATION).ok_or_else(|| {
        ApiError::Unauthorized("an Authorization: Bearer token is required".into())
    })?;
    value
        .to_str()
        .ok()
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::Unauthorized("the Authorization header must be `Bearer <token>`".into())
        })
}

/// Verifies a Shoal-issued token, reloading the keys once if it names one this process has
/// not seen (another process may have created or rotated it).
pub async fn verify_shoal_token(state: &AppState, token: &str) -> Result<Principal, ApiError> {
    if !state.tokens.has_keys() {
        // Keys not loaded yet because Postgres is unreachable: an outage, not a bad token.
        state.refresh_keys().await;
        if !state.tokens.has_keys() {
            return Err(ApiError::Unavailable);
        }
    }
    match state.tokens.verify(token) {
        Ok(principal) => Ok(principal),
        Err(TokenError::UnknownKey) => {
            state.refresh_keys().await;
            state
                .tokens
                .verify(token)
                .map_err(|e| ApiError::Unauthorized(e.to_string()))
        }
        Err(e) => Err(ApiError::Unauthorized(e.to_string())),
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let tenant = request_tenant(parts, state).await;
        let token = bearer_token(parts)?;
        let principal = match state
            .external_issuers
            .authenticate(&state.pool, token, tenant.as_ref())
            .await?
        {
            Some(principal) => principal,
            None => verify_shoal_token(state, token).await?,
        };
        // Before the role assignments are read: a throttled caller costs no database work.
        throttle(state, &principal).await?;
        let grants = state.access.grants_of(&state.pool, &principal).await?;
        let request_id = parts
            .headers
            .get(crate::problem::REQUEST_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        Ok(Caller {
            principal,
            grants,
            request_id,
        })
    }
}

/// Admits one request of `principal`, or answers 429 naming the budget it has used up, after
/// holding the answer for part of its wait (`RequestThrottle::hold`). The platform's
/// administrators are not throttled (see `RequestThrottle`).
async fn throttle(state: &AppState, principal: &Principal) -> Result<(), ApiError> {
    let Some(tenant) = principal.tenant() else {
        return Ok(());
    };
    let key = format!("{tenant}/{}", principal.subject());
    let Err(refusal) = state.throttle.admit(&key, tenant, Instant::now()) else {
        return Ok(());
    };
    let rates = state.throttle.rates();
    let (whose, rate, wait) = match refusal {
        Refusal::Tenant(wait) => (format!("tenant {tenant}"), rates.tenant, wait),
        Refusal::Principal(wait) => ("this principal".to_string(), rates.principal, wait),
    };
    let left = state.throttle.hold(wait).await;
    Err(ApiError::TooManyRequests {
        detail: format!(
            "{whose} has used its {} requests ({} a second)",
            rate.burst, rate.per_second
        ),
        retry_after: Duration::from_secs(RetryAfter(left).seconds()),
    })
}

/// The tenant a request is about: its `{tenant}` path segment, else its `tenant` query parameter
/// (`GET /v1/me?tenant=`). An external user registered in several tenants acts in each as that
/// tenant's registration; a request about none (or a segment that is not a tenant name, which
/// the handler refuses) acts as their first.
async fn request_tenant(parts: &mut Parts, state: &AppState) -> Option<TenantName> {
    let from_path = match RawPathParams::from_request_parts(parts, state).await {
        Ok(params) => params
            .iter()
            .find(|(name, _)| *name == "tenant")
            .map(|(_, value)| value.to_owned()),
        Err(_) => None,
    };
    let raw = from_path.or_else(|| {
        url::form_urlencoded::parse(parts.uri.query()?.as_bytes())
            .find(|(name, _)| name == "tenant")
            .map(|(_, value)| value.into_owned())
    })?;
    TenantName::parse(&raw).ok()
}
