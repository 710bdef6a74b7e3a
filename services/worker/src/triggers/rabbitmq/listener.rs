//! One RabbitMQ listener: connect (under the egress policy), set `basic.qos` to
//! `prefetchCount`, consume the queue with manual acknowledgements, and start a delivery for
//! each message. The broker sends no more than `prefetchCount` unacknowledged messages, which
//! bounds what is in hand. While the function's circuit breaker holds back, the messages in
//! hand wait (unacknowledged, so nothing is lost if the worker dies meanwhile) and no more are
//! taken; half-open, one is the probe. A lost connection is made again after a growing pause;
//! the broker has already given the messages it held back to the queue.
//!
//! What a listener holds is bounded in bytes, not only in messages: the connection never
//! reads a body over the worker's `max_message_bytes` (`shoal_connectors::amqp`), such a
//! message is rejected to the queue's dead-letter exchange unread (Shoal's rule: the
//! extension has no size limit), and `prefetchCount` is lowered to what the worker's
//! `max_held_bytes` holds of such messages, which the listener's status says.
//!
//! On stop: the consumer is cancelled, then the listener waits for its deliveries and closes
//! the channel; on abandon, deliveries give their messages back at once (`basic.nack` with
//! requeue).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt as _;
use shoal_connectors::amqp::lapin::Consumer;
use shoal_connectors::amqp::lapin::options::{
    BasicCancelOptions, BasicConsumeOptions, BasicQosOptions,
};
use shoal_connectors::amqp::lapin::types::FieldTable;
use shoal_connectors::amqp::{self, AmqpError, Confirms, Opened};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::error::WorkerError;
use crate::invocation::FunctionHost;
use crate::spans;
use crate::triggers::backoff::Retry;
use crate::triggers::rabbitmq::BoundRabbitMq;
use crate::triggers::rabbitmq::acker;
use crate::triggers::rabbitmq::delivery::{self, Settle};

pub struct RabbitMqListener {
    pub trigger: Arc<BoundRabbitMq>,
    pub function: Arc<FunctionHost>,
    pub stop: CancellationToken,
    pub abandon: CancellationToken,
}

impl RabbitMqListener {
    pub async fn run(self) {
        let stats = self.function.stats.clone();
        let mut retry = Retry::default();
        loop {
            let opened = tokio::select! {
                _ = self.stop.cancelled() => return,
                opened = self.open() => opened,
            };
            let (opened, consumer) = match opened {
                Ok(open) => open,
                Err(e) => {
                    tracing::warn!(error = %e, "connecting to the RabbitMQ queue failed");
                    stats.set_status(format!("cannot consume: {e}"));
                    stats.error(&WorkerError::PollTrigger(e.into()));
                    if !retry.pause(&self.stop).await {
                        return;
                    }
                    continue;
                }
            };
            retry.reset();
            stats.set_status(self.trigger.listening_status());
            let ended = self.consume(&opened, consumer).await;
            let _ = opened
                .connection
                .close(200, "listener stopped".into())
                .await;
            if ended == Ended::Stopped {
                return;
            }
            stats.set_status("connection lost; connecting again");
            if !retry.pause(&self.stop).await {
                return;
            }
        }
    }

