//! Role definitions (built-in ones have no tenant and are visible to every tenant; custom
//! ones belong to one) and role assignments `(principal, role, scope)` (tenant scope).

use chrono::{DateTime, Utc};
use shoal_domain::rbac::{Permissions, RoleDefinition, Scope};
use uuid::Uuid;

use crate::error::{Violation, on_violation};
use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

#[derive(Debug, Clone, PartialEq)]
pub struct DefinitionRecord {
    pub id: Uuid,
    /// `None` for a built-in role.
    pub tenant: Option<String>,
    pub name: String,
    pub description: String,
    pub permissions: serde_json::Value,
    pub assignable_scopes: Vec<String>,
    pub built_in: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl DefinitionRecord {
    pub fn to_domain(&self) -> Result<RoleDefinition, StoreError> {
        let permissions: Permissions = serde_json::from_value(self.permissions.clone())
            .map_err(|e| StoreError::Corrupt(format!("role {} permissions: {e}", self.name)))?;
        let assignable_scopes = self
            .assignable_scopes
            .iter()
            .map(|s| Scope::parse(s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| StoreError::Corrupt(format!("role {} scope: {e}", self.name)))?;
        Ok(RoleDefinition {
            id: self.id,
            name: self.name.clone(),
            permissions,
            assignable_scopes,
            built_in: self.built_in,
        })
    }
}

macro_rules! definition_columns {
    () => {
        "d.id, d.tenant_id, d.name, d.description, d.permissions, \
     d.assignable_scopes, d.built_in, d.created_at, d.updated_at"
    };
}

type DefinitionRow = (
    Uuid,
    Option<String>,
    String,
    String,
    serde_json::Value,
    Vec<String>,
    bool,
    DateTime<Utc>,
    DateTime<Utc>,
);

fn definition(row: DefinitionRow) -> DefinitionRecord {
    let (id, tenant, name, description, permissions, assignable_scopes, built_in, created, updated) =
        row;
    DefinitionRecord {
        id,
        tenant,
        name,
        description,
        permissions,
        assignable_scopes,
        built_in,
        created_at: created,
        updated_at: updated,
    }
}

/// The built-in definitions and the tenant's own, built-ins first, then by name.
pub async fn definitions(
    tx: &mut Tx,
    tenant: &TenantId,
) -> Result<Vec<DefinitionRecord>, StoreError> {
    measured(Operation::RolesDefinitions, async move {
        let rows: Vec<DefinitionRow> = sqlx::query_as(concat!(
            "select ",
            definition_columns!(),
            " from role_definitions d
             where d.tenant_id is null or d.tenant_id = $1
             order by d.built_in desc, d.name"
        ))
        .bind(tenant.as_str())
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows.into_iter().map(definition).collect())
    })
    .await
}

/// A definition visible to the tenant, by id or (case-insensitively) by name.
pub async fn definition_named(
    tx: &mut Tx,
    tenant: &TenantId,
    id_or_name: &str,
) -> Result<Option<DefinitionRecord>, StoreError> {
    measured(Operation::RolesDefinitionNamed, async move {
        let id = Uuid::parse_str(id_or_name).ok();
        let row: Option<DefinitionRow> = sqlx::query_as(concat!(
            "select ",
            definition_columns!(),
            " from role_definitions d
             where (d.tenant_id is null or d.tenant_id = $1)
               and (d.id = $2 or lower(d.name) = lower($3))
             order by d.built_in desc limit 1"
        ))
        .bind(tenant.as_str())
        .bind(id)
        .bind(id_or_name)
        .fetch_optional(&mut **tx)
        .await?;
        Ok(row.map(definition))
    })
    .await
}

/// What a custom role says.
pub struct CustomDefinition<'a> {
    pub name: &'a str,
    pub description: &'a str,
    pub permissions: &'a Permissions,
    pub assignable_scopes: &'a [Scope],
}

