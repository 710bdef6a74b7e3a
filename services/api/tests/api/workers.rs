//! `GET /v1/workers` and the app signing secret.

use std::time::Duration;

use chrono::Utc;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_domain::webhooks::WebhookSecret;
use shoal_domain::workers::{ListenerReport, WorkerState};
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_store::workers::{self, Heartbeat};

use crate::helpers::{Fetch, TestApp, minimal_app};

async fn beat(app: &TestApp, name: &str, state: WorkerState, listeners: &[ListenerReport]) {
    beat_with(app, name, state, listeners, 100, Duration::from_secs(10)).await;
}

async fn beat_with(
    app: &TestApp,
    name: &str,
    state: WorkerState,
    listeners: &[ListenerReport],
    capacity: u32,
    lease_ttl: Duration,
) {
    let pool = connect_lazy(&app.database_url, &PoolConfig::default()).unwrap();
    let mut tx = shoal_store::begin_platform(&pool).await.unwrap();
    workers::heartbeat(
        &mut tx,
        &Heartbeat {
            name,
            state,
            version: "0.1.0",
            started_at: Utc::now(),
            listeners,
            capacity,
            lease_ttl,
            hold_limit: Some(32),
        },
    )
    .await
    .unwrap();
    shoal_store::commit(tx).await.unwrap();
    pool.close().await;
}

#[tokio::test]
async fn workers_are_listed_with_liveness_and_listener_statistics() {
    let app = TestApp::spawn().await;
    let listener = ListenerReport {
        tenant: "contoso".into(),
        app: "orders".into(),
        instance: 0,
        function: "ship".into(),
        trigger: "queueTrigger".into(),
        source: "orders".into(),
        status: "listening".into(),
        received: 10,
        succeeded: 8,
        failed: 2,
        retried: 0,
        deferred: 0,
        parked: 0,
        handler_unreachable_since: None,
        poisoned: 1,
        in_flight: 3,
        last_poll: Some(Utc::now()),
        current_backoff_ms: 400,
        last_token_error: None,
        undeclared_outputs: 0,
        undeclared_output_names: Vec::new(),
        concurrency: None,
    };
    beat(
        &app,
        "w-b",
        WorkerState::Running,
        std::slice::from_ref(&listener),
    )
    .await;
    beat(&app, "w-a", WorkerState::Stopped, &[]).await;

    let list: Value = app.admin(Method::GET, "/v1/workers").fetch_json().await;
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_eq!(items[0]["name"], "w-a", "ordered by name");
    assert_eq!(
        (items[0]["state"].clone(), items[0]["alive"].clone()),
        (json!("stopped"), json!(false))
    );
    assert_eq!(
        (items[1]["state"].clone(), items[1]["alive"].clone()),
        (json!("running"), json!(true))
    );
    assert_eq!(items[1]["capacity"], 100);
    assert_eq!(items[1]["leaseTtlSeconds"].as_f64(), Some(10.0));
    assert_eq!(items[1]["assignments"], json!([]));
    let l = &items[1]["listeners"][0];
    assert_eq!(l["function"], "ship");
    assert_eq!(
        (
            l["received"].clone(),
            l["failed"].clone(),
            l["poisoned"].clone(),
            l["inFlight"].clone()
        ),
        (json!(10), json!(2), json!(1), json!(3))
    );
    assert_eq!(l["currentBackoffMs"], 400);

    let page: Value = app
        .admin(Method::GET, "/v1/workers?limit=1")
        .fetch_json()
        .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 1);
    assert!(page["continuationToken"].is_string());

    let owner = app.token_for("contoso", Role::Owner);
    let denied = app
        .request(Method::GET, "/v1/workers", Some(&owner))
        .fetch()
        .await;
    assert_eq!(
        denied.status(),
        StatusCode::FORBIDDEN,
        "platform scope only"
    );
    let anonymous = app.request(Method::GET, "/v1/workers", None).fetch().await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
}

/// Moves a worker's last heartbeat into the past, on the database's clock.
async fn age_heartbeat(app: &TestApp, name: &str, seconds: u32) {
    let pool = connect_lazy(&app.database_url, &PoolConfig::default()).unwrap();
    sqlx::query(
        "update workers set heartbeat_at = now() - make_interval(secs => $2) where name = $1",
    )
    .bind(name)
    .bind(f64::from(seconds))
    .execute(&pool)
    .await
    .unwrap();
    pool.close().await;
}