    /// A connection, a channel with publisher confirms (a failed message's copy is
    /// acknowledged before the original is) and `basic.qos`, and a consumer on the queue.
    async fn open(&self) -> Result<(Opened, Consumer), AmqpError> {
        let source = &self.trigger.source;
        let name = format!(
            "shoal {}/{} instance {} function {}",
            self.function.tenant, self.function.app, self.function.instance, self.function.function
        );
        let opened = amqp::channel(
            &source.uri,
            &self.trigger.egress,
            &name,
            Confirms::On,
            self.trigger.max_body,
        )
        .await?;
        let channel = &opened.channel;
        let broker = |source| AmqpError::Broker {
            address: self.trigger.source.address(),
            source,
        };
        channel
            .basic_qos(self.trigger.prefetch, BasicQosOptions::default())
            .await
            .map_err(broker)?;
        let tag = format!(
            "shoal-{}-{}-{}",
            self.function.worker, self.function.instance, self.function.function
        );
        let consumer = channel
            .basic_consume(
                source.entity.as_str().into(),
                tag.as_str().into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
            .await
            .map_err(broker)?;
        Ok((opened, consumer))
    }

    /// Delivers what the consumer brings until stopped or the connection ends.
    async fn consume(&self, opened: &Opened, mut consumer: Consumer) -> Ended {
        let channel = &opened.channel;
        let stats = &self.function.stats;
        let breaker = &self.function.breaker;
        let in_flight = Arc::new(AtomicUsize::new(0));
        let mut deliveries = JoinSet::new();
        let (acker, acks_sent) = acker::start(channel.clone());
        let settle = Arc::new(Settle {
            channel: channel.clone(),
            queue: self.trigger.source.entity.clone(),
            consumer_tag: consumer.tag().as_str().to_owned(),
            acker,
        });
        let ended = loop {
            let next = tokio::select! {
                _ = self.stop.cancelled() => break Ended::Stopped,
                next = consumer.next() => next,
            };
            let message = match next {
                Some(Ok(message)) => message,
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "the RabbitMQ consumer failed");
                    stats.error(&WorkerError::PollTrigger(
                        AmqpError::Broker {
                            address: self.trigger.source.address(),
                            source: e,
                        }
                        .into(),
                    ));
                    break Ended::Lost;
                }
                None => break Ended::Lost,
            };
            // Reap finished deliveries so the set does not grow without bound.
            while deliveries.try_join_next().is_some() {}
            if let Some(size) = opened.oversized.take(channel.id(), message.delivery_tag) {
                delivery::refuse_oversized(&settle, &message, size, self.trigger.max_body).await;
                stats.received();
                stats.failed();
                continue;
            }
            if breaker.holds_back() {
                stats.set_status(breaker.paused_status());
            }
            let Some(admission) = breaker.admit(&self.stop).await else {
                // Stopped while paused: the message goes back to the queue unacknowledged.
                delivery::give_back(&settle, &message).await;
                break Ended::Stopped;
            };
            // While the handler asks to slow down: one message at a time, after the deferral.
            let (_, wait) = breaker.intake(1);
            if !wait.is_zero() {
                stats.set_status("throttled: the handler asked to slow down");
                tokio::select! {
                    _ = self.stop.cancelled() => {
                        delivery::give_back(&settle, &message).await;
                        break Ended::Stopped;
                    }
                    _ = tokio::time::sleep(wait) => {}
                }
            }
            // A capped function takes in no more than its slots leave room for.
            if let Some(slots) = &self.function.slots {
                let held = in_flight.clone();
                let room = slots
                    .wait_for_room(
                        move || held.load(Ordering::Acquire),
                        |s| stats.set_status(s),
                        &self.stop,
                    )
                    .await;
                if room.is_none() {
                    delivery::give_back(&settle, &message).await;
                    break Ended::Stopped;
                }
            }
            stats.set_status(self.trigger.listening_status());
            stats.polled(chrono::Utc::now());
            in_flight.fetch_add(1, Ordering::AcqRel);
            stats.set_in_flight(in_flight.load(Ordering::Acquire));
            settle.acker.taken(message.delivery_tag);
            let (trigger, function, settle) =
                (self.trigger.clone(), self.function.clone(), settle.clone());
            let (abandon, in_flight) = (self.abandon.clone(), in_flight.clone());
            deliveries.spawn(async move {
                spans::delivering(delivery::deliver(
                    &trigger,
                    &function,
                    &settle,
                    admission.turn(),
                    message,
                    &abandon,
                ))
                .await;
                let left = in_flight.fetch_sub(1, Ordering::AcqRel) - 1;
                function.stats.set_in_flight(left);
            });
        };
        // No more messages for this consumer; the ones in hand finish (or, past the drain
        // deadline, are given back).
        let _ = channel
            .basic_cancel(consumer.tag(), BasicCancelOptions::default())
            .await;
        while deliveries.join_next().await.is_some() {}
        // The last reporter gone, the acker sends what is left and ends.
        drop(settle);
        let _ = acks_sent.await;
        ended
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ended {
    Stopped,
    Lost,
}
