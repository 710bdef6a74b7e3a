//! HTTP handlers, one module per resource.

pub mod access_check;
pub mod app_identity;
pub mod app_status;
pub mod apps;
pub mod audit;
pub mod binding_types;
pub mod breakers;
pub mod caller;
pub mod diagnostics;
pub mod egress;
pub mod functions;
pub mod health;
pub mod identities;
pub mod identity_endpoint;
pub mod invocation_log;
pub mod invocations;
pub(crate) mod kinds;
pub mod msi;
pub mod oauth2;
pub mod oidc;
pub mod poison;
pub mod principals;
pub mod quotas;
pub mod roles;
pub mod scale;
pub mod scale_history;
pub mod send;
pub mod service_principals;
pub mod setting_access;
pub mod settings;
pub mod signing_keys;
pub mod signing_secret;
pub mod tenants;
pub(crate) mod trigger_source;
pub mod users;
pub mod webhooks;
pub mod workers;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use shoal_domain::names::TenantName;
use shoal_domain::rbac::Scope;
use shoal_store::audit::{self as audit_log, AuditEntry};
use shoal_store::{Etag, Precondition, TenantId, Tx, begin_platform, begin_tenant};

use crate::access::{Caller, allow};
use crate::error::ApiError;
use crate::extract::format_etag;
use crate::state::AppState;

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

/// Allows reading the function for the caller (else 403/404) and opens its tenant's transaction,
/// in which the function exists (else 404): how reads of what a function did (its telemetry,
/// its invocation log) begin.
pub async fn readable_function(
    state: &AppState,
    caller: &Caller,
    tenant: shoal_domain::names::TenantName,
    app: &shoal_domain::names::AppName,
    function: &shoal_domain::names::FunctionName,
) -> Result<(TenantId, Tx), ApiError> {
    allow(
        &state.pool,
        caller,
        shoal_domain::rbac::actions::FUNCTIONS_READ,
        &Scope::function(&tenant, app, function),
    )
    .await?;
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    shoal_store::functions::get(&mut tx, &id, app.as_str(), function.as_str()).await?;
    Ok((id, tx))
}

/// A caller's permission for one audited action, checked: what every audited handler does
/// first ([`authorize`]). [`Authorized::begin`] opens the tenant's transaction for the work and
/// [`AuditedWrite::commit`] records the action in the audit log and commits, the record and the
/// work together or neither. Anything a handler checks in between (the body, the current ETag)
/// still answers after authorization.
pub struct Authorized<'a> {
    state: &'a AppState,
    caller: &'a Caller,
    action: &'static str,
}

/// Allows `action` at `scope` for the caller, or answers 403/404 (audited by `access`).
pub async fn authorize<'a>(
    state: &'a AppState,
    caller: &'a Caller,
    action: &'static str,
    scope: &Scope,
) -> Result<Authorized<'a>, ApiError> {
    allow(&state.pool, caller, action, scope).await?;
    Ok(Authorized {
        state,
        caller,
        action,
    })
}

impl<'a> Authorized<'a> {
    /// The state the action was authorized in, for the work's other needs (the cipher).
    pub fn caller(&self) -> &'a Caller {
        self.caller
    }

    pub fn state(&self) -> &'a AppState {
        self.state
    }

    /// Begins the tenant transaction the action's work runs in.
    pub async fn begin(&self, tenant: &TenantId) -> Result<AuditedWrite<'a>, ApiError> {
        Ok(AuditedWrite {
            tx: begin_tenant(&self.state.pool, tenant).await?,
            caller: self.caller,
            action: self.action,
        })
    }

    /// [`Authorized::begin`] for a platform-scoped action (tenants themselves).
    pub async fn begin_platform(&self) -> Result<AuditedWrite<'a>, ApiError> {
        Ok(AuditedWrite {
            tx: begin_platform(&self.state.pool).await?,
            caller: self.caller,
            action: self.action,
        })
    }

    /// [`Authorized::begin`] for a tenant whose absence the caller may learn: 404 when the
    /// tenant does not exist.
    pub async fn begin_existing(
        &self,
        tenant: &TenantName,
    ) -> Result<(TenantId, AuditedWrite<'a>), ApiError> {
        let id = TenantId::new(tenant.clone());
        let mut write = self.begin(&id).await?;
        if !shoal_store::tenants::exists(&mut write.tx, tenant.as_str()).await? {
            return Err(ApiError::NotFound);
        }
        Ok((id, write))
    }
}

/// The transaction of an authorized action; dropped without [`AuditedWrite::commit`], it rolls
/// back.
pub struct AuditedWrite<'a> {
    pub tx: Tx,
    caller: &'a Caller,
    action: &'static str,
}

impl AuditedWrite<'_> {
    /// Commits without an audit record: the action changed nothing (a create that found the
    /// resource already there).
    pub async fn commit_unchanged(self) -> Result<(), ApiError> {
        shoal_store::commit(self.tx).await?;
        Ok(())
    }

    /// Records the action on `resource` in the audit log, then commits.
    pub async fn commit(mut self, resource: &str) -> Result<(), ApiError> {
        audit_write(&mut self.tx, self.caller, self.action, resource).await?;
        shoal_store::commit(self.tx).await?;
        Ok(())
    }
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
