//! [`LocalBus`]: one TCP port serving AMQP 1.0 and the ATOM management API. The first bytes
//! decide: `AMQP` is an AMQP connection; a TLS handshake (`0x16`) is HTTPS, which the Python
//! SDK's `ServiceBusAdministrationClient` always speaks (its generated client hard-codes
//! `https://{endpoint}`, `servicebus/management/_generated/_client.py`), with a certificate
//! from a throwaway CA ([`LocalBus::tls_ca_pem`]); anything else is plain HTTP
//! ([`LocalBus::management_url`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use shoal_devstack::tls::ThrowawayCa;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use url::Url;

use crate::bus::Bus;
use crate::config::{LocalBusConfig, SasPolicy};
use crate::error::LocalBusError;

/// A running stand-in. Dropping it without [`LocalBus::shutdown`] stops accepting too.
pub struct LocalBus {
    addr: SocketAddr,
    bus: Arc<Bus>,
    ca_pem: String,
    stop: CancellationToken,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl LocalBus {
    /// Starts on `127.0.0.1:0` (a free port).
    pub async fn start(config: LocalBusConfig) -> Result<LocalBus, LocalBusError> {
        Self::start_on(SocketAddr::from(([127, 0, 0, 1], 0)), config).await
    }

    pub async fn start_on(
        addr: SocketAddr,
        config: LocalBusConfig,
    ) -> Result<LocalBus, LocalBusError> {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| LocalBusError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| LocalBusError::Bind { addr, source })?;
        let (ca_pem, tls) = tls_acceptor()?;
        let bus = Arc::new(Bus::new(config));
        let stop = CancellationToken::new();
        let task = tokio::spawn(accept_loop(listener, bus.clone(), tls, stop.clone()));
        tracing::info!(%addr, "local Service Bus stand-in listening");
        Ok(LocalBus {
            addr,
            bus,
            ca_pem,
            stop,
            task: Some(task),
        })
    }

