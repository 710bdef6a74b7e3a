//! `/v1/tenants/{tenant}/roleDefinitions` and `/roleAssignments`: who may do what, where.
//!
//! Built-in roles are listed with the tenant's custom ones and cannot be changed. A role
//! assignment names a principal of the tenant, a role visible to the tenant and a scope inside
//! the tenant; creating or deleting one needs the permission at the assignment's own scope
//! (as in Azure), so an app's Owner can grant access to that app and nothing above it.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shoal_domain::rbac::definition::parse_custom_role;
use shoal_domain::rbac::{Permissions, Scope, actions};
use shoal_store::principals;
use shoal_store::roles::{self, AssignmentRecord, CustomDefinition, DefinitionRecord};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::principals::tenant_tx;
use super::{TAG_ACCESS, audit_write, authorize};
use crate::access::Caller;
use crate::access::allow;
use crate::error::{ApiError, Problem};
use crate::extract::{JsonBody, Query, TenantPath, TenantScoped};
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleDefinitionView {
    pub id: uuid::Uuid,
    pub name: String,
    pub description: String,
    pub built_in: bool,
    pub permissions: Permissions,
    pub assignable_scopes: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RoleDefinitionList {
    pub items: Vec<RoleDefinitionView>,
}

impl TryFrom<DefinitionRecord> for RoleDefinitionView {
    type Error = ApiError;

    fn try_from(r: DefinitionRecord) -> Result<Self, ApiError> {
        let permissions = r.to_domain()?.permissions;
        Ok(RoleDefinitionView {
            id: r.id,
            name: r.name,
            description: r.description,
            built_in: r.built_in,
            permissions,
            assignable_scopes: r.assignable_scopes,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
    }
}

/// What a client sends to create or replace a custom role.
#[derive(Debug, ToSchema)]
#[schema(as = RoleDefinitionWrite, example = json!({
    "description": "Reads orders and their functions",
    "permissions": {"actions": ["Shoal/apps/read", "Shoal/apps/functions/read"]},
    "assignableScopes": ["/tenants/contoso"]
}))]
#[allow(dead_code)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleDefinitionWriteDoc {
    /// Defaults to the name in the path; must equal it if given.
    name: Option<String>,
    description: Option<String>,
    /// At least one operation in `actions` or `dataActions`.
    permissions: Permissions,
    /// Scopes inside the tenant where the role may be assigned, e.g. `/tenants/contoso`.
    #[schema(min_items = 1)]
    assignable_scopes: Vec<String>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RoleAssignmentView {
    pub id: uuid::Uuid,
    pub principal_id: uuid::Uuid,
    pub role_definition_id: uuid::Uuid,
    pub role_definition_name: String,
    pub scope: String,
    pub created_at: DateTime<Utc>,
}

impl From<AssignmentRecord> for RoleAssignmentView {
    fn from(r: AssignmentRecord) -> Self {
        RoleAssignmentView {
            id: r.id,
            principal_id: r.principal_id,
            role_definition_id: r.role_definition_id,
            role_definition_name: r.role_name,
            scope: r.scope,
            created_at: r.created_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RoleAssignmentList {
    pub items: Vec<RoleAssignmentView>,
}

/// What a client sends to create a role assignment.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RoleAssignmentWrite {
    /// The principal's object id (`principalId` of an identity, service principal or user).
    pub principal_id: String,
    /// The role's id or name (`Reader`, `Function Invoker`, a custom role).
    pub role_definition_id: String,
    /// `/tenants/{t}`, `/tenants/{t}/apps/{a}` or `/tenants/{t}/apps/{a}/functions/{f}`.
    pub scope: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct AssignmentQuery {
    /// Only this principal's assignments.
    pub principal_id: Option<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_role_definitions))
        .routes(routes!(
            get_role_definition,
            put_role_definition,
            delete_role_definition
        ))
        .routes(routes!(list_role_assignments))
        .routes(routes!(
            get_role_assignment,
            put_role_assignment,
            delete_role_assignment
        ))
}

/// List the built-in roles and the tenant's custom roles.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/roleDefinitions", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path)),
    responses((status = 200, body = RoleDefinitionList), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn list_role_definitions(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
) -> Result<Json<RoleDefinitionList>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::ROLE_DEFINITIONS_READ,
        &Scope::tenant(&tenant),
    )
    .await?;
    let (id, mut tx) = tenant_tx(&state, &tenant).await?;
    let records = roles::definitions(&mut tx, &id).await?;
    shoal_store::commit(tx).await?;
    Ok(Json(RoleDefinitionList {
        items: records
            .into_iter()
            .map(RoleDefinitionView::try_from)
            .collect::<Result<_, _>>()?,
    }))
}

