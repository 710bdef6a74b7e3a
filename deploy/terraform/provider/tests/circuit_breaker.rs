//! `shoal_function`'s `circuit_breaker` with the real `terraform` against a real Shoal: the
//! server's defaults come back without a diff, fields update in place, removing the block or
//! `notify_url` does what the documentation says, a 422 shows at its attribute, import plans
//! empty.

mod support;

use serde_json::{Value, json};
use support::{
    ORDERS_QUEUE_TRIGGER, Shoal, Workspace, assert_no_changes, orders_app, orders_function,
    refused_plan, state_values,
};

const APP: &str = "/v1/tenants/contoso/apps/orders";
const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions/ProcessOrder";
const OTHER: &str = "/v1/tenants/contoso/apps/orders/functions/Audit";

/// The app, `ProcessOrder` with `breaker` (a `circuit_breaker = {…}` line or nothing) and
/// `Audit`, which never sets one.
fn config(breaker: &str) -> String {
    const AUDIT: &str =
        r#"{ type = "queueTrigger", direction = "in", name = "entry", queueName = "audit" }"#;
    orders_app("")
        + &orders_function("process", "ProcessOrder", ORDERS_QUEUE_TRIGGER, breaker)
        + &orders_function("audit", "Audit", AUDIT, "")
}

async fn breaker(shoal: &Shoal, path: &str) -> Value {
    shoal.read(path, "/circuitBreaker").await
}

