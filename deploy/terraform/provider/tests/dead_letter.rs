//! `shoal_function`'s `dead_letter` with the real `terraform` against a real Shoal: a
//! `deadLetter` set through the API on a function whose configuration has none plans as drift
//! (the provider's PUT used to drop it unseen), the block is sent and read back, a change
//! through the API plans and is undone, removing the block removes the target, the
//! one-of-topic-or-queue rule is checked at plan time at its attribute, the API's 422 shows at
//! the attribute, import plans no change and the data source reads it.
//!
//! A `kafkaTrigger` binding's brokers are only text to the API (it does not connect on a
//! write), so no broker runs here.

mod support;

use serde_json::{Value, json};
use support::{
    Shoal, Workspace, assert_no_changes, orders_app, orders_function, plan_changes, refused_plan,
};

const APP: &str = "/v1/tenants/contoso/apps/orders";
const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions/ProcessOrder";

/// The app and the Kafka-triggered `ProcessOrder` with `rest` (a `dead_letter` block, another
/// attribute, or nothing).
fn config(rest: &str) -> String {
    const KAFKA: &str = r#"{ type = "kafkaTrigger", direction = "in", name = "event", brokerList = "broker.invalid:9092", topic = "orders" }"#;
    orders_app("") + &orders_function("process", "ProcessOrder", KAFKA, rest)
}

/// `deadLetter` as the API reads it (`null` when the function has none).
async fn dead_letter(shoal: &Shoal) -> Value {
    shoal.read(FUNCTION, "/deadLetter").await
}

