//! `GET /msi/{tenant}/{app}/token`: the App Service managed-identity protocol (API version
//! 2019-08-01), so the stock Azure SDK `ManagedIdentityCredential` — with `IDENTITY_ENDPOINT`
//! and `IDENTITY_HEADER` set as `…/identityEndpoint/list` returns them — gets a Shoal token for
//! the app's identity.
//!
//! The request is `?resource=api://shoal&api-version=2019-08-01` with the app's secret header
//! `X-IDENTITY-HEADER` (derived from its webhook signing secret, compared in constant time).
//! Without a selector it is the app's system-assigned identity; `client_id`, `principal_id` (or
//! its alias `object_id`) or `mi_res_id` (`/tenants/{t}/identities/{name}`) pick one of the
//! user-assigned identities the app lists. Errors are App Service's JSON
//! (`{statusCode, message, correlationId}`): 400 for a bad request or an identity the app does
//! not have, 401 for a wrong header (or an app that does not exist: the two are not told apart).
//!
//! The endpoint takes requests from anyone who can reach it, so what needs no database is
//! checked first (the header's presence and shape, the query, the resource), and an app's
//! header is remembered for a few seconds (`identity_headers`): wrong headers for an app cost a
//! comparison, not a transaction.

use std::collections::HashMap;
use std::time::Instant;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use shoal_domain::connection::outbound::{AppIdentities, AppIdentity};
use shoal_domain::names::{AppName, TenantName};
use shoal_domain::webhooks::{identity_headers_match, is_identity_header_shaped};
use shoal_store::principals;
use shoal_store::{StoreError, TenantId, apps, begin_tenant, signing_secrets};
use uuid::Uuid;

use crate::identity::Principal;
use crate::identity_headers::Known;
use crate::issuance::names_audience;
use crate::problem::{ProtocolError, REQUEST_ID};
use crate::state::AppState;

pub const API_VERSION: &str = "2019-08-01";
pub const HEADER: &str = "x-identity-header";

/// The endpoint an app's `IDENTITY_ENDPOINT` names (relative to the public URL).
pub fn endpoint_path(tenant: &TenantName, app: &AppName) -> String {
    format!("/msi/{tenant}/{app}/token")
}

#[derive(Debug, Serialize)]
pub struct MsiToken {
    pub access_token: String,
    /// Unix seconds, as a string (as App Service sends it).
    pub expires_on: String,
    pub resource: String,
    pub token_type: &'static str,
    pub client_id: String,
}

/// Which of the app's identities a request asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Selector {
    SystemAssigned,
    ClientId(Uuid),
    PrincipalId(Uuid),
    /// `mi_res_id`: a user-assigned identity by tenant and name.
    ResourceId {
        tenant: String,
        name: String,
    },
}

#[derive(Debug, PartialEq)]
struct MsiError {
    status: StatusCode,
    message: String,
}

impl MsiError {
    fn bad_request(message: impl Into<String>) -> MsiError {
        MsiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    fn unauthorized() -> MsiError {
        MsiError {
            status: StatusCode::UNAUTHORIZED,
            message: "the X-IDENTITY-HEADER does not match this endpoint".into(),
        }
    }

    fn into_response(self, correlation_id: Option<&str>) -> Response {
        let body = serde_json::json!({
            "statusCode": self.status.as_u16(),
            "message": self.message,
            "correlationId": correlation_id,
        });
        let mut response = (self.status, Json(body)).into_response();
        if self.status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        }
        response.extensions_mut().insert(ProtocolError);
        response
    }
}

impl MsiError {
    fn unavailable() -> MsiError {
        MsiError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: "the identity service is temporarily unavailable".into(),
        }
    }
}

impl From<StoreError> for MsiError {
    fn from(err: StoreError) -> MsiError {
        match err {
            StoreError::NotFound => MsiError::unauthorized(),
            err => {
                tracing::warn!(error = %err, "managed identity token request failed");
                MsiError::unavailable()
            }
        }
    }
}

/// Get a token for one of the app's managed identities.
pub async fn token(
    State(state): State<AppState>,
    Path((tenant, app)): Path<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let correlation_id = headers
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match respond(
        &state,
        &tenant,
        &app,
        query.as_deref().unwrap_or(""),
        &headers,
    )
    .await
    {
        Ok(token) => {
            let mut response = Json(token).into_response();
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            response
        }
        Err(error) => error.into_response(correlation_id.as_deref()),
    }
}

