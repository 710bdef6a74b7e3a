//! `shoal dev`'s private Postgres cluster, against the installed server binaries.

use std::os::unix::fs::PermissionsExt;

#[path = "../src/dev/postgres.rs"]
mod postgres;

use postgres::PrivateCluster;
use sqlx::Connection;

#[tokio::test]
async fn private_cluster_starts_serves_and_stops() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    // When the test runs as root the server runs as `postgres`, which must reach the data dir.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    let data_dir = dir.path().join("pg");

    let cluster = PrivateCluster::start(&data_dir).await?;
    let url = cluster.database_url();
    let mut connection = sqlx::PgConnection::connect(&url).await?;
    let one: i32 = sqlx::query_scalar("select 1")
        .fetch_one(&mut connection)
        .await?;
    connection.close().await?;
    cluster.stop().await?;

    assert_eq!(one, 1);
    assert!(url.ends_with("/shoal"), "{url}");
    assert!(
        !data_dir.join("postmaster.pid").exists(),
        "server still running"
    );
    Ok(())
}

#[tokio::test]
async fn private_cluster_restarts_on_its_url_despite_a_stale_pid_file() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))?;
    let data_dir = dir.path().join("pg");

    let first = PrivateCluster::start(&data_dir).await?;
    let first_url = first.database_url();
    first.stop().await?;
    // A server killed without cleaning up leaves its pid file; after a reboot the PID may
    // belong to some other process (here: this test).
    let stale = format!("{}\n{}\n", std::process::id(), data_dir.display());
    std::fs::write(data_dir.join("postmaster.pid"), &stale)?;
    let port = first_url
        .trim_end_matches("/shoal")
        .rsplit(':')
        .next()
        .unwrap_or_default();
    std::fs::write(data_dir.join(format!(".s.PGSQL.{port}.lock")), &stale)?;
    let second = PrivateCluster::start(&data_dir).await?;
    let second_url = second.database_url();
    second.stop().await?;

    assert_eq!(first_url, second_url);
    Ok(())
}
