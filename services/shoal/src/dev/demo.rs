//! The demo `shoal dev` sets up: a small handler (the kind of code a tenant deploys) and the
//! app `demo/hello` whose function `greet` is triggered by the queue `demo-in` and writes its
//! result to `demo-out`, whose function `orders` is triggered by the local Service Bus stand-in's
//! queue `demo-orders` and sends a receipt to `demo-receipts`, and whose function `welcome`
//! answers HTTP through the webhook ingress.

use std::collections::BTreeMap;

use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use shoal_domain::apps::AppSpec;
use shoal_domain::names::TenantName;
use shoal_domain::settings::settings_to_store;
use shoal_domain::webhooks::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP, WebhookSecret};
use shoal_store::crypto::Cipher;
use shoal_store::tenants::TenantWrite;
use shoal_store::{Precondition, TenantId, apps, begin_platform, begin_tenant, functions};
use shoal_store::{signing_secrets, tenants};

use super::service_bus::{ORDERS_QUEUE, RECEIPTS_QUEUE};

pub const TENANT: &str = "demo";
pub const APP: &str = "hello";
pub const FUNCTION: &str = "greet";
pub const HTTP_FUNCTION: &str = "welcome";
pub const SERVICE_BUS_FUNCTION: &str = "orders";
/// The app setting naming the local Service Bus stand-in (`connection: "ServiceBus"`).
const SERVICE_BUS_SETTING: &str = "ServiceBus";
pub const INPUT_QUEUE: &str = "demo-in";
pub const OUTPUT_QUEUE: &str = "demo-out";

/// Binds the demo handler to a free port; returns the listener and the handler's base URL.
pub async fn bind_handler() -> anyhow::Result<(tokio::net::TcpListener, String)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://127.0.0.1:{}/api", listener.local_addr()?.port());
    Ok((listener, url))
}

/// Serves the demo handler. It checks each request's Standard Webhooks signature with the
/// app's secret, as a real handler should.
pub fn start_handler(listener: tokio::net::TcpListener, secret: WebhookSecret) {
    let app = Router::new()
        .route("/api/{function}", post(handle))
        .with_state(std::sync::Arc::new(secret));
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::error!(error = %e, "the demo handler stopped");
        }
    });
}

