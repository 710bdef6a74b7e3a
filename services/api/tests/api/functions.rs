use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

fn queue_function() -> Value {
    json!({"bindings": [
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"},
        {"type": "queue", "direction": "out", "name": "done", "queueName": "orders-done"}
    ]})
}

const PATH: &str = "/v1/tenants/contoso/apps/orders/functions/Process";

#[tokio::test]
async fn function_lifecycle() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let created = app
        .admin(Method::PUT, PATH)
        .json(&queue_function())
        .fetch()
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let body: Value = created.json().await.unwrap();
    assert_eq!(body["triggerType"], "queueTrigger");
    assert_eq!(body["bindings"][0]["queueName"], "orders");
    assert_eq!(body["disabled"], false);

    let replaced = app
        .admin(Method::PUT, PATH)
        .json(&queue_function())
        .fetch()
        .await;
    assert_eq!(replaced.status(), StatusCode::OK);
    let patched: Value = app
        .admin(Method::PATCH, PATH)
        .json(&json!({"disabled": true}))
        .fetch_json()
        .await;
    assert_eq!(patched["disabled"], true);
    assert_eq!(patched["bindings"], body["bindings"]);

    let list: Value = app
        .get("/v1/tenants/contoso/apps/orders/functions")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 1);

    assert_eq!(
        app.admin(Method::DELETE, PATH).fetch().await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(app.get(PATH).await.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        app.admin(Method::DELETE, PATH).fetch().await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn function_of_a_missing_app_is_404() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let response = app
        .admin(Method::PUT, PATH)
        .json(&queue_function())
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn deleting_the_app_deletes_its_functions() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    app.admin(Method::PUT, PATH)
        .json(&queue_function())
        .fetch()
        .await;
    app.admin(Method::DELETE, "/v1/tenants/contoso/apps/orders")
        .fetch()
        .await;
    app.put_app("contoso", "orders", &minimal_app()).await;
    assert_eq!(app.get(PATH).await.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn binding_errors_are_422_with_field_paths() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let cases = [
        (
            json!({"bindings": [{"type": "blobTrigger", "direction": "in", "name": "b"}]}),
            "bindings[0].type",
        ),
        (
            json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "Bad_Queue"}]}),
            "bindings[0].queueName",
        ),
        (
            json!({"bindings": [{"type": "queue", "direction": "out", "name": "o", "queueName": "out-q"}]}),
            "bindings",
        ),
        (
            json!({"bindings": [
            {"type": "queueTrigger", "direction": "in", "name": "a", "queueName": "q-one"},
            {"type": "queueTrigger", "direction": "in", "name": "b", "queueName": "q-two"}]}),
            "bindings",
        ),
        (
            json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "q-one", "colour": "red"}]}),
            "bindings[0].colour",
        ),
        (json!({"bindings": "nope"}), "bindings"),
    ];
    for (body, path) in cases {
        let response = app.admin(Method::PUT, PATH).json(&body).fetch().await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}"
        );
        let paths = error_paths(&problem(response).await);
        assert!(
            paths.iter().any(|p| p == path),
            "expected {path} in {paths:?} for {body}"
        );
    }
    let bad_name = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/9lives",
        )
        .json(&queue_function())
        .fetch()
        .await;
    assert_eq!(bad_name.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(bad_name).await), vec!["function"]);
}

/// Output names may use the trigger's binding data, as Azure's seed functions do (`out-{Id}`);
/// they are stored and read back as written.
#[tokio::test]
async fn output_names_with_binding_expressions_are_accepted() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let bindings = json!([
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"},
        {"type": "queue", "direction": "out", "name": "byId", "queueName": "out-{Id}"},
        {"type": "queue", "direction": "out", "name": "byRegion", "queueName": "{region}-%Env%"},
        {"type": "queue", "direction": "out", "name": "byDay", "queueName": "audit-{DateTime:yyyyMMdd}"}
    ]);
    let created = app
        .admin(Method::PUT, PATH)
        .json(&json!({"bindings": bindings}))
        .fetch()
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let body: Value = created.json().await.unwrap();
    assert_eq!(body["bindings"], bindings);
}

/// An expression the trigger can never supply, a malformed one, one in a trigger's own queue
/// name, or one in an event hub name is a 422 naming the field and the reason.
#[tokio::test]
async fn binding_expressions_a_function_cannot_resolve_are_422_with_the_reason() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let trigger =
        json!({"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"});
    let with_output = |output: Value| json!({"bindings": [trigger.clone(), output]});
    let cases = [
        (
            with_output(
                json!({"type": "queue", "direction": "out", "name": "o", "queueName": "out-{Id.x}"}),
            ),
            "bindings[1].queueName",
            "Id is a value, not an object",
        ),
        (
            with_output(
                json!({"type": "queue", "direction": "out", "name": "o", "queueName": "out-{Id"}),
            ),
            "bindings[1].queueName",
            "has no closing '}'",
        ),
        (
            with_output(
                json!({"type": "queue", "direction": "out", "name": "o", "queueName": "out_{Id}"}),
            ),
            "bindings[1].queueName",
            "'_' cannot be part of a queue name",
        ),
        (
            with_output(
                json!({"type": "serviceBus", "direction": "out", "name": "o", "queueName": "q-{sys.Nope}"}),
            ),
            "bindings[1].queueName",
            "sys has",
        ),
        (
            with_output(
                json!({"type": "eventHub", "direction": "out", "name": "o", "eventHubName": "h-{Id}"}),
            ),
            "bindings[1].eventHubName",
            "not resolved",
        ),
        (
            json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "in-{Id}"}]}),
            "bindings[0].queueName",
            "a trigger's queue name cannot have binding expressions",
        ),
        (
            json!({"bindings": [
                {"type": "serviceBusTrigger", "direction": "in", "name": "m", "queueName": "q", "isBatched": true},
                {"type": "queue", "direction": "out", "name": "o", "queueName": "out-{MessageId}"}
            ]}),
            "bindings[1].queueName",
            "MessageId is an array (MessageIdArray) for a batched serviceBusTrigger",
        ),
    ];
    for (body, path, reason) in cases {
        let response = app.admin(Method::PUT, PATH).json(&body).fetch().await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}"
        );
        let problem = problem(response).await;
        let errors = problem["errors"].as_array().unwrap();
        assert!(
            errors
                .iter()
                .any(|e| e["path"] == path && e["message"].as_str().unwrap().contains(reason)),
            "expected {path}: …{reason}… in {errors:?} for {body}"
        );
    }
}
