use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;

use crate::helpers::*;

#[tokio::test]
async fn app_read_returns_what_was_written_plus_defaults() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let body = json!({
        "handler": {"url": "http://127.0.0.1:7071/api", "timeoutSeconds": 10},
        "appSettings": {"AzureWebJobsStorage": "UseDevelopmentStorage=true", "FEATURE": "on"},
        "hostConfig": {"extensions": {"queues": {"batchSize": 8}}},
    });
    let created = app.put_app("contoso", "orders", &body).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    assert_eq!(
        created.headers()["location"],
        "/v1/tenants/contoso/apps/orders"
    );
    let etag = etag_of(&created);
    let read = app.get("/v1/tenants/contoso/apps/orders").await;
    assert_eq!(etag_of(&read), etag);
    let read: Value = read.json().await.unwrap();
    assert_eq!(
        read["handler"],
        json!({"url": "http://127.0.0.1:7071/api", "timeoutSeconds": 10})
    );
    assert_eq!(read["appSettings"]["FEATURE"], "on");
    let queues = &read["hostConfig"]["extensions"]["queues"];
    assert_eq!(queues["batchSize"], 8);
    assert_eq!(queues["newBatchThreshold"], 4, "computed from batchSize");
    assert_eq!(queues["maxDequeueCount"], 5);
    assert_eq!(read["scale"]["mode"], "target");
    assert_eq!(read["state"], "Running");
    assert_eq!(read["etag"], etag.trim_matches('"'));
}

#[tokio::test]
async fn scale_mode_is_computed_from_the_app_setting() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let patched: Value = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"appSettings": {"TARGET_BASED_SCALING_ENABLED": "0"}}"#)
        .fetch_json()
        .await;
    assert_eq!(patched["scale"]["mode"], "incremental");
}

#[tokio::test]
async fn scale_visible_only_is_written_read_and_patched() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let defaulted: Value = app
        .put_app("contoso", "plain", &minimal_app())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(defaulted["scale"]["visibleOnly"], false, "off by default");

    let body =
        json!({"handler": {"url": "http://h.example"}, "scale": {"limit": 3, "visibleOnly": true}});
    let created = app.put_app("contoso", "orders", &body).await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let read: Value = app
        .get("/v1/tenants/contoso/apps/orders")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(read["scale"]["visibleOnly"], true);
    assert_eq!(read["scale"]["limit"], 3);

    let patched: Value = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"scale": {"visibleOnly": false}}"#)
        .fetch_json()
        .await;
    assert_eq!(patched["scale"]["visibleOnly"], false);
    assert_eq!(patched["scale"]["limit"], 3, "the rest of scale is kept");

    let bad = app
        .put_app(
            "contoso",
            "orders",
            &json!({"handler": {"url": "http://h.example"}, "scale": {"visibleOnly": "yes"}}),
        )
        .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(error_paths(&problem(bad).await), ["scale.visibleOnly"]);
}

#[tokio::test]
async fn secret_settings_are_masked_and_listed_only_through_settings_list() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let conn = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0;EndpointSuffix=core.windows.net";
    let body = json!({"handler": {"url": "http://h.example"}, "appSettings": {"Storage": conn, "REGION": "eu"}});
    let created: Value = app
        .put_app("contoso", "orders", &body)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(created["appSettings"]["Storage"], "********");
    assert_eq!(created["appSettings"]["REGION"], "eu");

    let listed: Value = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/settings/list",
        )
        .fetch_json()
        .await;
    assert_eq!(listed["appSettings"]["Storage"], conn);

    let reader = app.token_for("contoso", Role::Reader);
    let denied = app
        .request(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/settings/list",
            Some(&reader),
        )
        .fetch()
        .await;
    assert_eq!(denied.status(), StatusCode::FORBIDDEN);

    // Putting back what was read keeps the secret rather than storing the mask.
    let mut echoed = created.clone();
    echoed["appSettings"]["REGION"] = json!("us");
    assert_eq!(
        app.put_app("contoso", "orders", &echoed).await.status(),
        StatusCode::OK
    );
    let listed: Value = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/settings/list",
        )
        .fetch_json()
        .await;
    assert_eq!(
        listed["appSettings"],
        json!({"Storage": conn, "REGION": "us"})
    );
}

