//! Who is calling: the bearer token verified into a [`Principal`], admitted, and extracted,
//! together with the role assignments it holds, as a [`Caller`]. What the caller may do is
//! decided in `access`.
//!
//! A management API request is admitted by the request throttle (`throttle::RequestThrottle`).
//! A webhook ingress request is not: the invoked app's own bucket admits it once the caller
//! may invoke the function, and only the ingress's
//! `WebhookCaller` (`routes/webhooks/caller.rs`) is authenticated that way.

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
use crate::throttle::{Refusal, RequestThrottle};
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

/// What admits an authenticated request before its role assignments are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Admission {
    /// The management API's request throttle: every request takes a token.
    Management,
    /// The webhook ingress: the invoked app's bucket admits the request after the role check
    /// (see `WebhookCaller`). Here only the principal's refused ingress requests are counted,
    /// and a principal with too many of them is turned away before its grants are read.
    Ingress,
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        authenticate(parts, state, Admission::Management).await
    }
}

/// The request's caller: its token verified (Shoal's or an external issuer's), admitted as
/// `admission` says, and its role assignments read.
pub(crate) async fn authenticate(
    parts: &mut Parts,
    state: &AppState,
    admission: Admission,
) -> Result<Caller, ApiError> {
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
    let grants = match admission {
        Admission::Management => {
            admit(state, &state.throttle, &principal, "requests").await?;
            state.access.grants_of(&state.pool, &principal).await?
        }
        Admission::Ingress => {
            check_refusals(state, &principal).await?;
            let grants = state.access.grants_of(&state.pool, &principal).await;
            count_refusal(state, &principal, grants.as_ref().err());
            grants?
        }
    };
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

/// `principal`'s key in a [`RequestThrottle`] and the tenant it belongs to; `None` for the
/// platform's administrators, who are not throttled (see `RequestThrottle`).
fn throttle_key(principal: &Principal) -> Option<(String, &TenantName)> {
    let tenant = principal.tenant()?;
    Some((format!("{tenant}/{}", principal.subject()), tenant))
}

/// Admits one request of `principal` into `throttle`, or answers 429 naming the budget of
/// `what` it has used up.
async fn admit(
    state: &AppState,
    throttle: &RequestThrottle,
    principal: &Principal,
    what: &str,
) -> Result<(), ApiError> {
    let Some((key, tenant)) = throttle_key(principal) else {
        return Ok(());
    };
    match throttle.admit(&key, tenant, Instant::now()) {
        Ok(()) => Ok(()),
        Err(refusal) => Err(refused(state, throttle, refusal, tenant, what).await),
    }
}

/// Turns `principal` away while it has used up its refused webhook requests, taking nothing
/// otherwise (only refusals are counted, by [`count_refusal`]).
async fn check_refusals(state: &AppState, principal: &Principal) -> Result<(), ApiError> {
    let Some((key, tenant)) = throttle_key(principal) else {
        return Ok(());
    };
    let throttle = &state.ingress_refusals;
    match throttle.check(&key, tenant, Instant::now()) {
        Ok(()) => Ok(()),
        Err(refusal) => {
            Err(refused(state, throttle, refusal, tenant, "refused webhook requests").await)
        }
    }
}

/// Counts a webhook request refused for who is asking or what it names (the principal no
/// longer exists, may not invoke the function, or names none): each cost a role assignment
/// read, an audit write or a catalog lookup, and the app's bucket, which comes after them,
/// never saw it. Other errors (an outage, a bad request) are not the caller's doing.
pub(crate) fn count_refusal(state: &AppState, principal: &Principal, error: Option<&ApiError>) {
    let refused = matches!(
        error,
        Some(ApiError::Unauthorized(_) | ApiError::Forbidden(_) | ApiError::NotFound)
    );
    if let (true, Some((key, tenant))) = (refused, throttle_key(principal)) {
        state.ingress_refusals.charge(&key, tenant, Instant::now());
    }
}

/// The 429 for `refusal` by `throttle`, after holding it for part of its wait (the management
/// throttle's `RequestThrottle::hold`, which bounds the refusals held at once, whichever
/// throttle refused).
async fn refused(
    state: &AppState,
    throttle: &RequestThrottle,
    refusal: Refusal,
    tenant: &TenantName,
    what: &str,
) -> ApiError {
    let rates = throttle.rates();
    let (whose, rate, wait) = match refusal {
        Refusal::Tenant(wait) => (format!("tenant {tenant}"), rates.tenant, wait),
        Refusal::Principal(wait) => ("this principal".to_string(), rates.principal, wait),
    };
    let left = state.throttle.hold(wait).await;
    ApiError::TooManyRequests {
        detail: format!(
            "{whose} has used its {} {what} ({} a second)",
            rate.burst, rate.per_second
        ),
        retry_after: Duration::from_secs(RetryAfter(left).seconds()),
    }
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
