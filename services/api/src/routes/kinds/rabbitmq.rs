//! `rabbitMQTrigger` in the API: a test message published to the trigger's queue, and the
//! failed messages read from and replayed out of the queue the binding's
//! `deadLetterQueueName` names (the broker dead-letters a rejected message where the trigger
//! queue's `x-dead-letter-exchange` says; the extension has no poison endpoint, and Shoal reads
//! only what the binding names). Every connection goes through the egress policy
//! (`shoal_connectors::amqp`), and what is read is bounded in bytes.
//!
//! Reading is a peek: messages are taken with `basic.get` and given back unacknowledged, so the
//! broker puts them back where they were (marked redelivered). A replay publishes a copy to the
//! trigger's queue (mandatory, confirmed by the broker) without the failure counts the earlier
//! deliveries left in its headers, and only then acknowledges the dead-lettered original: a
//! message may be replayed twice if that acknowledgement is lost, never lost.

use aws_lc_rs::digest;
use chrono::{DateTime, Utc};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_connectors::amqp::lapin::Confirmation;
use shoal_connectors::amqp::lapin::message::Delivery;
use shoal_connectors::amqp::lapin::options::{
    BasicAckOptions, BasicGetOptions, BasicNackOptions, BasicPublishOptions, QueueDeclareOptions,
};
use shoal_connectors::amqp::lapin::types::{AMQPValue, FieldTable, LongString};
use shoal_connectors::amqp::lapin::{BasicProperties, Channel};
use shoal_connectors::amqp::{self, AmqpError, Confirms, Opened, headers};
use shoal_domain::binding_kinds::BrokerSource;
use shoal_domain::binding_kinds::rabbitmq::{
    TRIGGER_TYPE, dead_letter_source, failed_deliveries, is_failure_header, text_or_base64,
};
use shoal_domain::diagnostics::Check;
use shoal_domain::send_message::{AMQP_MAX_BYTES, BodyForm, Carrier, SendRequest};
use shoal_domain::trigger_source::TriggerSource;
use uuid::Uuid;

use super::{FailedMessage, FailedMessages, KindRoutes, Replayed, Sent, Target, Wanted, timed};
use crate::error::ApiError;

mod probe;

pub(super) struct RabbitMqRoutes;

pub(super) const RABBITMQ: RabbitMqRoutes = RabbitMqRoutes;

/// The largest dead-lettered body a read shows: up to 32 are held for one answer, so a
/// larger one is named by its size instead (as a Service Bus body's limit bounds those).
const MAX_SHOWN_BYTES: u64 = 256 * 1024;

/// The largest dead-lettered body a replay moves: what Shoal's workers take by default, since
/// a larger one would be dead-lettered again unread. A larger one stays where it is, and the
/// replay says so.
const MAX_REPLAYED_BYTES: u64 = AMQP_MAX_BYTES as u64;

/// How many dead-lettered messages one replay looks through for those it was asked for.
const MAX_SCANNED: usize = 10_000;

impl KindRoutes for RabbitMqRoutes {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn send<'a>(
        &'a self,
        target: Target<'a>,
        request: SendRequest,
    ) -> BoxFuture<'a, Result<Sent, ApiError>> {
        async move {
            let source = broker(&target)?;
            request.check(Carrier::Amqp).map_err(ApiError::Validation)?;
            let opened = open(source, &target, Confirms::On, amqp::CONSUMES_NOTHING).await?;
            let message_id = Uuid::new_v4().to_string();
            let content_type = match request.form {
                BodyForm::Json => "application/json",
                BodyForm::Text => "text/plain",
                BodyForm::Binary => "application/octet-stream",
            };
            let mut headers = FieldTable::default();
            for (name, value) in &request.properties {
                headers.insert(name.as_str().into(), long_string(value));
            }
            let properties = BasicProperties::default()
                .with_delivery_mode(2)
                .with_message_id(message_id.as_str().into())
                .with_content_type(content_type.into())
                .with_headers(headers);
            let published = publish(
                &opened.channel,
                source,
                &source.entity,
                &request.body,
                properties,
            )
            .await;
            close(opened).await;
            published?;
            Ok(Sent {
                destination: source.entity.clone(),
                message_id: Some(message_id),
                size: request.body.len() as u64,
                session_id: None,
                partition: None,
                offset: None,
            })
        }
        .boxed()
    }

    fn failed<'a>(
        &'a self,
        target: Target<'a>,
        top: u8,
        with_bodies: bool,
    ) -> BoxFuture<'a, Result<FailedMessages, ApiError>> {
        timed(async move {
            let source = broker(&target)?;
            let dead = dead_letter_queue(&target, source)?;
            let opened = open(&dead, &target, Confirms::Off, MAX_SHOWN_BYTES).await?;
            let read = peek(&opened, &dead, top, with_bodies).await;
            close(opened).await;
            let (count, messages) = read?;
            Ok(FailedMessages {
                source: source.entity.clone(),
                failed: dead.entity,
                count,
                messages,
            })
        })
        .boxed()
    }

    fn replay<'a>(
        &'a self,
        target: Target<'a>,
        ids: Option<&'a [String]>,
        limit: u32,
    ) -> BoxFuture<'a, Result<Replayed, ApiError>> {
        timed(async move {
            let source = broker(&target)?;
            let dead = dead_letter_queue(&target, source)?;
            let opened = open(&dead, &target, Confirms::On, MAX_REPLAYED_BYTES).await?;
            let moved = replay(&opened, source, &dead, ids, limit).await;
            close(opened).await;
            moved
        })
        .boxed()
    }

    fn probes(&self) -> bool {
        true
    }

    fn probe<'a>(&'a self, function: &'a str, target: Target<'a>) -> BoxFuture<'a, Vec<Check>> {
        probe::probe(function, target).boxed()
    }
}

