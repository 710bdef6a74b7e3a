//! `shoal_function_app`'s `handler.health` with the real `terraform` against a real Shoal: a
//! check set outside Terraform is shown before an apply removes it, the server's defaults come
//! back without a diff, fields update in place, drift is planned and undone, removing the block
//! removes the check, a 422 shows at its attribute, import plans empty.

mod support;

use serde_json::{Value, json};
use support::{Shoal, Workspace, assert_no_changes, orders_app, plan_changes, state_values};

const APP: &str = "/v1/tenants/contoso/apps/orders";

/// The app, its handler with `extra` (more lines of the `handler` object, or nothing).
fn config(extra: &str) -> String {
    orders_app(extra)
}

/// The app's `handler.health` as the API reads it.
async fn health(shoal: &Shoal) -> Value {
    shoal.read(APP, "/handler/health").await
}

async fn patch_health(shoal: &Shoal, health: Value) {
    shoal
        .patch_ok(APP, json!({"handler": {"health": health}}))
        .await;
}

/// The `handler.health` Terraform holds in state.
fn state_of(ws: &Workspace) -> Value {
    state_values(ws, "shoal_function_app.orders")["handler"]["health"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_health_check_set_outside_terraform_is_planned_not_dropped_silently() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);
    ws.config(&config(""));
    ws.apply().ok();

    // Someone adds a health check through the API; the configuration then changes the timeout.
    patch_health(&shoal, json!({"path": "/healthz"})).await;
    ws.config(&config("timeout_seconds = 60"));
    let plan = plan_changes(&ws);
    assert!(plan.contains("30 -> 60"), "{plan}");
    // The PUT of the handler replaces the check too: the plan says so.
    assert!(
        plan.lines()
            .any(|l| l.contains("path") && l.contains(r#""/healthz" -> null"#)),
        "the check's removal is planned:\n{plan}"
    );
    ws.apply().ok();
    assert_eq!(health(&shoal).await, Value::Null, "removed, as planned");
    assert_no_changes(&ws);

    // Written in the configuration, the check survives an apply of another change.
    ws.config(&config(
        r#"timeout_seconds = 60
    health = { path = "/healthz" }"#,
    ));
    ws.apply().ok();
    ws.config(&config(
        r#"timeout_seconds = 45
    health = { path = "/healthz" }"#,
    ));
    ws.apply().ok();
    let (_, app) = shoal.get(APP).await;
    assert_eq!(app["handler"]["timeoutSeconds"], 45, "{app}");
    assert_eq!(app["handler"]["health"]["path"], "/healthz", "{app}");
    assert_no_changes(&ws);
}

#[tokio::test(flavor = "multi_thread")]
async fn health_check_create_update_drift_and_remove() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    // A path alone: the server's defaults fill the rest, and the re-plan is empty.
    ws.config(&config(r#"health = { path = "/healthz" }"#));
    ws.apply().ok();
    let defaults = json!({
        "path": "/healthz", "intervalSeconds": 5, "timeoutSeconds": 1,
        "failureThreshold": 3, "successThreshold": 1
    });
    assert_eq!(health(&shoal).await, defaults);
    assert_no_changes(&ws);
    assert_eq!(
        state_of(&ws),
        json!({
            "path": "/healthz", "interval_seconds": 5, "timeout_seconds": 1,
            "failure_threshold": 3, "success_threshold": 1
        })
    );

    // Fields update in place.
    let tuned = r#"health = {
      path             = "/healthz"
      interval_seconds = 10
      timeout_seconds  = 2
    }"#;
    ws.config(&config(tuned));
    let plan = plan_changes(&ws);
    assert!(plan.contains("1 to change"), "{plan}");
    assert!(plan.contains("5 -> 10"), "{plan}");
    ws.apply().ok();
    let read = health(&shoal).await;
    assert_eq!(read["intervalSeconds"], 10, "{read}");
    assert_eq!(read["timeoutSeconds"], 2, "{read}");
    assert_eq!(read["failureThreshold"], 3, "{read}");
    assert_no_changes(&ws);

    // Drift: changes made through the API show on the next plan and are put back.
    patch_health(&shoal, json!({"path": "/ready", "intervalSeconds": 30})).await;
    let plan = plan_changes(&ws);
    assert!(plan.contains("30 -> 10"), "{plan}");
    assert!(plan.contains(r#""/ready" -> "/healthz""#), "{plan}");
    ws.apply().ok();
    let read = health(&shoal).await;
    assert_eq!(read["path"], "/healthz", "{read}");
    assert_eq!(read["intervalSeconds"], 10, "{read}");

    // A field left out keeps the value the app has, as every Optional+Computed field does.
    ws.config(&config(r#"health = { path = "/healthz" }"#));
    assert_no_changes(&ws);

    // The block removed: the check goes.
    ws.config(&config(""));
    let plan = plan_changes(&ws);
    assert!(plan.contains(r#""/healthz" -> null"#), "{plan}");
    ws.apply().ok();
    assert_eq!(health(&shoal).await, Value::Null);
    assert_no_changes(&ws);
    ws.destroy().ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn health_check_errors_show_at_their_attribute() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    // Both of the API's 422 field errors sit at their attributes: Terraform quotes their lines.
    ws.config(&config(
        r#"health = {
      path            = "healthz"
      timeout_seconds = 10
    }"#,
    ));
    let run = ws.apply();
    assert_ne!(run.code, 0, "{}", run.stdout);
    for expected in [
        "handler.health.path",
        r#"path            = "healthz""#,
        "handler.health.timeoutSeconds",
        "timeout_seconds = 10",
    ] {
        assert!(run.stderr.contains(expected), "{expected}:\n{}", run.stderr);
    }
    assert_eq!(shoal.get(APP).await.0, 404, "nothing was created");
}

#[tokio::test(flavor = "multi_thread")]
async fn import_of_an_app_with_a_health_check_plans_no_changes() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    shoal
        .create(
            APP,
            json!({"handler": {
                "url": "http://127.0.0.1:7071/api",
                "health": {"path": "/healthz", "failureThreshold": 5}
            }}),
        )
        .await;

    let ws = Workspace::new(&shoal);
    let resource = config(
        r#"health = {
      path              = "/healthz"
      failure_threshold = 5
    }"#,
    );
    ws.config(&resource);
    ws.run(&[
        "import",
        "-no-color",
        "shoal_function_app.orders",
        "/tenants/contoso/apps/orders",
    ])
    .ok();
    assert_eq!(
        state_of(&ws),
        json!({
            "path": "/healthz", "interval_seconds": 5, "timeout_seconds": 1,
            "failure_threshold": 5, "success_threshold": 1
        })
    );
    assert_no_changes(&ws);

    // The data source reads the check.
    ws.config(&format!(
        r#"{resource}
data "shoal_function_app" "orders" {{
  tenant = "contoso"
  name   = shoal_function_app.orders.name
}}

output "interval" {{
  value = data.shoal_function_app.orders.handler.health.interval_seconds
}}
"#
    ));
    ws.apply().ok();
    let out = ws.run(&["output", "-json"]).ok().stdout;
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["interval"]["value"], 5, "{out}");
}
