//! `POST …/functions/{function}/send`: put one test message on the function's trigger source —
//! the Storage queue of a `queueTrigger`, the Service Bus queue or topic of a
//! `serviceBusTrigger`, the topic or event hub of a `kafkaTrigger` / `eventHubTrigger`, the
//! queue of a `rabbitMQTrigger`, each sent by its kind (`crate::routes::kinds`) — as the
//! app, so the function receives it as it would any other message ("Send test message" in a
//! portal, `shoal send` on the command line).
//!
//! The path is an action on the function, named like its permission
//! (`Shoal/apps/functions/send/action`), as `…/pause`, `…/poison/replay` and
//! `…/signingSecret/regenerate` are: the message is not a resource of Shoal's that could be
//! read or deleted at a URL afterwards, it is the broker's once sent.
//!
//! The source is reached exactly as the poison endpoints reach it
//! ([`crate::routes::trigger_source`]): the app's settings and connections, its identities,
//! and every destination checked against the tenant's egress policy before it is dialled.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;
use shoal_domain::rbac::{Scope, actions};
use shoal_store::TenantId;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::kinds::{self, Target};
use super::trigger_source::FunctionContext;
use super::{TAG_FUNCTIONS, authorize};
use crate::access::Caller;
use crate::error::{ApiError, Problem};
use crate::extract::{FunctionPath, JsonBody};
use crate::state::AppState;
use shoal_domain::send_message as request;

/// Longest one send waits on the queue service or the brokers.
const SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// One message for the function's trigger. Give the body as `body` (a JSON string is sent as
/// its text, any other JSON value as its compact JSON) or as `bodyBase64` (bytes).
#[allow(dead_code)] // The schema of what `request::parse` reads; the handler takes raw JSON.
#[derive(Debug, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendRequest {
    /// The message: a string is sent as its text, any other JSON value as its JSON. Storage
    /// queues take 64 KiB as stored (about 48 KiB of body when the app's `messageEncoding` is
    /// base64), Service Bus 256 KiB with its properties, Kafka and Event Hubs 1 MiB, RabbitMQ
    /// 1 MiB with its headers (what workers take by default).
    pub body: Option<serde_json::Value>,
    /// The message's bytes in base64, instead of `body`.
    pub body_base64: Option<String>,
    /// Service Bus only: the message's session (required when the trigger reads sessions).
    pub session_id: Option<String>,
    /// Kafka and Event Hubs only: the record's key (it picks the partition).
    pub key: Option<String>,
    /// Service Bus application properties, or Kafka / Event Hubs / RabbitMQ headers (up to 64;
    /// numbers and booleans are sent as their text).
    #[schema(value_type = Option<std::collections::BTreeMap<String, String>>)]
    pub properties: Option<serde_json::Map<String, serde_json::Value>>,
}

/// What was sent, and where.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SendResult {
    /// The function's trigger type.
    pub trigger: String,
    /// The queue, Service Bus queue or topic, or the Kafka topic / event hub it went to.
    pub destination: String,
    /// The Storage queue's message id, the Service Bus or RabbitMQ `MessageId` (a new UUID), or
    /// `<partition>-<offset>` of the record; absent if the queue service named none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    /// Bytes of the message as sent (for a Storage queue, the text as stored).
    pub size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(send_message))
}

/// Send one test message to the function's trigger queue or topic, as the app. The function
/// receives it like any other message. Audited.
#[utoipa::path(post, path = "/v1/tenants/{tenant}/apps/{app}/functions/{function}/send", tag = TAG_FUNCTIONS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path), ("function" = shoal_domain::names::FunctionName, Path)),
    request_body = SendRequest,
    responses((status = 202, body = SendResult, description = "the message is on the trigger's queue or topic"),
        (status = 403, body = Problem), (status = 404, body = Problem),
        (status = 409, body = Problem, description = "the function's trigger takes no messages (httpTrigger, cosmosDBTrigger, timerTrigger), its settings do not resolve, or the egress policy refuses its destination"),
        (status = 422, body = Problem, description = "a bad field, an option the trigger kind does not carry, or a message larger than the trigger's source takes"),
        (status = 502, body = Problem, description = "the queue service or the brokers failed")))]
pub async fn send_message(
    State(state): State<AppState>,
    caller: Caller,
    FunctionPath(tenant, app, function): FunctionPath,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<SendResult>), ApiError> {
    let authorized = authorize(
        &state,
        &caller,
        actions::FUNCTIONS_SEND,
        &Scope::function(&tenant, &app, &function),
    )
    .await?;
    let request = request::parse(&body).map_err(ApiError::Validation)?;
    let id = TenantId::new(tenant);
    let context = FunctionContext::load(&state, &id, app.as_str(), function.as_str()).await?;
    let send = async {
        let Some(target) = Target::of(&context)? else {
            return Err(takes_no_messages(&context));
        };
        let trigger = target.binding.type_name();
        let routes = kinds::find(trigger).ok_or_else(|| {
            ApiError::Conflict(format!(
                "function {function}'s {trigger} takes no test message yet"
            ))
        })?;
        let sent = routes.send(target, request).await?;
        Ok(SendResult {
            trigger: trigger.to_owned(),
            destination: sent.destination,
            message_id: sent.message_id,
            size: sent.size,
            session_id: sent.session_id,
            partition: sent.partition,
            offset: sent.offset,
        })
    };
    let sent = match tokio::time::timeout(SEND_TIMEOUT, send).await {
        Ok(sent) => sent?,
        Err(_) => {
            return Err(ApiError::Storage(format!(
                "the trigger's queue or brokers did not answer within {} s",
                SEND_TIMEOUT.as_secs()
            )));
        }
    };
    // Audited after the send: the entry records what was done.
    let write = authorized.begin(&id).await?;
    write
        .commit(&format!(
            "/v1/tenants/{id}/apps/{app}/functions/{function}/send"
        ))
        .await?;
    Ok((StatusCode::ACCEPTED, Json(sent)))
}

/// Why a function whose trigger reads from nowhere Shoal reaches (or that has none) takes no
/// message.
fn takes_no_messages(context: &FunctionContext) -> ApiError {
    let (id, app, function) = (&context.tenant, &context.app, &context.function);
    match context.spec.trigger().map(|t| t.type_name()) {
        Some("httpTrigger") => ApiError::Conflict(format!(
            "function {function} has an httpTrigger: call it at its webhook, POST /webhooks/{id}/{app}/{function}, instead of sending it a message"
        )),
        kind => ApiError::Conflict(format!(
            "function {function} has {}, which Shoal does not take messages for: only a queueTrigger, serviceBusTrigger, kafkaTrigger, eventHubTrigger or rabbitMQTrigger reads a queue or topic a test message can be sent to",
            kind.map_or("no trigger".to_owned(), |k| format!("a {k}"))
        )),
    }
}
