//! A TCP proxy in front of Postgres that can cut its clients off, as an outage does: it refuses
//! new connections and resets the open ones, then comes back on the same port. The API's outage
//! tests and the workers' lease tests use it.

use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

pub struct Proxy {
    pub port: u16,
    upstream: String,
    running: Arc<Mutex<Option<CancellationToken>>>,
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
        let stop = CancellationToken::new();
        *self.running.lock().unwrap_or_else(|p| p.into_inner()) = Some(stop.clone());
        let upstream = self.upstream.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    accepted = listener.accept() => {
                        let Ok((mut client, _)) = accepted else { return };
                        let upstream = upstream.clone();
                        let stop = stop.clone();
                        tokio::spawn(async move {
                            let Ok(mut server) = TcpStream::connect(&upstream).await else { return };
                            tokio::select! {
                                _ = stop.cancelled() => {}
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
        if let Some(stop) = self
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            stop.cancel();
        }
    }

    pub async fn restore(&self) -> Result<()> {
        let listener = TcpListener::bind(("127.0.0.1", self.port)).await?;
        self.serve(listener);
        Ok(())
    }
}