    /// Starts on the standard AMQP port 5672 of a free loopback address (`127.0.0.2`,
    /// `127.0.0.3`, ...; Linux routes all of 127/8 to the loopback interface). For clients that
    /// ignore the port in a connection string's `Endpoint` — the Rust `azservicebus` 0.25 crate
    /// keeps only the host (`primitives/service_bus_connection_string_properties.rs`,
    /// `fully_qualified_namespace`) and always dials 5672 — while letting several stand-ins run
    /// side by side, as parallel tests do.
    pub async fn start_on_standard_port(config: LocalBusConfig) -> Result<LocalBus, LocalBusError> {
        let mut last = None;
        for host in 2..=254u8 {
            let addr = SocketAddr::from(([127, 0, 0, host], 5672));
            match Self::start_on(addr, config.clone()).await {
                Ok(bus) => return Ok(bus),
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| LocalBusError::Tls("no loopback address was tried".to_owned())))
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// A connection string with the first Manage (+Send+Listen) policy and
    /// `UseDevelopmentEmulator=true`, which makes the SDKs speak plain AMQP to the given port.
    pub fn connection_string(&self) -> String {
        self.connection_string_for(self.bus.config.manage_policy())
    }

    /// A connection string with a Listen-only policy.
    pub fn listen_only_connection_string(&self) -> String {
        self.connection_string_for(self.bus.config.listen_only_policy())
    }

    /// [`LocalBus::connection_string`] and [`LocalBus::listen_only_connection_string`] as
    /// clients elsewhere reach the stand-in: `host` (a container's service name, say) with the
    /// port it listens on, for when it listens on `0.0.0.0` or clients resolve another name.
    pub fn connection_strings_via(&self, host: &str) -> (String, String) {
        let endpoint = format!("{host}:{}", self.port());
        (
            connection_string(&endpoint, self.bus.config.manage_policy()),
            connection_string(&endpoint, self.bus.config.listen_only_policy()),
        )
    }

    fn connection_string_for(&self, policy: Option<&SasPolicy>) -> String {
        connection_string(&self.addr.to_string(), policy)
    }

    /// What the stand-in serves: the namespace, its queues and its topics with their
    /// subscriptions, as configured (entities created later through the API are not listed).
    pub fn entities(&self) -> String {
        let config = &self.bus.config;
        let queues: Vec<String> = config.queues.iter().map(|q| q.name.clone()).collect();
        let topics: Vec<String> = config
            .topics
            .iter()
            .map(|t| {
                let subscriptions: Vec<&str> =
                    t.subscriptions.iter().map(|s| s.name.as_str()).collect();
                format!("{} ({})", t.name, subscriptions.join(", "))
            })
            .collect();
        let list = |items: &[String]| {
            if items.is_empty() {
                "none".to_owned()
            } else {
                items.join(", ")
            }
        };
        format!(
            "namespace {}: queues {}; topics {}",
            config.namespace,
            list(&queues),
            list(&topics)
        )
    }

    /// Base of the ATOM management API over plain HTTP (`http://127.0.0.1:PORT/`, or the
    /// address [`LocalBus::start_on`] was given); the same
    /// port answers HTTPS with a certificate from [`LocalBus::tls_ca_pem`].
    pub fn management_url(&self) -> Url {
        // A fixed scheme and a socket address always make a valid URL.
        Url::parse(&format!("http://127.0.0.1:{}/", self.port()))
            .unwrap_or_else(|_| unreachable_url())
    }

    /// How many accept-next-session attaches (a session receiver asking for the next available
    /// session) the stand-in has seen, answered or not: how hard idle session listeners poll.
    pub fn next_session_attaches(&self) -> u64 {
        self.bus.session_attaches.seen()
    }

    /// **Test-only fault**: the next `n` accept-next-session attaches get no answer at all —
    /// neither a session nor a refusal —, as from a broker or a connection that stopped
    /// answering, so tests can show what a client does with an attach that never completes.
    /// The link stays unattached until the client detaches it or its connection ends.
    pub fn hold_next_session_attaches(&self, n: u64) {
        self.bus.session_attaches.hold_next(n);
    }

    /// The PEM of the CA that signed the HTTPS certificate (for `REQUESTS_CA_BUNDLE` etc.).
    pub fn tls_ca_pem(&self) -> &str {
        &self.ca_pem
    }

    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for LocalBus {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn connection_string(endpoint: &str, policy: Option<&SasPolicy>) -> String {
    // `LocalBusConfig` always carries both kinds of policy (defaults fill the gaps).
    let (name, key) = policy
        .map(|p| (p.name.as_str(), p.key.as_str()))
        .unwrap_or(("", ""));
    format!(
        "Endpoint=sb://{endpoint};SharedAccessKeyName={name};SharedAccessKey={key};UseDevelopmentEmulator=true"
    )
}

fn unreachable_url() -> Url {
    Url::parse("http://127.0.0.1/").expect("a literal URL parses")
}

async fn accept_loop(
    listener: TcpListener,
    bus: Arc<Bus>,
    tls: TlsAcceptor,
    stop: CancellationToken,
) {
    let connections = tokio_util::task::TaskTracker::new();
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let (bus, tls, stop) = (bus.clone(), tls.clone(), stop.clone());
        connections.spawn(async move {
            tokio::select! {
                _ = stop.cancelled() => {}
                result = serve(stream, bus, tls) => if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended");
                }
            }
        });
    }
    connections.close();
    connections.wait().await;
}

async fn serve(stream: TcpStream, bus: Arc<Bus>, tls: TlsAcceptor) -> Result<(), String> {
    let _ = stream.set_nodelay(true);
    let mut first = [0u8; 4];
    // Wait for the first four bytes (or fewer if the peer closes), without consuming them.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let n = stream.peek(&mut first).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Ok(());
        }
        if n >= 4 || first[0] == 0x16 || tokio::time::Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    if &first == b"AMQP" {
        return crate::amqp::connection::serve(stream, bus)
            .await
            .map_err(|e| e.to_string());
    }
    if first[0] == 0x16 {
        let stream = tls.accept(stream).await.map_err(|e| e.to_string())?;
        return crate::atom::serve(stream, bus).await;
    }
    crate::atom::serve(stream, bus).await
}

/// A throwaway CA (the dev stack's) and a leaf for `127.0.0.1` / `localhost` it signed.
fn tls_acceptor() -> Result<(String, TlsAcceptor), LocalBusError> {
    let err = |e: anyhow::Error| LocalBusError::Tls(format!("{e:#}"));
    let ca = ThrowawayCa::generate("Shoal local bus CA").map_err(err)?;
    let config = ca.server_config().map_err(err)?;
    Ok((ca.ca_pem, TlsAcceptor::from(config)))
}
