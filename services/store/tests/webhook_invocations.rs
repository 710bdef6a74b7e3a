//! The async webhook queue against a real Postgres: claims skip what others hold and what is
//! not due, a lapsed claim is taken over and fences the old dispatcher's outcome, completed
//! invocations are pruned, and tenants never see each other's.

use std::time::Duration;

use serde_json::json;
use shoal_domain::async_invocation::InvocationStatus;
use shoal_domain::names::TenantName;
use shoal_store::crypto::Cipher;
use shoal_store::pool::PoolConfig;
use shoal_store::webhook_invocations::{self, ClaimedInvocation, NewInvocation};
use shoal_store::{Precondition, StoreError, TenantId, apps, begin_platform, begin_tenant, commit};
use shoal_testkit::ScratchDatabase;
use uuid::Uuid;

mod support;

/// Claims for `claimant` as soon as something is due (polling, at most 10 s), checking that
/// nothing became claimable before `not_before` had passed since `since`.
async fn claim_once_due(
    f: &Fixture,
    claimant: &str,
    since: std::time::Instant,
    not_before: Duration,
) -> anyhow::Result<Vec<ClaimedInvocation>> {
    loop {
        let claimed = webhook_invocations::claim(&f.pool, &f.cipher, claimant, LEASE, 10).await?;
        if !claimed.is_empty() {
            assert!(
                since.elapsed() >= not_before,
                "claimable after {:?}, before {not_before:?}",
                since.elapsed()
            );
            return Ok(claimed);
        }
        anyhow::ensure!(
            since.elapsed() < Duration::from_secs(10),
            "never became due"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

struct Fixture {
    pool: sqlx::PgPool,
    cipher: Cipher,
    _db: ScratchDatabase,
}

async fn fixture(tenant_names: &[&str]) -> anyhow::Result<Fixture> {
    let (db, pool, cipher) = support::scratch(&PoolConfig::default()).await?;
    for name in tenant_names {
        support::tenant_with_app(&pool, &cipher, name).await?;
    }
    Ok(Fixture {
        pool,
        cipher,
        _db: db,
    })
}

fn tenant(name: &str) -> TenantId {
    TenantId::new(TenantName::parse(name).unwrap())
}

async fn enqueue(f: &Fixture, tenant_name: &str, payload: &[u8]) -> anyhow::Result<Uuid> {
    let id = Uuid::now_v7();
    let t = tenant(tenant_name);
    let mut tx = begin_tenant(&f.pool, &t).await?;
    webhook_invocations::enqueue(
        &mut tx,
        &t,
        &f.cipher,
        &NewInvocation {
            app: "orders",
            function: "order",
            id,
            payload,
            request_id: Some("r-1"),
        },
    )
    .await?;
    commit(tx).await?;
    Ok(id)
}

async fn status(f: &Fixture, tenant_name: &str, id: Uuid) -> anyhow::Result<InvocationStatus> {
    let t = tenant(tenant_name);
    let mut tx = begin_tenant(&f.pool, &t).await?;
    let record = webhook_invocations::get(&mut tx, &t, &f.cipher, "orders", "order", id).await?;
    commit(tx).await?;
    Ok(record.status)
}

const LEASE: Duration = Duration::from_secs(60);

#[tokio::test]
async fn claims_deliver_each_invocation_once_across_tenants() -> anyhow::Result<()> {
    let f = fixture(&["contoso", "fabrikam"]).await?;
    let a = enqueue(&f, "contoso", b"{\"a\":1}").await?;
    let b = enqueue(&f, "fabrikam", b"{\"b\":2}").await?;

    let first = webhook_invocations::claim(&f.pool, &f.cipher, "api-1", LEASE, 1).await?;
    let second = webhook_invocations::claim(&f.pool, &f.cipher, "api-2", LEASE, 10).await?;
    let third = webhook_invocations::claim(&f.pool, &f.cipher, "api-3", LEASE, 10).await?;
    assert_eq!((first.len(), second.len(), third.len()), (1, 1, 0));
    let mut claimed: Vec<_> = first.iter().chain(&second).collect();
    claimed.sort_by_key(|c| c.id);
    assert_eq!(claimed[0].id, a);
    assert_eq!(claimed[0].tenant.as_str(), "contoso");
    assert_eq!(claimed[0].payload, b"{\"a\":1}");
    assert_eq!(claimed[0].attempt, 1);
    assert_eq!(claimed[0].request_id.as_deref(), Some("r-1"));
    assert_eq!(claimed[1].id, b);
    assert_eq!(claimed[1].tenant.as_str(), "fabrikam");
    assert_eq!(status(&f, "contoso", a).await?, InvocationStatus::Running);

    let t = tenant("contoso");
    let mut tx = begin_tenant(&f.pool, &t).await?;
    let response = json!({"statusCode": 201, "headers": {}, "body": "ok"});
    assert!(webhook_invocations::succeed(&mut tx, &t, &f.cipher, a, 1, &response).await?);
    commit(tx).await?;
    let mut tx = begin_tenant(&f.pool, &t).await?;
    let record = webhook_invocations::get(&mut tx, &t, &f.cipher, "orders", "order", a).await?;
    commit(tx).await?;
    assert_eq!(record.status, InvocationStatus::Succeeded);
    assert_eq!(record.attempts, 1);
    assert_eq!(record.response, Some(response));
    assert!(record.completed_at.is_some());
    Ok(())
}

#[tokio::test]
async fn a_retry_waits_for_its_delay_and_the_last_failure_is_final() -> anyhow::Result<()> {
    let f = fixture(&["contoso"]).await?;
    let id = enqueue(&f, "contoso", b"{}").await?;
    let t = tenant("contoso");
    let claimed = webhook_invocations::claim(&f.pool, &f.cipher, "api-1", LEASE, 10).await?;
    assert_eq!(claimed.len(), 1);
    let retried_at = std::time::Instant::now();
    let mut tx = begin_tenant(&f.pool, &t).await?;
    let retried = webhook_invocations::retry(
        &mut tx,
        &t,
        id,
        1,
        Duration::from_millis(300),
        "the handler answered 503",
    )
    .await?;
    commit(tx).await?;
    assert!(retried);
    assert_eq!(status(&f, "contoso", id).await?, InvocationStatus::Queued);
    assert!(
        webhook_invocations::claim(&f.pool, &f.cipher, "api-1", LEASE, 10)
            .await?
            .is_empty(),
        "not due yet"
    );
    let again = claim_once_due(&f, "api-1", retried_at, Duration::from_millis(300)).await?;
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].attempt, 2);

    let mut tx = begin_tenant(&f.pool, &t).await?;
    assert!(webhook_invocations::fail(&mut tx, &t, id, 2, "gave up").await?);
    commit(tx).await?;
    let mut tx = begin_tenant(&f.pool, &t).await?;
    let record = webhook_invocations::get(&mut tx, &t, &f.cipher, "orders", "order", id).await?;
    commit(tx).await?;
    assert_eq!(record.status, InvocationStatus::Failed);
    assert_eq!(record.error.as_deref(), Some("gave up"));
    assert_eq!(record.response, None);
    Ok(())
}

#[tokio::test]
async fn a_lapsed_claim_is_taken_over_and_fences_the_old_attempt() -> anyhow::Result<()> {
    let f = fixture(&["contoso"]).await?;
    let id = enqueue(&f, "contoso", b"{}").await?;
    let t = tenant("contoso");
    let short = Duration::from_millis(200);
    let claimed_at = std::time::Instant::now();
    let crashed = webhook_invocations::claim(&f.pool, &f.cipher, "api-1", short, 10).await?;
    assert_eq!(crashed[0].attempt, 1);
    assert!(
        webhook_invocations::claim(&f.pool, &f.cipher, "api-2", LEASE, 10)
            .await?
            .is_empty(),
        "held while the claim lasts"
    );
    let taken = claim_once_due(&f, "api-2", claimed_at, short).await?;
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].attempt, 2);

    // The first dispatcher comes back late: nothing it says counts any more.
    let mut tx = begin_tenant(&f.pool, &t).await?;
    assert!(!webhook_invocations::extend(&mut tx, &t, id, 1, LEASE).await?);
    assert!(!webhook_invocations::succeed(&mut tx, &t, &f.cipher, id, 1, &json!({})).await?);
    assert!(webhook_invocations::extend(&mut tx, &t, id, 2, LEASE).await?);
    assert!(
        webhook_invocations::succeed(&mut tx, &t, &f.cipher, id, 2, &json!({"statusCode": 200}))
            .await?
    );
    commit(tx).await?;
    assert_eq!(
        status(&f, "contoso", id).await?,
        InvocationStatus::Succeeded
    );
    Ok(())
}

