//! The scheduler keeps a Service Bus trigger's declared entity settings on the live entity
//! (the local Service Bus stand-in's management API) as its own step after the tick's fenced
//! write: the leader updates the entity and audits it, and a scheduler whose lease has moved on
//! writes nothing, though its metric reads still run.

use std::collections::BTreeMap;
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use shoal_connectors::{ConnectorOptions, ServiceBusAdmin};
use shoal_domain::connection::{ConnectionKind, resolve};
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_local_bus::LocalBus;
use shoal_scheduler::catalog::Catalog;
use shoal_scheduler::tick::{Leader, TickContext};
use shoal_scheduler::trigger_metrics::MetricReader;
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use tokio_util::sync::CancellationToken;

use crate::helpers::*;
use crate::service_bus_scaling::bus;

const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions/Receive";

/// The app `orders` with a Service Bus trigger on queue `orders` declaring a 45 s lock.
async fn declaring_app(app: &TestApp, bus: &LocalBus) {
    app.put_tenant("contoso").await;
    let put = app
        .put_app(
            "contoso",
            "orders",
            &json!({"handler": {"url": "http://127.0.0.1:9/api"},
                    "appSettings": {"OrdersBus": bus.connection_string()}}),
        )
        .await;
    assert!(put.status().is_success(), "{}", put.status());
    let function = json!({"bindings": [{"type": "serviceBusTrigger", "direction": "in",
        "name": "msg", "queueName": "orders", "connection": "OrdersBus",
        "entity": {"lockDuration": "00:00:45"}}]});
    let put = app
        .admin(Method::PUT, FUNCTION)
        .json(&function)
        .fetch()
        .await;
    assert!(put.status().is_success(), "{}", put.status());
}

/// The live queue's lock duration, read through the management API.
async fn live_lock(bus: &LocalBus) -> Duration {
    let settings = BTreeMap::from([("Bus".to_owned(), bus.connection_string())]);
    let connection = resolve(ConnectionKind::ServiceBus, Some("Bus"), &settings).unwrap();
    let admin = ServiceBusAdmin::connect_for_app(
        &connection,
        &ConnectorOptions::default(),
        &Default::default(),
    )
    .unwrap();
    let entity = EntityPath::Queue("orders".into());
    admin.entity(&entity).await.unwrap().settings.lock_duration
}

async fn reconcile_entries(app: &TestApp) -> Vec<Value> {
    let log: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/auditLog?limit=100")
        .fetch_json()
        .await;
    log["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "serviceBus.entity.reconcile")
        .cloned()
        .collect()
}

#[tokio::test]
async fn the_leader_keeps_a_declared_entity_setting_and_audits_it() {
    let bus = bus().await;
    let before = live_lock(&bus).await;
    assert_ne!(
        before,
        Duration::from_secs(45),
        "the stand-in's default differs"
    );
    let app = TestApp::spawn().await;
    declaring_app(&app, &bus).await;
    let stop = CancellationToken::new();
    let scheduler = app.start_scheduler(&stop);

    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while live_lock(&bus).await != Duration::from_secs(45) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the entity never got the declared lock"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let entries = reconcile_entries(&app).await;
    assert_eq!(entries.len(), 1, "{entries:#?}");
    let outcome = entries[0]["outcome"].as_str().unwrap();
    assert!(
        outcome.starts_with("updated queue orders: lockDuration"),
        "{outcome}"
    );
    assert_eq!(
        entries[0]["resource"],
        "tenants/contoso/apps/orders/functions/Receive"
    );
    // In step now: later ticks read it (at most every minute) and write nothing more.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(reconcile_entries(&app).await.len(), 1);
    stop.cancel();
    scheduler.stopped().await.unwrap();
    bus.shutdown().await;
}

#[tokio::test]
async fn a_scheduler_whose_lease_moved_on_writes_no_entity() {
    let bus = bus().await;
    let before = live_lock(&bus).await;
    let app = TestApp::spawn().await;
    declaring_app(&app, &bus).await;
    let epoch = app.lead().await;
    let pool = connect_lazy(&app.database_url, &PoolConfig::default()).unwrap();
    let cipher = Cipher::new(&app.secret_key);
    let mut config = shoal_scheduler::SchedulerConfig::new("test-scheduler");
    config.egress = loopback_egress();
    let mut catalog = Catalog::default();
    let mut metrics = MetricReader::new(
        config.metrics.clone(),
        config.connector.clone(),
        config.egress.clone(),
    );

    // A leader that believes in an epoch the database has moved past: its tick reads the apps
    // and their metrics, and is refused at the write.
    let mut stale = Leader::take_over(&pool, "test-scheduler", epoch - 1, &config)
        .await
        .unwrap();
    let mut tick = async |leader: &mut Leader| {
        leader
            .tick(TickContext {
                pool: &pool,
                cipher: &cipher,
                config: &config,
                catalog: &mut catalog,
                metrics: &mut metrics,
            })
            .await
    };
    let outcome = tick(&mut stale).await;
    assert!(
        matches!(outcome, Err(shoal_store::StoreError::Fenced { .. })),
        "{outcome:?}"
    );
    assert_eq!(live_lock(&bus).await, before, "a fenced scheduler wrote");
    assert!(reconcile_entries(&app).await.is_empty());

    // The lease's holder, with its epoch, keeps the entity.
    let mut leader = Leader::take_over(&pool, "test-scheduler", epoch, &config)
        .await
        .unwrap();
    tick(&mut leader).await.unwrap();
    assert_eq!(live_lock(&bus).await, Duration::from_secs(45));
    assert_eq!(reconcile_entries(&app).await.len(), 1);
    bus.shutdown().await;
}
