//! `GET /v1/tenants/{tenant}/apps/{app}/scale`: the scheduler's state for one app as its
//! tenant sees it.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;

use crate::helpers::*;

const SCALE: &str = "/v1/tenants/contoso/apps/orders/scale";

#[tokio::test]
async fn scale_status_shows_placement_desired_count_and_decisions_newest_first() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let epoch = app.lead().await;
    for (from, to) in [(0, 1), (1, 3), (3, 2)] {
        app.record_decision(decision("contoso", "orders", from, to, epoch))
            .await;
    }
    app.place(
        epoch,
        &[
            ("contoso", "orders", 1, "w-b"),
            ("contoso", "orders", 0, "w-a"),
        ],
    )
    .await;

    let reader = app.token_for("contoso", Role::Reader);
    let response = app.request(Method::GET, SCALE, Some(&reader)).fetch().await;
    assert_eq!(response.status(), StatusCode::OK, "readable by a Reader");
    let status: Value = response.json().await.unwrap();

    assert_eq!(status["currentInstances"], 2);
    assert_eq!(status["desiredInstances"], 2, "the latest decision's count");
    assert_eq!(status["mode"], "target");
    assert_eq!(
        status["placement"],
        json!([{"instance": 0, "worker": "w-a"}, {"instance": 1, "worker": "w-b"}]),
        "by instance"
    );
    let decisions = status["decisions"].as_array().unwrap();
    let steps: Vec<(u64, u64)> = decisions
        .iter()
        .map(|d| (d["from"].as_u64().unwrap(), d["to"].as_u64().unwrap()))
        .collect();
    assert_eq!(steps, [(3, 2), (1, 3), (0, 1)], "newest first");
    let newest = &decisions[0];
    let mut keys: Vec<&str> = newest
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["at", "from", "metrics", "mode", "reason", "to"]);
    assert!(
        chrono::DateTime::parse_from_rfc3339(newest["at"].as_str().unwrap()).is_ok(),
        "{}",
        newest["at"]
    );
    assert_eq!(newest["mode"], "target");
    assert_eq!(
        newest["reason"],
        "ship queueLength 32 / 16 per instance = 2"
    );
    assert_eq!(
        newest["metrics"],
        json!([{"function": "ship", "mode": "target", "metric": 32, "target": 2, "perInstance": 16}]),
        "the inputs as the scheduler recorded them"
    );
}

/// The scheduler's reason an app runs fewer instances than desired, absent once it no longer
/// waits.
#[tokio::test]
async fn scale_status_says_why_an_app_waits_for_instances() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let epoch = app.lead().await;
    app.record_decision(decision("contoso", "orders", 0, 2, epoch))
        .await;
    app.place(epoch, &[("contoso", "orders", 0, "w-a")]).await;
    let why = "waiting for capacity: tenant share used (tenant contoso holds 5 of its share of 5 of 10 slots; its apps want 12)";
    let set_waiting = |waiting: Option<&str>| {
        let waiting = waiting.map(str::to_owned);
        let app = &app;
        async move {
            let (pool, mut tx) = app.platform_tx().await;
            shoal_store::scale::set_waiting(
                &mut tx,
                &[("contoso".into(), "orders".into(), waiting)],
            )
            .await
            .unwrap();
            shoal_store::commit(tx).await.unwrap();
            pool.close().await;
        }
    };
    let reader = app.token_for("contoso", Role::Reader);
    let read = || async {
        let response = app.request(Method::GET, SCALE, Some(&reader)).fetch().await;
        assert_eq!(response.status(), StatusCode::OK);
        response.json::<Value>().await.unwrap()
    };

    assert!(
        read().await.get("waiting").is_none(),
        "absent before any reason"
    );
    set_waiting(Some(why)).await;
    let status = read().await;
    assert_eq!(status["waiting"], why);
    assert_eq!(
        (
            status["currentInstances"].clone(),
            status["desiredInstances"].clone()
        ),
        (json!(1), json!(2))
    );
    set_waiting(None).await;
    assert!(read().await.get("waiting").is_none(), "absent once placed");
}

