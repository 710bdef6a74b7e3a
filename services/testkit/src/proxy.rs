//! A TCP proxy in front of Postgres that can cut its clients off, as an outage does: it refuses
//! new connections and resets the open ones, then comes back on the same port. It can also
//! stall, as a frozen or partitioned database does: connections stay open and nothing comes
//! back on them. The API's outage tests and the workers' lease tests use it.

use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

pub struct Proxy {
    pub port: u16,
    upstream: String,
    running: Arc<Mutex<Option<Running>>>,
}

/// The tokens of one serving period: `stop` drops every connection, `stall` freezes them.
struct Running {
    stop: CancellationToken,
    stall: CancellationToken,
}

impl Proxy {
    /// A proxy in front of the Postgres server `DATABASE_URL` names.
    pub async fn to_postgres() -> Result<Proxy> {
        let admin = url::Url::parse(&crate::admin_url())?;
        let host = admin.host_str().unwrap_or("127.0.0.1");
        let upstream = format!("{host}:{}", admin.port().unwrap_or(5432));
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let proxy = Proxy {
            port: listener.local_addr()?.port(),
            upstream,
            running: Arc::new(Mutex::new(None)),
        };
        proxy.serve(listener);
        Ok(proxy)
    }

    /// `url` (a database URL) pointed at the proxy instead.
    pub fn url_through(&self, url: &str) -> Result<String> {
        let mut url = url::Url::parse(url)?;
        url.set_host(Some("127.0.0.1"))?;
        url.set_port(Some(self.port))
            .map_err(|()| anyhow::anyhow!("cannot set the port"))?;
        Ok(url.into())
    }

    fn serve(&self, listener: TcpListener) {
        let (stop, stall) = (CancellationToken::new(), CancellationToken::new());
        *self.running.lock().unwrap_or_else(|p| p.into_inner()) = Some(Running {
            stop: stop.clone(),
            stall: stall.clone(),
        });
        let upstream = self.upstream.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    accepted = listener.accept() => {
                        let Ok((mut client, _)) = accepted else { return };
                        let upstream = upstream.clone();
                        let (stop, stall) = (stop.clone(), stall.clone());
                        tokio::spawn(async move {
                            if stall.is_cancelled() {
                                // Accepted, never answered: held until the proxy is cut.
                                stop.cancelled().await;
                                return;
                            }
                            let Ok(mut server) = TcpStream::connect(&upstream).await else { return };
                            tokio::select! {
                                _ = stop.cancelled() => {}
                                // Both sockets stay open; nothing more is relayed.
                                _ = stall.cancelled() => stop.cancelled().await,
                                _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                            }
                        });
                    }
                }
            }
        });
    }

    /// Refuses new connections and drops the open ones.
    pub fn cut(&self) {
        if let Some(running) = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            running.stop.cancel();
        }
    }

    /// Stops relaying without closing anything: open connections and new ones are held, and
    /// nothing comes back on them, until [`Proxy::restore`] (or [`Proxy::cut`]).
    pub fn stall(&self) {
        if let Some(running) = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            running.stall.cancel();
        }
    }

    /// Relays again on the same port; held or open connections are dropped first.
    pub async fn restore(&self) -> Result<()> {
        self.cut();
        // The cut listener closes once its task sees the cancellation.
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", self.port)).await {
                Ok(listener) => break listener,
                Err(_) if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                }
                Err(e) => return Err(e.into()),
            }
        };
        self.serve(listener);
        Ok(())
    }
}
