//! `GET /v1/workers` and the app signing secret.

use chrono::Utc;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::auth::Role;
use shoal_domain::webhooks::WebhookSecret;
use shoal_domain::workers::{ListenerReport, WorkerState};
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_store::workers::{self, Heartbeat};

use crate::helpers::{Fetch, TestApp, minimal_app};

async fn beat(app: &TestApp, name: &str, state: WorkerState, listeners: &[ListenerReport]) {
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
        poisoned: 1,
        in_flight: 3,
        last_poll: Some(Utc::now()),
        current_backoff_ms: 400,
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

#[tokio::test]
async fn owners_read_and_regenerate_the_signing_secret() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    app.put_app("contoso", "orders", &minimal_app()).await;
    let path = "/v1/tenants/contoso/apps/orders/signing-secret";
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
            "/v1/tenants/contoso/apps/nope/signing-secret/list",
        )
        .fetch()
        .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}
