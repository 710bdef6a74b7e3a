//! Apps and their settings (tenant scope).
//!
//! The app's specification is kept as the tenant wrote it (minus settings), so merge patches
//! apply to what was written and documented defaults are computed on read. Settings live in
//! their own rows, every value sealed with the row's identity as associated data.

use chrono::{DateTime, Utc};
use sqlx::Row;

use crate::conditional::{delete_checked, locked_etag};
use crate::crypto::Cipher;
use crate::metrics::{Operation, measured};
use crate::page::{Page, PageRequest};
use crate::{Etag, Precondition, StoreError, TenantId, Tx, Written};

/// A setting as stored: the domain's shape, so the API's rules apply to it directly.
pub use shoal_domain::settings::StoredSetting as Setting;

#[derive(Debug, Clone, PartialEq)]
pub struct AppRecord {
    pub name: String,
    pub spec: serde_json::Value,
    /// Ordered by name, values decrypted.
    pub settings: Vec<Setting>,
    pub etag: Etag,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl AppRecord {
    /// The app as its writer sees it: the stored spec plus raw settings under `appSettings`.
    /// Merge patches apply to it and re-parsing it yields the app's full specification.
    pub fn written_document(&self) -> serde_json::Value {
        let mut doc = self.spec.clone();
        if let serde_json::Value::Object(map) = &mut doc {
            let settings: serde_json::Map<String, serde_json::Value> = self
                .settings
                .iter()
                .map(|s| (s.name.clone(), serde_json::Value::String(s.value.clone())))
                .collect();
            map.insert("appSettings".into(), serde_json::Value::Object(settings));
        }
        doc
    }
}

/// One statement reads an app with all its settings, so a GET is a single round trip
/// inside its transaction.
macro_rules! app_select {
    () => {
        "
    select a.name, a.spec, a.etag, a.created_at, a.updated_at, s.names, s.vals, s.secrets
    from apps a
    cross join lateral (
        select coalesce(array_agg(name order by name), '{}') as names,
               coalesce(array_agg(value order by name), '{}') as vals,
               coalesce(array_agg(secret order by name), '{}') as secrets
        from app_settings
        where tenant_id = a.tenant_id and app_name = a.name
    ) s"
    };
}

/// Reads an app's ETag and locks its row (see `conditional`).
const LOCK: &str = "select etag from apps where tenant_id = $1 and name = $2 for update";

fn setting_aad(tenant: &TenantId, app: &str, name: &str) -> String {
    format!("app-setting/{tenant}/{app}/{name}")
}

fn from_row(
    row: &sqlx::postgres::PgRow,
    tenant: &TenantId,
    cipher: &Cipher,
) -> Result<AppRecord, StoreError> {
    let name: String = row.try_get("name")?;
    let names: Vec<String> = row.try_get("names")?;
    let values: Vec<Vec<u8>> = row.try_get("vals")?;
    let secrets: Vec<bool> = row.try_get("secrets")?;
    let settings = names
        .into_iter()
        .zip(values)
        .zip(secrets)
        .map(|((setting, sealed), secret)| {
            let value = cipher.decrypt_string(&sealed, &setting_aad(tenant, &name, &setting))?;
            Ok(Setting {
                name: setting,
                value,
                secret,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    Ok(AppRecord {
        spec: row.try_get("spec")?,
        etag: row.try_get("etag")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        name,
        settings,
    })
}

#[tracing::instrument(level = "debug", skip_all, fields(tenant = %tenant, app = name))]
pub async fn get(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    name: &str,
) -> Result<AppRecord, StoreError> {
    measured(Operation::AppsGet, async move {
        let row = sqlx::query(concat!(
            app_select!(),
            " where a.tenant_id = $1 and a.name = $2"
        ))
        .bind(tenant.as_str())
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?
        .ok_or(StoreError::NotFound)?;
        from_row(&row, tenant, cipher)
    })
    .await
}

/// Reads one app in a single statement outside any transaction: `shoal_read_app` sets the
/// tenant for the statement's implicit transaction, so row-level security applies as in
/// [`get`] at a quarter of the round trips. Used by the API's hot read path.
#[tracing::instrument(level = "debug", skip_all, fields(tenant = %tenant, app = name))]
pub async fn read(
    pool: &sqlx::PgPool,
    tenant: &TenantId,
    cipher: &Cipher,
    name: &str,
) -> Result<AppRecord, StoreError> {
    measured(Operation::AppsRead, async move {
        let row = sqlx::query("select * from shoal_read_app($1, $2)")
            .bind(tenant.as_str())
            .bind(name)
            .fetch_optional(pool)
            .await?
            .ok_or(StoreError::NotFound)?;
        from_row(&row, tenant, cipher)
    })
    .await
}

pub async fn exists(tx: &mut Tx, tenant: &TenantId, name: &str) -> Result<bool, StoreError> {
    measured(Operation::AppsExists, async move {
        Ok(sqlx::query_scalar(
            "select exists(select 1 from apps where tenant_id = $1 and name = $2)",
        )
        .bind(tenant.as_str())
        .bind(name)
        .fetch_one(&mut **tx)
        .await?)
    })
    .await
}

pub async fn list(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    page: &PageRequest,
) -> Result<Page<AppRecord>, StoreError> {
    measured(Operation::AppsList, async move {
        let rows = sqlx::query(concat!(
            app_select!(),
            " where a.tenant_id = $1 and ($2::text is null or a.name > $2)
             order by a.name limit $3"
        ))
        .bind(tenant.as_str())
        .bind(page.after.as_deref())
        .bind(i64::from(page.limit) + 1)
        .fetch_all(&mut **tx)
        .await?;
        let items = rows
            .iter()
            .map(|r| from_row(r, tenant, cipher))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Page::from_rows(items, page.limit, |a| &a.name))
    })
    .await
}

/// Every app of a tenant, for workers hosting them (a tenant has a bounded number of apps:
/// its `maxApps` quota).
pub async fn all_of_tenant(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
) -> Result<Vec<AppRecord>, StoreError> {
    measured(Operation::AppsAllOfTenant, async move {
        let rows = sqlx::query(concat!(
            app_select!(),
            " where a.tenant_id = $1 order by a.name"
        ))
        .bind(tenant.as_str())
        .fetch_all(&mut **tx)
        .await?;
        rows.iter().map(|r| from_row(r, tenant, cipher)).collect()
    })
    .await
}

/// Every app's name and ETag (settings changes change the app's ETag too), ordered by name:
/// the scheduler re-reads only apps whose ETag moved.
pub async fn versions_of_tenant(
    tx: &mut Tx,
    tenant: &TenantId,
) -> Result<Vec<(String, Etag)>, StoreError> {
    measured(Operation::AppsVersionsOfTenant, async move {
        Ok(
            sqlx::query_as("select name, etag from apps where tenant_id = $1 order by name")
                .bind(tenant.as_str())
                .fetch_all(&mut **tx)
                .await?,
        )
    })
    .await
}

/// Creates or replaces an app and all its settings, honouring the precondition. The tenant's
/// quotas are the caller's to check (the API does, with the platform's defaults).
#[tracing::instrument(level = "debug", skip_all, fields(tenant = %tenant, app = name))]
pub async fn put(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    name: &str,
    spec: &serde_json::Value,
    settings: &[Setting],
    precondition: Precondition,
) -> Result<(AppRecord, Written), StoreError> {
    measured(Operation::AppsPut, async move {
        let current = locked_etag(tx, LOCK, &[tenant.as_str(), name]).await?;
        precondition.check(current)?;
        let wrote: Option<i32> = sqlx::query_scalar(
            "insert into apps (tenant_id, name, spec, etag) values ($1, $2, $3, $4)
             on conflict (tenant_id, name) do update set spec = excluded.spec, etag = excluded.etag
                 where apps.etag is not distinct from $5
             returning 1",
        )
        .bind(tenant.as_str())
        .bind(name)
        .bind(spec)
        .bind(Etag::new_v4())
        .bind(current)
        .fetch_optional(&mut **tx)
        .await?;
        if wrote.is_none() {
            return Err(crate::lost_create_race(
                &precondition,
                &format!("app {name}"),
            ));
        }
        replace_settings(tx, tenant, cipher, name, settings).await?;
        let record = get(tx, tenant, cipher, name).await?;
        let written = if current.is_some() {
            Written::Replaced
        } else {
            Written::Created
        };
        Ok((record, written))
    })
    .await
}

/// How many apps the tenant has (for its `maxApps` quota; the caller locks the tenant row with
/// `tenants::limits` first, so concurrent creates are counted one after the other).
pub async fn count(tx: &mut Tx, tenant: &TenantId) -> Result<u32, StoreError> {
    measured(Operation::AppsCount, async move {
        let count: i64 = sqlx::query_scalar("select count(*) from apps where tenant_id = $1")
            .bind(tenant.as_str())
            .fetch_one(&mut **tx)
            .await?;
        Ok(u32::try_from(count).unwrap_or(u32::MAX))
    })
    .await
}

async fn replace_settings(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    app: &str,
    settings: &[Setting],
) -> Result<(), StoreError> {
    sqlx::query("delete from app_settings where tenant_id = $1 and app_name = $2")
        .bind(tenant.as_str())
        .bind(app)
        .execute(&mut **tx)
        .await?;
    if settings.is_empty() {
        return Ok(());
    }
    let names: Vec<&str> = settings.iter().map(|s| s.name.as_str()).collect();
    let secrets: Vec<bool> = settings.iter().map(|s| s.secret).collect();
    let values = settings
        .iter()
        .map(|s| cipher.encrypt(s.value.as_bytes(), &setting_aad(tenant, app, &s.name)))
        .collect::<Result<Vec<_>, _>>()?;
    sqlx::query(
        "insert into app_settings (tenant_id, app_name, name, value, secret)
         select $1, $2, n, v, s from unnest($3::text[], $4::bytea[], $5::bool[]) as t(n, v, s)",
    )
    .bind(tenant.as_str())
    .bind(app)
    .bind(names)
    .bind(values)
    .bind(secrets)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes an app with its settings and functions.
pub async fn delete(
    tx: &mut Tx,
    tenant: &TenantId,
    name: &str,
    precondition: Precondition,
) -> Result<(), StoreError> {
    measured(Operation::AppsDelete, async move {
        let delete = "delete from apps where tenant_id = $1 and name = $2";
        delete_checked(tx, LOCK, delete, &[tenant.as_str(), name], precondition).await
    })
    .await
}