async fn respond(
    state: &AppState,
    tenant: &str,
    app: &str,
    query: &str,
    headers: &HeaderMap,
) -> Result<MsiToken, MsiError> {
    let Some(presented) = headers.get(HEADER) else {
        return Err(MsiError::bad_request(
            "the X-IDENTITY-HEADER header is required",
        ));
    };
    let request = parse_query(query)?;
    // An invalid name is an app that does not exist: the same 401 as a wrong header.
    let (Ok(tenant), Ok(app)) = (TenantName::parse(tenant), AppName::parse(app)) else {
        return Err(MsiError::unauthorized());
    };
    let presented = presented.to_str().map_err(|_| MsiError::unauthorized())?;
    // Everything that needs no database first: a request that cannot succeed costs nothing.
    if !is_identity_header_shaped(presented) {
        return Err(MsiError::unauthorized());
    }
    let audience = state.tokens.audience();
    if !names_audience(audience, &request.resource) {
        return Err(MsiError::bad_request(format!(
            "Shoal issues tokens only for the resource {audience}"
        )));
    }
    let now = Instant::now();
    let known = state
        .msi_headers
        .check(tenant.as_str(), app.as_str(), presented, now);
    if known == Known::Refused {
        return Err(MsiError::unauthorized());
    }
    let tenant_id = TenantId::new(tenant.clone());
    let mut tx = begin_tenant(&state.pool, &tenant_id).await?;
    let record = match apps::get(&mut tx, &tenant_id, &state.cipher, app.as_str()).await {
        Err(StoreError::NotFound) => {
            state
                .msi_headers
                .remember(tenant.as_str(), app.as_str(), None, now);
            return Err(MsiError::unauthorized());
        }
        record => record?,
    };
    if known == Known::Unknown {
        let expected =
            signing_secrets::get_or_create(&mut tx, &tenant_id, &state.cipher, app.as_str())
                .await?
                .identity_header();
        let matches = identity_headers_match(&expected, presented);
        state
            .msi_headers
            .remember(tenant.as_str(), app.as_str(), Some(expected), now);
        if !matches {
            return Err(MsiError::unauthorized());
        }
    }
    let spec = super::apps::parse_stored(&record).map_err(|_| MsiError {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        message: "internal error".into(),
    })?;
    let identities =
        principals::app_identities(&mut tx, &tenant_id, app.as_str(), &spec.spec.identity).await?;
    shoal_store::commit(tx).await?;
    let identity = choose(&identities, &tenant_id, &request.selector).ok_or_else(|| {
        MsiError::bad_request("the requested identity has not been assigned to this app")
    })?;
    if !state.tokens.has_keys() {
        state.refresh_keys().await;
    }
    let (access_token, exp) = state
        .tokens
        .issue_expiring(
            &Principal::Registered {
                id: identity.principal_id,
                tenant,
            },
            state.issuance.lifetime,
        )
        .map_err(|_| MsiError::unavailable())?;
    Ok(MsiToken {
        access_token,
        expires_on: exp.to_string(),
        resource: request.resource,
        token_type: "Bearer",
        client_id: identity.client_id.to_string(),
    })
}

/// The identity the selector names among the app's own (its system-assigned identity, or one
/// of the user-assigned identities it lists, read by `principals::app_identities` as the
/// worker's outbound connections read them). `None` if the app has no such identity.
fn choose(
    identities: &AppIdentities,
    tenant: &TenantId,
    selector: &Selector,
) -> Option<AppIdentity> {
    let user_assigned = identities.user_assigned.iter();
    match selector {
        Selector::SystemAssigned => identities.system_assigned.clone(),
        Selector::ClientId(id) => user_assigned.clone().find(|i| i.client_id == *id).cloned(),
        Selector::PrincipalId(id) => user_assigned
            .clone()
            .find(|i| i.principal_id == *id)
            .cloned(),
        Selector::ResourceId { tenant: t, name } if t == tenant.as_str() => user_assigned
            .clone()
            .find(|i| i.user_assigned.as_deref() == Some(name.as_str()))
            .cloned(),
        Selector::ResourceId { .. } => None,
    }
}

#[derive(Debug, PartialEq)]
struct MsiRequest {
    resource: String,
    selector: Selector,
}

/// Reads `api-version`, `resource` and at most one identity selector.
fn parse_query(query: &str) -> Result<MsiRequest, MsiError> {
    let mut params: HashMap<String, String> = HashMap::new();
    for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
        if params.insert(name.to_string(), value.to_string()).is_some() {
            return Err(MsiError::bad_request(format!(
                "the parameter {name} is repeated"
            )));
        }
    }
    match params.get("api-version").map(String::as_str) {
        Some(API_VERSION) => {}
        Some(other) => {
            return Err(MsiError::bad_request(format!(
                "api-version {other} is not supported; use {API_VERSION}"
            )));
        }
        None => {
            return Err(MsiError::bad_request(format!(
                "api-version is required ({API_VERSION})"
            )));
        }
    }
    let resource = params
        .get("resource")
        .filter(|r| !r.is_empty())
        .ok_or_else(|| MsiError::bad_request("resource is required"))?
        .clone();
    let given: Vec<(&str, &String)> = ["client_id", "principal_id", "object_id", "mi_res_id"]
        .into_iter()
        .filter_map(|name| params.get(name).map(|value| (name, value)))
        .collect();
    let selector = match given.as_slice() {
        [] => Selector::SystemAssigned,
        [(name, value)] => selector(name, value)?,
        _ => {
            return Err(MsiError::bad_request(
                "send at most one of client_id, principal_id, object_id and mi_res_id",
            ));
        }
    };
    Ok(MsiRequest { resource, selector })
}