/// Read a role definition by name or id.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/roleDefinitions/{role}", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("role" = String, Path, description = "name or id")),
    responses((status = 200, body = RoleDefinitionView), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn get_role_definition(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, role): TenantScoped,
) -> Result<Json<RoleDefinitionView>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::ROLE_DEFINITIONS_READ,
        &Scope::tenant(&tenant),
    )
    .await?;
    let (id, mut tx) = tenant_tx(&state, &tenant).await?;
    let record = roles::definition_named(&mut tx, &id, &role)
        .await?
        .ok_or(ApiError::NotFound)?;
    shoal_store::commit(tx).await?;
    Ok(Json(record.try_into()?))
}

/// Create (201) or replace (200) a custom role.
#[utoipa::path(put, path = "/v1/tenants/{tenant}/roleDefinitions/{role}", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("role" = String, Path, description = "the custom role's name")),
    request_body = RoleDefinitionWriteDoc,
    responses((status = 200, body = RoleDefinitionView), (status = 201, body = RoleDefinitionView), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem), (status = 422, body = Problem)))]
pub async fn put_role_definition(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, role): TenantScoped,
    JsonBody(mut body): JsonBody,
) -> Result<Response, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::ROLE_DEFINITIONS_WRITE,
        &Scope::tenant(&tenant),
    )
    .await?;
    if let Some(object) = body.as_object_mut() {
        match object.get("name") {
            None | Some(serde_json::Value::Null) => {
                object.insert("name".into(), role.clone().into());
            }
            Some(serde_json::Value::String(name)) if *name == role => {}
            Some(_) => {
                return Err(ApiError::validation(
                    "name",
                    "must equal the name in the path",
                ));
            }
        }
    }
    let custom = parse_custom_role(&body, &tenant)?;
    let (id, mut write) = authorized.begin_existing(&tenant).await?;
    let (record, created) = roles::put_definition(
        &mut write.tx,
        &id,
        &CustomDefinition {
            name: &custom.name,
            description: &custom.description,
            permissions: &custom.permissions,
            assignable_scopes: &custom.assignable_scopes,
        },
    )
    .await?;
    let resource = format!("/v1/tenants/{tenant}/roleDefinitions/{}", custom.name);
    write.commit(&resource).await?;
    state.access.invalidate();
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(RoleDefinitionView::try_from(record)?)).into_response())
}

/// Delete a custom role (409 while it is assigned).
#[utoipa::path(delete, path = "/v1/tenants/{tenant}/roleDefinitions/{role}", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("role" = String, Path)),
    responses((status = 204), (status = 403, body = Problem), (status = 404, body = Problem), (status = 409, body = Problem)))]
pub async fn delete_role_definition(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, role): TenantScoped,
) -> Result<StatusCode, ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::ROLE_DEFINITIONS_DELETE,
        &Scope::tenant(&tenant),
    )
    .await?;
    let (id, mut write) = authorized.begin_existing(&tenant).await?;
    if rbac_built_in(&role) {
        return Err(ApiError::Conflict(
            "built-in roles cannot be deleted".into(),
        ));
    }
    if !roles::delete_definition(&mut write.tx, &id, &role).await? {
        return Err(ApiError::NotFound);
    }
    write
        .commit(&format!("/v1/tenants/{tenant}/roleDefinitions/{role}"))
        .await?;
    state.access.invalidate();
    Ok(StatusCode::NO_CONTENT)
}

fn rbac_built_in(name: &str) -> bool {
    shoal_domain::rbac::is_built_in_name(name)
}

/// List the tenant's role assignments.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/roleAssignments", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), AssignmentQuery),
    responses((status = 200, body = RoleAssignmentList), (status = 403, body = Problem), (status = 404, body = Problem), (status = 422, body = Problem)))]
pub async fn list_role_assignments(
    State(state): State<AppState>,
    caller: Caller,
    TenantPath(tenant): TenantPath,
    Query(query): Query<AssignmentQuery>,
) -> Result<Json<RoleAssignmentList>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::ROLE_ASSIGNMENTS_READ,
        &Scope::tenant(&tenant),
    )
    .await?;
    let principal = query
        .principal_id
        .as_deref()
        .map(|p| uuid_field("principalId", p))
        .transpose()?;
    let (id, mut tx) = tenant_tx(&state, &tenant).await?;
    let records = roles::assignments(&mut tx, &id, principal).await?;
    shoal_store::commit(tx).await?;
    Ok(Json(RoleAssignmentList {
        items: records.into_iter().map(RoleAssignmentView::from).collect(),
    }))
}

/// Read a role assignment.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/roleAssignments/{id}", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("id" = uuid::Uuid, Path)),
    responses((status = 200, body = RoleAssignmentView), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn get_role_assignment(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, assignment): TenantScoped,
) -> Result<Json<RoleAssignmentView>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::ROLE_ASSIGNMENTS_READ,
        &Scope::tenant(&tenant),
    )
    .await?;
    let assignment = uuid_field("id", &assignment)?;
    let (id, mut tx) = tenant_tx(&state, &tenant).await?;
    let record = roles::assignment_by_id(&mut tx, &id, assignment)
        .await?
        .ok_or(ApiError::NotFound)?;
    shoal_store::commit(tx).await?;
    Ok(Json(record.into()))
}