/// Creates or replaces the tenant's custom role `name` (`created` true on create). A built-in
/// role's name cannot be taken.
pub async fn put_definition(
    tx: &mut Tx,
    tenant: &TenantId,
    role: &CustomDefinition<'_>,
) -> Result<(DefinitionRecord, bool), StoreError> {
    measured(Operation::RolesPutDefinition, async move {
        let built_in: bool = sqlx::query_scalar(
            "select exists (select from role_definitions where tenant_id is null and lower(name) = lower($1))",
        )
        .bind(role.name)
        .fetch_one(&mut **tx)
        .await?;
        if built_in {
            return Err(StoreError::Conflict(format!(
                "{} is a built-in role's name",
                role.name
            )));
        }
        let permissions =
            serde_json::to_value(role.permissions).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let scopes: Vec<String> = role
            .assignable_scopes
            .iter()
            .map(|s| s.as_str().to_string())
            .collect();
        let existed: Option<Uuid> = sqlx::query_scalar(
            "select id from role_definitions where tenant_id = $1 and name = $2 for update",
        )
        .bind(tenant.as_str())
        .bind(role.name)
        .fetch_optional(&mut **tx)
        .await?;
        let row: DefinitionRow = sqlx::query_as(concat!("insert into role_definitions as d (id, tenant_id, name, description, permissions, assignable_scopes)
             values ($1, $2, $3, $4, $5, $6)
             on conflict (coalesce(tenant_id, ''), name) do update
                set description = excluded.description, permissions = excluded.permissions,
                    assignable_scopes = excluded.assignable_scopes
             returning ", definition_columns!()))
        .bind(existed.unwrap_or_else(Uuid::new_v4))
        .bind(tenant.as_str())
        .bind(role.name)
        .bind(role.description)
        .bind(permissions)
        .bind(&scopes)
        .fetch_one(&mut **tx)
        .await?;
        Ok((definition(row), existed.is_none()))
    })
    .await
}

/// Deletes the tenant's custom role; refused while it is assigned.
pub async fn delete_definition(
    tx: &mut Tx,
    tenant: &TenantId,
    name: &str,
) -> Result<bool, StoreError> {
    measured(Operation::RolesDeleteDefinition, async move {
        let assigned: i64 = sqlx::query_scalar(
            "select count(*) from role_assignments a join role_definitions d on d.id = a.role_definition_id
             where d.tenant_id = $1 and d.name = $2",
        )
        .bind(tenant.as_str())
        .bind(name)
        .fetch_one(&mut **tx)
        .await?;
        if assigned > 0 {
            return Err(StoreError::Conflict(format!(
                "the role is still assigned {assigned} time(s); delete those assignments first"
            )));
        }
        let done = sqlx::query("delete from role_definitions where tenant_id = $1 and name = $2")
            .bind(tenant.as_str())
            .bind(name)
            .execute(&mut **tx)
            .await?;
        Ok(done.rows_affected() > 0)
    })
    .await
}

#[derive(Debug, Clone, PartialEq)]
pub struct AssignmentRecord {
    pub id: Uuid,
    pub principal_id: Uuid,
    pub role_definition_id: Uuid,
    pub role_name: String,
    pub scope: String,
    pub created_at: DateTime<Utc>,
}

macro_rules! assignment_columns {
    () => {
        "a.id, a.principal_id, a.role_definition_id, d.name, a.scope, a.created_at"
    };
}

type AssignmentRow = (Uuid, Uuid, Uuid, String, String, DateTime<Utc>);

fn assignment(row: AssignmentRow) -> AssignmentRecord {
    let (id, principal_id, role_definition_id, role_name, scope, created_at) = row;
    AssignmentRecord {
        id,
        principal_id,
        role_definition_id,
        role_name,
        scope,
        created_at,
    }
}

/// The tenant's assignments, optionally only one principal's, oldest first.
pub async fn assignments(
    tx: &mut Tx,
    tenant: &TenantId,
    principal: Option<Uuid>,
) -> Result<Vec<AssignmentRecord>, StoreError> {
    measured(Operation::RolesAssignments, async move {
        let rows: Vec<AssignmentRow> = sqlx::query_as(concat!(
            "select ",
            assignment_columns!(),
            " from role_assignments a
             join role_definitions d on d.id = a.role_definition_id
             where a.tenant_id = $1 and ($2::uuid is null or a.principal_id = $2)
             order by a.created_at, a.id"
        ))
        .bind(tenant.as_str())
        .bind(principal)
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows.into_iter().map(assignment).collect())
    })
    .await
}

pub async fn assignment_by_id(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
) -> Result<Option<AssignmentRecord>, StoreError> {
    measured(Operation::RolesAssignmentById, async move {
        let row: Option<AssignmentRow> = sqlx::query_as(concat!(
            "select ",
            assignment_columns!(),
            " from role_assignments a
             join role_definitions d on d.id = a.role_definition_id
             where a.tenant_id = $1 and a.id = $2"
        ))
        .bind(tenant.as_str())
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
        Ok(row.map(assignment))
    })
    .await
}

/// Creates assignment `id`. Assignments are immutable, as in Azure: writing an existing id
/// with the same content is a no-op (`created` false); with other content, a conflict. The
/// same (principal, role, scope) under another id is a conflict too.
pub async fn create_assignment(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
    principal_id: Uuid,
    role_definition_id: Uuid,
    scope: &Scope,
) -> Result<(AssignmentRecord, bool), StoreError> {
    measured(Operation::RolesCreateAssignment, async move {
        if let Some(existing) = assignment_by_id(tx, tenant, id).await? {
            if existing.principal_id == principal_id
                && existing.role_definition_id == role_definition_id
                && existing.scope == scope.as_str()
            {
                return Ok((existing, false));
            }
            return Err(StoreError::Conflict(
                "role assignments cannot be changed; delete this one and create another".into(),
            ));
        }
        sqlx::query(
            "insert into role_assignments (id, tenant_id, principal_id, role_definition_id, scope)
             values ($1, $2, $3, $4, $5)",
        )
        .bind(id)
        .bind(tenant.as_str())
        .bind(principal_id)
        .bind(role_definition_id)
        .bind(scope.as_str())
        .execute(&mut **tx)
        .await
        .map_err(|e| {
            on_violation(e, Violation::Unique, || {
                StoreError::Conflict("the principal already holds this role at this scope".into())
            })
        })?;
        let created = assignment_by_id(tx, tenant, id)
            .await?
            .ok_or(StoreError::NotFound)?;
        Ok((created, true))
    })
    .await
}

pub async fn delete_assignment(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
) -> Result<bool, StoreError> {
    measured(Operation::RolesDeleteAssignment, async move {
        let done = sqlx::query("delete from role_assignments where tenant_id = $1 and id = $2")
            .bind(tenant.as_str())
            .bind(id)
            .execute(&mut **tx)
            .await?;
        Ok(done.rows_affected() > 0)
    })
    .await
}

/// Every (definition, scope) the principal holds, or `None` if there is no such principal.
/// One round trip: the principal's existence and its assignments together.
pub async fn held_by(
    tx: &mut Tx,
    tenant: &TenantId,
    principal: Uuid,
) -> Result<Option<Vec<(DefinitionRecord, String)>>, StoreError> {
    measured(Operation::RolesHeldBy, async move {
        type HeldRow = (
            Option<Uuid>,
            Option<String>,
            Option<String>,
            Option<String>,
            Option<serde_json::Value>,
            Option<Vec<String>>,
            Option<bool>,
            Option<DateTime<Utc>>,
            Option<DateTime<Utc>>,
            Option<String>,
        );
        let rows: Vec<HeldRow> = sqlx::query_as(concat!(
            "select ",
            definition_columns!(),
            ", a.scope
             from principals p
             left join role_assignments a on a.principal_id = p.id
             left join role_definitions d on d.id = a.role_definition_id
             where p.tenant_id = $1 and p.id = $2"
        ))
        .bind(tenant.as_str())
        .bind(principal)
        .fetch_all(&mut **tx)
        .await?;
        if rows.is_empty() {
            return Ok(None);
        }
        let held = rows
            .into_iter()
            .filter_map(|r| {
                Some((
                    definition((r.0?, r.1, r.2?, r.3?, r.4?, r.5?, r.6?, r.7?, r.8?)),
                    r.9?,
                ))
            })
            .collect();
        Ok(Some(held))
    })
    .await
}
