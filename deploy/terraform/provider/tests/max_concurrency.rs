//! `shoal_function`'s `max_concurrency` with the real `terraform` against a real Shoal: sent on
//! create and update, drift after a change through the API planned and undone (also while the
//! configuration sets none), removing it removes the cap, a 422 shows at the attribute, import
//! and the data source read it.

mod support;

use serde_json::{Value, json};
use support::{
    ORDERS_QUEUE_TRIGGER, Shoal, Workspace, assert_no_changes, orders_app, orders_function,
    plan_changes, refused_plan, state_values,
};

const APP: &str = "/v1/tenants/contoso/apps/orders";
const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions/ProcessOrder";
const OTHER: &str = "/v1/tenants/contoso/apps/orders/functions/Audit";

/// The app and the queue-triggered `ProcessOrder` with `cap` (a `max_concurrency = N` line or
/// nothing).
fn config(cap: &str) -> String {
    orders_app("") + &orders_function("process", "ProcessOrder", ORDERS_QUEUE_TRIGGER, cap)
}

/// `maxConcurrency` as the API reads it (`null` when the function has no cap).
async fn cap(shoal: &Shoal, path: &str) -> Value {
    shoal.read(path, "/maxConcurrency").await
}

async fn patch_cap(shoal: &Shoal, cap: u32) {
    shoal
        .patch_ok(FUNCTION, json!({"maxConcurrency": cap}))
        .await;
}

/// The `max_concurrency` Terraform holds in state for `address`.
fn state_of(ws: &Workspace, address: &str) -> Value {
    state_values(ws, address)["max_concurrency"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn max_concurrency_create_update_drift_and_remove() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    ws.config(&config("max_concurrency = 5"));
    ws.apply().ok();
    assert_eq!(cap(&shoal, FUNCTION).await, 5);
    assert_no_changes(&ws);
    assert_eq!(state_of(&ws, "shoal_function.process"), 5);

    ws.config(&config("max_concurrency = 8"));
    let plan = plan_changes(&ws);
    assert!(plan.contains("5 -> 8"), "{plan}");
    ws.apply().ok();
    assert_eq!(cap(&shoal, FUNCTION).await, 8);
    assert_no_changes(&ws);

    // Drift: a cap changed through the API shows on the next plan and is put back.
    patch_cap(&shoal, 20).await;
    let plan = plan_changes(&ws);
    assert!(plan.contains("20 -> 8"), "{plan}");
    ws.apply().ok();
    assert_eq!(cap(&shoal, FUNCTION).await, 8);

    // Removed from the configuration: the function has no cap.
    ws.config(&config(""));
    let plan = plan_changes(&ws);
    assert!(plan.contains("8 -> null"), "{plan}");
    ws.apply().ok();
    assert_eq!(cap(&shoal, FUNCTION).await, Value::Null);
    assert_no_changes(&ws);

    // A cap added through the API to a function whose configuration sets none is drift too.
    patch_cap(&shoal, 3).await;
    let refreshed = ws.run(&["plan", "-refresh-only", "-no-color"]).ok().stdout;
    assert!(refreshed.contains("max_concurrency"), "{refreshed}");
    let plan = plan_changes(&ws);
    assert!(plan.contains("3 -> null"), "{plan}");
    ws.apply().ok();
    assert_eq!(cap(&shoal, FUNCTION).await, Value::Null);
    ws.destroy().ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn max_concurrency_errors_show_at_the_attribute() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    // Out of range: the API's 422 at `maxConcurrency` is shown at `max_concurrency`.
    ws.config(&config("max_concurrency = 0"));
    let run = ws.apply();
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains("`maxConcurrency`"), "{}", run.stderr);
    assert!(run.stderr.contains("max_concurrency = 0"), "{}", run.stderr);
    assert_eq!(shoal.get(FUNCTION).await.0, 404, "nothing was created");

    // On an HTTP-triggered function, which has no listener to cap.
    ws.config(
        r#"
resource "shoal_function" "hook" {
  function_app_id = shoal_function_app.orders.id
  name            = "Hook"
  config_json = jsonencode({
    bindings = [
      { type = "httpTrigger", direction = "in", name = "req" },
      { type = "http", direction = "out", name = "res" },
    ]
  })
  max_concurrency = 5
}

resource "shoal_function_app" "orders" {
  tenant  = "contoso"
  name    = "orders"
  handler = { url = "http://127.0.0.1:7071/api" }
}
"#,
    );
    let run = ws.apply();
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(run.stderr.contains("`maxConcurrency`"), "{}", run.stderr);
    assert!(run.stderr.contains("max_concurrency = 5"), "{}", run.stderr);
    assert_eq!(shoal.get(&format!("{APP}/functions/Hook")).await.0, 404);

    // `maxConcurrency` inside config_json is refused at plan time.
    ws.config(
        r#"
resource "shoal_function" "process" {
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
  config_json = jsonencode({
    bindings       = [{ type = "queueTrigger", direction = "in", name = "order", queueName = "orders" }]
    maxConcurrency = 5
  })
}
"#,
    );
    let stderr = refused_plan(&ws);
    assert!(
        stderr.contains("set it with the resource's `max_concurrency` attribute"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn import_of_functions_with_and_without_a_cap_plans_no_changes() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    shoal
        .create(
            APP,
            json!({"handler": {"url": "http://127.0.0.1:7071/api"}}),
        )
        .await;
    let queue = |name: &str| json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": name}]);
    shoal
        .create(
            FUNCTION,
            json!({"bindings": queue("orders"), "maxConcurrency": 7}),
        )
        .await;
    shoal
        .create(OTHER, json!({"bindings": queue("audit")}))
        .await;

    let ws = Workspace::new(&shoal);
    let functions = |cap: &str| {
        format!(
            r#"
resource "shoal_function" "process" {{
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
  config_json = jsonencode({{
    bindings = [{{ type = "queueTrigger", direction = "in", name = "m", queueName = "orders" }}]
  }})
  {cap}
}}

resource "shoal_function" "audit" {{
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "Audit"
  config_json = jsonencode({{
    bindings = [{{ type = "queueTrigger", direction = "in", name = "m", queueName = "audit" }}]
  }})
}}

data "shoal_function" "process" {{
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
}}

output "cap" {{
  value = data.shoal_function.process.max_concurrency
}}
"#
        )
    };
    ws.config(&functions("max_concurrency = 7"));
    for (address, id) in [
        (
            "shoal_function.process",
            "/tenants/contoso/apps/orders/functions/ProcessOrder",
        ),
        (
            "shoal_function.audit",
            "/tenants/contoso/apps/orders/functions/Audit",
        ),
    ] {
        ws.run(&["import", "-no-color", address, id]).ok();
    }
    assert_eq!(state_of(&ws, "shoal_function.process"), 7);
    assert_eq!(state_of(&ws, "shoal_function.audit"), Value::Null);
    assert_no_changes(&ws);

    // The data source reads the cap.
    ws.apply().ok();
    let out = ws.run(&["output", "-json"]).ok().stdout;
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["cap"]["value"], 7, "{out}");

    // A configuration without the cap plans its removal.
    ws.config(&functions(""));
    let plan = plan_changes(&ws);
    assert!(plan.contains("7 -> null"), "{plan}");
}
