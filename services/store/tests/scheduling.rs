//! The scheduler's coordination in Postgres: the leader lease and its epoch as a fencing token,
//! assignments stamped with epochs, and instance claims that a worker takes over only from a
//! worker whose lease lapsed.

use std::time::Duration;

use serde_json::json;
use shoal_domain::names::TenantName;
use shoal_domain::workers::WorkerState;
use shoal_store::assignments::{self, AssignmentRecord, InstanceKey};
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{PoolConfig, connect_lazy, migrate};
use shoal_store::tenants::TenantWrite;
use shoal_store::workers::{self, Heartbeat};
use shoal_store::{
    Precondition, StoreError, TenantId, apps, begin_platform, begin_tenant, leadership, tenants,
};
use shoal_testkit::ScratchDatabase;

async fn database() -> anyhow::Result<(ScratchDatabase, sqlx::PgPool)> {
    let db = ScratchDatabase::create(&shoal_testkit::admin_url(), "shoal_sched").await?;
    migrate(db.url()).await?;
    let pool = connect_lazy(db.url(), &PoolConfig::default())?;
    Ok((db, pool))
}

async fn acquire(pool: &sqlx::PgPool, holder: &str, ttl: Duration) -> anyhow::Result<Option<i64>> {
    let mut tx = begin_platform(pool).await?;
    let lease = leadership::acquire_or_renew(&mut tx, holder, ttl).await?;
    shoal_store::commit(tx).await?;
    Ok(lease.map(|l| l.epoch))
}

async fn fence(pool: &sqlx::PgPool, holder: &str, epoch: i64) -> Result<(), StoreError> {
    let mut tx = begin_platform(pool).await?;
    leadership::fence(&mut tx, holder, epoch).await?;
    shoal_store::commit(tx).await
}

#[tokio::test]
async fn epoch_rises_only_when_leadership_changes_hands() -> anyhow::Result<()> {
    let (_db, pool) = database().await?;
    let ttl = Duration::from_millis(600);
    let first = acquire(&pool, "s1", ttl)
        .await?
        .expect("a free lease is taken");
    assert_eq!(
        acquire(&pool, "s1", ttl).await?,
        Some(first),
        "renewal keeps the epoch"
    );
    assert_eq!(
        acquire(&pool, "s2", ttl).await?,
        None,
        "a running lease is not taken"
    );
    fence(&pool, "s1", first).await?;

    tokio::time::sleep(ttl + Duration::from_millis(200)).await;
    let second = acquire(&pool, "s2", ttl)
        .await?
        .expect("a lapsed lease is taken");
    assert_eq!(second, first + 1);
    // The deposed leader's writes are fenced off, and so is its renewal.
    assert!(matches!(
        fence(&pool, "s1", first).await,
        Err(StoreError::Fenced { epoch }) if epoch == first
    ));
    assert_eq!(acquire(&pool, "s1", ttl).await?, None);
    fence(&pool, "s2", second).await?;

    // A released lease is free at once, with the next epoch.
    let mut tx = begin_platform(&pool).await?;
    leadership::release(&mut tx, "s2", second).await?;
    shoal_store::commit(tx).await?;
    assert_eq!(acquire(&pool, "s1", ttl).await?, Some(second + 1));
    Ok(())
}

