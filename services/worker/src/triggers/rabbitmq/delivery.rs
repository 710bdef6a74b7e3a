//! One RabbitMQ message, from delivery to settlement: invoke the handler under the function's
//! retry policy; acknowledge on success; on a final failure publish a copy with the requeue
//! count raised and acknowledge the original, or at the fifth failure reject it to the queue's
//! dead-letter exchange (`shoal_domain::binding_kinds::rabbitmq::after_failure`).
//!
//! A message that cannot be handled now for reasons of Shoal's, not the message's — the
//! breaker opened, the drain deadline passed, the handler could not take it for as long as it
//! could be held — goes back to the queue with `basic.nack` and requeue, costing it no
//! failure. Acknowledgements go through the channel's `acker`, which sends a run of them as
//! one frame. Every settlement is tried a few times (`backoff::settle`); if it still fails the
//! channel is likely gone and the broker requeues the message itself, so it may be delivered
//! again but is never lost. A far-off retry is not parked at the broker (AMQP has no delayed
//! redelivery without a plugin): it is waited for in hand, as a Service Bus message's short
//! retries are.

use serde_json::{Map, Value};
use shoal_connectors::amqp::headers;
use shoal_connectors::amqp::lapin::message::Delivery;
use shoal_connectors::amqp::lapin::options::{
    BasicNackOptions, BasicPublishOptions, BasicRejectOptions,
};
use shoal_connectors::amqp::lapin::types::{AMQPValue, FieldTable};
use shoal_connectors::amqp::lapin::{BasicProperties, Channel};
use shoal_domain::binding_kinds::rabbitmq::{
    self, AfterFailure, Properties, REQUEUE_COUNT_HEADER, WEBHOOK_ID_HEADER, after_failure,
};
use shoal_domain::durable_retry::RetryState;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use uuid::Uuid;

use crate::breaker::Turn;
use crate::invocation::{FunctionHost, Hold, Retries, Unsettled};
use crate::spans;
use crate::triggers::backoff;
use crate::triggers::rabbitmq::BoundRabbitMq;
use crate::triggers::rabbitmq::acker::Acker;

/// The channel a listener's messages are settled on, and the queue copies are published to.
pub struct Settle {
    pub channel: Channel,
    pub queue: String,
    /// The listener's consumer's tag (`ConsumerTag` in the binding data).
    pub consumer_tag: String,
    /// The channel's acknowledgements, batched; told of every other settlement too.
    pub acker: Acker,
}

pub async fn deliver(
    trigger: &BoundRabbitMq,
    function: &FunctionHost,
    settle: &Settle,
    mut turn: Turn,
    message: Delivery,
    abandon: &CancellationToken,
) {
    function.stats.received();
    let invocation_id = Uuid::now_v7();
    let webhook_id = webhook_id(&message.properties);
    let counted = headers::requeue_count(&message.properties);
    let span = tracing::info_span!("delivery", tenant = function.tenant, app = function.app,
        instance = function.instance, function = function.function, message_id = webhook_id,
        requeue_count = counted, invocation_id = %invocation_id);
    async {
        if !function.breaker.invokes() {
            // Taken as the breaker opened: back to the queue, not invoked.
            give_back(settle, &message).await;
            return;
        }
        let properties = properties_of(&message.properties);
        let payload = || {
            let rand_guid = Uuid::new_v4().to_string();
            Ok(rabbitmq::payload(&rabbitmq::Delivery {
                binding: &trigger.binding,
                function: &function.function,
                body: &message.data,
                binary: trigger.binary,
                consumer_tag: &settle.consumer_tag,
                delivery_tag: message.delivery_tag,
                redelivered: message.redelivered,
                exchange: message.exchange.as_str(),
                routing_key: message.routing_key.as_str(),
                properties: &properties,
                now: chrono::Utc::now(),
                rand_guid: &rand_guid,
            }))
        };
        let retries = Retries {
            from: RetryState::default(),
            park: false,
        };
        let invoked = function.invoke_holding_with(
            &mut turn,
            &webhook_id,
            invocation_id,
            payload,
            |_| Ok(()),
            Hold { until: None },
            retries,
        );
        let result = tokio::select! {
            result = invoked => Some(result),
            _ = abandon.cancelled() => None,
        };
        match result {
            Some(Ok(())) => {
                ack(settle, &message).await;
                function.stats.succeeded();
            }
            Some(Err(Unsettled::Failed(failure))) if function.breaker.holds_back() => {
                function.stats.failed();
                tracing::warn!(reason = failure.reason, "invocation failed while the function's circuit breaker is open; the message goes back to the queue, costing it no failure");
                give_back(settle, &message).await;
            }
            Some(Err(Unsettled::Failed(failure))) => {
                function.stats.failed();
                failed(settle, &message, counted, &failure.reason, &webhook_id).await;
            }
            Some(Err(Unsettled::HoldEnded(reason))) => {
                tracing::warn!(reason, "the message could be held no longer; giving it back");
                give_back(settle, &message).await;
            }
            Some(Err(Unsettled::Parked(_))) => {
                // Not asked for (`park: false`); given back rather than lost.
                give_back(settle, &message).await;
            }
            None => {
                turn.hand_back();
                tracing::warn!("drain deadline passed or lease lapsed mid-invocation; giving the message back for another worker");
                give_back(settle, &message).await;
            }
        }
    }
    .instrument(span)
    .await;
}