#[tokio::test]
async fn scale_mode_follows_the_app_setting_not_the_last_decision() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let body = json!({
        "handler": {"url": "http://127.0.0.1:7071/api"},
        "appSettings": {"TARGET_BASED_SCALING_ENABLED": "0"}
    });
    app.put_app("contoso", "orders", &body).await;
    let epoch = app.lead().await;
    app.record_decision(decision("contoso", "orders", 0, 1, epoch))
        .await;

    let status: Value = app.admin(Method::GET, SCALE).fetch_json().await;
    assert_eq!(status["mode"], "incremental", "as the app read computes it");
    assert_eq!(
        status["decisions"][0]["mode"], "target",
        "each decision keeps the mode it was taken in"
    );
}

#[tokio::test]
async fn an_app_never_decided_for_has_nothing_desired_or_placed() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;

    let status: Value = app.admin(Method::GET, SCALE).fetch_json().await;
    assert_eq!(
        status,
        json!({
            "currentInstances": 0,
            "desiredInstances": 0,
            "mode": "target",
            "placement": [],
            "decisions": []
        })
    );
}

#[tokio::test]
async fn scale_decisions_default_to_twenty_and_take_a_limit_up_to_fifty() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let epoch = app.lead().await;
    for to in 1..=25 {
        app.record_decision(decision("contoso", "orders", to - 1, to, epoch))
            .await;
    }
    let newest_to = |status: &Value| -> Vec<u64> {
        status["decisions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["to"].as_u64().unwrap())
            .collect()
    };

    let default: Value = app.admin(Method::GET, SCALE).fetch_json().await;
    assert_eq!(newest_to(&default), (6..=25).rev().collect::<Vec<u64>>());
    let three: Value = app
        .admin(Method::GET, &format!("{SCALE}?decisions=3"))
        .fetch_json()
        .await;
    assert_eq!(newest_to(&three), [25, 24, 23]);
    let all: Value = app
        .admin(Method::GET, &format!("{SCALE}?decisions=50"))
        .fetch_json()
        .await;
    assert_eq!(newest_to(&all).len(), 25, "as many as there are");
}

#[tokio::test]
async fn bad_decision_limits_are_422_naming_the_parameter() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    for bad in ["0", "51", "-1", "ten", "2.5", ""] {
        let response = app
            .admin(Method::GET, &format!("{SCALE}?decisions={bad}"))
            .fetch()
            .await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "decisions={bad}"
        );
        assert_eq!(error_paths(&problem(response).await), ["decisions"]);
    }
}

#[tokio::test]
async fn scale_of_a_missing_or_foreign_app_is_404() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    app.with_app("fabrikam", "orders").await;
    let epoch = app.lead().await;
    app.record_decision(decision("fabrikam", "orders", 0, 4, epoch))
        .await;
    app.place(epoch, &[("fabrikam", "orders", 0, "w-f")]).await;

    for path in [
        "/v1/tenants/contoso/apps/nope/scale",
        "/v1/tenants/nobody/apps/orders/scale",
    ] {
        let missing = app.admin(Method::GET, path).fetch().await;
        assert_eq!(missing.status(), StatusCode::NOT_FOUND, "{path}");
        problem(missing).await;
    }

    let fabrikam = app.token_for("fabrikam", Role::Owner);
    let hidden = app
        .request(Method::GET, SCALE, Some(&fabrikam))
        .fetch()
        .await;
    assert_eq!(
        hidden.status(),
        StatusCode::NOT_FOUND,
        "another tenant's app does not exist for them"
    );

    let contoso: Value = app.admin(Method::GET, SCALE).fetch_json().await;
    assert_eq!(
        (
            contoso["desiredInstances"].clone(),
            contoso["currentInstances"].clone(),
            contoso["decisions"].clone()
        ),
        (json!(0), json!(0), json!([])),
        "the other tenant's app of the same name leaks nothing"
    );

    let anonymous = app.request(Method::GET, SCALE, None).fetch().await;
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
}
