//! The provider driven by the real `terraform` against a real Shoal: each test starts `shoal
//! serve` on a scratch database and runs `terraform` with this build's provider through
//! `dev_overrides` (no `terraform init`).

mod support;

use serde_json::json;
use support::{Shoal, Workspace, assert_no_changes};

const APP: &str = "/v1/tenants/contoso/apps/orders";
const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions/ProcessOrder";

/// An app and a queue function; `queue` and `batch` vary between steps.
fn app_and_function(app: &str, queue: &str, batch: u32) -> String {
    format!(
        r#"
resource "shoal_function_app" "orders" {{
  tenant = "contoso"
  name   = "{app}"
  handler = {{
    url = "http://127.0.0.1:7071/api"
  }}
  app_settings = {{
    AzureWebJobsStorage = "UseDevelopmentStorage=true"
    DB_PASSWORD         = "hunter2"
  }}
  host_config = jsonencode({{
    extensions = {{ queues = {{ batchSize = {batch} }} }}
  }})
  scale = {{
    limit = 10
  }}
}}

resource "shoal_function" "process" {{
  function_app_id = shoal_function_app.orders.id
  name            = "ProcessOrder"
  config_json = jsonencode({{
    bindings = [
      {{ type = "queueTrigger", direction = "in", name = "order", queueName = "{queue}" }},
    ]
  }})
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn create_replan_update_drift_recreate_rename_and_destroy() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    // Create; the server's defaults come back without a diff on the next plan.
    ws.config(&app_and_function("orders", "orders", 16));
    ws.apply().ok();
    let (status, app) = shoal.get(APP).await;
    assert_eq!(status, 200, "{app}");
    assert_eq!(app["hostConfig"]["extensions"]["queues"]["batchSize"], 16);
    assert_eq!(app["scale"]["limit"], 10);
    assert_eq!(app["handler"]["timeoutSeconds"], 30, "the server's default");
    assert_eq!(
        app["appSettings"]["DB_PASSWORD"], "********",
        "the secret was stored and reads masked"
    );
    let (status, function) = shoal.get(FUNCTION).await;
    assert_eq!(status, 200, "{function}");
    assert_eq!(function["bindings"][0]["queueName"], "orders");
    assert_no_changes(&ws);
    let show = ws.run(&["show", "-no-color"]).ok();
    assert!(
        !show.stdout.contains("hunter2"),
        "app_settings is sensitive: {}",
        show.stdout
    );

    // In-place update: the app and function keep their ids, the API sees the new values.
    ws.config(&app_and_function("orders", "orders-v2", 8));
    let plan = ws.plan();
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains("2 to change, 0 to destroy"),
        "{}",
        plan.stdout
    );
    ws.apply().ok();
    assert_eq!(
        shoal.get(APP).await.1["hostConfig"]["extensions"]["queues"]["batchSize"],
        8
    );
    assert_eq!(
        shoal.get(FUNCTION).await.1["bindings"][0]["queueName"],
        "orders-v2"
    );
    assert_no_changes(&ws);

    // Drift: a change made through the API shows in the plan and the apply undoes it.
    let (status, body) = shoal.patch(APP, json!({"scale": {"limit": 3}})).await;
    assert_eq!(status, 200, "{body}");
    let plan = ws.plan();
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout.contains("~ limit") && plan.stdout.contains("3 -> 10"),
        "{}",
        plan.stdout
    );
    ws.apply().ok();
    assert_eq!(shoal.get(APP).await.1["scale"]["limit"], 10);
    assert_no_changes(&ws);

    // Deleted outside Terraform: planned for creation again, and re-created.
    assert_eq!(shoal.delete(FUNCTION).await, 204);
    let plan = ws.plan();
    assert_eq!(plan.code, 2);
    assert!(
        plan.stdout.contains("1 to add, 0 to change, 0 to destroy"),
        "{}",
        plan.stdout
    );
    ws.apply().ok();
    assert_eq!(shoal.get(FUNCTION).await.0, 200);
    assert_no_changes(&ws);

    // A new name replaces the app (and the function that belongs to it).
    ws.config(&app_and_function("orders-renamed", "orders-v2", 8));
    let plan = ws.plan();
    assert!(
        plan.stdout.contains("must be replaced")
            && plan.stdout.contains("2 to add, 0 to change, 2 to destroy"),
        "{}",
        plan.stdout
    );
    ws.apply().ok();
    assert_eq!(shoal.get(APP).await.0, 404, "the old app is gone");
    assert_eq!(
        shoal
            .get("/v1/tenants/contoso/apps/orders-renamed/functions/ProcessOrder")
            .await
            .0,
        200
    );
    assert_no_changes(&ws);

    ws.destroy().ok();
    assert_eq!(
        shoal.get("/v1/tenants/contoso/apps/orders-renamed").await.0,
        404
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn import_of_an_app_and_a_function_plans_no_changes() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let app = json!({
        "handler": {"url": "http://127.0.0.1:7071/api"},
        "appSettings": {"AzureWebJobsStorage": "UseDevelopmentStorage=true", "DB_PASSWORD": "hunter2"},
        "hostConfig": {"extensions": {"queues": {"batchSize": 8}}},
        "scale": {"limit": 10}
    });
    shoal.create(APP, app).await;
    let order =
        json!({"type": "queueTrigger", "direction": "in", "name": "order", "queueName": "orders"});
    shoal.create(FUNCTION, json!({ "bindings": [order] })).await;

    let ws = Workspace::new(&shoal);
    ws.config(&app_and_function("orders", "orders", 8));
    ws.run(&[
        "import",
        "-no-color",
        "shoal_function_app.orders",
        "/tenants/contoso/apps/orders",
    ])
    .ok();
    ws.run(&[
        "import",
        "-no-color",
        "shoal_function.process",
        "/tenants/contoso/apps/orders/functions/ProcessOrder",
    ])
    .ok();
    // The secret's raw value came from settings/list, so it matches the configuration; the
    // host config read back carries every server default, which means what the configuration
    // says: an empty plan, not an in-place update that reads as removing the defaults.
    assert_no_changes(&ws);
    ws.apply().ok();
    assert_no_changes(&ws);

    let bad = ws.run(&["import", "-no-color", "shoal_function_app.orders", "orders"]);
    assert_ne!(bad.code, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn validation_errors_show_at_their_attribute() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);
    ws.config(
        r#"
resource "shoal_function_app" "orders" {
  tenant = "contoso"
  name   = "orders"
  handler = {
    url             = "http://127.0.0.1:7071/api"
    timeout_seconds = 99999
  }
}
"#,
    );
    let run = ws.apply();
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("handler.timeoutSeconds"),
        "{}",
        run.stderr
    );
    // Terraform quotes the configuration line the attribute path points at.
    assert!(
        run.stderr.contains("timeout_seconds = 99999"),
        "{}",
        run.stderr
    );
    assert_eq!(shoal.get(APP).await.0, 404, "nothing was created");

    // A binding the API refuses: the message carries the path inside the document and sits at
    // `config_json`.
    ws.config(
        r#"
resource "shoal_function_app" "orders" {
  tenant  = "contoso"
  name    = "orders"
  handler = { url = "http://127.0.0.1:7071/api" }
}

resource "shoal_function" "process" {
  function_app_id = shoal_function_app.orders.id
  name            = "ProcessOrder"
  config_json = jsonencode({
    bindings = [{ type = "queueTrigger", direction = "in", name = "order", queueName = "Not A Queue" }]
  })
}
"#,
    );
    let run = ws.apply();
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("bindings[0].queueName"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("config_json = jsonencode"),
        "{}",
        run.stderr
    );
    assert_eq!(shoal.get(FUNCTION).await.0, 404, "nothing was created");

    // What the provider can tell before calling the API, it tells at plan time.
    ws.config(
        r#"
resource "shoal_function" "process" {
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
  disabled        = true
  config_json     = jsonencode({ bindings = [], disabled = true })
}
"#,
    );
    let run = ws.plan();
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("set it with the resource's `disabled` attribute"),
        "{}",
        run.stderr
    );
}