async fn handle(
    State(secret): State<std::sync::Arc<WebhookSecret>>,
    Path(function): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let verified = match (
        header(HEADER_ID),
        header(HEADER_TIMESTAMP),
        header(HEADER_SIGNATURE),
    ) {
        (Some(id), Some(ts), Some(sig)) => ts
            .parse::<i64>()
            .is_ok_and(|ts| secret.verify(id, ts, &body, sig)),
        _ => false,
    };
    if !verified {
        return (StatusCode::UNAUTHORIZED, "bad webhook signature").into_response();
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    if let Some(req) = request["Data"].get("req") {
        // An HTTP trigger: answer through the `res` output.
        let name = req["Query"]["name"].as_str().unwrap_or("stranger");
        return axum::Json(json!({
            "Outputs": {"res": {
                "statusCode": 200,
                "headers": {"Content-Type": "application/json"},
                "body": {"greeting": format!("Welcome, {name}!"), "function": function},
            }},
            "Logs": [format!("welcomed {name:?}")],
        }))
        .into_response();
    }
    if let Some(order) = request["Data"].get("order") {
        // A Service Bus message: a receipt through the `receipt` output, with properties. The
        // body arrives as a string (as Azure passes it to custom handlers); JSON is read as such.
        let order = order
            .as_str()
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .unwrap_or_else(|| order.clone());
        let metadata = &request["Metadata"];
        return axum::Json(json!({
            "Outputs": {"receipt": {
                "Body": {"received": order, "function": function},
                "CorrelationId": metadata["MessageId"],
                "ApplicationProperties": {"deliveryCount": metadata["DeliveryCount"]},
            }},
            "Logs": [format!(
                "received order {} (delivery {})",
                metadata["MessageId"], metadata["DeliveryCount"]
            )],
        }))
        .into_response();
    }
    let text = request["Data"]["msg"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let attempt = request["Metadata"]["DequeueCount"].clone();
    axum::Json(json!({
        "Outputs": {"result": {
            "greeting": format!("Hello, {text}!"),
            "function": function,
            "attempt": attempt,
        }},
        "Logs": [format!("greeted {text:?} (attempt {attempt})")],
    }))
    .into_response()
}

/// Writes the demo tenant, app and function (replacing earlier runs' with this run's handler
/// and Azurite addresses) and returns the app's signing secret.
pub async fn ensure_app(
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    handler_url: &str,
    storage_connection: &str,
    service_bus_connection: &str,
) -> anyhow::Result<WebhookSecret> {
    let mut tx = begin_platform(pool).await?;
    if !tenants::exists(&mut tx, TENANT).await? {
        tenants::put(
            &mut tx,
            TENANT,
            &TenantWrite {
                display_name: "Demo".into(),
                limits: Default::default(),
                allow_host_identity: false,
                egress_allow: Vec::new(),
            },
            Precondition::None,
        )
        .await?;
    }
    shoal_store::commit(tx).await?;
    let tenant = TenantId::new(TenantName::parse(TENANT).map_err(anyhow::Error::msg)?);
    let body = json!({
        "handler": {"url": handler_url},
        "appSettings": {
            "AzureWebJobsStorage": storage_connection,
            SERVICE_BUS_SETTING: service_bus_connection,
        },
    });
    let written = AppSpec::parse(APP, &body).map_err(|e| anyhow::anyhow!("demo app: {e:?}"))?;
    let settings = settings_to_store(&written.spec.app_settings, &[])
        .map_err(|e| anyhow::anyhow!("demo app settings: {e:?}"))?;
    let mut tx = begin_tenant(pool, &tenant).await?;
    apps::put(
        &mut tx,
        &tenant,
        cipher,
        APP,
        &written.stored,
        &settings,
        Precondition::None,
    )
    .await
    .context("writing the demo app")?;
    functions::put(
        &mut tx,
        &tenant,
        APP,
        FUNCTION,
        &json!({"bindings": [
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": INPUT_QUEUE},
            {"type": "queue", "direction": "out", "name": "result", "queueName": OUTPUT_QUEUE}
        ]}),
        Precondition::None,
    )
    .await
    .context("writing the demo function")?;
    functions::put(
        &mut tx,
        &tenant,
        APP,
        SERVICE_BUS_FUNCTION,
        &json!({"bindings": [
            {"type": "serviceBusTrigger", "direction": "in", "name": "order",
             "queueName": ORDERS_QUEUE, "connection": SERVICE_BUS_SETTING},
            {"type": "serviceBus", "direction": "out", "name": "receipt",
             "queueName": RECEIPTS_QUEUE, "connection": SERVICE_BUS_SETTING}
        ]}),
        Precondition::None,
    )
    .await
    .context("writing the demo Service Bus function")?;
    functions::put(
        &mut tx,
        &tenant,
        APP,
        HTTP_FUNCTION,
        &json!({"bindings": [
            {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"]},
            {"type": "http", "direction": "out", "name": "res"}
        ]}),
        Precondition::None,
    )
    .await
    .context("writing the demo HTTP function")?;
    let secret = signing_secrets::get_or_create(&mut tx, &tenant, cipher, APP).await?;
    shoal_store::commit(tx).await?;
    Ok(secret)
}

/// Creates the demo's queues, so the printed commands work at once (Azurite starts empty).
pub async fn create_queues(storage_connection: &str) -> anyhow::Result<()> {
    let queues = shoal_connectors::StorageQueues::from_connection_string(
        storage_connection,
        &Default::default(),
    )?;
    for name in [INPUT_QUEUE, OUTPUT_QUEUE] {
        queues.queue(name)?.create_if_missing().await?;
    }
    Ok(())
}

/// The lines `shoal dev` prints about the demo: how to enqueue and where to look.
pub fn instructions(queue_endpoint: &str, sas: &str, api: &str, invoker: &str) -> String {
    let version = shoal_connectors::STORAGE_API_VERSION;
    let mut lines = BTreeMap::new();
    lines.insert("send", format!(
        "curl -s -X POST '{queue_endpoint}/{INPUT_QUEUE}/messages?{sas}' -H 'x-ms-version: {version}' \\\n      --data \"<QueueMessage><MessageText>$(printf 'world' | base64)</MessageText></QueueMessage>\""
    ));
    lines.insert("peek", format!(
        "curl -s '{queue_endpoint}/{OUTPUT_QUEUE}/messages?peekonly=true&numofmessages=32&{sas}' -H 'x-ms-version: {version}'"
    ));
    format!(
        "Demo: app {TENANT}/{APP}, function {FUNCTION}: queue {INPUT_QUEUE} → handler → queue {OUTPUT_QUEUE}.\n\n\
         Enqueue a message (base64, as Azure Functions expects):\n\n  {}\n\n\
         The worker's log shows the handler's line (\"greeted \\\"world\\\"\"); the result lands on {OUTPUT_QUEUE}\n\
         (its MessageText is base64 JSON):\n\n  {}\n\n\
         The app scales from zero: the scheduler places an instance on one of the three workers\n\
         about a second after the message arrives, and back to zero a minute after the queue is empty:\n\n  \
         curl -s {api}/v1/tenants/{TENANT}/apps/{APP}/scale -H \"Authorization: Bearer $SHOAL_TOKEN\"\n\n\
         Workers, their assignments and listener statistics:\n\n  \
         curl -s {api}/v1/workers -H \"Authorization: Bearer $SHOAL_TOKEN\"\n\n\
         The HTTP function {HTTP_FUNCTION} through the webhook ingress, with a token that holds only the\n\
         Function Invoker role in {TENANT} (add ?mode=async for a 202 and a status URL):\n\n  \
         export SHOAL_INVOKE_TOKEN={invoker}\n  \
         curl -s -X POST '{api}/webhooks/{TENANT}/{APP}/{HTTP_FUNCTION}?name=world' -H \"Authorization: Bearer $SHOAL_INVOKE_TOKEN\"\n",
        lines["send"], lines["peek"]
    )
}