/// The trigger's broker and queue.
fn broker<'t>(target: &'t Target<'_>) -> Result<&'t BrokerSource, ApiError> {
    match &target.source {
        TriggerSource::Broker(source) => Ok(source),
        _ => Err(target.unexpected()),
    }
}

/// The queue the binding's `deadLetterQueueName` names, on the trigger's broker.
fn dead_letter_queue(target: &Target<'_>, source: &BrokerSource) -> Result<BrokerSource, ApiError> {
    match dead_letter_source(target.binding, &target.context.settings) {
        Ok(Some(dead)) => Ok(dead),
        Ok(None) => Err(ApiError::Conflict(format!(
            "the rabbitMQTrigger names no deadLetterQueueName: the broker dead-letters a failed \
             message where queue {}'s x-dead-letter-exchange and x-dead-letter-routing-key say; \
             name that queue in the binding's deadLetterQueueName to list and replay it here",
            source.entity
        ))),
        Err(e) => Err(ApiError::Conflict(format!(
            "the trigger's dead-letter queue cannot be used: {e}"
        ))),
    }
}

async fn open(
    source: &BrokerSource,
    target: &Target<'_>,
    confirms: Confirms,
    max_body: u64,
) -> Result<Opened, ApiError> {
    amqp::channel(
        &source.uri,
        &target.context.egress,
        "shoal api",
        confirms,
        max_body,
    )
    .await
    .map_err(|e| match e {
        AmqpError::Refused { .. } => ApiError::Conflict(format!(
            "{}: {e}: the egress policy does not allow the API to connect there",
            source.setting
        )),
        AmqpError::Uri => ApiError::Conflict(format!("{}: {e}", source.setting)),
        AmqpError::Timeout { .. } | AmqpError::Broker { .. } => {
            ApiError::Storage(format!("the broker cannot be reached: {e}"))
        }
    })
}

async fn close(opened: Opened) {
    let _ = opened.connection.close(200, "done".into()).await;
}

fn broker_failed(source: &BrokerSource, e: impl std::fmt::Display) -> ApiError {
    ApiError::Storage(format!("the broker at {} failed: {e}", source.address()))
}

/// Publishes to `queue` through the default exchange, mandatory and confirmed: a queue that
/// does not exist is a 409, not a message the broker drops.
async fn publish(
    channel: &Channel,
    source: &BrokerSource,
    queue: &str,
    body: &[u8],
    properties: BasicProperties,
) -> Result<(), ApiError> {
    let options = BasicPublishOptions {
        mandatory: true,
        ..BasicPublishOptions::default()
    };
    let confirm = channel
        .basic_publish("".into(), queue.into(), options, body, properties)
        .await
        .map_err(|e| broker_failed(source, e))?;
    match confirm.await.map_err(|e| broker_failed(source, e))? {
        Confirmation::Ack(None) => Ok(()),
        Confirmation::Ack(Some(_)) => Err(ApiError::Conflict(format!(
            "queue {queue} does not exist on {}: the broker returned the message",
            source.address()
        ))),
        Confirmation::Nack(_) | Confirmation::NotRequested => Err(broker_failed(
            source,
            format!("it did not take the message for queue {queue}"),
        )),
    }
}

