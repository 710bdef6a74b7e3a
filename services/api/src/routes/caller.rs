//! `GET /v1/me`: who the caller is and which management actions its role assignments allow at
//! one scope, so a client (the dashboard) can offer only the actions the API would accept.
//!
//! Like Azure's `Microsoft.Authorization/permissions`, it reports the caller's own access and
//! nothing else: every request is still authorised on its own, and a hidden action here is a
//! convenience, never the check. Any authenticated caller may ask; asking about a tenant the
//! caller holds nothing in answers an empty list, which says no more than a 404 would.

use axum::Json;
use serde::{Deserialize, Serialize};
use shoal_domain::names::{AppName, TenantName};
use shoal_domain::rbac::{Operation, Scope, actions};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_ACCESS;
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::Query;
use crate::identity::Principal;
use crate::state::AppState;

/// The caller and what it may do at the scope asked about.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CallerView {
    /// Who the token names: an operator's subject or a registered principal's id.
    #[schema(example = "dev-admin")]
    pub subject: String,
    pub kind: CallerKind,
    /// The tenant the caller belongs to; absent for a platform administrator.
    #[schema(example = "contoso")]
    pub tenant: Option<String>,
    /// The scope `actions` were evaluated at.
    #[schema(example = "/tenants/contoso")]
    pub scope: String,
    /// The catalog's management actions the caller's role assignments allow at `scope`.
    #[schema(example = json!(["Shoal/apps/read", "Shoal/apps/functions/read"]))]
    pub actions: Vec<String>,
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum CallerKind {
    /// Owner at `/`.
    PlatformAdmin,
    /// A token minted with `shoal token --tenant … --role …`.
    Operator,
    /// A service principal, managed identity or user registered in a tenant.
    Registered,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CallerQuery {
    /// Evaluate at this tenant's scope (default: the caller's own tenant, or `/` for a
    /// platform administrator).
    pub tenant: Option<String>,
    /// With `tenant`: evaluate at this app's scope instead.
    pub app: Option<String>,
}

impl CallerQuery {
    fn scope(&self, principal: &Principal) -> Result<Scope, ApiError> {
        let tenant = match &self.tenant {
            Some(text) => {
                Some(TenantName::parse(text).map_err(|e| ApiError::validation("tenant", e))?)
            }
            None => principal.tenant().cloned(),
        };
        match (tenant, &self.app) {
            (None, None) => Ok(Scope::root()),
            (None, Some(_)) => Err(ApiError::validation(
                "app",
                "needs `tenant` (a platform administrator belongs to no tenant)",
            )),
            (Some(tenant), None) => Ok(Scope::tenant(&tenant)),
            (Some(tenant), Some(app)) => {
                let app = AppName::parse(app).map_err(|e| ApiError::validation("app", e))?;
                Ok(Scope::app(&tenant, &app))
            }
        }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_caller))
}

/// Read who the caller is and which management actions it may take at a scope.
#[utoipa::path(get, path = "/v1/me", tag = TAG_ACCESS, params(CallerQuery),
    responses(
        (status = 200, body = CallerView, examples(
            ("reader" = (summary = "A tenant Reader", value = json!({
                "subject": "alice",
                "kind": "operator",
                "tenant": "contoso",
                "scope": "/tenants/contoso",
                "actions": ["Shoal/tenants/read", "Shoal/apps/read", "Shoal/apps/scale/read"]
            })))
        )),
        (status = 401, body = Problem, description = "No bearer token, or one that does not verify"),
        (status = 422, body = Problem, description = "`tenant` or `app` is not a valid name, or `app` without `tenant`")))]
pub async fn get_caller(
    caller: Caller,
    Query(query): Query<CallerQuery>,
) -> Result<Json<CallerView>, ApiError> {
    let scope = query.scope(&caller.principal)?;
    let allowed = actions::control_actions()
        .filter(|action| {
            caller
                .grants
                .evaluate(Operation::Action(action), &scope)
                .is_allowed()
        })
        .map(str::to_owned)
        .collect();
    let kind = match caller.principal {
        Principal::PlatformAdmin { .. } => CallerKind::PlatformAdmin,
        Principal::Operator { .. } => CallerKind::Operator,
        Principal::Registered { .. } => CallerKind::Registered,
    };
    Ok(Json(CallerView {
        subject: caller.principal.subject(),
        kind,
        tenant: caller.principal.tenant().map(|t| t.as_str().to_owned()),
        scope: scope.as_str().to_owned(),
        actions: allowed,
    }))
}