#[tokio::test]
async fn workers_are_alive_while_their_own_lease_runs() {
    let app = TestApp::spawn().await;
    beat_with(
        &app,
        "w-long",
        WorkerState::Running,
        &[],
        8,
        Duration::from_secs(60),
    )
    .await;
    beat_with(
        &app,
        "w-short",
        WorkerState::Running,
        &[],
        4,
        Duration::from_millis(2500),
    )
    .await;
    beat_with(
        &app,
        "w-stopped",
        WorkerState::Stopped,
        &[],
        4,
        Duration::from_secs(60),
    )
    .await;
    // 20 s: past a 15 s window, within w-long's 60 s lease, far past w-short's 2.5 s one.
    age_heartbeat(&app, "w-long", 20).await;
    age_heartbeat(&app, "w-short", 3).await;

    let list: Value = app.admin(Method::GET, "/v1/workers").fetch_json().await;
    let view: Vec<(&str, bool, u64, f64)> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["name"].as_str().unwrap(),
                w["alive"].as_bool().unwrap(),
                w["capacity"].as_u64().unwrap(),
                w["leaseTtlSeconds"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        view,
        [
            ("w-long", true, 8, 60.0),
            ("w-short", false, 4, 2.5),
            ("w-stopped", false, 4, 60.0),
        ]
    );
}

#[tokio::test]
async fn workers_show_the_instances_placed_on_them() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    app.with_app("fabrikam", "billing").await;
    for name in ["w-a", "w-b", "w-c"] {
        beat(&app, name, WorkerState::Running, &[]).await;
    }
    let epoch = app.lead().await;
    app.place(
        epoch,
        &[
            ("fabrikam", "billing", 0, "w-a"),
            ("contoso", "orders", 1, "w-a"),
            ("contoso", "orders", 0, "w-b"),
        ],
    )
    .await;

    let list: Value = app.admin(Method::GET, "/v1/workers").fetch_json().await;
    let items = list["items"].as_array().unwrap();
    assert_eq!(
        items[0]["assignments"],
        json!([
            {"tenant": "contoso", "app": "orders", "instance": 1, "epoch": epoch},
            {"tenant": "fabrikam", "app": "billing", "instance": 0, "epoch": epoch}
        ]),
        "by tenant, app and instance"
    );
    assert_eq!(
        items[1]["assignments"],
        json!([{"tenant": "contoso", "app": "orders", "instance": 0, "epoch": epoch}])
    );
    assert_eq!(items[2]["assignments"], json!([]));

    let second_page: Value = app
        .admin(
            Method::GET,
            &format!(
                "/v1/workers?limit=1&continuationToken={}",
                shoal_store::page::encode_token("w-a")
            ),
        )
        .fetch_json()
        .await;
    assert_eq!(second_page["items"][0]["name"], "w-b");
    assert_eq!(
        second_page["items"][0]["assignments"],
        json!([{"tenant": "contoso", "app": "orders", "instance": 0, "epoch": epoch}]),
        "a later page carries its own workers' instances"
    );
}

#[tokio::test]
async fn owners_read_and_regenerate_the_signing_secret() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    app.put_app("contoso", "orders", &minimal_app()).await;
    let path = "/v1/tenants/contoso/apps/orders/signingSecret";
    let owner = app.token_for("contoso", Role::Owner);

    let first: Value = app
        .request(Method::POST, &format!("{path}/list"), Some(&owner))
        .fetch_json()
        .await;
    let secret = first["secret"].as_str().unwrap().to_owned();
    assert!(WebhookSecret::parse(&secret).is_ok(), "whsec_ form");
    let again: Value = app
        .request(Method::POST, &format!("{path}/list"), Some(&owner))
        .fetch_json()
        .await;
    assert_eq!(again["secret"], secret.as_str(), "stable until regenerated");

    let rotated: Value = app
        .request(Method::POST, &format!("{path}/regenerate"), Some(&owner))
        .fetch_json()
        .await;
    assert_ne!(rotated["secret"], secret.as_str());
    let after: Value = app
        .request(Method::POST, &format!("{path}/list"), Some(&owner))
        .fetch_json()
        .await;
    assert_eq!(after["secret"], rotated["secret"]);

    for role in [Role::Contributor, Role::Reader] {
        let token = app.token_for("contoso", role);
        for action in ["list", "regenerate"] {
            let denied = app
                .request(Method::POST, &format!("{path}/{action}"), Some(&token))
                .fetch()
                .await;
            assert_eq!(denied.status(), StatusCode::FORBIDDEN, "{role:?} {action}");
        }
    }
    let other = app.token_for("fabrikam", Role::Owner);
    let hidden = app
        .request(Method::POST, &format!("{path}/list"), Some(&other))
        .fetch()
        .await;
    assert_eq!(
        hidden.status(),
        StatusCode::NOT_FOUND,
        "another tenant's app does not exist for them"
    );
    let missing = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/nope/signingSecret/list",
        )
        .fetch()
        .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

