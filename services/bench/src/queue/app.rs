//! The app Shoal's figure dispatches to, written through the API as a user would: its
//! `AzureWebJobsStorage` names the round's Azurite, so it is written again in every round.

use anyhow::{Result, bail};
use bytes::Bytes;
use http::Method;
use serde_json::json;
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;

use super::QueuePlan;
use super::handler::Handler;
use crate::http::Connection;
use crate::server::Server;

const TENANT: &str = "bench";
const APP: &str = "dispatch";
const FUNCTION: &str = "bench";

/// Starts `shoal serve` on the (migrated) scratch database and writes tenant, app and function
/// through the API (replacing them after the first round); the server is stopped again before
/// measuring, since the worker reads Postgres itself.
pub async fn write_app(
    plan: &QueuePlan<'_>,
    database: &ScratchDatabase,
    azurite: &Azurite,
    handler: &Handler,
    queue: &str,
) -> Result<()> {
    let server = Server::start(plan.shoal, database.url()).await?;
    let written = put_app(plan, &server, azurite, handler, queue).await;
    let stopped = server.stop().await;
    written?;
    stopped
}

async fn put_app(
    plan: &QueuePlan<'_>,
    server: &Server,
    azurite: &Azurite,
    handler: &Handler,
    queue: &str,
) -> Result<()> {
    let token = plan.shoal.platform_admin_token(server).await?;
    let app = json!({
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
    });
    let function = json!({"bindings": [
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": queue},
    ]});
    let mut connection = Connection::open(server.addr(), Some(&token)).await?;
    for (path, body) in [
        (
            format!("/v1/tenants/{TENANT}"),
            json!({"displayName": "Bench"}),
        ),
        (format!("/v1/tenants/{TENANT}/apps/{APP}"), app),
        (
            format!("/v1/tenants/{TENANT}/apps/{APP}/functions/{FUNCTION}"),
            function,
        ),
    ] {
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