async fn patch_dead_letter(shoal: &Shoal, target: Value) {
    shoal
        .patch_ok(FUNCTION, json!({ "deadLetter": target }))
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dead_letter_set_through_the_api_is_not_dropped_unseen() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    ws.config(&config(""));
    ws.apply().ok();
    assert_no_changes(&ws);

    // Set outside Terraform: the next plan must say it goes, not drop it unseen.
    patch_dead_letter(&shoal, json!({"topic": "orders-failed"})).await;
    let plan = plan_changes(&ws);
    assert!(plan.contains("dead_letter"), "{plan}");
    assert!(plan.contains("orders-failed"), "{plan}");

    // An update of something else plans the removal with it; nothing happens unplanned.
    ws.config(&config("max_concurrency = 4"));
    let plan = plan_changes(&ws);
    assert!(plan.contains("dead_letter"), "{plan}");
    ws.apply().ok();
    assert_eq!(dead_letter(&shoal).await, Value::Null);
    assert_no_changes(&ws);
    ws.destroy().ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn dead_letter_create_update_drift_and_remove() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    ws.config(&config(r#"dead_letter = { topic = "orders-failed" }"#));
    ws.apply().ok();
    assert_eq!(dead_letter(&shoal).await, json!({"topic": "orders-failed"}));
    assert_no_changes(&ws);

    // To a Storage queue: the topic goes, the queue and its connection are sent.
    let queue = r#"dead_letter = { queue_name = "failed-orders", connection = "Archive" }"#;
    ws.config(&config(queue));
    let plan = plan_changes(&ws);
    assert!(plan.contains("failed-orders"), "{plan}");
    ws.apply().ok();
    assert_eq!(
        dead_letter(&shoal).await,
        json!({"queueName": "failed-orders", "connection": "Archive"})
    );
    assert_no_changes(&ws);

    // Drift: a target changed through the API shows on the next plan and is put back. (A
    // PATCH merges, so the queue's fields are cleared with nulls.)
    patch_dead_letter(
        &shoal,
        json!({"topic": "elsewhere", "queueName": null, "connection": null}),
    )
    .await;
    let plan = plan_changes(&ws);
    assert!(plan.contains("elsewhere"), "{plan}");
    ws.apply().ok();
    assert_eq!(
        dead_letter(&shoal).await,
        json!({"queueName": "failed-orders", "connection": "Archive"})
    );

    // Removed from the configuration: the function goes back to `<topic>-poison`.
    ws.config(&config(""));
    let plan = plan_changes(&ws);
    assert!(plan.contains("dead_letter"), "{plan}");
    ws.apply().ok();
    assert_eq!(dead_letter(&shoal).await, Value::Null);
    assert_no_changes(&ws);
    ws.destroy().ok();
}

#[tokio::test(flavor = "multi_thread")]
async fn dead_letter_errors_show_at_the_attribute() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);

    // The block's own rules, at plan time, each at its attribute: Terraform quotes the
    // configuration line the diagnostic's path leads to.
    for (block, expected, line) in [
        (
            r#"dead_letter = {
    topic      = "a"
    queue_name = "b"
  }"#,
            "set either one, not both",
            r#"queue_name = "b""#,
        ),
        (
            r#"dead_letter = { connection = "Archive" }"#,
            "needs `topic` (a topic on the trigger's brokers) or `queue_name`",
            r#"dead_letter = { connection = "Archive" }"#,
        ),
        (
            r#"dead_letter = {
    topic      = "a"
    connection = "Archive"
  }"#,
            "dead_letter.connection applies to `queue_name`",
            r#"connection = "Archive""#,
        ),
        (
            r#"dead_letter = {
    queue_name = "b"
    connection = ""
  }"#,
            "leave it out for `AzureWebJobsStorage`",
            r#"connection = """#,
        ),
    ] {
        ws.config(&config(block));
        let stderr = refused_plan(&ws);
        assert!(stderr.contains(expected), "{block}: {stderr}");
        assert!(stderr.contains(&format!(": {line} ")), "{block}: {stderr}");
    }

    // A topic name the API refuses: its 422 at `deadLetter.topic` is shown at `topic`.
    ws.config(&config(
        r#"dead_letter = {
    topic = "bad topic"
  }"#,
    ));
    let run = ws.apply();
    assert_ne!(run.code, 0, "{}", run.stdout);
    let stderr = run.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(stderr.contains("`deadLetter.topic` must be"), "{stderr}");
    assert!(stderr.contains(r#": topic = "bad topic" "#), "{stderr}");
    assert_eq!(shoal.get(FUNCTION).await.0, 404, "nothing was created");

    // On a queue-triggered function, which has its own poison queue.
    ws.config(
        r#"
resource "shoal_function_app" "orders" {
  tenant  = "contoso"
  name    = "orders"
  handler = { url = "http://127.0.0.1:7071/api" }
}

resource "shoal_function" "audit" {
  function_app_id = shoal_function_app.orders.id
  name            = "Audit"
  config_json = jsonencode({
    bindings = [{ type = "queueTrigger", direction = "in", name = "m", queueName = "audit" }]
  })
  dead_letter = { topic = "audit-failed" }
}
"#,
    );
    let run = ws.apply();
    assert_ne!(run.code, 0, "{}", run.stdout);
    let stderr = run.stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(stderr.contains("`deadLetter`"), "{stderr}");
    assert!(stderr.contains("applies to stream triggers"), "{stderr}");
    assert!(stderr.contains("dead_letter = {"), "{stderr}");
    assert_eq!(shoal.get(&format!("{APP}/functions/Audit")).await.0, 404);

    // `deadLetter` inside config_json is refused at plan time.
    ws.config(
        r#"
resource "shoal_function" "process" {
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
  config_json = jsonencode({
    bindings   = [{ type = "kafkaTrigger", direction = "in", name = "event", brokerList = "broker.invalid:9092", topic = "orders" }]
    deadLetter = { topic = "orders-failed" }
  })
}
"#,
    );
    let stderr = refused_plan(&ws);
    assert!(
        stderr.contains("set it with the resource's `dead_letter` attribute"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn import_of_a_function_with_a_dead_letter_queue_plans_no_changes() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    shoal
        .create(
            APP,
            json!({"handler": {"url": "http://127.0.0.1:7071/api"}}),
        )
        .await;
    let kafka = json!([{"type": "kafkaTrigger", "direction": "in", "name": "event",
        "brokerList": "broker.invalid:9092", "topic": "orders"}]);
    shoal
        .create(
            FUNCTION,
            json!({"bindings": kafka, "deadLetter": {"queueName": "failed-orders"}}),
        )
        .await;

    let ws = Workspace::new(&shoal);
    let function = |rest: &str| {
        format!(
            r#"
resource "shoal_function" "process" {{
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
  config_json = jsonencode({{
    bindings = [{{ type = "kafkaTrigger", direction = "in", name = "event", brokerList = "broker.invalid:9092", topic = "orders" }}]
  }})
  {rest}
}}

data "shoal_function" "process" {{
  function_app_id = "/tenants/contoso/apps/orders"
  name            = "ProcessOrder"
}}

output "dead_letter" {{
  value = data.shoal_function.process.dead_letter
}}
"#
        )
    };
    ws.config(&function(
        r#"dead_letter = { queue_name = "failed-orders" }"#,
    ));
    ws.run(&[
        "import",
        "-no-color",
        "shoal_function.process",
        "/tenants/contoso/apps/orders/functions/ProcessOrder",
    ])
    .ok();
    assert_no_changes(&ws);

    // The data source reads the target.
    ws.apply().ok();
    let out = ws.run(&["output", "-json"]).ok().stdout;
    let out: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        out["dead_letter"]["value"],
        json!({"queue_name": "failed-orders", "topic": null, "connection": null}),
        "{out}"
    );

    // A configuration without the block plans its removal.
    ws.config(&function(""));
    let plan = plan_changes(&ws);
    assert!(plan.contains("failed-orders"), "{plan}");
}
