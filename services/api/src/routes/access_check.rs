//! `GET /v1/tenants/{tenant}/checkAccess`: which management actions (and data actions) one of
//! the tenant's principals may take at a scope, and through which of its role assignments — the
//! Azure portal's "Check access", so a person can see why someone can or cannot do something.
//!
//! `GET /v1/me` answers the same question for the caller itself; this one is about another
//! principal, so it says no more than the role assignments already do: an assignment's role
//! and scope, and what the role's permissions allow at the scope asked about. Hence the right
//! it needs is the one that reads role assignments (`Shoal/roleAssignments/read`), checked at
//! the scope asked about, as Azure checks it where the IAM blade is opened: an app's Owner may
//! check access at that app (and see the tenant-wide assignments that reach it), not above it.
//!
//! The evaluation is the one every request gets (`rbac::Grant::allows`, whose union over the
//! principal's assignments is `rbac::evaluate`), over the assignments stored for the principal
//! inside the tenant; like the API's own check, assignments whose scope lies outside the
//! tenant or does not parse grant nothing and are left out.

use axum::Json;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use shoal_domain::rbac::{Grant, Operation, Scope, actions};
use shoal_store::{principals, roles};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_ACCESS;
use super::principals::{PrincipalView, tenant_tx};
use crate::access::{Caller, allow};
use crate::error::{ApiError, Problem};
use crate::extract::{Query, TenantPath};
use crate::state::AppState;

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AccessCheckQuery {
    /// The principal's object id (`principalId` of an identity, service principal or user of
    /// the tenant), as role assignments name it.
    // Read as optional text so that its absence or a bad value gets a 422 naming it rather
    // than a query-string 400.
    #[param(required = true, value_type = uuid::Uuid)]
    pub principal_id: Option<String>,
    /// `/tenants/{t}` (the default), `/tenants/{t}/apps/{a}` or
    /// `/tenants/{t}/apps/{a}/functions/{f}`, as role assignments write scopes.
    pub scope: Option<String>,
}

/// What a principal may do at a scope, and why.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccessCheck {
    pub principal: PrincipalView,
    /// The scope the actions were evaluated at.
    #[schema(example = "/tenants/contoso/apps/orders")]
    pub scope: String,
    /// The catalog's management actions allowed at `scope`, each with the ids of the role
    /// assignments (in `assignments`) that allow it. Empty: the principal may do nothing there.
    pub actions: Vec<AllowedAction>,
    /// The catalog's data actions (invoking a function) allowed at `scope`, likewise.
    pub data_actions: Vec<AllowedAction>,
    /// The principal's role assignments that apply at `scope` (made there or at a scope
    /// above it), oldest first, each with what it allows there; an assignment below `scope`
    /// or beside it does not apply and is not listed.
    pub assignments: Vec<ApplyingAssignment>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AllowedAction {
    #[schema(example = "Shoal/apps/read")]
    pub action: String,
    /// The role assignments allowing it (ids of `assignments`).
    pub granted_by: Vec<uuid::Uuid>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyingAssignment {
    /// The role assignment's id.
    pub id: uuid::Uuid,
    pub role_definition_id: uuid::Uuid,
    #[schema(example = "Reader")]
    pub role_definition_name: String,
    /// Where the assignment was made: `scope` itself or a scope above it.
    #[schema(example = "/tenants/contoso")]
    pub scope: String,
    /// The catalog's management actions this assignment allows at the scope asked about.
    pub actions: Vec<String>,
    /// The catalog's data actions this assignment allows there.
    pub data_actions: Vec<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(check_access))
}

/// Check which actions a principal of the tenant may take at a scope, and through which role assignments.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/checkAccess", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), AccessCheckQuery),
    responses(
        (status = 200, body = AccessCheck),
        (status = 403, body = Problem, description = "The caller may not read role assignments at `scope`"),
        (status = 404, body = Problem, description = "No such tenant, or one the caller holds nothing in"),
        (status = 422, body = Problem, description = "`principalId` is not a UUID or names no principal of this tenant, or `scope` is not the tenant or inside it")))]
pub async fn check_access(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
    Query(query): Query<AccessCheckQuery>,
) -> Result<Json<AccessCheck>, ApiError> {
    let scope = match &query.scope {
        None => Scope::tenant(&tenant),
        Some(text) => Scope::parse(text)
            .ok()
            .filter(|s| s.tenant_name() == Some(&tenant))
            .ok_or_else(|| {
                ApiError::validation(
                    "scope",
                    format!("must be /tenants/{tenant} or an app or function inside it"),
                )
            })?,
    };
    allow(&state.pool, &caller, actions::ROLE_ASSIGNMENTS_READ, &scope).await?;
    let principal_id = match query.principal_id.as_deref() {
        None | Some("") => Err(ApiError::validation("principalId", "is required")),
        Some(text) => uuid::Uuid::parse_str(text)
            .map_err(|_| ApiError::validation("principalId", "must be a UUID")),
    }?;
    let (id, mut tx) = tenant_tx(&state, &tenant).await?;
    // Inside the tenant's transaction: another tenant's principal is not found.
    let principal = principals::by_id(&mut tx, &id, principal_id)
        .await?
        .ok_or_else(|| ApiError::validation("principalId", "names no principal of this tenant"))?;
    let assigned = roles::assignments(&mut tx, &id, Some(principal_id)).await?;
    let definitions = roles::definitions(&mut tx, &id).await?;
    shoal_store::commit(tx).await?;

    // Each applying assignment with its role's definition and parsed scope.
    let mut applying = Vec::new();
    for record in assigned {
        let Ok(at) = Scope::parse(&record.scope) else {
            continue;
        };
        if at.tenant_name() != Some(&tenant) || !at.covers(&scope) {
            continue;
        }
        let Some(definition) = definitions
            .iter()
            .find(|d| d.id == record.role_definition_id)
        else {
            continue;
        };
        applying.push((record, definition.to_domain()?, at));
    }
    let allowed_by = |operation: Operation<'_>| -> Vec<uuid::Uuid> {
        applying
            .iter()
            .filter(|(_, role, at)| Grant { role, scope: at }.allows(operation, &scope))
            .map(|(record, _, _)| record.id)
            .collect()
    };
    let per_action = |data: bool| -> Vec<AllowedAction> {
        actions::ALL
            .iter()
            .filter(|a| actions::is_data_action(a) == data)
            .filter_map(|action| {
                let operation = if data {
                    Operation::DataAction(action)
                } else {
                    Operation::Action(action)
                };
                let granted_by = allowed_by(operation);
                (!granted_by.is_empty()).then(|| AllowedAction {
                    action: (*action).to_owned(),
                    granted_by,
                })
            })
            .collect()
    };
    let actions = per_action(false);
    let data_actions = per_action(true);
    let of = |list: &[AllowedAction], assignment: uuid::Uuid| -> Vec<String> {
        list.iter()
            .filter(|a| a.granted_by.contains(&assignment))
            .map(|a| a.action.clone())
            .collect()
    };
    let assignments = applying
        .iter()
        .map(|(record, _, _)| ApplyingAssignment {
            id: record.id,
            role_definition_id: record.role_definition_id,
            role_definition_name: record.role_name.clone(),
            scope: record.scope.clone(),
            actions: of(&actions, record.id),
            data_actions: of(&data_actions, record.id),
        })
        .collect();
    Ok(Json(AccessCheck {
        principal: principal.into(),
        scope: scope.as_str().to_owned(),
        actions,
        data_actions,
        assignments,
    }))
}
