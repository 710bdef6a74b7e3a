//! A mutual-TLS front for a tansu broker. tansu 0.6's command line cannot turn TLS on (its
//! `--cert` and `--key` share a clap group that allows only one of them), so the tests' TLS
//! broker is tansu behind this: it completes the TLS handshake — presenting a certificate of
//! the test CA and requiring a client certificate the same CA signed — and relays the bytes to
//! tansu's plain port. tansu advertises the front's address, so every connection a client
//! makes after bootstrap goes through it too.

use std::sync::Arc;

use anyhow::{Context, Result};
use shoal_devstack::tls::ThrowawayCa;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

pub struct TlsFront {
    pub port: u16,
    stop: CancellationToken,
}

impl TlsFront {
    /// Listens on a free loopback port; [`TlsFront::relay_to`] starts relaying.
    pub async fn bind(ca: &ThrowawayCa) -> Result<(TlsFront, PendingFront)> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let acceptor = TlsAcceptor::from(ca.mutual_tls_server_config()?);
        let stop = CancellationToken::new();
        Ok((
            TlsFront {
                port,
                stop: stop.clone(),
            },
            PendingFront {
                listener,
                acceptor,
                stop,
            },
        ))
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// The bound listener, waiting for the broker's port.
pub struct PendingFront {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    stop: CancellationToken,
}

impl PendingFront {
    pub fn relay_to(self, upstream_port: u16) {
        let PendingFront {
            listener,
            acceptor,
            stop,
        } = self;
        let acceptor = Arc::new(acceptor);
        tokio::spawn(async move {
            loop {
                let accepted = tokio::select! {
                    _ = stop.cancelled() => return,
                    accepted = listener.accept() => accepted,
                };
                let Ok((client, _)) = accepted else { continue };
                let (acceptor, stop) = (acceptor.clone(), stop.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        _ = relay(client, &acceptor, upstream_port) => {}
                    }
                });
            }
        });
    }
}

/// A refused handshake (no or a foreign client certificate) just ends the connection, as a
/// TLS broker does; the client reports the failure.
async fn relay(client: TcpStream, acceptor: &TlsAcceptor, upstream_port: u16) -> Result<()> {
    let mut tls = acceptor.accept(client).await.context("TLS handshake")?;
    let mut upstream = TcpStream::connect(("127.0.0.1", upstream_port)).await?;
    tokio::io::copy_bidirectional(&mut tls, &mut upstream).await?;
    Ok(())
}