#[tokio::test]
async fn completed_invocations_are_pruned_and_open_ones_kept() -> anyhow::Result<()> {
    let f = fixture(&["contoso", "fabrikam"]).await?;
    let done = enqueue(&f, "contoso", b"{}").await?;
    let open = enqueue(&f, "fabrikam", b"{}").await?;
    let claimed = webhook_invocations::claim(&f.pool, &f.cipher, "api-1", LEASE, 1).await?;
    assert_eq!(claimed[0].id, done);
    let t = tenant("contoso");
    let mut tx = begin_tenant(&f.pool, &t).await?;
    webhook_invocations::fail(&mut tx, &t, done, 1, "x").await?;
    commit(tx).await?;

    assert_eq!(
        webhook_invocations::prune(&f.pool, Duration::from_secs(3600)).await?,
        0
    );
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        webhook_invocations::prune(&f.pool, Duration::from_millis(10)).await?,
        1
    );
    assert_eq!(
        status(&f, "fabrikam", open).await?,
        InvocationStatus::Queued
    );
    Ok(())
}

#[tokio::test]
async fn tenants_cannot_read_each_others_invocations() -> anyhow::Result<()> {
    let f = fixture(&["contoso", "fabrikam"]).await?;
    let id = enqueue(&f, "contoso", b"{}").await?;
    // The repository filters on the tenant...
    let other = tenant("fabrikam");
    let mut tx = begin_tenant(&f.pool, &other).await?;
    let read = webhook_invocations::get(&mut tx, &other, &f.cipher, "orders", "order", id).await;
    assert!(matches!(read, Err(StoreError::NotFound)), "{read:?}");
    // ...and row-level security would hide the row even from a query that forgot to.
    let visible: i64 = sqlx::query_scalar("select count(*) from webhook_invocations")
        .fetch_one(&mut *tx)
        .await?;
    assert_eq!(visible, 0);
    commit(tx).await?;
    let mut tx = begin_platform(&f.pool).await?;
    let visible: i64 = sqlx::query_scalar("select count(*) from webhook_invocations")
        .fetch_one(&mut *tx)
        .await?;
    assert_eq!(visible, 0, "platform scope is not the dispatcher");
    commit(tx).await?;
    // A wrong app or function is not found either.
    let t = tenant("contoso");
    let mut tx = begin_tenant(&f.pool, &t).await?;
    let wrong = webhook_invocations::get(&mut tx, &t, &f.cipher, "orders", "other", id).await;
    assert!(matches!(wrong, Err(StoreError::NotFound)));
    Ok(())
}

#[tokio::test]
async fn deleting_the_app_deletes_its_invocations() -> anyhow::Result<()> {
    let f = fixture(&["contoso"]).await?;
    enqueue(&f, "contoso", b"{}").await?;
    let t = tenant("contoso");
    let mut tx = begin_tenant(&f.pool, &t).await?;
    apps::delete(&mut tx, &t, "orders", Precondition::None).await?;
    commit(tx).await?;
    assert!(
        webhook_invocations::claim(&f.pool, &f.cipher, "api-1", LEASE, 10)
            .await?
            .is_empty()
    );
    Ok(())
}