#[tokio::test]
async fn secrets_are_encrypted_at_rest() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let body = json!({"handler": {"url": "http://h.example"}, "appSettings": {"ApiPassword": "hunter2-very-secret"}});
    app.put_app("contoso", "orders", &body).await;
    use sqlx::Connection;
    let mut db = sqlx::PgConnection::connect(&app.database_url)
        .await
        .unwrap();
    let raw: Vec<u8> =
        sqlx::query_scalar("select value from app_settings where name = 'ApiPassword'")
            .fetch_one(&mut db)
            .await
            .unwrap();
    assert!(!String::from_utf8_lossy(&raw).contains("hunter2"));
}

#[tokio::test]
async fn if_match_with_a_stale_etag_is_412() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let first = app.put_app("contoso", "orders", &minimal_app()).await;
    let stale = etag_of(&first);
    let second = app.put_app("contoso", "orders", &minimal_app()).await;
    let fresh = etag_of(&second);
    assert_ne!(stale, fresh, "every write changes the ETag");

    let conditional = |etag: String| {
        app.admin(Method::PUT, "/v1/tenants/contoso/apps/orders")
            .header("if-match", etag)
            .json(&minimal_app())
    };
    assert_eq!(
        conditional(stale.clone()).fetch().await.status(),
        StatusCode::PRECONDITION_FAILED
    );
    assert_eq!(conditional(fresh).fetch().await.status(), StatusCode::OK);

    let patch = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .header("if-match", stale.clone())
        .json(&json!({"state": "Stopped"}))
        .fetch()
        .await;
    assert_eq!(patch.status(), StatusCode::PRECONDITION_FAILED);
    let delete = app
        .admin(Method::DELETE, "/v1/tenants/contoso/apps/orders")
        .header("if-match", stale)
        .fetch()
        .await;
    assert_eq!(delete.status(), StatusCode::PRECONDITION_FAILED);

    let create_only = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/orders")
        .header("if-none-match", "*")
        .json(&minimal_app())
        .fetch()
        .await;
    assert_eq!(create_only.status(), StatusCode::PRECONDITION_FAILED);
    let must_exist = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/absent")
        .header("if-match", "*")
        .json(&minimal_app())
        .fetch()
        .await;
    assert_eq!(must_exist.status(), StatusCode::PRECONDITION_FAILED);
}

#[tokio::test]
async fn merge_patch_removes_settings_with_null_and_keeps_the_rest() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let body = json!({"handler": {"url": "http://h.example"}, "appSettings": {"A": "1", "B": "2"}, "scale": {"limit": 5}});
    app.put_app("contoso", "orders", &body).await;
    let patched: Value = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .json(&json!({"appSettings": {"A": null, "C": "3"}, "scale": {"minimumInstances": 2}}))
        .fetch_json()
        .await;
    assert_eq!(patched["appSettings"], json!({"B": "2", "C": "3"}));
    assert_eq!(patched["scale"]["limit"], 5);
    assert_eq!(patched["scale"]["minimumInstances"], 2);
    assert_eq!(patched["handler"]["url"], "http://h.example/");
}

