//! The API's request spans, and the store operations under them, exported over OTLP to a real
//! receiver (`shoal_testkit::otlp`), for a webhook call that carries its caller's `traceparent`.
//! The export is the process's tracer provider: nextest runs this test in a process of its own.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::json;
use shoal_api::identity::Role;
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use shoal_testkit::otlp::{self, OtlpReceiver};
use shoal_trace_export::settings::QueueSettings;
use shoal_trace_export::{ExportSettings, SamplerSetting, TraceExport};

use crate::helpers::{Fetch, TestApp};

const CALLER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

#[tokio::test]
async fn a_request_is_a_span_under_its_caller_with_its_store_operations_and_handler_call_under_it()
{
    let receiver = OtlpReceiver::start().await.unwrap();
    let export = TraceExport::install(ExportSettings {
        endpoint: receiver.endpoint().parse().unwrap(),
        service_name: "shoal-api-test".into(),
        sampler: SamplerSetting::ParentBasedAlwaysOn,
        queue: QueueSettings {
            schedule_delay: Duration::from_millis(100),
            ..QueueSettings::default()
        },
    })
    .unwrap();
    let handler = RecordingHandler::start(Behaviour::Respond(json!({
        "Outputs": {"res": {"statusCode": 200, "body": "ok"}}
    })))
    .await
    .unwrap();
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let body = json!({"handler": {"url": handler.url().as_str(), "timeoutSeconds": 5}});
    assert_eq!(
        app.put_app("contoso", "orders", &body).await.status(),
        StatusCode::CREATED
    );
    let response = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/order",
        )
        .json(&json!({"bindings": [
            {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"]},
            {"type": "http", "direction": "out", "name": "res"}]}))
        .fetch()
        .await;
    assert!(response.status().is_success(), "{}", response.status());
    let token = app.token_for("contoso", Role::FunctionInvoker);

    let response = app
        .request(Method::POST, "/webhooks/contoso/orders/order", Some(&token))
        .header("traceparent", CALLER)
        .body("secret order 1005")
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    let spans = receiver
        .wait_for(Duration::from_secs(20), |spans| {
            !otlp::named(spans, "POST /webhooks/{tenant}/{app}/{function}").is_empty()
        })
        .await
        .unwrap();
    let request = otlp::named(&spans, "POST /webhooks/{tenant}/{app}/{function}")[0].clone();
    assert_eq!(request["traceId"], "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(request["parentSpanId"], "b7ad6b7169203331");
    assert_eq!(request["kind"], 2, "a server span");
    assert_eq!(
        request["attributes"]["http.route"],
        "/webhooks/{tenant}/{app}/{function}"
    );
    assert_eq!(request["attributes"]["http.response.status_code"], 200);
    // The handler's parent is the exported call span, under the request's.
    let spans = receiver
        .wait_for(Duration::from_secs(20), |spans| {
            !otlp::named(spans, "invoke").is_empty()
        })
        .await
        .unwrap();
    let call = otlp::named(&spans, "invoke")[0];
    assert_eq!(call["parentSpanId"], request["spanId"]);
    assert_eq!(call["attributes"]["shoal.function"], "order");
    let seen = &handler.requests()[0];
    let traceparent = seen.header("traceparent").unwrap();
    assert_eq!(&traceparent[3..35], "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(&traceparent[36..52], call["spanId"]);
    // Saving the function: its store operations are spans under the request's.
    let put = "PUT /v1/tenants/{tenant}/apps/{app}/functions/{function}";
    let spans = receiver
        .wait_for(Duration::from_secs(20), |spans| {
            !otlp::named(spans, put).is_empty()
        })
        .await
        .unwrap();
    let saved = otlp::named(&spans, put)[0];
    let operations: Vec<&serde_json::Value> = spans
        .iter()
        .filter(|s| s["parentSpanId"] == saved["spanId"])
        .collect();
    assert!(
        operations.iter().any(|s| s["name"] == "db functions_put"),
        "{operations:#?}"
    );
    for operation in &operations {
        assert_eq!(operation["traceId"], saved["traceId"]);
        assert_eq!(operation["kind"], 3, "a client span: {operation:#}");
        assert_eq!(operation["attributes"]["db.system.name"], "postgresql");
        // A lookup that found nothing is an answer (`not_found`), not the database failing.
        assert!(operation["attributes"]["shoal.outcome"].is_string());
        assert_ne!(operation["status"]["code"], 2, "{operation:#}");
    }
    let put_span = operations
        .iter()
        .find(|s| s["name"] == "db functions_put")
        .expect("found above");
    assert_eq!(put_span["attributes"]["shoal.outcome"], "ok");
    let text = serde_json::to_string(&spans).unwrap();
    assert!(!text.contains("secret order"), "the body in a span: {text}");
    assert!(
        !text.contains("contoso/orders"),
        "a raw path in a span: {text}"
    );
    export.shut_down(Duration::from_secs(5)).await;
}