/// The extension's rule for a message whose invocation failed for good.
async fn failed(settle: &Settle, message: &Delivery, counted: u32, reason: &str, webhook_id: &str) {
    match after_failure(counted) {
        AfterFailure::Republish(count) => {
            tracing::warn!(
                reason,
                requeue_count = count,
                "invocation failed; publishing the message again with its requeue count raised"
            );
            let copied = republish(settle, message, count, webhook_id).await;
            match copied {
                Ok(()) => ack(settle, message).await,
                Err(e) => {
                    // The original goes back as it was: tried again, never lost.
                    tracing::warn!(error = %e, "publishing the requeued copy failed; giving the original back");
                    give_back(settle, message).await;
                }
            }
        }
        AfterFailure::Reject => {
            tracing::warn!(
                reason,
                "invocation failed for the fifth time; rejecting the message to the queue's dead-letter exchange (dropped if the queue has none)"
            );
            reject(settle, message).await;
        }
    }
}

/// A message whose body is over the worker's limit: its body was never read (the connection
/// dropped it), so it is rejected to the queue's dead-letter exchange without an invocation,
/// as an oversized queue message goes to poison. Shoal's rule: the extension has none.
pub async fn refuse_oversized(settle: &Settle, message: &Delivery, size: u64, limit: u64) {
    tracing::warn!(
        delivery_tag = message.delivery_tag,
        body_size = size,
        limit,
        queue = settle.queue,
        "the message is larger than this worker takes; rejecting it unread to the queue's dead-letter exchange (dropped if the queue has none)"
    );
    reject(settle, message).await;
}

/// `basic.reject` without requeue: to the queue's dead-letter exchange, if it has one.
async fn reject(settle: &Settle, message: &Delivery) {
    let delivery = message.delivery_tag;
    let channel = &settle.channel;
    let result = backoff::settle(
        "reject",
        |_| true,
        || async {
            channel
                .basic_reject(delivery, BasicRejectOptions { requeue: false })
                .await
                .map(|_| ())
        },
    )
    .await;
    if let Err(e) = result {
        tracing::warn!(error = %e, "rejecting the message failed; the broker gives it back");
    }
    settle.acker.settled(delivery);
}