#[tokio::test]
async fn a_takeover_waits_for_the_leaders_fenced_write() -> anyhow::Result<()> {
    let (_db, pool) = database().await?;
    let ttl = Duration::from_millis(300);
    let epoch = acquire(&pool, "s1", ttl).await?.expect("lease");
    // The leader starts a write (holding the lease row) just before its lease lapses…
    let mut write = begin_platform(&pool).await?;
    leadership::fence(&mut write, "s1", epoch).await?;
    tokio::time::sleep(ttl + Duration::from_millis(100)).await;
    // …so the standby's takeover queues behind it rather than interleaving with it.
    let standby = tokio::spawn({
        let pool = pool.clone();
        async move { acquire(&pool, "s2", ttl).await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !standby.is_finished(),
        "the takeover must wait for the lease row"
    );
    shoal_store::commit(write).await?;
    assert_eq!(standby.await??, Some(epoch + 1));
    Ok(())
}

async fn seed_app(pool: &sqlx::PgPool, app: &str) -> anyhow::Result<()> {
    let mut tx = begin_platform(pool).await?;
    let write = TenantWrite {
        display_name: "C".into(),
        limits: Default::default(),
        allow_host_identity: false,
        egress_allow: Vec::new(),
    };
    tenants::put(&mut tx, "contoso", &write, Precondition::None).await?;
    shoal_store::commit(tx).await?;
    let tenant = TenantId::new(TenantName::parse("contoso").map_err(anyhow::Error::msg)?);
    let mut tx = begin_tenant(pool, &tenant).await?;
    let cipher = Cipher::new(&SecretKey::generate());
    let spec = json!({"handler": {"url": "http://h.example"}});
    apps::put(
        &mut tx,
        &tenant,
        &cipher,
        app,
        &spec,
        &[],
        Precondition::None,
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(())
}

async fn beat(pool: &sqlx::PgPool, name: &str, ttl: Duration) -> anyhow::Result<()> {
    beat_holding(pool, name, ttl, Some(32)).await
}

/// A heartbeat from a worker whose listeners hold at most `hold_limit` messages at once.
async fn beat_holding(
    pool: &sqlx::PgPool,
    name: &str,
    ttl: Duration,
    hold_limit: Option<u16>,
) -> anyhow::Result<()> {
    let mut tx = begin_platform(pool).await?;
    workers::heartbeat(
        &mut tx,
        &Heartbeat {
            name,
            state: WorkerState::Running,
            version: "test",
            started_at: chrono::Utc::now(),
            listeners: &[],
            capacity: 10,
            lease_ttl: ttl,
            hold_limit,
        },
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(())
}

async fn claim(pool: &sqlx::PgPool, key: &InstanceKey, worker: &str) -> anyhow::Result<bool> {
    let mut tx = begin_platform(pool).await?;
    let claimed = assignments::claim(&mut tx, key, worker).await?;
    shoal_store::commit(tx).await?;
    Ok(claimed)
}

#[tokio::test]
async fn live_workers_report_what_their_listeners_hold_at_once() -> anyhow::Result<()> {
    let (_db, pool) = database().await?;
    let ttl = Duration::from_secs(30);
    beat_holding(&pool, "w1", ttl, Some(32)).await?;
    beat_holding(&pool, "w2", ttl, None).await?;
    let live = |pool: sqlx::PgPool| async move {
        let mut tx = begin_platform(&pool).await?;
        let live = workers::live(&mut tx).await?;
        shoal_store::commit(tx).await?;
        anyhow::Ok(
            live.into_iter()
                .map(|w| (w.name, w.hold_limit))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        live(pool.clone()).await?,
        [("w1".to_owned(), Some(32)), ("w2".to_owned(), None)]
    );

    // Each heartbeat writes the limit again: a restarted worker with other limits says so.
    beat_holding(&pool, "w1", ttl, Some(512)).await?;
    beat_holding(&pool, "w2", ttl, Some(u16::MAX)).await?;
    assert_eq!(
        live(pool.clone()).await?,
        [
            ("w1".to_owned(), Some(512)),
            ("w2".to_owned(), Some(u16::MAX))
        ]
    );
    Ok(())
}

#[tokio::test]
async fn a_claim_passes_on_only_when_released_or_its_holder_is_dead() -> anyhow::Result<()> {
    let (_db, pool) = database().await?;
    seed_app(&pool, "orders").await?;
    let ttl = Duration::from_millis(500);
    beat(&pool, "w1", ttl).await?;
    beat(&pool, "w2", Duration::from_secs(30)).await?;
    let key = InstanceKey {
        tenant: "contoso".into(),
        app: "orders".into(),
        instance: 0,
    };
    assert!(claim(&pool, &key, "w1").await?);
    assert!(
        claim(&pool, &key, "w1").await?,
        "claiming again is idempotent"
    );
    assert!(
        !claim(&pool, &key, "w2").await?,
        "a live holder keeps its claim"
    );

    let mut tx = begin_platform(&pool).await?;
    assignments::release(&mut tx, &key, "w2").await?; // not the holder: no effect
    shoal_store::commit(tx).await?;
    assert!(!claim(&pool, &key, "w2").await?);

    let mut tx = begin_platform(&pool).await?;
    assignments::release(&mut tx, &key, "w1").await?;
    shoal_store::commit(tx).await?;
    assert!(claim(&pool, &key, "w2").await?, "a released claim is free");

    // w2's lease is long; w1 takes over only once w2 is dead: make w2's lease lapse.
    beat(&pool, "w2", Duration::from_millis(200)).await?;
    assert!(!claim(&pool, &key, "w1").await?);
    tokio::time::sleep(Duration::from_millis(400)).await;
    beat(&pool, "w1", Duration::from_secs(30)).await?;
    assert!(
        claim(&pool, &key, "w1").await?,
        "a dead holder's claim is taken over"
    );
    Ok(())
}

#[tokio::test]
async fn assignments_carry_the_writers_epoch_and_notify_their_workers() -> anyhow::Result<()> {
    let (db, pool) = database().await?;
    seed_app(&pool, "orders").await?;
    let epoch = acquire(&pool, "s1", Duration::from_secs(30))
        .await?
        .expect("lease");
    let mut listener = sqlx::postgres::PgListener::connect(db.url()).await?;
    listener.listen(shoal_store::listen::ASSIGNMENTS).await?;

    let row = AssignmentRecord {
        tenant: "contoso".into(),
        app: "orders".into(),
        instance: 0,
        worker: "w1".into(),
        epoch,
    };
    let mut tx = begin_platform(&pool).await?;
    leadership::fence(&mut tx, "s1", epoch).await?;
    assignments::apply(&mut tx, epoch, std::slice::from_ref(&row), &[]).await?;
    shoal_store::commit(tx).await?;
    let note = tokio::time::timeout(Duration::from_secs(5), listener.recv()).await??;
    assert_eq!(note.payload(), "w1");

    let mut tx = begin_platform(&pool).await?;
    let (current, rows) = assignments::of_worker(&mut tx, "w1").await?;
    shoal_store::commit(tx).await?;
    assert_eq!((current, rows), (epoch, vec![row.clone()]));

    // A new leader confirms the placement it found: same rows, its epoch.
    let mut tx = begin_platform(&pool).await?;
    leadership::release(&mut tx, "s1", epoch).await?;
    shoal_store::commit(tx).await?;
    let next = acquire(&pool, "s2", Duration::from_secs(30))
        .await?
        .expect("lease");
    let mut tx = begin_platform(&pool).await?;
    assert_eq!(assignments::confirm_all(&mut tx, next).await?, 1);
    let (current, rows) = assignments::of_worker(&mut tx, "w1").await?;
    shoal_store::commit(tx).await?;
    assert_eq!(current, next);
    assert_eq!(rows[0].epoch, next);

    // Deleting the app removes its instances and tells the worker.
    let tenant = TenantId::new(TenantName::parse("contoso").map_err(anyhow::Error::msg)?);
    let mut tx = begin_tenant(&pool, &tenant).await?;
    apps::delete(&mut tx, &tenant, "orders", Precondition::None).await?;
    shoal_store::commit(tx).await?;
    loop {
        let note = tokio::time::timeout(Duration::from_secs(5), listener.recv()).await??;
        if note.payload() == "w1" {
            break;
        }
    }
    let mut tx = begin_platform(&pool).await?;
    assert!(assignments::all(&mut tx).await?.is_empty());
    shoal_store::commit(tx).await?;
    Ok(())
}
