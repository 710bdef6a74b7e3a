//! A plain TCP relay in front of a tansu broker that counts the connections it accepts. tansu
//! advertises the relay's address, so a test can tell whether a client went on from the
//! bootstrap address to the broker's advertised one at all (the egress policy must stop it
//! before it dials).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Result;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

pub struct Relay {
    pub port: u16,
    accepted: Arc<AtomicU64>,
    stop: CancellationToken,
}

impl Relay {
    /// Listens on a free loopback port; [`PendingRelay::relay_to`] starts relaying.
    pub async fn bind() -> Result<(Relay, PendingRelay)> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let accepted = Arc::new(AtomicU64::new(0));
        let stop = CancellationToken::new();
        Ok((
            Relay {
                port,
                accepted: accepted.clone(),
                stop: stop.clone(),
            },
            PendingRelay {
                listener,
                accepted,
                stop,
            },
        ))
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::SeqCst)
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
    stop: CancellationToken,
}

impl PendingRelay {
    pub fn relay_to(self, upstream_port: u16) {
        let PendingRelay {
            listener,
            accepted,
            stop,
        } = self;
        tokio::spawn(async move {
            loop {
                let accepted_now = tokio::select! {
                    _ = stop.cancelled() => return,
                    accepted_now = listener.accept() => accepted_now,
                };
                let Ok((mut client, _)) = accepted_now else {
                    continue;
                };
                accepted.fetch_add(1, Ordering::SeqCst);
                let stop = stop.clone();
                tokio::spawn(async move {
                    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", upstream_port)).await
                    else {
                        return;
                    };
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        _ = tokio::io::copy_bidirectional(&mut client, &mut upstream) => {}
                    }
                });
            }
        });
    }
}
