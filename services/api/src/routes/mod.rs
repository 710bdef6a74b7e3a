//! HTTP handlers, one module per resource.

pub mod app_identity;
pub mod apps;
pub mod audit;
pub mod diagnostics;
pub mod functions;
pub mod health;
pub mod identities;
pub mod identity_endpoint;
pub mod msi;
pub mod oauth2;
pub mod oidc;
pub mod principals;
pub mod roles;
pub mod scale;
pub mod service_principals;
pub mod settings;
pub mod signing_keys;
pub mod signing_secret;
pub mod tenants;
pub mod users;
pub mod webhooks;
pub mod workers;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use shoal_store::audit::{self as audit_log, AuditEntry};
use shoal_store::{Etag, Precondition, Tx};

use crate::access::Caller;
use crate::error::ApiError;
use crate::extract::format_etag;

pub const TAG_TENANTS: &str = "tenants";
pub const TAG_APPS: &str = "apps";
pub const TAG_FUNCTIONS: &str = "functions";
pub const TAG_OPERATIONS: &str = "operations";
pub const TAG_IDENTITY: &str = "identity";
pub const TAG_ACCESS: &str = "access control";

/// The `ETag` header (and `Location` on create) for a written or read resource.
pub fn resource_headers(etag: &Etag, location: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Ok(value) = HeaderValue::from_str(&format_etag(etag)) {
        headers.insert(header::ETAG, value);
    }
    if let Some(location) = location.and_then(|l| HeaderValue::from_str(l).ok()) {
        headers.insert(header::LOCATION, location);
    }
    headers
}

/// A read's preconditions (RFC 9110 §13.2.2): 412 when `If-Match` does not name the current
/// representation, 304 with its `ETag` when `If-None-Match` does; None to answer the read.
pub fn conditional_read(
    precondition: &Precondition,
    etag: &Etag,
) -> Result<Option<Response>, ApiError> {
    if !precondition.if_match_holds(Some(*etag)) {
        return Err(ApiError::PreconditionFailed);
    }
    if !precondition.if_none_match_holds(Some(*etag)) {
        let headers = resource_headers(etag, None);
        return Ok(Some((StatusCode::NOT_MODIFIED, headers).into_response()));
    }
    Ok(None)
}

/// Records a successful write in the audit log, inside the write's own transaction.
pub async fn audit_write(
    tx: &mut Tx,
    caller: &Caller,
    action: &str,
    resource: &str,
) -> Result<(), ApiError> {
    audit_log::record(
        tx,
        &AuditEntry {
            principal: &caller.principal.subject(),
            action,
            resource,
            outcome: "succeeded",
            request_id: caller.request_id.as_deref(),
        },
    )
    .await?;
    Ok(())
}