/// The `circuit_breaker` Terraform holds in state for `address`.
fn state_of(ws: &Workspace, address: &str) -> Value {
    state_values(ws, address)["circuit_breaker"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn circuit_breaker_create_update_remove_and_unset_the_webhook() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    // Create with some fields, spelled as a user might; the rest are the server's defaults.
    ws.config(&config(
        r#"circuit_breaker = {
    failure_threshold = 5
    window            = "00:01"
    notify_url        = "https://ops.example"
  }"#,
    ));
    ws.apply().ok();
    assert_eq!(
        breaker(&shoal, FUNCTION).await,
        json!({
            "enabled": true, "failureThreshold": 5, "window": "00:01:00", "halfOpen": true,
            "cooldown": "00:01:00", "notifyUrl": "https://ops.example/"
        })
    );
    assert_no_changes(&ws);
    // The user's spelling stays in state; the server's defaults fill the rest.
    assert_eq!(
        state_of(&ws, "shoal_function.process"),
        json!({
            "enabled": true, "failure_threshold": 5, "window": "00:01", "half_open": true,
            "cooldown": "00:01:00", "notify_url": "https://ops.example"
        })
    );
    assert_eq!(
        state_of(&ws, "shoal_function.audit"),
        json!({
            "enabled": true, "failure_threshold": 100, "window": "00:00:30", "half_open": true,
            "cooldown": "00:01:00", "notify_url": null
        })
    );

    // Update two fields in place; what the configuration leaves alone stays.
    ws.config(&config(
        r#"circuit_breaker = {
    failure_threshold = 9
    window            = "00:01"
    half_open         = false
    notify_url        = "https://ops.example"
  }"#,
    ));
    let plan = ws.plan();
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(plan.stdout.contains("1 to change"), "{}", plan.stdout);
    assert!(plan.stdout.contains("5 -> 9"), "{}", plan.stdout);
    ws.apply().ok();
    let read = breaker(&shoal, FUNCTION).await;
    assert_eq!(read["failureThreshold"], 9);
    assert_eq!(read["halfOpen"], false);
    assert_eq!(read["window"], "00:01:00");
    assert_eq!(read["notifyUrl"], "https://ops.example/");
    assert_no_changes(&ws);

    // `notify_url` left out of the block: the object is sent without it.
    ws.config(&config(r#"circuit_breaker = { failure_threshold = 9 }"#));
    ws.apply().ok();
    let read = breaker(&shoal, FUNCTION).await;
    assert!(read.get("notifyUrl").is_none(), "{read}");
    assert_eq!(read["halfOpen"], false, "kept: {read}");
    assert_no_changes(&ws);

    // The block removed: the function keeps its settings, and nothing is planned.
    ws.config(&config(""));
    assert_no_changes(&ws);
    ws.apply().ok();
    let read = breaker(&shoal, FUNCTION).await;
    assert_eq!(read["failureThreshold"], 9, "{read}");
    assert_eq!(read["halfOpen"], false, "{read}");

    // Removed while it held a webhook: the webhook goes, the rest stays, once.
    ws.config(&config(
        r#"circuit_breaker = { notify_url = "https://ops.example/hooks" }"#,
    ));
    ws.apply().ok();
    assert_eq!(
        breaker(&shoal, FUNCTION).await["notifyUrl"],
        "https://ops.example/hooks"
    );
    ws.config(&config(""));
    let plan = ws.plan();
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout
            .lines()
            .any(|l| l.contains("notify_url") && l.contains("-> null")),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("1 to change"), "{}", plan.stdout);
    ws.apply().ok();
    assert_eq!(
        breaker(&shoal, FUNCTION).await,
        json!({
            "enabled": true, "failureThreshold": 9, "window": "00:01:00", "halfOpen": false,
            "cooldown": "00:01:00"
        })
    );
    assert_no_changes(&ws);

    // Drift: a change made through the API shows on the next plan and is put back.
    let (status, body) = shoal
        .patch(
            FUNCTION,
            json!({"circuitBreaker": {"failureThreshold": 50}}),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    ws.config(&config(r#"circuit_breaker = { failure_threshold = 9 }"#));
    let plan = ws.plan();
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(plan.stdout.contains("50 -> 9"), "{}", plan.stdout);
    ws.apply().ok();
    assert_eq!(breaker(&shoal, FUNCTION).await["failureThreshold"], 9);
    assert_eq!(breaker(&shoal, OTHER).await["failureThreshold"], 100);
    ws.destroy().ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn circuit_breaker_errors_show_at_their_attribute() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    // The API's 422 on `circuitBreaker.window` sits at `circuit_breaker.window`: Terraform
    // quotes that line of the configuration.
    ws.config(&config(
        r#"circuit_breaker = {
    window = "02:00:00"
  }"#,
    ));
    let run = ws.apply();
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("circuitBreaker.window"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(r#"window = "02:00:00""#),
        "{}",
        run.stderr
    );
    assert_eq!(shoal.get(FUNCTION).await.0, 404, "nothing was created");

    // `circuitBreaker` inside config_json is refused at plan time.
    ws.config(
        r#"
resource "shoal_function" "process" {
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
  config_json = jsonencode({
    bindings       = [{ type = "queueTrigger", direction = "in", name = "order", queueName = "orders" }]
    circuitBreaker = { failureThreshold = 5 }
  })
}
"#,
    );
    // Terraform wraps the detail to its width.
    let stderr = refused_plan(&ws);
    assert!(
        stderr.contains("set it with the resource's `circuit_breaker` attribute"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn import_of_functions_with_and_without_a_breaker_plans_no_changes() {
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
            json!({
                "bindings": queue("orders"),
                "circuitBreaker": {"failureThreshold": 3, "cooldown": "00:05:00",
                                   "notifyUrl": "https://ops.example/hooks"}
            }),
        )
        .await;
    shoal
        .create(OTHER, json!({"bindings": queue("audit")}))
        .await;

    let ws = Workspace::new(&shoal);
    // The configuration spells the cooldown differently from the API's read; same duration.
    ws.config(
        r#"
resource "shoal_function" "process" {
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
  config_json = jsonencode({
    bindings = [{ type = "queueTrigger", direction = "in", name = "m", queueName = "orders" }]
  })
  circuit_breaker = {
    failure_threshold = 3
    cooldown          = "00:05"
    notify_url        = "https://ops.example/hooks"
  }
}

resource "shoal_function" "audit" {
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "Audit"
  config_json = jsonencode({
    bindings = [{ type = "queueTrigger", direction = "in", name = "m", queueName = "audit" }]
  })
}
"#,
    );
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
    assert_eq!(
        state_of(&ws, "shoal_function.process")["cooldown"],
        "00:05:00"
    );
    assert_eq!(state_of(&ws, "shoal_function.audit")["half_open"], true);
    assert_no_changes(&ws);
    assert_eq!(
        breaker(&shoal, FUNCTION).await,
        json!({
            "enabled": true, "failureThreshold": 3, "window": "00:00:30", "halfOpen": true,
            "cooldown": "00:05:00", "notifyUrl": "https://ops.example/hooks"
        })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_function_data_source_reads_the_breaker() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);
    ws.config(&format!(
        "{}{}",
        config(r#"circuit_breaker = { failure_threshold = 12 }"#),
        r#"
data "shoal_function" "process" {
  function_app_id = shoal_function_app.orders.id
  name            = shoal_function.process.name
}

output "threshold" {
  value = data.shoal_function.process.circuit_breaker.failure_threshold
}

output "cooldown" {
  value = data.shoal_function.process.circuit_breaker.cooldown
}
"#
    ));
    ws.apply().ok();
    let out = ws.run(&["output", "-json"]).ok().stdout;
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["threshold"]["value"], 12, "{out}");
    assert_eq!(out["cooldown"]["value"], "00:01:00", "{out}");
}
