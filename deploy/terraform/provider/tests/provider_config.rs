//! The provider block and its `SHOAL_*` fallbacks, against a real Shoal and the real
//! `terraform`: a service principal's client credentials, and configuration errors that name
//! the argument.

mod support;

use serde_json::json;
use support::{Shoal, Workspace};

const APP: &str = r#"
resource "shoal_function_app" "orders" {
  tenant  = "contoso"
  name    = "orders"
  handler = { url = "http://127.0.0.1:7071/api" }
  app_settings = { DB_PASSWORD = "hunter2" }
}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_service_principal_authenticates_with_client_credentials() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let (status, principal) = shoal
        .put("/v1/tenants/contoso/servicePrincipals/deployer", json!({}))
        .await;
    assert!(status == 201 || status == 200, "{principal}");
    let (status, credential) = shoal
        .send(
            reqwest::Method::POST,
            "/v1/tenants/contoso/servicePrincipals/deployer/secrets",
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 200, "{credential}");
    let (status, body) = shoal
        .put(
            "/v1/tenants/contoso/roleAssignments/6f1d2a3c-6c50-4d8e-9a43-1a8d6e0f5b21",
            json!({
                "principalId": principal["principalId"],
                "roleDefinitionId": "Contributor",
                "scope": "/tenants/contoso"
            }),
        )
        .await;
    assert!(status == 201 || status == 200, "{body}");

    let mut ws = Workspace::new(&shoal);
    ws.remove_env("SHOAL_TOKEN");
    ws.set_env("SHOAL_CLIENT_ID", credential["clientId"].as_str().unwrap());
    ws.set_env(
        "SHOAL_CLIENT_SECRET",
        credential["clientSecret"].as_str().unwrap(),
    );
    ws.config(APP);
    let run = ws.apply().ok();
    assert!(
        !run.stdout.contains("hunter2"),
        "the setting is sensitive: {}",
        run.stdout
    );
    assert_eq!(shoal.get("/v1/tenants/contoso/apps/orders").await.0, 200);

    // A wrong secret is refused at the token endpoint, and the error says so.
    ws.set_env("SHOAL_CLIENT_SECRET", "not-the-secret");
    let run = ws.plan();
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.contains("Cannot authenticate to Shoal"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("token endpoint"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_or_conflicting_credentials_name_the_argument() {
    let shoal = Shoal::start().await;
    let mut ws = Workspace::new(&shoal);
    ws.config(APP);

    ws.remove_env("SHOAL_TOKEN");
    let run = ws.plan();
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("Invalid Shoal provider configuration"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("set `token` (or SHOAL_TOKEN)"),
        "{}",
        run.stderr
    );

    ws.set_env("SHOAL_TOKEN", &shoal.token);
    ws.set_env("SHOAL_CLIENT_ID", "someone");
    let run = ws.plan();
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("not both"), "{}", run.stderr);

    ws.remove_env("SHOAL_CLIENT_ID");
    ws.set_env("SHOAL_ENDPOINT", "shoal.example.com");
    let run = ws.plan();
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("is not an http or https URL"),
        "{}",
        run.stderr
    );
}
