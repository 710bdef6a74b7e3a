//! A new user's real `host.json` and `function.json`, pasted in: accepted, read back as written,
//! and the keys that do nothing in Shoal named in diagnostics.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::{Fetch, TestApp, error_paths, problem};

/// The `host.json` nearly every app starts from, with the sections users add most.
fn host_json() -> Value {
    json!({
        "version": "2.0",
        "logging": {
            "logLevel": {"default": "Information", "Function.ProcessOrder": "Debug"},
            "applicationInsights": {
                "samplingSettings": {"isEnabled": true, "excludedTypes": "Request"},
                "enableLiveMetricsFilters": true
            }
        },
        "extensionBundle": {
            "id": "Microsoft.Azure.Functions.ExtensionBundle",
            "version": "[4.*, 5.0.0)"
        },
        "functionTimeout": "00:05:00",
        "customHandler": {
            "description": {"defaultExecutablePath": "handler", "workingDirectory": "", "arguments": []},
            "enableForwardingHttpRequest": false
        },
        "extensions": {
            "http": {"routePrefix": "api"},
            "queues": {"batchSize": 8, "maxDequeueCount": 3},
            "serviceBus": {"messageHandlerOptions": {"maxConcurrentCalls": 32}}
        }
    })
}

/// Every key of `written` is in `read` with the same value (`read` may add defaults).
fn assert_contains(read: &Value, written: &Value, path: &str) {
    match (read, written) {
        (Value::Object(read), Value::Object(written)) => {
            for (key, value) in written {
                let at = format!("{path}.{key}");
                let found = read
                    .get(key)
                    .unwrap_or_else(|| panic!("{at} missing in {read:?}"));
                assert_contains(found, value, &at);
            }
        }
        _ => assert_eq!(read, written, "{path}"),
    }
}

#[tokio::test]
async fn a_pasted_host_json_and_function_json_are_stored_read_back_and_diagnosed() {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let body = json!({"handler": {"url": "http://127.0.0.1:7071/api"}, "hostConfig": host_json(),
        "appSettings": {"AzureWebJobsStorage": "UseDevelopmentStorage=true"}});
    let put = app.put_app("contoso", "orders", &body).await;
    assert_eq!(
        put.status(),
        StatusCode::CREATED,
        "{}",
        put.text().await.unwrap()
    );
    let function = json!({
        "scriptFile": "../bin/Orders.dll",
        "entryPoint": "Orders.ProcessOrder.Run",
        "generatedBy": "Microsoft.NET.Sdk.Functions.Generator-4.4.0",
        "configurationSource": "attributes",
        "disabled": false,
        "bindings": [
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}
        ]
    });
    let put = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/ProcessOrder",
        )
        .json(&function)
        .fetch()
        .await;
    assert_eq!(
        put.status(),
        StatusCode::CREATED,
        "{}",
        put.text().await.unwrap()
    );

    let read: Value = app
        .get("/v1/tenants/contoso/apps/orders")
        .await
        .json()
        .await
        .unwrap();
    assert_contains(&read["hostConfig"], &host_json(), "hostConfig");
    // The legacy key's value is today's key's value; both are returned.
    assert_eq!(
        read["hostConfig"]["extensions"]["serviceBus"]["maxConcurrentCalls"],
        32
    );
    let read: Value = app
        .get("/v1/tenants/contoso/apps/orders/functions/ProcessOrder")
        .await
        .json()
        .await
        .unwrap();
    assert_contains(&read, &function, "function");

    let diagnostics: Value = app
        .get("/v1/tenants/contoso/apps/orders/diagnostics")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(diagnostics["healthy"], true, "{diagnostics}");
    let status_of = |key: &str| {
        diagnostics["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["key"] == key)
            .map(|c| c["status"].as_str().unwrap().to_owned())
            .unwrap_or_else(|| panic!("no check for {key} in {diagnostics}"))
    };
    for key in [
        "hostConfig.version",
        "hostConfig.logging.logLevel.default",
        "hostConfig.logging.applicationInsights.samplingSettings.isEnabled",
        "hostConfig.extensionBundle.id",
        "hostConfig.customHandler.description.defaultExecutablePath",
        "hostConfig.extensions.http.routePrefix",
        "scriptFile",
        "entryPoint",
        "generatedBy",
        "configurationSource",
    ] {
        assert_eq!(status_of(key), "noEffect", "{key}");
    }
    assert_eq!(
        status_of("hostConfig.extensions.serviceBus.messageHandlerOptions.maxConcurrentCalls"),
        "ok"
    );
    let keys: Vec<&str> = diagnostics["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["key"].as_str())
        .collect();
    for meaningful in [
        "hostConfig.functionTimeout",
        "hostConfig.extensions.queues.batchSize",
        "hostConfig.customHandler.enableForwardingHttpRequest",
    ] {
        assert!(!keys.contains(&meaningful), "{meaningful} has an effect");
    }
}

#[tokio::test]
async fn a_misspelled_host_json_key_is_still_422_with_its_path() {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let body = json!({"handler": {"url": "http://127.0.0.1:7071/api"}, "hostConfig": {
        "version": "2.0",
        "logging": {"logLevel": {"default": "Information"}, "applicationInsight": {}},
        "customHandler": {"EnableForwardingHttpRequest": true}
    }});
    let response = app.put_app("contoso", "orders", &body).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let problem = problem(response).await;
    assert_eq!(
        error_paths(&problem),
        [
            "hostConfig.customHandler.EnableForwardingHttpRequest",
            "hostConfig.logging.applicationInsight",
        ]
    );
    assert!(
        problem
            .to_string()
            .contains("did you mean \\\"enableForwardingHttpRequest\\\"?"),
        "{problem}"
    );
}