#[tokio::test]
async fn patch_of_a_missing_app_is_404() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let response = app
        .admin(Method::PATCH, "/v1/tenants/contoso/apps/absent")
        .json(&json!({"state": "Stopped"}))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn apps_of_a_missing_tenant_are_404() {
    let app = TestApp::spawn().await;
    assert_eq!(
        app.put_app("nobody", "orders", &minimal_app())
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        app.get("/v1/tenants/nobody/apps").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn tenant_app_quota_is_enforced_with_409() {
    let app = TestApp::spawn().await;
    app.admin(Method::PUT, "/v1/tenants/small")
        .json(&json!({"limits": {"maxApps": 1}}))
        .fetch()
        .await;
    assert_eq!(
        app.put_app("small", "one", &minimal_app()).await.status(),
        StatusCode::CREATED
    );
    let second = app.put_app("small", "two", &minimal_app()).await;
    assert_eq!(second.status(), StatusCode::CONFLICT);
    assert!(
        problem(second).await["detail"]
            .as_str()
            .unwrap()
            .contains("at most 1")
    );
    // Replacing the existing app is not a new app.
    assert_eq!(
        app.put_app("small", "one", &minimal_app()).await.status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn app_list_pages_and_reader_can_read_but_not_write() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    for i in 0..5 {
        app.put_app("contoso", &format!("app-{i}"), &minimal_app())
            .await;
    }
    let reader = app.token_for("contoso", Role::Reader);
    let page: Value = app
        .request(
            Method::GET,
            "/v1/tenants/contoso/apps?limit=3",
            Some(&reader),
        )
        .fetch_json()
        .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 3);
    let token = page["continuationToken"].as_str().unwrap();
    let rest: Value = app
        .request(
            Method::GET,
            &format!("/v1/tenants/contoso/apps?limit=3&continuationToken={token}"),
            Some(&reader),
        )
        .fetch_json()
        .await;
    let names: Vec<_> = rest["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["app-3", "app-4"]);
    assert!(rest.get("continuationToken").is_none());

    let write = app
        .request(Method::PUT, "/v1/tenants/contoso/apps/app-9", Some(&reader))
        .json(&minimal_app())
        .fetch()
        .await;
    assert_eq!(write.status(), StatusCode::FORBIDDEN);
    let contributor = app.token_for("contoso", Role::Contributor);
    let write = app
        .request(
            Method::PUT,
            "/v1/tenants/contoso/apps/app-9",
            Some(&contributor),
        )
        .json(&minimal_app())
        .fetch()
        .await;
    assert_eq!(write.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn app_validation_reports_every_field_path() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let body = json!({
        "handler": {"url": "file:///etc/passwd"},
        "hostConfig": {"extensions": {"queues": {"batchSize": 64, "maxPollingInterval": "00:00:00.050"}}},
        "appSettings": {"Bad Name": "x", "Count": 3},
    });
    let response = app.put_app("contoso", "orders", &body).await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let paths = error_paths(&problem(response).await);
    for want in [
        "handler.url",
        "hostConfig.extensions.queues.batchSize",
        "hostConfig.extensions.queues.maxPollingInterval",
    ] {
        assert!(
            paths.iter().any(|p| p == want),
            "missing {want} in {paths:?}"
        );
    }
    assert!(
        paths.iter().any(|p| p.starts_with("appSettings")),
        "{paths:?}"
    );
}

#[tokio::test]
async fn invalid_app_names_are_422_naming_the_parameter() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    for name in ["-lead", "trail-", "a", &"x".repeat(61), "under_score"] {
        let response = app.put_app("contoso", name, &minimal_app()).await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{name}"
        );
        assert_eq!(error_paths(&problem(response).await), vec!["app"]);
    }
}

#[tokio::test]
async fn diagnostics_report_unresolved_connections() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let function = json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders", "connection": "OrdersStorage"}]});
    let put = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/Process",
        )
        .json(&function)
        .fetch()
        .await;
    assert_eq!(
        put.status(),
        StatusCode::CREATED,
        "an unresolved connection is not a write error"
    );
    let diagnostics: Value = app
        .get("/v1/tenants/contoso/apps/orders/diagnostics")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(diagnostics["healthy"], false);
    assert_eq!(diagnostics["checks"][0]["status"], "error");

    app.admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .json(&json!({"appSettings": {"OrdersStorage__queueServiceUri": "https://acct.queue.core.windows.net"}}))
        .fetch().await;
    let diagnostics: Value = app
        .get("/v1/tenants/contoso/apps/orders/diagnostics")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        diagnostics["checks"][0]["status"], "ok",
        "the connection resolves"
    );
    // It signs in as the app's own identity, which the app does not have yet (never as the
    // worker's): still unhealthy, saying what is missing.
    assert_eq!(diagnostics["healthy"], false, "{diagnostics}");
    let identity = diagnostics["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["subject"] == "identity")
        .unwrap_or_else(|| panic!("no identity check: {diagnostics}"));
    assert_eq!(identity["status"], "error", "{diagnostics}");

    app.admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .json(&json!({
            "identity": {"type": "SystemAssigned"},
            "appSettings": {
                "OrdersStorage__tenantId": "72f988bf-86f1-41af-91ab-2d7cd011db47",
                "OrdersStorage__clientId": "0f8fad5b-d9cb-469f-a165-70867728950e",
            },
        }))
        .fetch()
        .await;
    let diagnostics: Value = app
        .get("/v1/tenants/contoso/apps/orders/diagnostics")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(diagnostics["healthy"], true, "{diagnostics}");
    assert_eq!(diagnostics["checks"][0]["status"], "ok");
    assert_eq!(diagnostics["connections"][0]["signsInAs"], "appIdentity");
}

