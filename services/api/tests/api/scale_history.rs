//! `GET …/apps/{app}/scale/history`: the scheduler's samples of an app, oldest first, read per
//! tenant, bounded to the hour kept.

use reqwest::{Method, StatusCode};
use serde_json::Value;
use shoal_api::identity::Role;
use shoal_store::scale_samples::{self, SampleRecord};

use crate::helpers::{TestApp, minimal_app, problem};

fn sample(app: &str, metric: Option<i64>, desired: u32, placed: u32) -> SampleRecord {
    SampleRecord {
        tenant: "contoso".into(),
        app: app.into(),
        at: chrono::Utc::now(),
        metric,
        desired,
        placed,
    }
}

impl TestApp {
    /// Records samples as one tick would (each call is its own transaction, so its own `at`).
    async fn record_samples(&self, samples: &[SampleRecord]) {
        let (pool, mut tx) = self.platform_tx().await;
        scale_samples::record(&mut tx, samples).await.unwrap();
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
    }

    /// Moves every sample `seconds` into the past.
    async fn age_samples(&self, seconds: i64) {
        let (pool, mut tx) = self.platform_tx().await;
        sqlx::query("update scale_samples set at = at - $1 * interval '1 second'")
            .bind(seconds)
            .execute(&mut *tx)
            .await
            .unwrap();
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
    }
}

#[tokio::test]
async fn history_lists_an_apps_samples_oldest_first_within_the_window() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    app.put_app("contoso", "orders", &minimal_app()).await;
    app.put_app("contoso", "billing", &minimal_app()).await;
    app.record_samples(&[
        sample("orders", Some(0), 1, 1),
        sample("billing", None, 2, 2),
    ])
    .await;
    // Ten minutes ago, that one; now a backlog arrives.
    app.age_samples(600).await;
    app.record_samples(&[sample("orders", Some(1000), 5, 1)])
        .await;

    let reader = app.token_for("contoso", Role::Reader);
    let read = |query: &'static str| {
        app.request(
            Method::GET,
            &format!("/v1/tenants/contoso/apps/orders/scale/history{query}"),
            Some(&reader),
        )
        .send()
    };
    let body: Value = read("").await.unwrap().json().await.unwrap();
    assert_eq!(body["intervalSeconds"], 10);
    let samples = body["samples"].as_array().unwrap();
    let summary: Vec<(Value, Value, Value)> = samples
        .iter()
        .map(|s| {
            (
                s["metric"].clone(),
                s["desiredInstances"].clone(),
                s["placedInstances"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (Value::from(0), Value::from(1), Value::from(1)),
            (Value::from(1000), Value::from(5), Value::from(1)),
        ]
    );
    // The last five minutes hold only the backlog's sample.
    let recent: Value = read("?minutes=5").await.unwrap().json().await.unwrap();
    assert_eq!(recent["samples"].as_array().unwrap().len(), 1);
    assert_eq!(recent["samples"][0]["metric"], 1000);

    // An unreadable metric is absent, not zero.
    let billing: Value = app
        .get("/v1/tenants/contoso/apps/billing/scale/history")
        .await
        .json()
        .await
        .unwrap();
    assert!(billing["samples"][0]["metric"].is_null());
}

#[tokio::test]
async fn samples_older_than_the_hour_are_pruned() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    app.put_app("contoso", "orders", &minimal_app()).await;
    app.record_samples(&[sample("orders", Some(3), 1, 1)]).await;
    app.age_samples(3601).await;
    app.record_samples(&[sample("orders", Some(4), 1, 1)]).await;
    let (pool, mut tx) = app.platform_tx().await;
    assert_eq!(scale_samples::prune(&mut tx).await.unwrap(), 1);
    shoal_store::commit(tx).await.unwrap();
    pool.close().await;
    let body: Value = app
        .get("/v1/tenants/contoso/apps/orders/scale/history")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["samples"].as_array().unwrap().len(), 1);
    assert_eq!(body["samples"][0]["metric"], 4);
}

#[tokio::test]
async fn history_is_per_tenant_and_checks_its_query() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    app.put_tenant("fabrikam").await;
    app.put_app("contoso", "orders", &minimal_app()).await;
    let outsider = app.token_for("fabrikam", Role::Owner);
    let hidden = app
        .request(
            Method::GET,
            "/v1/tenants/contoso/apps/orders/scale/history",
            Some(&outsider),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(hidden.status(), StatusCode::NOT_FOUND);
    let missing = app.get("/v1/tenants/contoso/apps/nope/scale/history").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    for bad in ["0", "61", "soon"] {
        let response = app
            .get(&format!(
                "/v1/tenants/contoso/apps/orders/scale/history?minutes={bad}"
            ))
            .await;
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert_eq!(problem(response).await["errors"][0]["path"], "minutes");
    }
}
