//! An app's code calling another app's HTTP function as Azure code would: its managed-identity
//! token comes from the stock `ManagedIdentityCredential`, and the webhook ingress lets it
//! invoke exactly the functions its role assignments cover.

use reqwest::{Method, StatusCode};
use serde_json::json;
use shoal_domain::rbac::Scope;
use shoal_testkit::handler::{Behaviour, RecordingHandler};

use crate::helpers::{Fetch, TestApp};
use crate::identity_helpers::Identity;

#[tokio::test]
async fn a_managed_identity_token_invokes_what_its_role_covers_and_nothing_else() {
    let handler = RecordingHandler::start(Behaviour::Respond(json!({
        "Outputs": {"res": {"statusCode": 200, "body": {"served": true}}}
    })))
    .await
    .unwrap();
    let app = TestApp::spawn().await;
    assert!(app.put_tenant("contoso").await.status().is_success());
    // The calling app has a system-assigned identity; the called app has two HTTP functions.
    let caller = json!({"handler": {"url": "http://127.0.0.1:9/api"}, "identity": {"type": "SystemAssigned"}});
    let created = app.put_app("contoso", "caller", &caller).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let principal: serde_json::Value = created.json().await.unwrap();
    let principal =
        uuid::Uuid::parse_str(principal["identity"]["principalId"].as_str().unwrap()).unwrap();
    let called = json!({"handler": {"url": handler.url().as_str()}});
    assert_eq!(
        app.put_app("contoso", "orders", &called).await.status(),
        StatusCode::CREATED
    );
    for function in ["allowed", "private"] {
        let put = app
            .admin(
                Method::PUT,
                &format!("/v1/tenants/contoso/apps/orders/functions/{function}"),
            )
            .json(&json!({"bindings": [
                {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"]},
                {"type": "http", "direction": "out", "name": "res"}]}))
            .fetch()
            .await;
        assert!(put.status().is_success());
    }
    let scope = Scope::parse("/tenants/contoso/apps/orders/functions/allowed").unwrap();
    app.assign("contoso", principal, "Function Invoker", &scope)
        .await;

    let token = app
        .managed_identity_token("contoso", "caller", Identity::SystemAssigned)
        .await;
    let invoke = |function: &str| {
        app.client
            .post(format!("{}/webhooks/contoso/orders/{function}", app.base))
            .bearer_auth(&token)
            .body("{}")
    };
    let allowed = invoke("allowed").fetch().await;
    assert_eq!(allowed.status(), StatusCode::OK);
    assert_eq!(
        allowed.json::<serde_json::Value>().await.unwrap()["served"],
        true
    );
    assert_eq!(handler.count(), 1, "the handler was called once");
    // The sibling function is outside the assignment's scope: 403, and the handler is not called.
    assert_eq!(
        invoke("private").fetch().await.status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(handler.count(), 1);
    // The identity cannot manage anything either.
    let read = app
        .client
        .get(format!("{}/v1/tenants/contoso/apps/orders", app.base))
        .bearer_auth(&token)
        .fetch()
        .await;
    assert_eq!(read.status(), StatusCode::FORBIDDEN);
}