/// A stream binding's diagnostics say how it signs in (protocol, mechanism, user, brokers), and
/// never the password or the connection string it signs in with.
#[tokio::test]
async fn diagnostics_say_how_stream_bindings_sign_in_without_their_secrets() {
    const HUB_KEY: &str = "c2VjcmV0LWV2ZW50LWh1Yi1rZXk=";
    const KAFKA_PASSWORD: &str = "s3cret-kafka-password";
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    app.admin(Method::PATCH, "/v1/tenants/contoso/apps/orders")
        .json(&json!({"appSettings": {
            "Hub": format!("Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=listen;SharedAccessKey={HUB_KEY};EntityPath=orders"),
            "Brokers": "broker-1:9092",
            "KafkaUser": "alice",
            "KafkaPassword": KAFKA_PASSWORD,
        }}))
        .fetch()
        .await;
    let function = json!({"bindings": [
        {"type": "eventHubTrigger", "direction": "in", "name": "order", "connection": "Hub"},
        {"type": "kafka", "direction": "out", "name": "shipped", "brokerList": "%Brokers%",
            "topic": "shipped", "protocol": "saslSsl", "authenticationMode": "scramSha256",
            "username": "%KafkaUser%", "password": "%KafkaPassword%"},
    ]});
    let put = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/Ship",
        )
        .json(&function)
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::CREATED);

    let body = app
        .get("/v1/tenants/contoso/apps/orders/diagnostics")
        .await
        .text()
        .await
        .unwrap();
    for secret in [HUB_KEY, KAFKA_PASSWORD, "SharedAccessKey"] {
        assert!(!body.contains(secret), "{secret} in {body}");
    }
    let diagnostics: Value = serde_json::from_str(&body).unwrap();
    let connections = diagnostics["connections"].as_array().unwrap();
    let of = |binding: &str| {
        connections
            .iter()
            .find(|c| c["binding"] == binding)
            .unwrap_or_else(|| panic!("no connection for {binding}: {diagnostics}"))
    };
    let hub = of("order");
    assert_eq!(hub["signsInAs"], "connectionString", "{hub}");
    assert_eq!(hub["protocol"], "SASL_SSL");
    assert_eq!(hub["mechanism"], "PLAIN");
    assert_eq!(hub["username"], "$ConnectionString");
    assert_eq!(
        hub["brokers"],
        json!(["contoso.servicebus.windows.net:9093"])
    );
    let kafka = of("shipped");
    assert_eq!(kafka["signsInAs"], "password", "{kafka}");
    assert_eq!(kafka["protocol"], "SASL_SSL");
    assert_eq!(kafka["mechanism"], "SCRAM-SHA-256");
    assert_eq!(kafka["username"], "alice");
    assert_eq!(kafka["brokers"], json!(["broker-1:9092"]));
}

#[tokio::test]
async fn concurrent_creates_never_overwrite_each_other() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let attempts = (0..8).map(|i| {
        let request = app
            .admin(Method::PUT, "/v1/tenants/contoso/apps/orders")
            .header("if-none-match", "*")
            .json(&json!({"handler": {"url": format!("http://h{i}.example")}}));
        async move {
            let response = request.fetch().await;
            (i, response.status())
        }
    });
    let outcomes = futures::future::join_all(attempts).await;
    let winners: Vec<_> = outcomes
        .iter()
        .filter(|(_, s)| *s == StatusCode::CREATED)
        .collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    assert!(
        outcomes
            .iter()
            .all(|(_, s)| *s == StatusCode::CREATED || *s == StatusCode::PRECONDITION_FAILED),
        "{outcomes:?}"
    );
    let stored: Value = app
        .get("/v1/tenants/contoso/apps/orders")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        stored["handler"]["url"],
        format!("http://h{}.example/", winners[0].0),
        "the winner's body is kept"
    );
}
