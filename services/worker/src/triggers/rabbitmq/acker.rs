//! One task per channel that sends its acknowledgements, batched (`acks`): the listener reports
//! each delivery it hands out, the deliveries report how they settled, and whatever arrived
//! while the last frame was being written is acknowledged in the next, with one `multiple` ack
//! for a settled run. A delivery waits for its own acknowledgement to be written, so its
//! settlement span, its in-flight count and the listener's drain still end after it.
//!
//! The task ends once every reporter is gone (the listener's consume loop and its deliveries
//! have finished), after sending what was reported; the listener waits for it before closing
//! the connection.

use std::collections::HashMap;

use shoal_connectors::amqp::lapin::Channel;
use shoal_connectors::amqp::lapin::options::BasicAckOptions;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::triggers::backoff;
use crate::triggers::rabbitmq::acks::{Acks, Outstanding, Report};

/// How an acknowledgement went: the tries it took, or the error that ended them.
pub type Acked = (Result<(), String>, u32);

enum Message {
    Report(Report),
    Ack(u64, oneshot::Sender<Acked>),
}

/// The reporting side, cloned into each delivery.
#[derive(Clone)]
pub struct Acker(mpsc::UnboundedSender<Message>);

/// Starts the task for `channel`; join the handle after the last [`Acker`] is dropped.
pub fn start(channel: Channel) -> (Acker, JoinHandle<()>) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let task = tokio::spawn(run(channel, receiver));
    (Acker(sender), task)
}

impl Acker {
    /// The delivery `tag` is in hand: no `multiple` ack passes it until it is settled.
    pub fn taken(&self, tag: u64) {
        let _ = self.0.send(Message::Report(Report::Taken(tag)));
    }

    /// `tag` was settled on the channel otherwise (given back, rejected), after that was sent.
    pub fn settled(&self, tag: u64) {
        let _ = self.0.send(Message::Report(Report::Settled(tag)));
    }

    /// Acknowledges `tag`, resolving once the acknowledgement covering it was written.
    pub async fn ack(&self, tag: u64) -> Acked {
        let (written, wait) = oneshot::channel();
        if self.0.send(Message::Ack(tag, written)).is_err() {
            return (Err("the channel's acknowledgements have stopped".into()), 0);
        }
        wait.await
            .unwrap_or_else(|_| (Err("the channel's acknowledgements have stopped".into()), 0))
    }
}

async fn run(channel: Channel, mut receiver: mpsc::UnboundedReceiver<Message>) {
    let mut outstanding = Outstanding::default();
    let mut waiting: HashMap<u64, oneshot::Sender<Acked>> = HashMap::new();
    while let Some(first) = receiver.recv().await {
        let mut next = Some(first);
        // Everything reported so far goes into this round.
        while let Some(message) = next {
            match message {
                Message::Report(report) => outstanding.report(report),
                Message::Ack(tag, written) => {
                    waiting.insert(tag, written);
                    outstanding.report(Report::Ack(tag));
                }
            }
            next = receiver.try_recv().ok();
        }
        let acks = outstanding.take_acks();
        if acks.is_empty() {
            continue;
        }
        let sent = send(&channel, &acks).await;
        // Every acknowledgement reported is in `acks` (`take_acks` leaves none behind), so
        // every waiter has its answer now.
        for (tag, written) in waiting.drain() {
            let _ = written.send(sent.of(tag, &acks));
        }
    }
}

/// What became of one round's frames: each one sent, up to the first that failed.
struct Sent {
    /// The `multiple` ack's outcome, if it was tried.
    multiple: Option<Acked>,
    /// The single acks tried, with their outcomes.
    single: Vec<(u64, Acked)>,
}

impl Sent {
    /// The outcome for the acknowledgement of `tag`.
    fn of(&self, tag: u64, acks: &Acks) -> Acked {
        let by_multiple = acks.multiple.is_some_and(|up_to| tag <= up_to);
        let found = if by_multiple {
            self.multiple.clone()
        } else {
            self.single
                .iter()
                .find(|(t, _)| *t == tag)
                .map(|(_, a)| a.clone())
        };
        found.unwrap_or_else(|| (Err("not sent: an earlier acknowledgement failed".into()), 0))
    }
}

/// Sends `acks`: the `multiple` one, then the single ones; the first failure ends it (the
/// channel is likely gone, and the broker gives back what it did not see acknowledged).
async fn send(channel: &Channel, acks: &Acks) -> Sent {
    let mut sent = Sent {
        multiple: None,
        single: Vec::with_capacity(acks.single.len()),
    };
    let frames = acks
        .multiple
        .map(|tag| (tag, true))
        .into_iter()
        .chain(acks.single.iter().map(|tag| (*tag, false)));
    for (tag, multiple) in frames {
        let (result, tries) = backoff::settle_counted(
            "ack",
            |_| true,
            || async {
                channel
                    .basic_ack(tag, BasicAckOptions { multiple })
                    .await
                    .map(|_| ())
            },
        )
        .await;
        let failed = result.is_err();
        let acked = (result.map_err(|e| e.to_string()), tries);
        if multiple {
            sent.multiple = Some(acked);
        } else {
            sent.single.push((tag, acked));
        }
        if failed {
            break;
        }
    }
    sent
}
