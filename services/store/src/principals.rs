//! Principals (tenant scope): service principals, managed identities (system-assigned per
//! app, user-assigned per tenant) and external users. Each has a principal (object) id and a
//! client id; a service principal's secret is stored only as a hash.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use shoal_domain::apps::{Identity, IdentityType};
use shoal_domain::connection::outbound::{AppIdentities, AppIdentity};
use uuid::Uuid;

use crate::error::{Violation, on_violation};
use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrincipalKind {
    User,
    ServicePrincipal,
    SystemAssignedIdentity,
    UserAssignedIdentity,
}

impl PrincipalKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::User => "user",
            PrincipalKind::ServicePrincipal => "servicePrincipal",
            PrincipalKind::SystemAssignedIdentity => "systemAssignedIdentity",
            PrincipalKind::UserAssignedIdentity => "userAssignedIdentity",
        }
    }

    fn parse(text: &str) -> Result<PrincipalKind, StoreError> {
        Ok(match text {
            "user" => PrincipalKind::User,
            "servicePrincipal" => PrincipalKind::ServicePrincipal,
            "systemAssignedIdentity" => PrincipalKind::SystemAssignedIdentity,
            "userAssignedIdentity" => PrincipalKind::UserAssignedIdentity,
            other => return Err(StoreError::Corrupt(format!("principal kind {other}"))),
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct PrincipalRecord {
    pub id: Uuid,
    pub tenant: String,
    pub kind: PrincipalKind,
    pub name: String,
    pub client_id: Uuid,
    /// The app a system-assigned identity belongs to.
    pub app_name: Option<String>,
    /// An external user's issuer and subject.
    pub issuer: Option<String>,
    pub subject: Option<String>,
    /// When the service principal's current secret was created (none: no secret).
    pub secret_created_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! columns {
    () => {
        "id, tenant_id, kind, name, client_id, app_name, issuer, subject, \
     secret_created_at, created_at, updated_at"
    };
}

type Row = (
    Uuid,
    String,
    String,
    String,
    Uuid,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<DateTime<Utc>>,
    DateTime<Utc>,
    DateTime<Utc>,
);

fn record(row: Row) -> Result<PrincipalRecord, StoreError> {
    let (id, tenant, kind, name, client_id, app_name, issuer, subject, secret_at, created, updated) =
        row;
    Ok(PrincipalRecord {
        id,
        tenant,
        kind: PrincipalKind::parse(&kind)?,
        name,
        client_id,
        app_name,
        issuer,
        subject,
        secret_created_at: secret_at,
        created_at: created,
        updated_at: updated,
    })
}

/// What a new principal is.
pub struct NewPrincipal<'a> {
    pub kind: PrincipalKind,
    pub name: &'a str,
    pub app_name: Option<&'a str>,
    pub issuer: Option<&'a str>,
    pub subject: Option<&'a str>,
}

impl<'a> NewPrincipal<'a> {
    /// A principal that is neither an app's identity nor an external user.
    pub fn named(kind: PrincipalKind, name: &'a str) -> NewPrincipal<'a> {
        NewPrincipal {
            kind,
            name,
            app_name: None,
            issuer: None,
            subject: None,
        }
    }
}

/// Creates the principal, or returns the existing one of that kind and name unchanged
/// (`created` false). Ids are random, so a deleted and recreated identity is a new principal
/// that inherits none of the old one's assignments or tokens.
pub async fn ensure(
    tx: &mut Tx,
    tenant: &TenantId,
    new: &NewPrincipal<'_>,
) -> Result<(PrincipalRecord, bool), StoreError> {
    measured(Operation::PrincipalsEnsure, async move {
        let inserted: Option<Row> = sqlx::query_as(concat!(
            "insert into principals (id, tenant_id, kind, name, client_id, app_name, issuer, subject)
             values ($1, $2, $3, $4, $5, $6, $7, $8)
             on conflict (tenant_id, kind, name) do nothing
             returning ",
            columns!()
        ))
        .bind(Uuid::new_v4())
        .bind(tenant.as_str())
        .bind(new.kind.as_str())
        .bind(new.name)
        .bind(Uuid::new_v4())
        .bind(new.app_name)
        .bind(new.issuer)
        .bind(new.subject)
        .fetch_optional(&mut **tx)
        .await
        .map_err(external_conflict)?;
        match inserted {
            Some(row) => Ok((record(row)?, true)),
            None => {
                let existing = get(tx, tenant, new.kind, new.name)
                    .await?
                    .ok_or(StoreError::NotFound)?;
                Ok((existing, false))
            }
        }
    })
    .await
}

/// An external (issuer, subject) is registered once per tenant, so a token acts in a tenant as
/// one user; other tenants' registrations never conflict (nor show through a 409).
fn external_conflict(e: sqlx::Error) -> StoreError {
    on_violation(e, Violation::Named("principals_external"), || {
        StoreError::Conflict(
            "another user of this tenant is already registered with this issuer and subject".into(),
        )
    })
}

/// Updates an external user's issuer and subject.
pub async fn set_external(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
    issuer: &str,
    subject: &str,
) -> Result<PrincipalRecord, StoreError> {
    measured(Operation::PrincipalsSetExternal, async move {
        let row: Option<Row> = sqlx::query_as(concat!(
            "update principals set issuer = $3, subject = $4
             where tenant_id = $1 and id = $2 returning ",
            columns!()
        ))
        .bind(tenant.as_str())
        .bind(id)
        .bind(issuer)
        .bind(subject)
        .fetch_optional(&mut **tx)
        .await
        .map_err(external_conflict)?;
        record(row.ok_or(StoreError::NotFound)?)
    })
    .await
}

pub async fn get(
    tx: &mut Tx,
    tenant: &TenantId,
    kind: PrincipalKind,
    name: &str,
) -> Result<Option<PrincipalRecord>, StoreError> {
    measured(Operation::PrincipalsGet, async move {
        let row: Option<Row> = sqlx::query_as(concat!(
            "select ",
            columns!(),
            " from principals where tenant_id = $1 and kind = $2 and name = $3"
        ))
        .bind(tenant.as_str())
        .bind(kind.as_str())
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?;
        row.map(record).transpose()
    })
    .await
}

pub async fn by_id(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
) -> Result<Option<PrincipalRecord>, StoreError> {
    measured(Operation::PrincipalsById, async move {
        let row: Option<Row> = sqlx::query_as(concat!(
            "select ",
            columns!(),
            " from principals where tenant_id = $1 and id = $2"
        ))
        .bind(tenant.as_str())
        .bind(id)
        .fetch_optional(&mut **tx)
        .await?;
        row.map(record).transpose()
    })
    .await
}

/// The tenant's principals of one kind, by name.
pub async fn list(
    tx: &mut Tx,
    tenant: &TenantId,
    kind: PrincipalKind,
) -> Result<Vec<PrincipalRecord>, StoreError> {
    measured(Operation::PrincipalsList, async move {
        let rows: Vec<Row> = sqlx::query_as(concat!(
            "select ",
            columns!(),
            " from principals where tenant_id = $1 and kind = $2 order by name"
        ))
        .bind(tenant.as_str())
        .bind(kind.as_str())
        .fetch_all(&mut **tx)
        .await?;
        rows.into_iter().map(record).collect()
    })
    .await
}

/// Deletes the principal; its role assignments go with it.
pub async fn delete(
    tx: &mut Tx,
    tenant: &TenantId,
    kind: PrincipalKind,
    name: &str,
) -> Result<bool, StoreError> {
    measured(Operation::PrincipalsDelete, async move {
        let done =
            sqlx::query("delete from principals where tenant_id = $1 and kind = $2 and name = $3")
                .bind(tenant.as_str())
                .bind(kind.as_str())
                .bind(name)
                .execute(&mut **tx)
                .await?;
        Ok(done.rows_affected() > 0)
    })
    .await
}

/// The system-assigned identity of an app, if it has one.
pub async fn of_app(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
) -> Result<Option<PrincipalRecord>, StoreError> {
    measured(Operation::PrincipalsOfApp, async move {
        get(tx, tenant, PrincipalKind::SystemAssignedIdentity, app).await
    })
    .await
}

/// The app's own identities, as its outbound connections may use them (see
/// `shoal_domain::connection::outbound`): the system-assigned identity when `identity.type` has
/// one, the user-assigned identities it lists that exist, and the tenant's `allowHostIdentity`.
/// Rows are read in the tenant's transaction, so an identity of another tenant is never found,
/// whatever the app lists.
pub async fn app_identities(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    identity: &Identity,
) -> Result<AppIdentities, StoreError> {
    measured(Operation::PrincipalsAppIdentities, async move {
        let as_identity = |record: PrincipalRecord, user_assigned: Option<String>| AppIdentity {
            user_assigned,
            principal_id: record.id,
            client_id: record.client_id,
        };
        let system_assigned = match identity.kind {
            IdentityType::SystemAssigned | IdentityType::SystemAssignedUserAssigned => {
                of_app(tx, tenant, app).await?.map(|r| as_identity(r, None))
            }
            IdentityType::None | IdentityType::UserAssigned => None,
        };
        let mut user_assigned = Vec::new();
        for name in &identity.user_assigned_identities {
            if let Some(record) = get(tx, tenant, PrincipalKind::UserAssignedIdentity, name).await?
            {
                user_assigned.push(as_identity(record, Some(name.clone())));
            }
        }
        let host_identity_allowed = crate::tenants::get(tx, tenant.as_str())
            .await?
            .allow_host_identity;
        Ok(AppIdentities {
            system_assigned,
            user_assigned,
            host_identity_allowed,
        })
    })
    .await
}

/// Secrets are 256 random bits, so a plain SHA-256 is as strong as a slow hash here (there is
/// nothing to brute-force); comparison is constant-time.
pub fn hash_secret(secret: &str) -> String {
    let digest = Sha256::digest(secret.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Replaces the service principal's secret hash (the old secret stops working at commit).
pub async fn set_secret(
    tx: &mut Tx,
    tenant: &TenantId,
    id: Uuid,
    secret: &str,
) -> Result<PrincipalRecord, StoreError> {
    measured(Operation::PrincipalsSetSecret, async move {
        let row: Option<Row> = sqlx::query_as(concat!(
            "update principals set secret_hash = $3, secret_created_at = now()
             where tenant_id = $1 and id = $2 and kind = 'servicePrincipal' returning ",
            columns!()
        ))
        .bind(tenant.as_str())
        .bind(id)
        .bind(hash_secret(secret))
        .fetch_optional(&mut **tx)
        .await?;
        record(row.ok_or(StoreError::NotFound)?)
    })
    .await
}

/// Platform scope: the principal with this client id, if its secret matches. Only that one
/// row is visible to the lookup (see the `directory_lookup` policy).
pub async fn authenticate_client(
    tx: &mut Tx,
    client_id: Uuid,
    secret: &str,
) -> Result<Option<PrincipalRecord>, StoreError> {
    measured(Operation::PrincipalsAuthenticateClient, async move {
        sqlx::query("select set_config('shoal.lookup_client_id', $1, true)")
            .bind(client_id.to_string())
            .execute(&mut **tx)
            .await?;
        let row: Option<Row> = sqlx::query_as(concat!(
            "select ",
            columns!(),
            " from principals where client_id = $1 and secret_hash is not null"
        ))
        .bind(client_id)
        .fetch_optional(&mut **tx)
        .await?;
        let hash: Option<String> =
            sqlx::query_scalar("select secret_hash from principals where client_id = $1")
                .bind(client_id)
                .fetch_optional(&mut **tx)
                .await?
                .flatten();
        match (row, hash) {
            (Some(row), Some(hash))
                if constant_time_eq(hash.as_bytes(), hash_secret(secret).as_bytes()) =>
            {
                record(row).map(Some)
            }
            _ => Ok(None),
        }
    })
    .await
}

/// Platform scope: the users registered with this external issuer and subject, one per tenant
/// that registered it, by tenant name. Only those rows are visible to the lookup (see the
/// `directory_lookup` policy).
pub async fn find_external(
    tx: &mut Tx,
    issuer: &str,
    subject: &str,
) -> Result<Vec<PrincipalRecord>, StoreError> {
    measured(Operation::PrincipalsFindExternal, async move {
        sqlx::query(
            "select set_config('shoal.lookup_issuer', $1, true), set_config('shoal.lookup_subject', $2, true)",
        )
        .bind(issuer)
        .bind(subject)
        .execute(&mut **tx)
        .await?;
        let rows: Vec<Row> = sqlx::query_as(concat!(
            "select ",
            columns!(),
            " from principals where issuer = $1 and subject = $2 order by tenant_id"
        ))
        .bind(issuer)
        .bind(subject)
        .fetch_all(&mut **tx)
        .await?;
        rows.into_iter().map(record).collect()
    })
    .await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
