//! The data sources, read by the real `terraform` from a real Shoal.

mod support;

use serde_json::json;
use support::{Shoal, Workspace};

#[tokio::test(flavor = "multi_thread")]
async fn data_sources_read_apps_functions_roles_and_identities() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let (status, app) = shoal
        .put(
            "/v1/tenants/contoso/apps/orders",
            json!({
                "handler": {"url": "http://127.0.0.1:7071/api"},
                "scale": {"limit": 4},
                "identity": {"type": "SystemAssigned"}
            }),
        )
        .await;
    assert_eq!(status, 201, "{app}");
    let (status, body) = shoal
        .put(
            "/v1/tenants/contoso/apps/orders/functions/ProcessOrder",
            json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "order", "queueName": "orders"}]}),
        )
        .await;
    assert_eq!(status, 201, "{body}");

    let ws = Workspace::new(&shoal);
    ws.config(
        r#"
data "shoal_function_app" "orders" {
  tenant = "contoso"
  name   = "orders"
}

data "shoal_function" "process" {
  function_app_id = data.shoal_function_app.orders.id
  name            = "ProcessOrder"
}

data "shoal_role_definition" "invoker" {
  tenant = "contoso"
  name   = "Function Invoker"
}

data "shoal_function_app_identity" "orders" {
  function_app_id = data.shoal_function_app.orders.id
}

output "limit" { value = data.shoal_function_app.orders.scale.limit }
output "trigger" { value = data.shoal_function.process.trigger_type }
output "queue" { value = jsondecode(data.shoal_function.process.config_json).bindings[0].queueName }
output "role_id" { value = data.shoal_role_definition.invoker.id }
output "principal_id" { value = data.shoal_function_app_identity.orders.principal_id }
output "subject" { value = data.shoal_function_app_identity.orders.federated_subject }
"#,
    );
    ws.apply().ok();
    let outputs: serde_json::Value =
        serde_json::from_str(&ws.run(&["output", "-json"]).ok().stdout).unwrap();
    assert_eq!(outputs["limit"]["value"], 4);
    assert_eq!(outputs["trigger"]["value"], "queueTrigger");
    assert_eq!(outputs["queue"]["value"], "orders");
    assert!(
        outputs["role_id"]["value"]
            .as_str()
            .is_some_and(|s| s.len() == 36),
        "{outputs}"
    );
    assert_eq!(
        outputs["principal_id"]["value"],
        app["identity"]["principalId"]
    );
    assert_eq!(outputs["subject"]["value"], app["identity"]["principalId"]);

    // A name that does not exist is an error that says so.
    ws.config(
        r#"
data "shoal_function_app" "missing" {
  tenant = "contoso"
  name   = "nope"
}
"#,
    );
    let run = ws.plan();
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
}
