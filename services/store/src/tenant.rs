use shoal_domain::names::TenantName;

use crate::{StoreError, Tx};

/// The tenant a repository call acts for. Tenant-scoped repository functions take one, so no
/// query can forget the tenant; [`begin_tenant`] also sets it for row-level security.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TenantId(TenantName);

impl TenantId {
    pub fn new(name: TenantName) -> Self {
        TenantId(name)
    }

    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl std::fmt::Display for TenantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Begins a transaction scoped to `tenant`: row-level security sees only its rows until
/// commit or rollback (`set_config(…, true)` is transaction-local).
pub async fn begin_tenant(pool: &sqlx::PgPool, tenant: &TenantId) -> Result<Tx, StoreError> {
    let mut tx = pool.begin().await?;
    act_for(&mut tx, tenant.as_str()).await?;
    Ok(tx)
}

/// Begins a platform-scoped transaction: no tenant is set, so tenant-scoped tables show no rows.
pub async fn begin_platform(pool: &sqlx::PgPool) -> Result<Tx, StoreError> {
    Ok(pool.begin().await?)
}

/// Acts for `tenant` from here on in a platform transaction that writes several tenants' rows
/// (a worker's telemetry flush): row-level security then shows only that tenant's rows and
/// accepts only its writes (transaction-local); `""` acts for none again.
pub(crate) async fn act_for(tx: &mut Tx, tenant: &str) -> Result<(), StoreError> {
    sqlx::query("select set_config('shoal.tenant_id', $1, true)")
        .bind(tenant)
        .execute(&mut **tx)
        .await?;
    Ok(())
}