/// The secret's path follows the one convention (camelCase); the old kebab-case path is gone
/// rather than kept as an alias.
#[tokio::test]
async fn the_signing_secret_has_one_camel_case_path() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    app.put_app("contoso", "orders", &minimal_app()).await;
    let new = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/signingSecret/list",
        )
        .fetch()
        .await;
    assert_eq!(new.status(), StatusCode::OK);
    let old = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/signing-secret/list",
        )
        .fetch()
        .await;
    assert_eq!(old.status(), StatusCode::NOT_FOUND);
}

/// A listener line of `tenant`/`app`/`function` whose handler set `names` in vain `count` times.
fn undeclared(
    tenant: &str,
    app: &str,
    function: &str,
    count: u64,
    names: &[&str],
) -> ListenerReport {
    ListenerReport {
        tenant: tenant.into(),
        app: app.into(),
        instance: 0,
        function: function.into(),
        trigger: "queueTrigger".into(),
        source: "orders".into(),
        status: "listening".into(),
        received: count,
        succeeded: count,
        failed: 0,
        retried: 0,
        deferred: 0,
        parked: 0,
        handler_unreachable_since: None,
        poisoned: 0,
        in_flight: 0,
        last_poll: Some(Utc::now()),
        current_backoff_ms: 200,
        last_token_error: None,
        undeclared_outputs: count,
        undeclared_output_names: names.iter().map(|n| (*n).to_owned()).collect(),
        concurrency: None,
    }
}

#[tokio::test]
async fn diagnostics_warn_of_outputs_the_handler_sets_but_the_function_does_not_declare() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    app.admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .json(&json!({"appSettings": {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}}))
        .fetch()
        .await;
    let function = json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}]});
    let put = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/Process",
        )
        .json(&function)
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);
    // Two live instances of this app, another tenant's app of the same name, and a worker
    // whose lease lapsed: only the first two count.
    beat(
        &app,
        "w-1",
        WorkerState::Running,
        &[
            undeclared("contoso", "orders", "Process", 2, &["receipt"]),
            undeclared("fabrikam", "orders", "Process", 9, &["theirs"]),
        ],
    )
    .await;
    beat(
        &app,
        "w-2",
        WorkerState::Running,
        &[undeclared(
            "contoso",
            "orders",
            "Process",
            1,
            &["receipt", "audit"],
        )],
    )
    .await;
    beat_with(
        &app,
        "w-dead",
        WorkerState::Running,
        &[undeclared("contoso", "orders", "Process", 5, &["stale"])],
        100,
        Duration::from_secs(10),
    )
    .await;
    age_heartbeat(&app, "w-dead", 20).await;
    let diagnostics: Value = app
        .get("/v1/tenants/contoso/apps/orders/diagnostics")
        .await
        .json()
        .await
        .unwrap();
    let warnings: Vec<&Value> = diagnostics["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["subject"] == "outputs")
        .collect();
    let names: Vec<&str> = warnings
        .iter()
        .filter_map(|c| c["binding"].as_str())
        .collect();
    assert_eq!(names, ["audit", "receipt"], "{diagnostics}");
    for warning in &warnings {
        assert_eq!(warning["status"], "warning");
        assert_eq!(warning["function"], "Process");
        let detail = warning["detail"].as_str().unwrap();
        assert!(detail.contains("(3 invocations"), "{detail}");
    }
    assert_eq!(diagnostics["healthy"], true, "a warning is not unhealthy");
}
