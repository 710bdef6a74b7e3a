//! Quotas by default: a tenant without limits of its own gets the platform's defaults
//! (`--tenant-defaults`), a platform administrator can override each, and every write past one
//! is refused naming the limit and its value.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::ApiLimits;

use crate::helpers::*;

fn queue_function() -> Value {
    json!({"bindings": [
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}
    ]})
}

async fn with_defaults(defaults: &str) -> TestApp {
    TestApp::spawn_with(Options {
        limits: ApiLimits {
            tenant_defaults: defaults.parse().unwrap(),
            ..ApiLimits::default()
        },
        ..Options::default()
    })
    .await
}

fn detail(problem: &Value) -> &str {
    problem["detail"].as_str().unwrap()
}

#[tokio::test]
async fn a_tenant_without_limits_gets_the_platforms_defaults() {
    let app = with_defaults("maxApps=2,maxFunctionsPerApp=1,maxInstances=7").await;
    app.put_tenant("contoso").await;
    let tenant = app
        .get("/v1/tenants/contoso")
        .await
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(
        tenant["limits"],
        json!({"maxApps": null, "maxInstances": null, "maxFunctionsPerApp": null,
               "maxSettingsPerApp": null, "maxWebhookRequestsPerSecond": null})
    );
    assert_eq!(
        tenant["effectiveLimits"],
        json!({"maxApps": 2, "maxInstances": 7, "maxFunctionsPerApp": 1,
               "maxSettingsPerApp": 500, "maxWebhookRequestsPerSecond": 1000})
    );

    for name in ["one", "two"] {
        let created = app.put_app("contoso", name, &minimal_app()).await;
        assert_eq!(created.status(), StatusCode::CREATED);
    }
    let third = app.put_app("contoso", "three", &minimal_app()).await;
    assert_eq!(third.status(), StatusCode::CONFLICT);
    let third = problem(third).await;
    assert!(
        detail(&third).contains("tenant contoso may have at most 2 apps (its maxApps quota)"),
        "{third}"
    );
    // Replacing an app is not one more.
    assert_eq!(
        app.put_app("contoso", "one", &minimal_app()).await.status(),
        StatusCode::OK
    );

    let function = |name: &str| format!("/v1/tenants/contoso/apps/one/functions/{name}");
    let put = |name: &str| {
        app.admin(Method::PUT, &function(name))
            .json(&queue_function())
    };
    assert_eq!(put("first").fetch().await.status(), StatusCode::CREATED);
    let second = put("second").fetch().await;
    assert_eq!(second.status(), StatusCode::CONFLICT);
    let second = problem(second).await;
    assert!(
        detail(&second).contains("app one may have at most 1 functions"),
        "{second}"
    );
    assert!(detail(&second).contains("maxFunctionsPerApp"), "{second}");
    assert_eq!(put("first").fetch().await.status(), StatusCode::OK);
    // Another app has its own count.
    let other = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/two/functions/first")
        .json(&queue_function())
        .fetch()
        .await;
    assert_eq!(other.status(), StatusCode::CREATED);
    // A function for an app that does not exist still says so.
    let missing = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/nothing/functions/first",
        )
        .json(&queue_function())
        .fetch()
        .await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(detail(&problem(missing).await).contains("app nothing does not exist"));

    // A platform administrator raises the tenant's own limit over the default.
    let patched = app
        .admin(Method::PATCH, "/v1/tenants/contoso")
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"limits": {"maxApps": 3}}"#)
        .fetch()
        .await;
    assert_eq!(patched.status(), StatusCode::OK);
    let patched: Value = patched.json().await.unwrap();
    assert_eq!(patched["limits"]["maxApps"], 3);
    assert_eq!(patched["effectiveLimits"]["maxApps"], 3);
    assert_eq!(patched["effectiveLimits"]["maxInstances"], 7);
    assert_eq!(
        app.put_app("contoso", "three", &minimal_app())
            .await
            .status(),
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn settings_and_webhook_rates_past_the_quotas_are_422_at_their_fields() {
    let app = with_defaults("maxSettingsPerApp=2,maxWebhookRequestsPerSecond=50").await;
    app.put_tenant("contoso").await;
    let body = json!({
        "handler": {"url": "http://127.0.0.1:7071/api"},
        "appSettings": {"A": "1", "B": "2", "C": "3"},
        "webhooks": {"requestsPerSecond": 60, "burst": 101}
    });
    let refused = app.put_app("contoso", "orders", &body).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let refused = problem(refused).await;
    let errors: Vec<(&str, &str)> = refused["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap(), e["message"].as_str().unwrap()))
        .collect();
    assert_eq!(errors.len(), 3, "{refused}");
    assert_eq!(errors[0].0, "appSettings");
    assert!(
        errors[0].1.contains("at most 2 (maxSettingsPerApp)"),
        "{refused}"
    );
    assert_eq!(errors[1].0, "webhooks.requestsPerSecond");
    assert!(
        errors[1].1.contains("at most 50 requests a second"),
        "{refused}"
    );
    assert_eq!(errors[2].0, "webhooks.burst");
    assert!(errors[2].1.contains("at most 100"), "{refused}");
    // Nothing was written.
    assert_eq!(
        app.get("/v1/tenants/contoso/apps/orders").await.status(),
        StatusCode::NOT_FOUND
    );

    // Within the quotas (the app's default webhook rate, 100, is over this tenant's cap).
    let within = json!({
        "handler": {"url": "http://127.0.0.1:7071/api"},
        "appSettings": {"A": "1", "B": "2"},
        "webhooks": {"requestsPerSecond": 50}
    });
    assert_eq!(
        app.put_app("contoso", "orders", &within).await.status(),
        StatusCode::CREATED
    );
}
