//! Who sees app-setting values in app reads: only callers allowed `settings/list` (as Azure
//! shows a Reader none), and even they see secret values masked.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;

use crate::helpers::{Fetch, TestApp};

const MASK: &str = "********";

async fn app_with_settings() -> TestApp {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let body = json!({
        "handler": {"url": "https://handler.example.com/api"},
        "appSettings": {
            "Region": "westeurope",
            "DATABASE_URL": "postgres://app:hunter2@db.internal:5432/app",
            "Alerts": "https://hooks.slack.com/services/T000/B000/XXXX",
        }
    });
    assert_eq!(
        app.put_app("contoso", "orders", &body).await.status(),
        StatusCode::CREATED
    );
    app
}

async fn settings_seen(app: &TestApp, role: Role) -> (Value, Value) {
    let token = app.token_for("contoso", role);
    let one = app
        .request(Method::GET, "/v1/tenants/contoso/apps/orders", Some(&token))
        .fetch_json()
        .await;
    let list = app
        .request(Method::GET, "/v1/tenants/contoso/apps", Some(&token))
        .fetch_json()
        .await;
    (
        one["appSettings"].clone(),
        list["items"][0]["appSettings"].clone(),
    )
}

#[tokio::test]
async fn a_reader_sees_setting_names_but_no_values() {
    let app = app_with_settings().await;
    let (one, listed) = settings_seen(&app, Role::Reader).await;
    let expected = json!({"Alerts": MASK, "DATABASE_URL": MASK, "Region": MASK});
    assert_eq!(one, expected);
    assert_eq!(listed, expected);
}

#[tokio::test]
async fn an_owner_sees_plain_values_and_credentials_masked() {
    let app = app_with_settings().await;
    let (one, listed) = settings_seen(&app, Role::Owner).await;
    let expected = json!({"Alerts": MASK, "DATABASE_URL": MASK, "Region": "westeurope"});
    assert_eq!(one, expected);
    assert_eq!(listed, expected);
    let token = app.token_for("contoso", Role::Owner);
    let raw = app
        .request(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/settings/list",
            Some(&token),
        )
        .fetch_json()
        .await;
    assert_eq!(
        raw["appSettings"]["DATABASE_URL"],
        "postgres://app:hunter2@db.internal:5432/app"
    );
}

#[tokio::test]
async fn only_callers_who_may_read_the_credentials_may_move_where_they_are_sent() {
    let app = app_with_settings().await;
    let role = json!({
        "description": "Write apps, read no secrets",
        "permissions": {"actions": ["Shoal/apps/read", "Shoal/apps/write"]},
        "assignableScopes": ["/tenants/contoso"]
    });
    let created = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/roleDefinitions/App Writer",
        )
        .json(&role)
        .fetch()
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let (_, writer) = crate::rbac::principal_with_role(
        &app,
        "contoso",
        "writer",
        &[("App Writer", "/tenants/contoso")],
    )
    .await;
    let contributor = app.token_for("contoso", Role::Contributor);
    let owner = app.token_for("contoso", Role::Owner);
    let patch = |token: &str, host: &str| patch_authority(&app, token, host);
    for (who, token) in [("custom role", &writer), ("Contributor", &contributor)] {
        let response = patch(token, "https://attacker.example").fetch().await;
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{who}");
        let body = response.text().await.unwrap();
        assert!(body.contains("Store__authorityHost"), "{who}: {body}");
    }
    // A writer may still change everything else.
    let plain = app
        .request(
            Method::PATCH,
            "/v1/tenants/contoso/apps/orders",
            Some(&writer),
        )
        .header("content-type", "application/merge-patch+json")
        .json(&json!({"appSettings": {"Region": "northeurope"}}))
        .fetch()
        .await;
    assert_eq!(plain.status(), StatusCode::OK);
    let allowed = patch(&owner, "https://login.microsoftonline.us")
        .fetch()
        .await;
    assert_eq!(allowed.status(), StatusCode::OK);
    // Moving the client secret's endpoint is a route too; re-sending the same value is not.
    let moved = app
        .request(
            Method::PATCH,
            "/v1/tenants/contoso/apps/orders",
            Some(&contributor),
        )
        .header("content-type", "application/merge-patch+json")
        .json(&json!({"appSettings": {"Store__queueServiceUri": "https://attacker.example"}}))
        .fetch()
        .await;
    assert_eq!(moved.status(), StatusCode::FORBIDDEN);
    let same = app
        .request(
            Method::PATCH,
            "/v1/tenants/contoso/apps/orders",
            Some(&contributor),
        )
        .header("content-type", "application/merge-patch+json")
        .json(&json!({"appSettings": {"Region": "westus"}}))
        .fetch()
        .await;
    assert_eq!(
        same.status(),
        StatusCode::OK,
        "unchanged routes need nothing more"
    );
}

#[tokio::test]
async fn authority_hosts_are_entra_or_allowed_by_the_platform() {
    let app = app_with_settings().await;
    let owner = app.token_for("contoso", Role::Owner);
    let patch = |host: &str| patch_authority(&app, &owner, host);
    // Even the owner, who may read the secret, may not send it to any host.
    let refused = patch("https://sts.attacker.example").fetch().await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let problem = crate::helpers::problem(refused).await;
    assert_eq!(
        crate::helpers::error_paths(&problem),
        ["appSettings.Store__authorityHost"]
    );
    let detail = problem.to_string();
    assert!(
        detail.contains("not an Entra ID authority")
            && detail.contains("login.microsoftonline.com"),
        "{detail}"
    );
    for entra in [
        "https://login.microsoftonline.com",
        "https://login.chinacloudapi.cn/",
    ] {
        assert_eq!(
            patch(entra).fetch().await.status(),
            StatusCode::OK,
            "{entra}"
        );
    }
    // A platform admin allows the tenant's own authority; another tenant gains nothing by it.
    let allowed = app
        .admin(Method::PATCH, "/v1/tenants/contoso")
        .header("content-type", "application/merge-patch+json")
        .json(&json!({"egressAllow": ["sts.attacker.example"]}))
        .fetch()
        .await;
    assert_eq!(allowed.status(), StatusCode::OK);
    assert_eq!(
        patch("https://sts.attacker.example").fetch().await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.put_tenant("fabrikam").await.status(),
        StatusCode::CREATED
    );
    let other = app.token_for("fabrikam", Role::Owner);
    let elsewhere = app
        .request(
            Method::PUT,
            "/v1/tenants/fabrikam/apps/orders",
            Some(&other),
        )
        .json(&json!({
            "handler": {"url": "https://handler.example.com/api"},
            "appSettings": {"Store__authorityHost": "https://sts.attacker.example"}
        }))
        .fetch()
        .await;
    assert_eq!(elsewhere.status(), StatusCode::UNPROCESSABLE_ENTITY);
}

/// A PATCH of contoso's `orders` giving connection `Store` a client secret and `host` as its
/// authority host.
fn patch_authority(app: &TestApp, token: &str, host: &str) -> reqwest::RequestBuilder {
    app.request(
        Method::PATCH,
        "/v1/tenants/contoso/apps/orders",
        Some(token),
    )
    .header("content-type", "application/merge-patch+json")
    .json(&json!({"appSettings": {
        "Store__queueServiceUri": "https://a.queue.core.windows.net",
        "Store__clientId": "00000000-0000-0000-0000-000000000001",
        "Store__tenantId": "00000000-0000-0000-0000-000000000002",
        "Store__clientSecret": "s3cret",
        "Store__authorityHost": host,
    }}))
}