/// Create a role assignment under a client-chosen id (201; 200 if the same one exists).
#[utoipa::path(put, path = "/v1/tenants/{tenant}/roleAssignments/{id}", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("id" = uuid::Uuid, Path)), request_body = RoleAssignmentWrite,
    responses((status = 200, body = RoleAssignmentView), (status = 201, body = RoleAssignmentView), (status = 403, body = Problem),
        (status = 404, body = Problem), (status = 409, body = Problem), (status = 422, body = Problem)))]
pub async fn put_role_assignment(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, assignment): TenantScoped,
    JsonBody(body): JsonBody,
) -> Result<Response, ApiError> {
    let assignment = uuid_field("id", &assignment)?;
    let write: RoleAssignmentWrite =
        serde_json::from_value(body).map_err(|e| ApiError::validation("", e.to_string()))?;
    let scope = Scope::parse(&write.scope)
        .ok()
        .filter(|s| s.tenant_name() == Some(&tenant))
        .ok_or_else(|| {
            ApiError::validation(
                "scope",
                format!("must be /tenants/{tenant} or an app or function inside it"),
            )
        })?;
    // The permission is needed where the assignment will apply, not only at the tenant.
    allow(
        &state.pool,
        &caller,
        actions::ROLE_ASSIGNMENTS_WRITE,
        &scope,
    )
    .await?;
    let principal_id = uuid_field("principalId", &write.principal_id)?;
    let (id, mut tx) = tenant_tx(&state, &tenant).await?;
    if principals::by_id(&mut tx, &id, principal_id)
        .await?
        .is_none()
    {
        return Err(ApiError::validation(
            "principalId",
            "names no principal of this tenant",
        ));
    }
    let definition = roles::definition_named(&mut tx, &id, &write.role_definition_id)
        .await?
        .ok_or_else(|| {
            ApiError::validation("roleDefinitionId", "names no role visible to this tenant")
        })?;
    if !definition.to_domain()?.assignable_at(&scope) {
        return Err(ApiError::validation(
            "scope",
            format!(
                "the role {} is not assignable here (its assignableScopes: {})",
                definition.name,
                definition.assignable_scopes.join(", ")
            ),
        ));
    }
    let (record, created) = roles::create_assignment(
        &mut tx,
        &id,
        assignment,
        principal_id,
        definition.id,
        &scope,
    )
    .await?;
    if created {
        let resource = format!("/v1/tenants/{tenant}/roleAssignments/{assignment}");
        audit_write(&mut tx, &caller, actions::ROLE_ASSIGNMENTS_WRITE, &resource).await?;
    }
    shoal_store::commit(tx).await?;
    state.access.invalidate();
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(RoleAssignmentView::from(record))).into_response())
}

/// Delete a role assignment.
#[utoipa::path(delete, path = "/v1/tenants/{tenant}/roleAssignments/{id}", tag = TAG_ACCESS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("id" = uuid::Uuid, Path)),
    responses((status = 204), (status = 403, body = Problem), (status = 404, body = Problem)))]
pub async fn delete_role_assignment(
    State(state): State<AppState>,
    caller: Caller,
    TenantScoped(tenant, assignment): TenantScoped,
) -> Result<StatusCode, ApiError> {
    let assignment = uuid_field("id", &assignment)?;
    // Readers of the tenant learn nothing from a 404 they could not learn from the list.
    allow(
        &state.pool,
        &caller,
        actions::ROLE_ASSIGNMENTS_READ,
        &Scope::tenant(&tenant),
    )
    .await?;
    let (id, mut tx) = tenant_tx(&state, &tenant).await?;
    let record = roles::assignment_by_id(&mut tx, &id, assignment)
        .await?
        .ok_or(ApiError::NotFound)?;
    let scope = Scope::parse(&record.scope)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!(e.to_string())))?;
    allow(
        &state.pool,
        &caller,
        actions::ROLE_ASSIGNMENTS_DELETE,
        &scope,
    )
    .await?;
    roles::delete_assignment(&mut tx, &id, assignment).await?;
    let resource = format!("/v1/tenants/{tenant}/roleAssignments/{assignment}");
    audit_write(
        &mut tx,
        &caller,
        actions::ROLE_ASSIGNMENTS_DELETE,
        &resource,
    )
    .await?;
    shoal_store::commit(tx).await?;
    state.access.invalidate();
    Ok(StatusCode::NO_CONTENT)
}

fn uuid_field(path: &str, raw: &str) -> Result<uuid::Uuid, ApiError> {
    uuid::Uuid::parse_str(raw).map_err(|_| ApiError::validation(path, "must be a UUID"))
}
