//! Fair placement with real processes: two workers of capacity 5, tenant contoso's ten apps
//! keep two instances each (20 wanted, 10 slots), then tenant fabrikam's app asks for one.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Value, json};
use shoal_domain::apps::AppSpec;
use shoal_domain::names::TenantName;
use shoal_domain::settings::settings_to_store;
use shoal_store::tenants::{self, TenantWrite};
use shoal_store::{Precondition, TenantId, apps, begin_platform, begin_tenant};
use shoal_testkit::handler::Behaviour;

use crate::TICK_MS;
use crate::processes::Cluster;
use crate::support::{Harness, TENANT};

const OTHER: &str = "fabrikam";

/// Writes `tenant`'s app `app` with no functions and this `scale`, as the API writes it.
async fn put_app(h: &Harness, tenant: &str, app: &str, scale: Value) -> anyhow::Result<()> {
    let body = json!({
        "handler": {"url": h.handler.url().as_str(), "timeoutSeconds": 5},
        "scale": scale,
    });
    let written = AppSpec::parse(app, &body).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let stored =
        settings_to_store(&written.spec.app_settings, &[]).map_err(|e| anyhow::anyhow!("{e:?}"))?;
    let id = TenantId::new(TenantName::parse(tenant).map_err(|e| anyhow::anyhow!("{e:?}"))?);
    let mut tx = begin_tenant(&h.pool, &id).await?;
    apps::put(
        &mut tx,
        &id,
        &h.cipher,
        app,
        &written.stored,
        &stored,
        Precondition::None,
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(())
}

/// A harness whose tenant contoso has `apps` apps, `b-0`…, each keeping two instances.
async fn with_apps_keeping_two(apps: usize) -> anyhow::Result<Harness> {
    let h = Harness::start(Behaviour::Delay(Duration::from_millis(10), json!({}))).await?;
    for i in 0..apps {
        put_app(
            &h,
            TENANT,
            &format!("b-{i}"),
            json!({"limit": 2, "minimumInstances": 2}),
        )
        .await?;
    }
    Ok(h)
}

async fn put_tenant(h: &Harness, tenant: &str) -> anyhow::Result<()> {
    let mut tx = begin_platform(&h.pool).await?;
    tenants::put(
        &mut tx,
        tenant,
        &TenantWrite {
            display_name: tenant.into(),
            limits: Default::default(),
            allow_host_identity: false,
            egress_allow: Vec::new(),
        },
        Precondition::None,
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(())
}

/// Placed instances per tenant.
async fn placed(h: &Harness) -> anyhow::Result<BTreeMap<String, i64>> {
    let rows: Vec<(String, i64)> =
        sqlx::query_as("select tenant_id, count(*) from assignments group by tenant_id")
            .fetch_all(&h.pool)
            .await?;
    Ok(rows.into_iter().collect())
}

/// Apps of `tenant` that wait for capacity, with the reason the scale status shows.
async fn waiting(h: &Harness, tenant: &str) -> anyhow::Result<Vec<(String, String)>> {
    Ok(sqlx::query_as(
        "select app_name, waiting from app_scale where tenant_id = $1 and waiting is not null
         order by app_name",
    )
    .bind(tenant)
    .fetch_all(&h.pool)
    .await?)
}

pub(crate) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

#[tokio::test]
async fn a_tenant_below_its_share_is_placed_within_a_tick_and_gives_the_slot_back_at_zero()
-> anyhow::Result<()> {
    let h = with_apps_keeping_two(10).await?;
    put_tenant(&h, OTHER).await?;
    let mut cluster = Cluster::new(&h);
    cluster.worker_with_capacity("w0", 5);
    cluster.worker_with_capacity("w1", 5);
    cluster.wait_for_workers(2, Duration::from_secs(30)).await?;
    let metrics = format!("127.0.0.1:{}", free_port()?);
    cluster.scheduler_with("s1", &["--listen", &metrics]);
    let metrics = format!("http://{metrics}/metrics");

    // contoso fills all ten slots.
    cluster
        .until_value(
            "contoso on all 10 slots",
            Duration::from_secs(30),
            || async {
                let placed = placed(&h).await?;
                Ok((placed.get(TENANT) == Some(&10)).then_some(()))
            },
        )
        .await?;

    // fabrikam's app arrives wanting one instance: the tick that first decides for it places
    // it (decision and placement are written in one transaction), and contoso keeps 9.
    put_app(
        &h,
        OTHER,
        "late",
        json!({"limit": 1, "minimumInstances": 1}),
    )
    .await?;
    let pool = &h.pool;
    cluster
        .until_value(
            "a decision for fabrikam/late",
            Duration::from_secs(20),
            || async move {
                let desired: Option<i32> = sqlx::query_scalar(
                    "select desired from app_scale where tenant_id = $1 and app_name = 'late'",
                )
                .bind(OTHER)
                .fetch_optional(pool)
                .await?;
                Ok((desired == Some(1)).then_some(()))
            },
        )
        .await?;
    let after = placed(&h).await?;
    assert_eq!(after.get(OTHER), Some(&1), "{after:?}");
    assert_eq!(after.get(TENANT), Some(&9), "{after:?}");
    // contoso's apps took turns: each runs one instance (one none) and waits for the rest.
    let starved = waiting(&h, TENANT).await?;
    assert_eq!(starved.len(), 10, "{starved:?}");
    for (_, why) in &starved {
        assert_eq!(
            why,
            "waiting for capacity: tenant share used (tenant contoso holds 9 of its share of 9 of 10 slots; its apps want 20)"
        );
    }
    assert!(waiting(&h, OTHER).await?.is_empty());

    // The leader's /metrics shows each tenant's shortfall.
    let client = reqwest::Client::new();
    let text = cluster
        .until_value("per-tenant gauges", Duration::from_secs(10), || {
            let client = client.clone();
            let metrics = metrics.clone();
            async move {
                let text = client.get(&metrics).send().await?.text().await?;
                Ok(text
                    .contains("shoal_scheduler_tenant_placed_instances{tenant=\"fabrikam\"} 1\n")
                    .then_some(text))
            }
        })
        .await?;
    for line in [
        "shoal_scheduler_tenant_desired_instances{tenant=\"contoso\"} 20\n",
        "shoal_scheduler_tenant_placed_instances{tenant=\"contoso\"} 9\n",
        "shoal_scheduler_tenant_desired_instances{tenant=\"fabrikam\"} 1\n",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }

    // Nothing changes for a few ticks: nothing moves.
    let settled: Vec<(String, String, i32, String)> = sqlx::query_as(
        "select tenant_id, app_name, instance, worker from assignments order by 1, 2, 3",
    )
    .fetch_all(&h.pool)
    .await?;
    // The lease's expiry moves on with every tick's renewal: wait for three more ticks.
    let expires: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("select expires_at from scheduler_lease where singleton")
            .fetch_one(&h.pool)
            .await?;
    let later = expires + chrono::Duration::milliseconds(3 * TICK_MS as i64);
    cluster
        .until_value("three more ticks", Duration::from_secs(10), || async move {
            let now: chrono::DateTime<chrono::Utc> =
                sqlx::query_scalar("select expires_at from scheduler_lease where singleton")
                    .fetch_one(pool)
                    .await?;
            Ok((now >= later).then_some(()))
        })
        .await?;
    let again: Vec<(String, String, i32, String)> = sqlx::query_as(
        "select tenant_id, app_name, instance, worker from assignments order by 1, 2, 3",
    )
    .fetch_all(&h.pool)
    .await?;
    assert_eq!(again, settled);

    // fabrikam scales to zero (after the scale-in window): contoso gets its tenth slot back.
    put_app(
        &h,
        OTHER,
        "late",
        json!({"limit": 1, "minimumInstances": 0}),
    )
    .await?;
    cluster
        .until_value(
            "contoso back on all 10 slots",
            Duration::from_secs(30),
            || async {
                let placed = placed(&h).await?;
                Ok((placed.get(TENANT) == Some(&10) && !placed.contains_key(OTHER)).then_some(()))
            },
        )
        .await?;
    // Still short (20 wanted), but now the whole of the slots is contoso's share.
    let text = cluster
        .until_value(
            "contoso's share in the gauges",
            Duration::from_secs(10),
            || {
                let client = client.clone();
                let metrics = metrics.clone();
                async move {
                    let text = client.get(&metrics).send().await?.text().await?;
                    Ok(text
                        .contains(
                            "shoal_scheduler_tenant_placed_instances{tenant=\"contoso\"} 10\n",
                        )
                        .then_some(text))
                }
            },
        )
        .await?;
    assert!(!text.contains("tenant=\"fabrikam\""), "{text}");
    let starved = waiting(&h, TENANT).await?;
    assert!(
        starved
            .iter()
            .all(|(_, why)| why.contains("holds 10 of its share of 10 of 10 slots")),
        "{starved:?}"
    );
    Ok(())
}

#[tokio::test]
async fn the_platforms_default_instance_quota_caps_a_tenant_without_its_own() -> anyhow::Result<()>
{
    // Six instances wanted; contoso sets no maxInstances of its own.
    let h = with_apps_keeping_two(3).await?;
    // Two workers: an app's instances run on distinct workers.
    let mut cluster = Cluster::new(&h);
    cluster.worker_with_capacity("w0", 5);
    cluster.worker_with_capacity("w1", 5);
    cluster.wait_for_workers(2, Duration::from_secs(30)).await?;
    cluster.scheduler_with("s1", &["--tenant-defaults", "maxInstances=3"]);
    // Without the default quota all six would be placed (the workers have ten slots).
    cluster
        .until_value("3 instances placed", Duration::from_secs(30), || async {
            Ok((placed(&h).await?.get(TENANT) == Some(&3)).then_some(()))
        })
        .await?;
    // The quota wins over the apps' minimums: three instances wanted in all.
    let desired: Option<i64> =
        sqlx::query_scalar("select sum(desired)::bigint from app_scale where tenant_id = $1")
            .bind(TENANT)
            .fetch_one(&h.pool)
            .await?;
    assert_eq!(desired, Some(3));
    Ok(())
}
