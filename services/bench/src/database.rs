//! What the bench needs to know about its database beyond creating and dropping it
//! (`shoal_testkit::ScratchDatabase` does that).

use anyhow::Result;
use sqlx::{Connection, PgConnection};

/// The role the store's connections switch to on this database, mirroring
/// `services/store/src/pool.rs`: a superuser (or BYPASSRLS) login acts as `shoal_app`.
pub async fn app_role(url: &str) -> Result<Option<String>> {
    let mut connection = PgConnection::connect(url).await?;
    let bypasses: bool = sqlx::query_scalar(
        "select rolsuper or rolbypassrls from pg_roles where rolname = current_user",
    )
    .fetch_one(&mut connection)
    .await?;
    connection.close().await?;
    Ok(bypasses.then(|| "shoal_app".to_owned()))
}
