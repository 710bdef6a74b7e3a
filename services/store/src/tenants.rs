//! Tenants (platform scope): the unit of isolation and of quota.

use chrono::{DateTime, Utc};
use shoal_domain::tenants::TenantLimits;
use sqlx::Row;

use crate::conditional::{delete_checked, locked_etag};
use crate::metrics::{Operation, measured};
use crate::page::{Page, PageRequest};
use crate::{Etag, Precondition, StoreError, Tx, Written};

#[derive(Debug, Clone, PartialEq)]
pub struct TenantRecord {
    pub name: String,
    pub display_name: String,
    /// What a platform administrator set; absent limits are the platform's defaults.
    pub limits: TenantLimits,
    /// Connections may act as the worker host's identity (see migration 0008).
    pub allow_host_identity: bool,
    /// The egress policy's allowances for this tenant, as validated entries (migration 0011).
    pub egress_allow: Vec<String>,
    pub etag: Etag,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TenantWrite {
    pub display_name: String,
    pub limits: TenantLimits,
    pub allow_host_identity: bool,
    pub egress_allow: Vec<String>,
}

macro_rules! limit_columns {
    () => {
        "max_apps, max_instances, max_functions_per_app, max_settings_per_app, max_webhook_requests_per_second"
    };
}

macro_rules! tenant_columns {
    () => {
        concat!(
            "name, display_name, ",
            limit_columns!(),
            ", allow_host_identity, egress_allow, etag, created_at, updated_at"
        )
    };
}

/// Reads a tenant's ETag and locks its row (see `conditional`).
const LOCK: &str = "select etag from tenants where name = $1 for update";

fn from_row(row: &sqlx::postgres::PgRow) -> Result<TenantRecord, sqlx::Error> {
    Ok(TenantRecord {
        name: row.try_get("name")?,
        display_name: row.try_get("display_name")?,
        limits: limits_from_row(row)?,
        allow_host_identity: row.try_get("allow_host_identity")?,
        egress_allow: row.try_get("egress_allow")?,
        etag: row.try_get("etag")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

/// The limit columns, each absent or a count (the columns' checks keep them non-negative).
fn limits_from_row(row: &sqlx::postgres::PgRow) -> Result<TenantLimits, sqlx::Error> {
    let limit = |column: &str| -> Result<Option<u32>, sqlx::Error> {
        let value: Option<i32> = row.try_get(column)?;
        Ok(value.map(|v| u32::try_from(v).unwrap_or(0)))
    };
    Ok(TenantLimits {
        max_apps: limit("max_apps")?,
        max_instances: limit("max_instances")?,
        max_functions_per_app: limit("max_functions_per_app")?,
        max_settings_per_app: limit("max_settings_per_app")?,
        max_webhook_requests_per_second: limit("max_webhook_requests_per_second")?,
    })
}

/// The tenant's limits, read in a tenant's transaction; `lock` holds the tenant row until the
/// transaction ends, so concurrent creates counted against a limit cannot both slip under it.
pub async fn limits(tx: &mut Tx, name: &str, lock: bool) -> Result<TenantLimits, StoreError> {
    measured(Operation::TenantsLimits, async move {
        let query = match lock {
            true => concat!(
                "select ",
                limit_columns!(),
                " from tenants where name = $1 for update"
            ),
            false => concat!("select ", limit_columns!(), " from tenants where name = $1"),
        };
        let row = sqlx::query(query)
            .bind(name)
            .fetch_optional(&mut **tx)
            .await?
            .ok_or(StoreError::NotFound)?;
        Ok(limits_from_row(&row)?)
    })
    .await
}

pub async fn get(tx: &mut Tx, name: &str) -> Result<TenantRecord, StoreError> {
    measured(Operation::TenantsGet, async move {
        let row = sqlx::query(concat!(
            "select ",
            tenant_columns!(),
            " from tenants where name = $1"
        ))
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        Ok(from_row(&row)?)
    })
    .await
}

pub async fn exists(tx: &mut Tx, name: &str) -> Result<bool, StoreError> {
    measured(Operation::TenantsExists, async move {
        Ok(
            sqlx::query_scalar("select exists(select 1 from tenants where name = $1)")
                .bind(name)
                .fetch_one(&mut **tx)
                .await?,
        )
    })
    .await
}

pub async fn list(tx: &mut Tx, page: &PageRequest) -> Result<Page<TenantRecord>, StoreError> {
    measured(Operation::TenantsList, async move {
        let rows = sqlx::query(concat!(
            "select ",
            tenant_columns!(),
            " from tenants where ($1::text is null or name > $1) order by name limit $2"
        ))
        .bind(page.after.as_deref())
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut **tx)
        .await?;
        let items = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_rows(items, page.limit, |t| &t.name))
    })
    .await
}

/// Every tenant's name, for workers that host all running apps.
pub async fn all_names(tx: &mut Tx) -> Result<Vec<String>, StoreError> {
    measured(Operation::TenantsAllNames, async move {
        Ok(sqlx::query_scalar("select name from tenants order by name")
            .fetch_all(&mut **tx)
            .await?)
    })
    .await
}

/// Every tenant's name with its own instance quota (`maxInstances`; None: the platform's
/// default), for the scheduler.
pub async fn all_quotas(tx: &mut Tx) -> Result<Vec<(String, Option<u32>)>, StoreError> {
    measured(Operation::TenantsAllQuotas, async move {
        let rows = sqlx::query("select name, max_instances from tenants order by name")
            .fetch_all(&mut **tx)
            .await?;
        rows.iter()
            .map(|r| {
                let quota: Option<i32> = r.try_get("max_instances")?;
                Ok((
                    r.try_get("name")?,
                    quota.map(|q| u32::try_from(q).unwrap_or(0)),
                ))
            })
            .collect()
    })
    .await
}

/// The tenant's egress allowances (empty when the tenant does not exist), for the processes that
/// connect on its apps' behalf.
pub async fn egress_allow(tx: &mut Tx, name: &str) -> Result<Vec<String>, StoreError> {
    measured(Operation::TenantsEgressAllow, async move {
        let allow: Option<Vec<String>> =
            sqlx::query_scalar("select egress_allow from tenants where name = $1")
                .bind(name)
                .fetch_optional(&mut **tx)
                .await?;
        Ok(allow.unwrap_or_default())
    })
    .await
}

/// Creates or replaces a tenant, honouring the precondition.
pub async fn put(
    tx: &mut Tx,
    name: &str,
    write: &TenantWrite,
    precondition: Precondition,
) -> Result<(TenantRecord, Written), StoreError> {
    measured(Operation::TenantsPut, async move {
        let current = locked_etag(tx, LOCK, &[name]).await?;
        precondition.check(current)?;
        let etag = Etag::new_v4();
        let row = sqlx::query(concat!(
            "insert into tenants (name, display_name, max_apps, max_instances, etag, allow_host_identity, egress_allow,
                 max_functions_per_app, max_settings_per_app, max_webhook_requests_per_second)
             values ($1, $2, $3, $4, $5, $7, $8, $9, $10, $11)
             on conflict (name) do update set display_name = excluded.display_name,
                 max_apps = excluded.max_apps, max_instances = excluded.max_instances,
                 max_functions_per_app = excluded.max_functions_per_app,
                 max_settings_per_app = excluded.max_settings_per_app,
                 max_webhook_requests_per_second = excluded.max_webhook_requests_per_second,
                 allow_host_identity = excluded.allow_host_identity,
                 egress_allow = excluded.egress_allow, etag = excluded.etag
                 where tenants.etag is not distinct from $6
             returning ",
            tenant_columns!()
        ))
        .bind(name)
        .bind(&write.display_name)
        .bind(column(write.limits.max_apps))
        .bind(column(write.limits.max_instances))
        .bind(etag)
        .bind(current)
        .bind(write.allow_host_identity)
        .bind(&write.egress_allow)
        .bind(column(write.limits.max_functions_per_app))
        .bind(column(write.limits.max_settings_per_app))
        .bind(column(write.limits.max_webhook_requests_per_second))
        .fetch_optional(&mut **tx)
        .await?
        .ok_or_else(|| crate::lost_create_race(&precondition, &format!("tenant {name}")))?;
        let written = if current.is_some() {
            Written::Replaced
        } else {
            Written::Created
        };
        Ok((from_row(&row)?, written))
    })
    .await
}

/// A limit as its column holds it (limits are validated to at most 100000).
fn column(limit: Option<u32>) -> Option<i32> {
    limit.map(|v| i32::try_from(v).unwrap_or(i32::MAX))
}

/// Deletes a tenant and, by cascade, everything it owns.
pub async fn delete(tx: &mut Tx, name: &str, precondition: Precondition) -> Result<(), StoreError> {
    measured(Operation::TenantsDelete, async move {
        let delete = "delete from tenants where name = $1";
        delete_checked(tx, LOCK, delete, &[name], precondition).await
    })
    .await
}
