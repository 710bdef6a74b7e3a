//! `shoal_tenant` with the real `terraform` against a real Shoal.

mod support;

use serde_json::json;
use support::{Shoal, Workspace, assert_no_changes};

fn tenant(display_name: &str, limits: &str) -> String {
    format!(
        r#"
resource "shoal_tenant" "contoso" {{
  name         = "contoso"
  display_name = "{display_name}"
  {limits}
}}

resource "shoal_function_app" "orders" {{
  tenant  = shoal_tenant.contoso.name
  name    = "orders"
  handler = {{ url = "http://127.0.0.1:7071/api" }}
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn tenant_create_update_import_and_destroy() {
    let shoal = Shoal::start().await;
    let ws = Workspace::new(&shoal);

    ws.config(&tenant("Contoso", ""));
    ws.apply().ok();
    let (status, body) = shoal.get("/v1/tenants/contoso").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["displayName"], "Contoso");
    assert_no_changes(&ws);

    ws.config(&tenant("Contoso Ltd", "limits = { max_apps = 5 }"));
    ws.apply().ok();
    let (_, body) = shoal.get("/v1/tenants/contoso").await;
    assert_eq!(body["displayName"], "Contoso Ltd");
    assert_eq!(body["limits"]["maxApps"], 5);
    assert_no_changes(&ws);

    // Drift in the quota is seen and undone.
    let (status, body) = shoal
        .patch("/v1/tenants/contoso", json!({"limits": {"maxApps": 1}}))
        .await;
    assert_eq!(status, 200, "{body}");
    let plan = ws.plan();
    assert_eq!(plan.code, 2, "{}", plan.stdout);
    ws.apply().ok();
    assert_eq!(
        shoal.get("/v1/tenants/contoso").await.1["limits"]["maxApps"],
        5
    );

    // Forgotten by Terraform, then imported back.
    ws.run(&["state", "rm", "shoal_tenant.contoso"]).ok();
    ws.run(&[
        "import",
        "-no-color",
        "shoal_tenant.contoso",
        "/tenants/contoso",
    ])
    .ok();
    assert_no_changes(&ws);

    ws.destroy().ok();
    assert_eq!(shoal.get("/v1/tenants/contoso").await.0, 404);
}
