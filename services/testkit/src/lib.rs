//! Support for tests and benchmarks that need real services: a throwaway Postgres database on
//! the server `DATABASE_URL` names (an admin connection that may create databases), dropped
//! afterwards so runs never see each other's data and leave nothing behind; Azurite's queue
//! service ([`azurite`], from the dev stack), started in memory per test on a free port; a
//! recording function-app handler ([`handler`]) that answers as a test tells it to; and a
//! Kafka-protocol broker ([`kafka`], tansu), started per test on a free port.

/// Azurite and the Entra stand-in live in the dev stack `shoal dev` uses too, as does the
/// throwaway certificate authority ([`tls`]) of TLS endpoints.
pub use shoal_devstack::{azurite, tls};
pub mod flood;
pub mod handler;
pub mod kafka;
pub mod otlp;
pub mod proxy;
pub mod python;
pub mod rabbitmq;

use anyhow::{Context, Result};
use sqlx::{AssertSqlSafe, Connection, PgConnection};

/// Where the tests look when `DATABASE_URL` is unset: the local server with trust auth.
/// What the suites allow beyond public addresses: their handlers listen on loopback. Shoal's
/// processes are strict by default, so every suite says this explicitly
/// (`SHOAL_EGRESS_ALLOW` for spawned processes, the configs' allow lists in process).
pub const EGRESS_ALLOW_LOOPBACK: &str = "127.0.0.0/8,::1";

/// This machine's host name, for tests of names that pass every check of their text and resolve
/// to a refused address: on this machine kind it resolves to 127.0.0.1 through /etc/hosts.
/// Panics, saying so, where it does not.
pub fn loopback_host_name() -> String {
    use std::net::ToSocketAddrs;
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("/proc/sys/kernel/hostname")
        .trim()
        .to_owned();
    let resolved: Vec<_> = (name.as_str(), 80)
        .to_socket_addrs()
        .map(Iterator::collect)
        .unwrap_or_default();
    assert!(
        resolved
            .iter()
            .any(|a: &std::net::SocketAddr| a.ip().is_loopback()),
        "the test needs the host name {name} to resolve to loopback, as it does on this machine \
         kind (/etc/hosts); it resolved to {resolved:?}"
    );
    name
}

pub const DEFAULT_ADMIN_URL: &str = "postgres://postgres@127.0.0.1:5432/postgres";

pub fn admin_url() -> String {
    std::env::var("DATABASE_URL").unwrap_or_else(|_| DEFAULT_ADMIN_URL.to_string())
}

/// `admin_url` with its database replaced.
pub fn database_url(admin_url: &str, database: &str) -> Result<String> {
    let mut url = url::Url::parse(admin_url)
        .context("DATABASE_URL must be a URL (postgres://user@host:port/database)")?;
    url.set_path(&format!("/{database}"));
    Ok(url.into())
}

/// A database created for one test or benchmark run. Dropping the value drops the database
/// (`with (force)`, ending sessions a killed server may have left); [`ScratchDatabase::drop_now`]
/// does it asynchronously and reports failures.
pub struct ScratchDatabase {
    admin_url: String,
    name: String,
    url: String,
    dropped: bool,
}

impl ScratchDatabase {
    /// Creates `<prefix>_<random>` on the server `admin_url` names.
    pub async fn create(admin_url: &str, prefix: &str) -> Result<ScratchDatabase> {
        let name = format!(
            "{prefix}_{}_{:08x}",
            std::process::id(),
            rand::random::<u32>()
        );
        let url = database_url(admin_url, &name)?;
        let mut admin = PgConnection::connect(admin_url)
            .await
            .context("cannot connect to DATABASE_URL")?;
        // The name is ours (letters, digits, underscores), never a user's.
        sqlx::query(AssertSqlSafe(format!("create database {name}")))
            .execute(&mut admin)
            .await
            .with_context(|| format!("cannot create database {name}"))?;
        admin.close().await?;
        Ok(ScratchDatabase {
            admin_url: admin_url.to_owned(),
            name,
            url,
            dropped: false,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    pub async fn drop_now(mut self) -> Result<()> {
        self.dropped = true;
        drop_database(&self.admin_url, &self.name).await
    }
}

async fn drop_database(admin_url: &str, name: &str) -> Result<()> {
    let mut admin = PgConnection::connect(admin_url).await?;
    sqlx::query(AssertSqlSafe(format!(
        "drop database if exists {name} with (force)"
    )))
    .execute(&mut admin)
    .await
    .with_context(|| format!("cannot drop database {name}"))?;
    admin.close().await?;
    Ok(())
}

impl Drop for ScratchDatabase {
    fn drop(&mut self) {
        if self.dropped {
            return;
        }
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop cannot await, and may run inside a runtime: use a thread with its own.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(drop_database(&admin_url, &name)).ok()
        })
        .join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_url_replaces_only_the_database() {
        assert_eq!(
            database_url("postgres://postgres@127.0.0.1:5432/postgres", "x").unwrap(),
            "postgres://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            database_url("postgres://u:p@db:6543/admin?sslmode=disable", "x").unwrap(),
            "postgres://u:p@db:6543/x?sslmode=disable"
        );
        assert!(database_url("not a url", "x").is_err());
    }
}
