//! Functions of an app (tenant scope): the `function.json` bindings as written, `disabled`
//! and `retry`.

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::conditional::{delete_checked, locked_etag};
use crate::error::{Violation, on_violation};
use crate::metrics::{Operation, measured};
use crate::page::{Page, PageRequest};
use crate::{Etag, Precondition, StoreError, TenantId, Tx, Written};

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionRecord {
    pub app: String,
    pub name: String,
    pub spec: serde_json::Value,
    pub etag: Etag,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

macro_rules! function_columns {
    () => {
        "app_name, name, spec, etag, created_at, updated_at"
    };
}

/// Reads a function's ETag and locks its row (see `conditional`).
const LOCK: &str =
    "select etag from functions where tenant_id = $1 and app_name = $2 and name = $3 for update";

fn from_row(row: &sqlx::postgres::PgRow) -> Result<FunctionRecord, sqlx::Error> {
    Ok(FunctionRecord {
        app: row.try_get("app_name")?,
        name: row.try_get("name")?,
        spec: row.try_get("spec")?,
        etag: row.try_get("etag")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
    })
}

pub async fn get(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    name: &str,
) -> Result<FunctionRecord, StoreError> {
    measured(Operation::FunctionsGet, async move {
        let row = sqlx::query(concat!(
            "select ",
            function_columns!(),
            " from functions where tenant_id = $1 and app_name = $2 and name = $3"
        ))
        .bind(tenant.as_str())
        .bind(app)
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        Ok(from_row(&row)?)
    })
    .await
}

pub async fn list(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    page: &PageRequest,
) -> Result<Page<FunctionRecord>, StoreError> {
    measured(Operation::FunctionsList, async move {
        let rows = sqlx::query(concat!(
            "select ",
            function_columns!(),
            " from functions
             where tenant_id = $1 and app_name = $2 and ($3::text is null or name > $3)
             order by name limit $4"
        ))
        .bind(tenant.as_str())
        .bind(app)
        .bind(page.after.as_deref())
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut **tx)
        .await?;
        let items = rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_rows(items, page.limit, |f| &f.name))
    })
    .await
}

/// Every function of an app, for diagnostics (an app has a bounded number of functions).
pub async fn all_of_app(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
) -> Result<Vec<FunctionRecord>, StoreError> {
    measured(Operation::FunctionsAllOfApp, async move {
        let rows = sqlx::query(concat!(
            "select ",
            function_columns!(),
            " from functions where tenant_id = $1 and app_name = $2 order by name"
        ))
        .bind(tenant.as_str())
        .bind(app)
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?)
    })
    .await
}

/// Every function's app and ETag, ordered by app and name (see `apps::versions_of_tenant`).
pub async fn versions_of_tenant(
    tx: &mut Tx,
    tenant: &TenantId,
) -> Result<Vec<(String, Etag)>, StoreError> {
    measured(Operation::FunctionsVersionsOfTenant, async move {
        Ok(sqlx::query_as(
            "select app_name, etag from functions where tenant_id = $1 order by app_name, name",
        )
        .bind(tenant.as_str())
        .fetch_all(&mut **tx)
        .await?)
    })
    .await
}

/// Every function of a tenant, ordered by app and name, for the scheduler (one query per
/// tenant instead of one per app).
pub async fn all_of_tenant(
    tx: &mut Tx,
    tenant: &TenantId,
) -> Result<Vec<FunctionRecord>, StoreError> {
    measured(Operation::FunctionsAllOfTenant, async move {
        let rows = sqlx::query(concat!(
            "select ",
            function_columns!(),
            " from functions where tenant_id = $1 order by app_name, name"
        ))
        .bind(tenant.as_str())
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?)
    })
    .await
}

/// The functions of some apps of a tenant, ordered by app and name (one query for a page of
/// the apps list).
pub async fn all_of_apps(
    tx: &mut Tx,
    tenant: &TenantId,
    apps: &[String],
) -> Result<Vec<FunctionRecord>, StoreError> {
    measured(Operation::FunctionsAllOfApps, async move {
        let rows = sqlx::query(concat!(
            "select ",
            function_columns!(),
            " from functions where tenant_id = $1 and app_name = any($2) order by app_name, name"
        ))
        .bind(tenant.as_str())
        .bind(apps)
        .fetch_all(&mut **tx)
        .await?;
        Ok(rows.iter().map(from_row).collect::<Result<Vec<_>, _>>()?)
    })
    .await
}

/// Creates or replaces a function. The app must exist (NotFound otherwise).
/// How many functions the app has (for the tenant's `maxFunctionsPerApp`; the caller locks
/// the app's row first with [`lock_app`], so concurrent creates are counted one after the other).
pub async fn count_of_app(tx: &mut Tx, tenant: &TenantId, app: &str) -> Result<u32, StoreError> {
    measured(Operation::FunctionsCountOfApp, async move {
        let count: i64 = sqlx::query_scalar(
            "select count(*) from functions where tenant_id = $1 and app_name = $2",
        )
        .bind(tenant.as_str())
        .bind(app)
        .fetch_one(&mut **tx)
        .await?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    })
    .await
}

/// Holds the app's row until the transaction ends; `NotFound` when there is no such app.
pub async fn lock_app(tx: &mut Tx, tenant: &TenantId, app: &str) -> Result<(), StoreError> {
    measured(Operation::FunctionsLockApp, async move {
        sqlx::query("select 1 from apps where tenant_id = $1 and name = $2 for update")
            .bind(tenant.as_str())
            .bind(app)
            .fetch_optional(&mut **tx)
            .await?
            .map(|_| ())
            .ok_or(StoreError::NotFound)
    })
    .await
}

pub async fn put(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    name: &str,
    spec: &serde_json::Value,
    precondition: Precondition,
) -> Result<(FunctionRecord, Written), StoreError> {
    measured(Operation::FunctionsPut, async move {
        let current = locked_etag(tx, LOCK, &[tenant.as_str(), app, name]).await?;
        precondition.check(current)?;
        let row = sqlx::query(concat!("insert into functions (tenant_id, app_name, name, spec, etag) values ($1, $2, $3, $4, $5)
             on conflict (tenant_id, app_name, name) do update set spec = excluded.spec, etag = excluded.etag
                 where functions.etag is not distinct from $6
             returning ", function_columns!()))
        .bind(tenant.as_str())
        .bind(app)
        .bind(name)
        .bind(spec)
        .bind(Etag::new_v4())
        .bind(current)
        .fetch_optional(&mut **tx)
        .await
        // The app was deleted in between.
        .map_err(|e| on_violation(e, Violation::ForeignKey, || StoreError::NotFound))?
        .ok_or_else(|| crate::lost_create_race(&precondition, &format!("function {name}")))?;
        let written = if current.is_some() {
            Written::Replaced
        } else {
            Written::Created
        };
        Ok((from_row(&row)?, written))
    })
    .await
}

pub async fn delete(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    name: &str,
    precondition: Precondition,
) -> Result<(), StoreError> {
    measured(Operation::FunctionsDelete, async move {
        let delete = "delete from functions where tenant_id = $1 and app_name = $2 and name = $3";
        delete_checked(
            tx,
            LOCK,
            delete,
            &[tenant.as_str(), app, name],
            precondition,
        )
        .await
    })
    .await
}