/// Publishes a copy of `message` to its queue through the default exchange with
/// [`REQUEUE_COUNT_HEADER`] set to `count` (and, for a message without a `MessageId`,
/// [`WEBHOOK_ID_HEADER`] set to the key its invocations had), and waits for the broker's
/// confirm.
async fn republish(
    settle: &Settle,
    message: &Delivery,
    count: u32,
    webhook_id: &str,
) -> Result<(), String> {
    let mut headers = message.properties.headers().clone().unwrap_or_default();
    headers.insert(
        REQUEUE_COUNT_HEADER.into(),
        AMQPValue::LongInt(i32::try_from(count).unwrap_or(i32::MAX)),
    );
    if message.properties.message_id().is_none() {
        headers.insert(
            WEBHOOK_ID_HEADER.into(),
            AMQPValue::LongString(webhook_id.as_bytes().into()),
        );
    }
    let properties = message.properties.clone().with_headers(headers);
    let confirm = settle
        .channel
        .basic_publish(
            "".into(),
            settle.queue.as_str().into(),
            BasicPublishOptions::default(),
            &message.data,
            properties,
        )
        .await
        .map_err(|e| e.to_string())?;
    match confirm.await {
        Ok(confirmation) if confirmation.is_ack() => Ok(()),
        Ok(_) => Err("the broker did not take the copy (nack)".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Acknowledged through the channel's [`Acker`], perhaps with others in one frame; the span
/// ends once the frame is written.
async fn ack(settle: &Settle, message: &Delivery) {
    let span = spans::settlement("ack");
    let (result, tries) = settle.acker.ack(message.delivery_tag).await;
    backoff::end_settlement(span, tries, result.is_ok());
    if let Err(e) = result {
        tracing::warn!(error = %e, "acknowledging the message failed; the broker delivers it again");
    }
}

/// Back to the queue, unchanged and costing no failure (`basic.nack` with requeue).
pub async fn give_back(settle: &Settle, message: &Delivery) {
    let delivery = message.delivery_tag;
    let channel = &settle.channel;
    let result = backoff::settle(
        "give back",
        |_| true,
        || async {
            channel
                .basic_nack(
                    delivery,
                    BasicNackOptions {
                        multiple: false,
                        requeue: true,
                    },
                )
                .await
                .map(|_| ())
        },
    )
    .await;
    if let Err(e) = result {
        tracing::warn!(error = %e, "giving the message back failed; the broker gives it back when the channel closes");
    }
    settle.acker.settled(delivery);
}

/// The handler's idempotency key (`webhook-id`): the message's own `MessageId` when the
/// publisher set one, else the key an earlier delivery made, which a requeued copy carries in
/// [`WEBHOOK_ID_HEADER`], else a new one. (A message the broker gives back itself — the
/// connection lost, a message handed back unsettled — comes unchanged, without that header,
/// and gets a new key: AMQP gives it nothing stable to derive one from.)
fn webhook_id(properties: &BasicProperties) -> String {
    if let Some(id) = properties.message_id() {
        return id.as_str().to_owned();
    }
    let carried = headers::carried_webhook_id(properties);
    carried.map_or_else(|| Uuid::new_v4().to_string(), str::to_owned)
}

/// The message's basic properties as the handler sees them.
fn properties_of(p: &BasicProperties) -> Properties {
    let text = |v: &Option<shoal_connectors::amqp::lapin::types::ShortString>| {
        v.as_ref().map(|s| s.as_str().to_owned())
    };
    Properties {
        content_type: text(p.content_type()),
        content_encoding: text(p.content_encoding()),
        headers: p.headers().as_ref().map(table).unwrap_or_default(),
        delivery_mode: *p.delivery_mode(),
        priority: *p.priority(),
        correlation_id: text(p.correlation_id()),
        reply_to: text(p.reply_to()),
        expiration: text(p.expiration()),
        message_id: text(p.message_id()),
        timestamp: *p.timestamp(),
        kind: text(p.kind()),
        user_id: text(p.user_id()),
        app_id: text(p.app_id()),
    }
}

fn table(t: &FieldTable) -> Map<String, Value> {
    t.inner()
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), json(v)))
        .collect()
}

/// An AMQP field value as JSON: numbers as numbers, strings as text (bytes that are not UTF-8
/// in base64), tables as objects.
fn json(v: &AMQPValue) -> Value {
    let bytes = |b: &[u8]| Value::String(rabbitmq::text_or_base64(b));
    match v {
        AMQPValue::Boolean(b) => Value::Bool(*b),
        AMQPValue::ShortShortInt(n) => (*n).into(),
        AMQPValue::ShortShortUInt(n) => (*n).into(),
        AMQPValue::ShortInt(n) => (*n).into(),
        AMQPValue::ShortUInt(n) => (*n).into(),
        AMQPValue::LongInt(n) => (*n).into(),
        AMQPValue::LongUInt(n) => (*n).into(),
        AMQPValue::LongLongInt(n) => (*n).into(),
        AMQPValue::Float(n) => (*n).into(),
        AMQPValue::Double(n) => (*n).into(),
        AMQPValue::DecimalValue(d) => (f64::from(d.value) / 10f64.powi(i32::from(d.scale))).into(),
        AMQPValue::ShortString(s) => Value::String(s.as_str().to_owned()),
        AMQPValue::LongString(s) => bytes(s.as_bytes()),
        AMQPValue::ByteArray(b) => bytes(b.as_slice()),
        AMQPValue::FieldArray(a) => Value::Array(a.as_slice().iter().map(json).collect()),
        AMQPValue::Timestamp(t) => (*t).into(),
        AMQPValue::FieldTable(t) => Value::Object(table(t)),
        AMQPValue::Void => Value::Null,
    }
}
