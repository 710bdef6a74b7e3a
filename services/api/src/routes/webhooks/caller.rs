//! The caller of a webhook ingress request: authenticated exactly as the management API's
//! [`Caller`] (the same token verification, external issuers and role assignments), but not
//! admitted by the management API's request throttle. The invoked app's own bucket
//! (`webhooks.requestsPerSecond`) admits it instead, once the caller may invoke the function:
//! an app configured for 1000 requests a second gets them from one principal.
//!
//! The app's bucket comes after the role check on purpose: consulted first, it would tell a
//! caller who may not invoke the app that it exists (429 rather than 404), and let anyone with
//! a token spend another tenant's webhook rate. What a request costs before that bucket (a role
//! assignment read for a principal that no longer exists, a denied request's audit entry, a
//! lookup of an app that does not exist) is bounded instead by counting those refusals per
//! principal and tenant (`AppState::ingress_refusals`, the management rates): past them the
//! principal is answered 429 before its role assignments are read.
//!
//! A distinct type, so that no management route is unthrottled by accident; and it refuses to
//! be extracted on a route outside `/webhooks/`.

use std::sync::Arc;

use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::request::Parts;
use shoal_domain::names::{AppName, FunctionName, TenantName};
use shoal_store::TenantId;

use crate::access::{Caller, authorize_invoke};
use crate::auth::{Admission, authenticate, count_refusal};
use crate::error::ApiError;
use crate::state::AppState;
use crate::webhooks::catalog::{HttpApp, HttpFunction};

/// Where the ingress's routes are; [`WebhookCaller`] is extracted nowhere else.
const INGRESS_PREFIX: &str = "/webhooks/";

#[derive(Debug)]
pub struct WebhookCaller(Caller);

impl FromRequestParts<AppState> for WebhookCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let route = parts
            .extensions
            .get::<MatchedPath>()
            .map(MatchedPath::as_str);
        if !route.is_some_and(|r| r.starts_with(INGRESS_PREFIX)) {
            return Err(ApiError::Internal(anyhow::anyhow!(
                "the webhook caller, which the management throttle does not admit, was asked for on {route:?}"
            )));
        }
        authenticate(parts, state, Admission::Ingress)
            .await
            .map(WebhookCaller)
    }
}

impl WebhookCaller {
    /// The app of `tenant/app/function`, once the caller may invoke the function; whether the
    /// app has the function is the caller's to ask ([`WebhookCaller::function`]).
    pub async fn app(
        &self,
        state: &AppState,
        tenant: &TenantName,
        app: &AppName,
        function: &FunctionName,
    ) -> Result<Arc<HttpApp>, ApiError> {
        let found = async {
            authorize_invoke(&state.pool, &self.0, tenant, app, function).await?;
            state
                .webhooks
                .catalog()
                .app(&TenantId::new(tenant.clone()), app.as_str())
                .await?
                .ok_or(ApiError::NotFound)
        }
        .await;
        self.counted(state, found)
    }

    /// The app and its HTTP-triggered `function`, once the caller may invoke it.
    pub async fn function(
        &self,
        state: &AppState,
        tenant: &TenantName,
        app: &AppName,
        function: &FunctionName,
    ) -> Result<(Arc<HttpApp>, Arc<HttpFunction>), ApiError> {
        let app = self.app(state, tenant, app, function).await?;
        let found = app.function(function.as_str()).cloned();
        let function = self.counted(state, found.ok_or(ApiError::NotFound))?;
        Ok((app, function))
    }

    /// `result`, its refusal counted against the caller.
    fn counted<T>(&self, state: &AppState, result: Result<T, ApiError>) -> Result<T, ApiError> {
        count_refusal(state, &self.0.principal, result.as_ref().err());
        result
    }
}
