//! What several store tests start from, written once.

use serde_json::json;
use shoal_domain::names::TenantName;
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{PoolConfig, connect_lazy, migrate};
use shoal_store::tenants::TenantWrite;
use shoal_store::{Precondition, TenantId, apps, begin_platform, begin_tenant, commit, tenants};
use shoal_testkit::ScratchDatabase;

/// A migrated scratch database (dropped with the first value), the application pool on it,
/// and a fresh cipher for app settings.
pub async fn scratch(
    config: &PoolConfig,
) -> anyhow::Result<(ScratchDatabase, sqlx::PgPool, Cipher)> {
    let db = ScratchDatabase::create(&shoal_testkit::admin_url(), "shoal_store").await?;
    migrate(db.url()).await?;
    let pool = connect_lazy(db.url(), config)?;
    Ok((db, pool, Cipher::new(&SecretKey::generate())))
}

/// Tenant `name` with one app, `orders`, whose handler is at `http://h.example`.
pub async fn tenant_with_app(
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    name: &str,
) -> anyhow::Result<TenantId> {
    let mut tx = begin_platform(pool).await?;
    let write = TenantWrite {
        display_name: name.to_string(),
        limits: Default::default(),
        allow_host_identity: false,
        egress_allow: Vec::new(),
    };
    tenants::put(&mut tx, name, &write, Precondition::None).await?;
    commit(tx).await?;
    let id = TenantId::new(TenantName::parse(name).map_err(anyhow::Error::msg)?);
    let mut tx = begin_tenant(pool, &id).await?;
    let spec = json!({"handler": {"url": "http://h.example"}});
    apps::put(
        &mut tx,
        &id,
        cipher,
        "orders",
        &spec,
        &[],
        Precondition::None,
    )
    .await?;
    commit(tx).await?;
    Ok(id)
}
