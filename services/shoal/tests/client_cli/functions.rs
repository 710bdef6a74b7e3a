//! `shoal func list|show|apply|delete`.

use serde_json::json;

use super::harness::{Server, User, function_file, queue_function};

pub const HANDLER: &str = "http://127.0.0.1:9/api";

/// The app `orders` with a storage connection for its queue triggers.
pub fn with_app(user: &User, storage: &str) {
    user.run(&[
        "app",
        "create",
        "orders",
        "--handler-url",
        HANDLER,
        "--setting",
        &format!("AzureWebJobsStorage={storage}"),
    ])
    .ok();
}

#[tokio::test]
async fn func_apply_creates_then_replaces_and_list_show_delete_read_it() {
    let server = Server::start().await;
    let user = User::owner_of(&server);
    with_app(&user, "UseDevelopmentStorage=true");
    let project = tempfile::tempdir().unwrap();
    let file = function_file(project.path(), "ship", &queue_function("orders"));
    let file = file.to_str().unwrap();

    let created = user
        .run(&["func", "apply", "--app", "orders", "-f", file])
        .ok();
    assert_eq!(
        created.stdout,
        "Created function ship of app orders (queueTrigger).\n"
    );
    function_file(
        project.path(),
        "ship",
        &json!({"bindings": queue_function("shipping")["bindings"], "disabled": true}),
    );
    let updated = user
        .run(&["func", "apply", "--app", "orders", "-f", file])
        .ok();
    assert_eq!(
        updated.stdout,
        "Updated function ship of app orders (queueTrigger).\n"
    );
    let shown = user
        .run(&["func", "show", "ship", "--app", "orders", "-o", "json"])
        .ok()
        .json();
    assert_eq!(shown["bindings"][0]["queueName"], "shipping");
    assert_eq!(shown["disabled"], true);
    let table = user.run(&["func", "list", "--app", "orders"]).ok();
    assert!(
        table.stdout.starts_with("NAME  TRIGGER       DISABLED")
            && table.stdout.contains("\nship  queueTrigger  true"),
        "{}",
        table.stdout
    );

    // A 422 names the field and the file.
    let bad = function_file(
        project.path(),
        "bad",
        &json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg"}]}),
    );
    let refused = user.run(&[
        "func",
        "apply",
        "--app",
        "orders",
        "-f",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(refused.code, 1, "{refused:#?}");
    assert!(
        refused.stderr.contains(
            "bad/function.json: PUT /v1/tenants/contoso/apps/orders/functions/bad answered 422"
        ) && refused.stderr.contains("\n  bindings[0].queueName: "),
        "{}",
        refused.stderr
    );
    let unreadable = user.run(&[
        "func",
        "apply",
        "--app",
        "orders",
        "-f",
        "/nonexistent/function.json",
    ]);
    assert_eq!(unreadable.code, 2, "{unreadable:#?}");
    assert!(
        unreadable.stderr.contains("-f /nonexistent/function.json"),
        "{}",
        unreadable.stderr
    );
    let unknown_app = user.run(&["func", "apply", "--app", "nosuch", "-f", file]);
    assert_eq!(unknown_app.code, 4, "{unknown_app:#?}");

    // Delete honours --if-match: a stale version is refused, the current one deleted.
    let etag = shown["etag"].as_str().unwrap();
    user.run(&["func", "apply", "--app", "orders", "-f", file])
        .ok();
    let stale = user.run(&[
        "func",
        "delete",
        "ship",
        "--app",
        "orders",
        "--if-match",
        &format!("\"{etag}\""),
    ]);
    assert_eq!(stale.code, 5, "{stale:#?}");
    user.run(&["func", "delete", "ship", "--app", "orders"])
        .ok();
    let gone = user.run(&["func", "show", "ship", "--app", "orders"]);
    assert_eq!(gone.code, 4, "{gone:#?}");
}