fn selector(name: &str, value: &str) -> Result<Selector, MsiError> {
    let id = || {
        Uuid::parse_str(value).map_err(|_| MsiError::bad_request(format!("{name} must be a GUID")))
    };
    Ok(match name {
        "client_id" => Selector::ClientId(id()?),
        "principal_id" | "object_id" => Selector::PrincipalId(id()?),
        _ => {
            let (tenant, name) = identity_resource(value).ok_or_else(|| {
                MsiError::bad_request("mi_res_id must be /tenants/{tenant}/identities/{name}")
            })?;
            Selector::ResourceId { tenant, name }
        }
    })
}

/// The tenant and name of `/tenants/{t}/identities/{name}` (with or without `/v1`).
fn identity_resource(resource_id: &str) -> Option<(String, String)> {
    let path = resource_id.strip_prefix("/v1").unwrap_or(resource_id);
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["", tenants, tenant, identities, name]
            if tenants.eq_ignore_ascii_case("tenants")
                && identities.eq_ignore_ascii_case("identities")
                && !tenant.is_empty()
                && !name.is_empty() =>
        {
            Some((tenant.to_string(), name.to_string()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "6f3b2a8e-5c1d-4e8f-9a7b-0c1d2e3f4a5b";

    fn parsed(query: &str) -> Result<MsiRequest, MsiError> {
        parse_query(query)
    }

    #[test]
    fn the_azure_sdk_requests_parse() {
        // As azure_identity 1.0 builds them: api-version first, then resource, then the id.
        let system = parsed("api-version=2019-08-01&resource=api%3A%2F%2Fshoal").unwrap();
        assert_eq!(
            system,
            MsiRequest {
                resource: "api://shoal".into(),
                selector: Selector::SystemAssigned
            }
        );
        let by_client = parsed(&format!(
            "api-version=2019-08-01&resource=api://shoal&client_id={ID}"
        ))
        .unwrap();
        assert_eq!(by_client.selector, Selector::ClientId(ID.parse().unwrap()));
        for name in ["principal_id", "object_id"] {
            let by_object = parsed(&format!(
                "resource=api://shoal&api-version=2019-08-01&{name}={ID}"
            ))
            .unwrap();
            assert_eq!(
                by_object.selector,
                Selector::PrincipalId(ID.parse().unwrap())
            );
        }
        let by_resource = parsed("resource=api://shoal&api-version=2019-08-01&mi_res_id=/tenants/contoso/identities/billing").unwrap();
        assert_eq!(
            by_resource.selector,
            Selector::ResourceId {
                tenant: "contoso".into(),
                name: "billing".into()
            }
        );
    }

    #[test]
    fn bad_requests_are_400() {
        for query in [
            "resource=api://shoal",
            "resource=api://shoal&api-version=2017-09-01",
            "api-version=2019-08-01",
            "api-version=2019-08-01&resource=",
            "api-version=2019-08-01&resource=api://shoal&resource=api://shoal",
            &format!("api-version=2019-08-01&resource=api://shoal&client_id={ID}&object_id={ID}"),
            "api-version=2019-08-01&resource=api://shoal&client_id=not-a-guid",
            "api-version=2019-08-01&resource=api://shoal&mi_res_id=billing",
            "api-version=2019-08-01&resource=api://shoal&mi_res_id=/tenants/contoso/apps/billing",
        ] {
            let error = parsed(query).unwrap_err();
            assert_eq!(error.status, StatusCode::BAD_REQUEST, "{query}");
        }
    }

    #[test]
    fn resource_ids_name_an_identity_in_a_tenant() {
        let t_n = Some(("t".to_string(), "n".to_string()));
        assert_eq!(identity_resource("/tenants/t/identities/n"), t_n);
        assert_eq!(identity_resource("/v1/tenants/t/identities/n"), t_n);
        for bad in [
            "",
            "/tenants/t/identities/",
            "/tenants//identities/n",
            "tenants/t/identities/n",
            "/tenants/t/identities/n/x",
        ] {
            assert_eq!(identity_resource(bad), None, "{bad}");
        }
    }
}
