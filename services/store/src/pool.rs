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

/// A Postgres URL that may hold a password: `Debug` and `Display` show it with the password
/// replaced, so a configuration struct that derives `Debug` cannot print it.
#[derive(Clone, PartialEq, Eq)]
pub struct DatabaseUrl(String);

impl DatabaseUrl {
    pub fn new(url: impl Into<String>) -> DatabaseUrl {
        DatabaseUrl(url.into())
    }

    /// The URL itself, password included: only for connecting.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL with any password replaced by `****` (and, if it does not parse, nothing of it).
    pub fn redacted(&self) -> String {
        match url::Url::parse(&self.0) {
            Ok(mut url) => {
                if url.password().is_some() {
                    let _ = url.set_password(Some("****"));
                }
                // A password may also travel as a query parameter.
                if url
                    .query_pairs()
                    .any(|(k, _)| k.eq_ignore_ascii_case("password"))
                {
                    url.set_query(Some("password=****"));
                }
                url.to_string()
            }
            Err(_) => "<unparsable database URL>".to_owned(),
        }
    }
}

impl std::fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatabaseUrl({})", self.redacted())
    }
}

impl std::fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl std::str::FromStr for DatabaseUrl {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(DatabaseUrl::new(s))
    }
}

impl From<String> for DatabaseUrl {
    fn from(url: String) -> Self {
        DatabaseUrl(url)
    }
}

impl From<&str> for DatabaseUrl {
    fn from(url: &str) -> Self {
        DatabaseUrl(url.to_owned())
    }
}

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
/// docs/benchmarks.md). Raise it with `SHOAL_DB_MAX_CONNECTIONS` for a remote, larger Postgres.
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

#[cfg(test)]
mod tests {
    use super::DatabaseUrl;

    #[test]
    fn debug_and_display_never_show_the_password() {
        let cases = [
            (
                "postgres://shoal:hunter2-secret@db.example.com:5432/shoal",
                "postgres://shoal:****@db.example.com:5432/shoal",
            ),
            (
                "postgres://shoal@db/shoal?password=hunter2-secret&sslmode=require",
                "postgres://shoal@db/shoal?password=****",
            ),
            (
                "postgres://postgres@127.0.0.1:5432/postgres",
                "postgres://postgres@127.0.0.1:5432/postgres",
            ),
            ("not a url hunter2-secret", "<unparsable database URL>"),
        ];
        for (url, shown) in cases {
            let url = DatabaseUrl::new(url);
            assert_eq!(url.to_string(), shown);
            assert_eq!(format!("{url:?}"), format!("DatabaseUrl({shown})"));
            assert!(!format!("{url:?}").contains("hunter2"));
        }
        assert!(
            DatabaseUrl::new("postgres://u:hunter2-secret@h/d")
                .expose()
                .contains("hunter2")
        );
    }
}