/// A name the API would refuse fails the plan at its attribute (before, `nightly#2` planned
/// cleanly and the apply created an app called `nightly`: `#` ended the URL's path); an unknown
/// role fails the apply at `role_definition`. With `RUST_BACKTRACE` set, as many developers
/// have it, no diagnostic carries a Rust backtrace.
#[tokio::test(flavor = "multi_thread")]
async fn names_and_roles_are_refused_at_their_attribute() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let mut ws = Workspace::new(&shoal);
    ws.set_env("RUST_BACKTRACE", "1");
    ws.config(
        r#"
resource "shoal_function_app" "nightly" {
  tenant = "contoso"
  name = "nightly#2"
  handler = { url = "http://127.0.0.1:7071/api" }
}
"#,
    );
    let plan = ws.plan();
    assert_eq!(plan.code, 1, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stderr.contains("Invalid function app name"),
        "{}",
        plan.stderr
    );
    // Terraform quotes the line the diagnostic's attribute path points at.
    assert!(
        plan.stderr.contains(r#"name = "nightly#2""#),
        "{}",
        plan.stderr
    );
    assert!(
        !plan.stderr.contains("Diagnostic::new"),
        "a backtrace in the diagnostic: {}",
        plan.stderr
    );
    let apply = ws.apply();
    assert_ne!(apply.code, 0);
    assert_eq!(
        shoal.get("/v1/tenants/contoso/apps/nightly").await.0,
        404,
        "nothing was created under a cut-off name"
    );

    ws.config(
        r#"
resource "shoal_service_principal" "pipeline" {
  tenant = "contoso"
  name   = "pipeline"
}

resource "shoal_role_assignment" "reads" {
  tenant       = "contoso"
  principal_id = shoal_service_principal.pipeline.principal_id
  role_definition = "NoSuchRole"
  scope        = "/tenants/contoso"
}
"#,
    );
    let apply = ws.apply();
    assert_ne!(apply.code, 0);
    assert!(
        apply.stderr.contains(r#"role_definition = "NoSuchRole""#),
        "the error sits at role_definition: {}",
        apply.stderr
    );
    assert!(
        !apply.stderr.contains("Diagnostic::new"),
        "a backtrace in the diagnostic: {}",
        apply.stderr
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_made_after_the_plan_is_not_overwritten() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);
    ws.config(&app_and_function("orders", "orders", 16));
    ws.apply().ok();

    ws.config(&app_and_function("orders", "orders", 4));
    ws.run(&["plan", "-no-color", "-out", "change.tfplan"]).ok();
    // Someone changes the app between the plan and its apply.
    let (status, body) = shoal.patch(APP, json!({"scale": {"limit": 7}})).await;
    assert_eq!(status, 200, "{body}");
    let run = ws.run(&["apply", "-no-color", "change.tfplan"]);
    assert_ne!(run.code, 0, "{}", run.stdout);
    assert!(
        run.stderr.contains("was changed outside Terraform"),
        "{}",
        run.stderr
    );
    let (_, app) = shoal.get(APP).await;
    assert_eq!(app["scale"]["limit"], 7, "the other change stands");
    assert_eq!(app["hostConfig"]["extensions"]["queues"]["batchSize"], 16);
}

fn stopped_app(settings: &str) -> String {
    format!(
        r#"
resource "shoal_function_app" "orders" {{
  tenant       = "contoso"
  name         = "orders"
  handler      = {{ url = "http://127.0.0.1:7071/api" }}
  app_settings = {{ {settings} }}
  state        = "Stopped"
  webhooks     = {{ requests_per_second = 5 }}
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn computed_scale_mode_state_and_webhook_defaults_plan_exactly() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    // The provider plans `scale.mode` from the setting, as the API derives it.
    ws.config(&stopped_app(r#"TARGET_BASED_SCALING_ENABLED = "0""#));
    ws.apply().ok();
    let (_, app) = shoal.get(APP).await;
    assert_eq!(app["scale"]["mode"], "incremental");
    assert_eq!(app["state"], "Stopped");
    assert_eq!(app["webhooks"]["requestsPerSecond"], 5);
    assert_eq!(
        app["webhooks"]["burst"], 10,
        "the server's default, twice the rate"
    );
    assert_no_changes(&ws);

    ws.config(&stopped_app(""));
    let plan = ws.plan();
    assert!(
        plan.stdout
            .contains(r#"~ mode              = "incremental" -> "target""#),
        "{}",
        plan.stdout
    );
    ws.apply().ok();
    assert_eq!(shoal.get(APP).await.1["scale"]["mode"], "target");
    assert_no_changes(&ws);
}
