//! The bench's own database, created on the admin URL and dropped at the end, so a run never
//! sees another run's data and leaves nothing behind.

use anyhow::{Context, Result};
use sqlx::{AssertSqlSafe, Connection, PgConnection};
use url::Url;

pub struct BenchDatabase {
    admin_url: String,
    name: String,
    url: String,
}

impl BenchDatabase {
    pub async fn create(admin_url: &str) -> Result<BenchDatabase> {
        let name = format!(
            "shoal_bench_{}_{:08x}",
            std::process::id(),
            rand::random::<u32>()
        );
        let url = database_url(admin_url, &name)?;
        let mut admin = PgConnection::connect(admin_url)
            .await
            .context("cannot connect to DATABASE_URL")?;
        // The name is ours (letters, digits, underscores), never the user's.
        sqlx::query(AssertSqlSafe(format!("create database {name}")))
            .execute(&mut admin)
            .await
            .with_context(|| format!("cannot create database {name}"))?;
        admin.close().await?;
        Ok(BenchDatabase {
            admin_url: admin_url.to_owned(),
            name,
            url,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The role the store's connections switch to on this database, mirroring
    /// `services/store/src/pool.rs`: a superuser (or BYPASSRLS) login acts as `shoal_app`.
    pub async fn app_role(&self) -> Result<Option<String>> {
        let mut connection = PgConnection::connect(&self.url).await?;
        let bypasses: bool = sqlx::query_scalar(
            "select rolsuper or rolbypassrls from pg_roles where rolname = current_user",
        )
        .fetch_one(&mut connection)
        .await?;
        connection.close().await?;
        Ok(bypasses.then(|| "shoal_app".to_owned()))
    }

    /// `with (force)` ends sessions a killed server or pgbench may have left.
    pub async fn drop(self) -> Result<()> {
        let mut admin = PgConnection::connect(&self.admin_url).await?;
        let statement = format!("drop database if exists {} with (force)", self.name);
        sqlx::query(AssertSqlSafe(statement))
            .execute(&mut admin)
            .await
            .with_context(|| format!("cannot drop database {}", self.name))?;
        admin.close().await?;
        Ok(())
    }
}

/// The admin URL with its database replaced.
fn database_url(admin_url: &str, database: &str) -> Result<String> {
    let mut url = Url::parse(admin_url)
        .context("DATABASE_URL must be a URL (postgres://user@host:port/database)")?;
    url.set_path(&format!("/{database}"));
    Ok(url.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_url_replaces_only_the_database() {
        let cases = [
            (
                "postgres://postgres@127.0.0.1:5432/postgres",
                "postgres://postgres@127.0.0.1:5432/b",
            ),
            (
                "postgres://u:p@db:5432/x?sslmode=disable",
                "postgres://u:p@db:5432/b?sslmode=disable",
            ),
            (
                "postgres://postgres@127.0.0.1:5432",
                "postgres://postgres@127.0.0.1:5432/b",
            ),
        ];
        for (admin, expected) in cases {
            assert_eq!(database_url(admin, "b").unwrap(), expected, "{admin}");
        }
    }
}
