//! A TCP relay in front of a tansu broker that counts the connections it accepts. tansu
//! advertises the relay's address, so a test can tell whether a client went on from the
//! bootstrap address to the broker's advertised one at all (the egress policy must stop it
//! before it dials).
//!
//! It relays whole Kafka frames (a 4-byte size, then the request or response), and can refuse
//! to create named topics the way a broker that does not let the client create them answers
//! (`TOPIC_AUTHORIZATION_FAILED`, as Apache Kafka with ACLs or an Event Hubs key without the
//! Manage right do): tansu 0.6 creates no topic on its own and has no ACLs, so this is how a
//! test gets brokers on which a missing topic can neither be written nor created. The refused
//! CreateTopics request is sent on to tansu as an ApiVersions request with the same
//! correlation id, whose answer is replaced by the refusal — so responses keep their order.

mod frames;

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Topics whose creation the relay refuses.
type Refused = Arc<Mutex<BTreeSet<String>>>;

pub struct Relay {
    pub port: u16,
    accepted: Arc<AtomicU64>,
    refused: Refused,
    stop: CancellationToken,
}

impl Relay {
    /// Listens on a free loopback port; [`PendingRelay::relay_to`] starts relaying.
    pub async fn bind() -> Result<(Relay, PendingRelay)> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let accepted = Arc::new(AtomicU64::new(0));
        let refused = Refused::default();
        let stop = CancellationToken::new();
        Ok((
            Relay {
                port,
                accepted: accepted.clone(),
                refused: refused.clone(),
                stop: stop.clone(),
            },
            PendingRelay {
                listener,
                accepted,
                refused,
                stop,
            },
        ))
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::SeqCst)
    }

    /// Refuses (`true`) or passes on (`false`) requests to create `topic`.
    pub fn refuse_creating(&self, topic: &str, refuse: bool) {
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        if refuse {
            refused.insert(topic.to_owned());
        } else {
            refused.remove(topic);
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The bound listener, waiting for the broker's port.
pub struct PendingRelay {
    listener: TcpListener,
    accepted: Arc<AtomicU64>,
    refused: Refused,
    stop: CancellationToken,
}

impl PendingRelay {
    pub fn relay_to(self, upstream_port: u16) {
        let PendingRelay {
            listener,
            accepted,
            refused,
            stop,
        } = self;
        tokio::spawn(async move {
            loop {
                let accepted_now = tokio::select! {
                    _ = stop.cancelled() => return,
                    accepted_now = listener.accept() => accepted_now,
                };
                let Ok((client, _)) = accepted_now else {
                    continue;
                };
                accepted.fetch_add(1, Ordering::SeqCst);
                let stop = stop.clone();
                let refused = refused.clone();
                tokio::spawn(async move {
                    let Ok(upstream) = TcpStream::connect(("127.0.0.1", upstream_port)).await
                    else {
                        return;
                    };
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        _ = relay_frames(client, upstream, refused) => {}
                    }
                });
            }
        });
    }
}

/// Relays frames both ways until either side closes, refusing CreateTopics requests for
/// refused topics (see the module's comment).
async fn relay_frames(client: TcpStream, upstream: TcpStream, refused: Refused) -> Result<()> {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut upstream_read, mut upstream_write) = upstream.into_split();
    // Correlation id → the refusal that replaces the broker's answer to it.
    let replaced: Arc<Mutex<HashMap<i32, Vec<u8>>>> = Arc::default();
    let requests = async {
        loop {
            let frame = read_frame(&mut client_read).await?;
            let is_refused = |topic: &str| {
                refused
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains(topic)
            };
            let frame = match frames::refuse_create_topics(&frame, is_refused) {
                Some(refusal) => {
                    replaced
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(refusal.correlation_id, refusal.response);
                    refusal.stand_in
                }
                None => frame,
            };
            write_frame(&mut upstream_write, &frame).await?;
        }
    };
    let responses = async {
        loop {
            let frame = read_frame(&mut upstream_read).await?;
            let correlation_id = frames::correlation_id(&frame);
            let instead = correlation_id.and_then(|id| {
                replaced
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id)
            });
            write_frame(&mut client_write, instead.as_deref().unwrap_or(&frame)).await?;
        }
    };
    tokio::select! {
        ended = requests => ended,
        ended = responses => ended,
    }
}

/// One frame without its size prefix.
async fn read_frame(from: &mut (impl AsyncReadExt + Unpin)) -> Result<Vec<u8>> {
    let size = from.read_i32().await?;
    let size = usize::try_from(size).map_err(|_| anyhow::anyhow!("a frame of size {size}"))?;
    let mut frame = vec![0; size];
    from.read_exact(&mut frame).await?;
    Ok(frame)
}

async fn write_frame(to: &mut (impl AsyncWriteExt + Unpin), frame: &[u8]) -> Result<()> {
    let size = i32::try_from(frame.len())?;
    to.write_all(&size.to_be_bytes()).await?;
    to.write_all(frame).await?;
    Ok(())
}
