//! The app a dispatch figure's worker hosts, written through the API as a user would: its
//! connection setting names the round's emulator (Azurite, the local Service Bus stand-in), so
//! it is written again in every round.

use anyhow::{Result, bail};
use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;

use super::QueuePlan;
use super::handler::Handler;
use crate::http::Connection;
use crate::server::{Server, ShoalBin};

pub(crate) const TENANT: &str = "bench";
pub(crate) const APP: &str = "dispatch";
pub(crate) const FUNCTION: &str = "bench";

/// The app's and its one function's bodies, as PUT through the API.
pub struct AppBodies {
    pub app: Value,
    pub function: Value,
}

/// The Storage Queue part's app: one queue-trigger function on `queue` of the round's Azurite,
/// with `maxConcurrency` when given.
pub fn queue_app(
    plan: &QueuePlan<'_>,
    azurite: &Azurite,
    handler: &Handler,
    queue: &str,
    max_concurrency: Option<u32>,
) -> AppBodies {
    let mut function = json!({"bindings": [
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": queue},
    ]});
    if let Some(cap) = max_concurrency {
        function["maxConcurrency"] = json!(cap);
    }
    AppBodies {
        app: json!({
            "handler": {"url": handler.url()},
            "appSettings": {"AzureWebJobsStorage": azurite.connection_string()},
            "hostConfig": {
                "version": "2.0",
                "extensions": {"queues": {
                    "batchSize": plan.batch_size,
                    "newBatchThreshold": plan.new_batch_threshold,
                    "messageEncoding": "none",
                }},
            },
        }),
        function,
    }
}

/// Starts `shoal serve` on the (migrated) scratch database and writes tenant, app and function
/// through the API (replacing them after the first round); the server is stopped again before
/// measuring, since the worker reads Postgres itself.
pub async fn write_app(
    shoal: &ShoalBin,
    database: &ScratchDatabase,
    bodies: &AppBodies,
) -> Result<()> {
    write_app_functions(
        shoal,
        database,
        &bodies.app,
        &[(FUNCTION.to_owned(), bodies.function.clone())],
    )
    .await
}

/// The app and several functions, by name (the timer figure's).
pub async fn write_app_functions(
    shoal: &ShoalBin,
    database: &ScratchDatabase,
    app: &Value,
    functions: &[(String, Value)],
) -> Result<()> {
    let server = Server::start(shoal, database.url()).await?;
    let written = put_app(shoal, &server, app, functions).await;
    let stopped = server.stop().await;
    written?;
    stopped
}

async fn put_app(
    shoal: &ShoalBin,
    server: &Server,
    app: &Value,
    functions: &[(String, Value)],
) -> Result<()> {
    let token = shoal.platform_admin_token(server).await?;
    let mut connection = Connection::open(server.addr(), Some(&token)).await?;
    let mut puts = vec![
        (
            format!("/v1/tenants/{TENANT}"),
            json!({"displayName": "Bench"}),
        ),
        (format!("/v1/tenants/{TENANT}/apps/{APP}"), app.clone()),
    ];
    puts.extend(functions.iter().map(|(name, body)| {
        (
            format!("/v1/tenants/{TENANT}/apps/{APP}/functions/{name}"),
            body.clone(),
        )
    }));
    for (path, body) in puts {
        let body = Bytes::from(serde_json::to_vec(&body)?);
        let (status, answer) = connection.send(Method::PUT, &path, Some(body)).await?;
        if !status.is_success() {
            bail!(
                "PUT {path}: {status}: {}",
                String::from_utf8_lossy(&answer)
                    .chars()
                    .take(500)
                    .collect::<String>()
            );
        }
    }
    Ok(())
}
