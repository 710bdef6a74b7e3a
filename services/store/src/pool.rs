//! Connecting to Postgres and migrating it.

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Executor, PgPool};

use crate::StoreError;

/// The role every application connection acts as (created by the first migration).
macro_rules! app_role {
    () => {
        "shoal_app"
    };
}
pub const APP_ROLE: &str = app_role!();

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

#[derive(Debug, Clone)]
pub struct PoolConfig {
    pub max_connections: u32,
    pub acquire_timeout: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            max_connections: default_max_connections(),
            acquire_timeout: Duration::from_secs(3),
        }
    }
}

/// Two connections per core this process may use, at least four. Requests queue in the pool
/// (cheap) rather than as extra Postgres backends competing for the same cores: on a 2-core
/// host running Postgres too, 4 connections served more GETs at a lower p99 than 32 (see
/// README, Benchmarks). Raise it with `SHOAL_DB_MAX_CONNECTIONS` for a remote, larger Postgres.
pub fn default_max_connections() -> u32 {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    u32::try_from(cores * 2).unwrap_or(64).clamp(4, 64)
}

/// Opens the application pool. Connections made as a superuser (or a role with BYPASSRLS)
/// switch to [`APP_ROLE`], because such roles ignore row-level security and tenant isolation
/// would silently be single-layered. The pool connects lazily so the API can start (and
/// answer `/readyz` with 503) while Postgres is still down.
pub fn connect_lazy(url: &str, config: &PoolConfig) -> Result<PgPool, StoreError> {
    let options: PgConnectOptions = url.parse().map_err(StoreError::Database)?;
    Ok(PgPoolOptions::new()
        .max_connections(config.max_connections)
        .acquire_timeout(config.acquire_timeout)
        .after_connect(|conn, _meta| {
            Box::pin(async move {
                let bypasses: bool = sqlx::query_scalar(
                    "select rolsuper or rolbypassrls from pg_roles where rolname = current_user",
                )
                .fetch_one(&mut *conn)
                .await?;
                if bypasses {
                    conn.execute(concat!("set role ", app_role!())).await?;
                }
                Ok(())
            })
        })
        .connect_lazy_with(options))
}

/// Applies pending migrations on a dedicated connection (as the connecting user, which must
/// own the schema), never through the application pool's restricted role.
pub async fn migrate(url: &str) -> Result<(), StoreError> {
    let pool = PgPoolOptions::new().max_connections(1).connect(url).await?;
    MIGRATOR.run(&pool).await.map_err(|e| match e {
        sqlx::migrate::MigrateError::Execute(err) => StoreError::from(err),
        other => StoreError::Corrupt(format!("migration failed: {other}")),
    })?;
    pool.close().await;
    Ok(())
}

/// True when a trivial query succeeds: what `/readyz` reports.
pub async fn is_ready(pool: &PgPool) -> bool {
    sqlx::query("select 1").execute(pool).await.is_ok()
}