/// The dead-letter queue's depth, and its oldest `top` messages given back untouched.
async fn peek(
    opened: &Opened,
    dead: &BrokerSource,
    top: u8,
    with_bodies: bool,
) -> Result<(u64, Vec<FailedMessage>), ApiError> {
    let channel = &opened.channel;
    let declared = channel
        .queue_declare(
            dead.entity.as_str().into(),
            QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .map_err(|e| {
            ApiError::Conflict(format!(
                "the dead-letter queue {} cannot be read on {}: {e}",
                dead.entity,
                dead.address()
            ))
        })?;
    let mut messages = Vec::new();
    for _ in 0..top {
        let Some(got) = get(channel, dead).await? else {
            break;
        };
        let oversized = opened.oversized.take(channel.id(), got.delivery_tag);
        let body = match oversized {
            Some(size) => Some(format!(
                "(not shown: {size} bytes, more than the {MAX_SHOWN_BYTES} a read shows)"
            )),
            None => Some(text_or_base64(&got.data)),
        };
        messages.push(FailedMessage {
            message_id: message_id(&got),
            failed_at: failed_at(&got),
            expires_at: None,
            failures: failed_deliveries(headers::requeue_count(&got.properties)),
            reason: death_field(&got, "reason"),
            body: body.filter(|_| with_bodies),
        });
    }
    // Back where they were: the broker requeues what is given back in place.
    if !messages.is_empty() {
        let _ = channel
            .basic_nack(
                0,
                BasicNackOptions {
                    multiple: true,
                    requeue: true,
                },
            )
            .await;
    }
    Ok((u64::from(declared.message_count()), messages))
}

/// Moves up to `limit` messages (those in `ids`, when given) from `dead` to the trigger's
/// queue; what was taken and not moved is given back.
async fn replay(
    opened: &Opened,
    source: &BrokerSource,
    dead: &BrokerSource,
    ids: Option<&[String]>,
    limit: u32,
) -> Result<Replayed, ApiError> {
    let channel = &opened.channel;
    let mut wanted = Wanted::new(ids);
    let mut moved = Vec::new();
    let mut skipped = Vec::new();
    let mut scanned = 0;
    let result = async {
        while (moved.len() as u32) < limit && scanned < MAX_SCANNED {
            let Some(got) = get(channel, dead).await? else {
                break;
            };
            scanned += 1;
            let id = message_id(&got);
            if !wanted.take(&id) {
                skipped.push(got.delivery_tag);
                continue;
            }
            if let Some(size) = opened.oversized.take(channel.id(), got.delivery_tag) {
                skipped.push(got.delivery_tag);
                return Err(ApiError::Conflict(format!(
                    "message {id} is {size} bytes, more than the {MAX_REPLAYED_BYTES} the API \
                     replays (what workers take by default); it stays in {} ({} replayed \
                     before it)",
                    dead.entity,
                    moved.len()
                )));
            }
            let copy = got.properties.clone().with_headers(without_failures(&got));
            if let Err(e) = publish(channel, source, &source.entity, &got.data, copy).await {
                skipped.push(got.delivery_tag);
                return Err(e);
            }
            channel
                .basic_ack(got.delivery_tag, BasicAckOptions::default())
                .await
                .map_err(|e| broker_failed(dead, e))?;
            moved.push(id);
            if wanted.all_found() {
                break;
            }
        }
        Ok(())
    }
    .await;
    for tag in skipped {
        let _ = channel
            .basic_nack(
                tag,
                BasicNackOptions {
                    multiple: false,
                    requeue: true,
                },
            )
            .await;
    }
    result?;
    Ok(Replayed {
        moved,
        not_found: wanted.not_found(),
    })
}

async fn get(channel: &Channel, dead: &BrokerSource) -> Result<Option<Delivery>, ApiError> {
    let got = channel
        .basic_get(
            dead.entity.as_str().into(),
            BasicGetOptions { no_ack: false },
        )
        .await
        .map_err(|e| broker_failed(dead, e))?;
    Ok(got.map(|g| g.delivery))
}

/// The message's id: its `MessageId`, else the key Shoal's listener gave it
/// (`x-shoal-webhook-id`), else one made from its body (`body-<16 hex digits of SHA-256>`),
/// so the same message has the same id on every read.
fn message_id(message: &Delivery) -> String {
    if let Some(id) = message.properties.message_id() {
        return id.as_str().to_owned();
    }
    if let Some(id) = headers::carried_webhook_id(&message.properties) {
        return id.to_owned();
    }
    let hash = digest::digest(&digest::SHA256, &message.data);
    let hex: String = hash.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("body-{hex}")
}

fn header<'m>(message: &'m Delivery, name: &str) -> Option<&'m AMQPValue> {
    message
        .properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(name))
}

/// The broker's first `x-death` entry's `field` as text.
fn death_field(message: &Delivery, field: &str) -> Option<String> {
    match first_death(message)?.inner().get(field)? {
        AMQPValue::LongString(s) => Some(String::from_utf8_lossy(s.as_bytes()).into_owned()),
        AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
        _ => None,
    }
}

fn first_death(message: &Delivery) -> Option<&FieldTable> {
    match header(message, "x-death")? {
        AMQPValue::FieldArray(deaths) => match deaths.as_slice().first()? {
            AMQPValue::FieldTable(death) => Some(death),
            _ => None,
        },
        _ => None,
    }
}

/// When the broker dead-lettered it (`x-death` `time`), else the message's own timestamp,
/// else now (when it was read).
fn failed_at(message: &Delivery) -> DateTime<Utc> {
    let death = first_death(message).and_then(|d| match d.inner().get("time") {
        Some(AMQPValue::Timestamp(t)) => Some(*t),
        _ => None,
    });
    death
        .or(*message.properties.timestamp())
        .and_then(|t| DateTime::from_timestamp(i64::try_from(t).ok()?, 0))
        .unwrap_or_else(Utc::now)
}

fn without_failures(message: &Delivery) -> FieldTable {
    let mut kept = FieldTable::default();
    if let Some(headers) = message.properties.headers() {
        for (name, value) in headers.inner() {
            if !is_failure_header(name.as_str()) {
                kept.insert(name.clone(), value.clone());
            }
        }
    }
    kept
}

fn long_string(value: &str) -> AMQPValue {
    AMQPValue::LongString(LongString::from(value.as_bytes().to_vec()))
}
