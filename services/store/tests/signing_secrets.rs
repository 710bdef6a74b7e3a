//! A new app's signing secret read by several workers at once: every reader gets the same one.

use std::time::Duration;

use shoal_store::pool::PoolConfig;
use shoal_store::{begin_tenant, signing_secrets};

mod support;

#[tokio::test]
async fn racing_first_reads_agree_on_one_secret() -> anyhow::Result<()> {
    let config = PoolConfig {
        max_connections: 12,
        ..PoolConfig::default()
    };
    let (db, pool, cipher) = support::scratch(&config).await?;
    let tenant = support::tenant_with_app(&pool, &cipher, "contoso").await?;

    // Hold the app's row so that every reader sees no secret yet and then queues up to create
    // one: the worst interleaving, made certain.
    let mut holder = begin_tenant(&pool, &tenant).await?;
    sqlx::query("select 1 from apps where name = 'orders' for update")
        .execute(&mut *holder)
        .await?;
    let readers: Vec<_> = (0..8)
        .map(|_| {
            let (pool, cipher, tenant) = (pool.clone(), cipher.clone(), tenant.clone());
            tokio::spawn(async move {
                let mut tx = begin_tenant(&pool, &tenant).await?;
                let secret =
                    signing_secrets::get_or_create(&mut tx, &tenant, &cipher, "orders").await?;
                shoal_store::commit(tx).await?;
                anyhow::Ok(secret.expose())
            })
        })
        .collect();
    // Let them all reach the blocked update (seen through an admin connection: the pool acts
    // as shoal_app, which may not read other sessions' activity).
    use sqlx::Connection as _;
    let mut admin = sqlx::PgConnection::connect(db.url()).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "select count(*) from pg_stat_activity where wait_event_type = 'Lock' and query like 'update apps set webhook_secret%'",
        )
        .fetch_one(&mut admin)
        .await?;
        if waiting == 8 {
            break;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "{waiting} readers waiting, expected 8"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    holder.rollback().await?;
    let mut secrets = Vec::new();
    for reader in readers {
        secrets.push(reader.await??);
    }
    assert!(secrets.iter().all(|s| *s == secrets[0]), "{secrets:?}");
    Ok(())
}
