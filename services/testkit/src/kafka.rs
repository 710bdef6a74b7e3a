//! A real Kafka-protocol broker for tests: [tansu](https://crates.io/crates/tansu) 0.6.0 with
//! its SQLite engine, one process per test on a free loopback port, its database in a temporary
//! directory, killed when the value is dropped. `deploy/local/ensure-tools.sh` installs it at
//! `.shoal/bin/tansu`. (Its `memory://` engine reported wrong end offsets and lost fetches in the
//! middle of a batch; the SQLite one does neither. See docs/triggers.md, "Kafka: the client
//! layer", for what else tansu does differently from Apache Kafka.)

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use rdkafka::ClientConfig;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::Consumer;
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::OnceCell;

use relay::Relay;
use shoal_devstack::tls::{ClientCertificate, ThrowawayCa};
use tls_front::TlsFront;

/// Where the binary comes from when set (see [`tansu_binary`]).
pub const BINARY_ENV: &str = "SHOAL_TANSU";
const LOCAL_BINARY: &str = ".shoal/bin/tansu";

const START_ATTEMPTS: usize = 5;
const START_TIMEOUT: Duration = Duration::from_secs(30);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Lines of the broker's output kept for error messages.
const OUTPUT_TAIL: usize = 40;

mod relay;
mod tls_front;

/// A running tansu broker; killed when dropped.
pub struct TansuBroker {
    child: Child,
    /// Where clients connect: tansu's port, or its TLS front's.
    port: u16,
    sign_in: SignIn,
    tls: Option<(TlsFront, Arc<TestClientTls>)>,
    /// tansu's own port (the same as `port` without a front).
    direct_port: u16,
    relay: Option<Relay>,
    output: Output,
    producer: OnceCell<FutureProducer>,
    _dir: tempfile::TempDir,
}

/// Whether clients must sign in. With `Scram`, tansu runs with `--authentication` and takes
/// SASL SCRAM-SHA-512, checking the password against the users created for the test. (tansu
/// 0.6 offers SCRAM and OAUTHBEARER, not PLAIN: its `rsasl` is built without the `plain`
/// feature, and its OAUTHBEARER check refuses every token, `tansu-auth` `Callback::check`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignIn {
    None,
    Scram,
}

/// The user the broker's own test clients (admin, producer, readiness probe) sign in as when
/// the broker requires SCRAM.
const TEST_CLIENT_USER: &str = "shoal-testkit";
const TEST_CLIENT_PASSWORD: &str = "shoal-testkit-password";

/// What the broker's own test clients present to a TLS broker.
struct TestClientTls {
    ca_pem: String,
    certificate: ClientCertificate,
}

/// A started tansu process, before it is wrapped.
struct Started {
    child: Child,
    port: u16,
    advertised: u16,
    output: Output,
    front: Option<TlsFront>,
    relay: Option<Relay>,
}

/// What stands in front of tansu's port, whose address tansu advertises.
#[derive(Clone, Copy)]
enum Front<'a> {
    None,
    Tls(&'a ThrowawayCa),
    Relay,
}

impl TansuBroker {
    /// Starts tansu on a free loopback port and waits until it answers a metadata request.
    pub async fn start() -> Result<TansuBroker> {
        Self::start_with(SignIn::None, Front::None, &[]).await
    }

    /// Starts tansu requiring SASL SCRAM-SHA-512 sign-in by one of `users` (name, password).
    /// tansu refuses to create users once authentication is on, so they are created first on
    /// a broker without it, on the same database, which is then stopped.
    pub async fn start_with_scram_users(users: &[(&str, &str)]) -> Result<TansuBroker> {
        Self::start_with(SignIn::Scram, Front::None, users).await
    }

    /// Starts tansu behind a mutual-TLS front (`tls_front`): clients must trust `ca` and
    /// present a client certificate it signed ([`ThrowawayCa::client_certificate`]).
    pub async fn start_with_mutual_tls(ca: &ThrowawayCa) -> Result<TansuBroker> {
        Self::start_with(SignIn::None, Front::Tls(ca), &[]).await
    }

    /// Starts tansu advertising a plain relay to itself ([`TansuBroker::relay_connections`]
    /// counts what reaches it): clients that bootstrap from [`TansuBroker::direct_bootstrap`]
    /// go on to the relay's address for everything else, unless something stops them.
    pub async fn start_behind_relay() -> Result<TansuBroker> {
        Self::start_with(SignIn::None, Front::Relay, &[]).await
    }

    async fn start_with(
        sign_in: SignIn,
        front: Front<'_>,
        users: &[(&str, &str)],
    ) -> Result<TansuBroker> {
        let binary = tansu_binary()?;
        let dir = tempfile::tempdir()?;
        if sign_in == SignIn::Scram {
            let mut setup = launch(&binary, dir.path(), SignIn::None, Front::None).await?;
            let result = create_users(&binary, setup.port, users).await;
            let _ = setup.child.kill().await;
            result?;
        }
        let started = launch(&binary, dir.path(), sign_in, front).await?;
        let tls = match (started.front, front) {
            (Some(front), Front::Tls(ca)) => {
                let client = TestClientTls {
                    ca_pem: ca.ca_pem.clone(),
                    certificate: ca.client_certificate("shoal-testkit")?,
                };
                Some((front, Arc::new(client)))
            }
            _ => None,
        };
        Ok(TansuBroker {
            child: started.child,
            port: started.advertised,
            direct_port: started.port,
            relay: started.relay,
            sign_in,
            tls,
            output: started.output,
            producer: OnceCell::new(),
            _dir: dir,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`, for `bootstrap.servers`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// tansu's own `127.0.0.1:PORT`, which differs from [`TansuBroker::bootstrap`] (the
    /// advertised address) behind a front.
    pub fn direct_bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.direct_port)
    }

    /// Connections the relay of [`TansuBroker::start_behind_relay`] accepted (0 without one).
    pub fn relay_connections(&self) -> u64 {
        self.relay.as_ref().map_or(0, Relay::accepted)
    }

    /// Whether clients that reach the broker through the relay of
    /// [`TansuBroker::start_behind_relay`] (everything bootstrapped from
    /// [`TansuBroker::bootstrap`]) may create `topic`: refused, a CreateTopics request for it
    /// gets `TOPIC_AUTHORIZATION_FAILED`, as from a broker that does not let the client create
    /// topics. (tansu 0.6 never creates a topic on its own, so a missing topic then can be
    /// neither written nor created.) An error without a relay.
    pub fn refuse_topic_creation(&self, topic: &str, refuse: bool) -> Result<()> {
        let relay = self
            .relay
            .as_ref()
            .context("refusing topic creation needs a broker started behind its relay")?;
        relay.refuse_creating(topic, refuse);
        Ok(())
    }

    /// [`TansuBroker::relay_connections`] once it has not changed for three seconds (at most
    /// 15 s): the broker's own test clients (admin, producer) may still be connecting through
    /// the relay for a moment after their call returned.
    pub async fn settled_relay_connections(&self) -> u64 {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        let mut last = self.relay_connections();
        let mut unchanged = 0;
        while unchanged < 3 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = self.relay_connections();
            unchanged = if now == last { unchanged + 1 } else { 0 };
            last = now;
        }
        last
    }

    /// The last lines the broker printed (stdout and stderr interleaved), for test failures.
    pub fn output_tail(&self) -> String {
        self.output.tail()
    }

    /// Creates `name` with `partitions` partitions; fails if it exists.
    pub async fn create_topic(&self, name: &str, partitions: i32) -> Result<()> {
        let admin: AdminClient<DefaultClientContext> = self
            .client_config()
            .create()
            .context("cannot create a Kafka admin client")?;
        let topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
        let options = AdminOptions::new().request_timeout(Some(REQUEST_TIMEOUT));
        let results = admin.create_topics([&topic], &options).await;
        tokio::task::spawn_blocking(move || drop(admin));
        for result in results.with_context(|| format!("cannot create topic {name}"))? {
            if let Err((_, code)) = result {
                bail!("cannot create topic {name}: {code}");
            }
        }
        Ok(())
    }

    /// Writes one record to `partition` of `topic` and returns its offset once the broker has
    /// acknowledged it.
    pub async fn produce(
        &self,
        topic: &str,
        partition: i32,
        key: Option<&[u8]>,
        value: &[u8],
        headers: &[(&str, &[u8])],
    ) -> Result<i64> {
        let producer = self
            .producer
            .get_or_try_init(|| async {
                self.client_config()
                    .set("acks", "all")
                    // One record in flight at a time per partition is what tests expect.
                    .set("linger.ms", "0")
                    .create::<FutureProducer>()
                    .context("cannot create a Kafka producer")
            })
            .await?;
        let headers = headers.iter().fold(OwnedHeaders::new(), |h, (key, value)| {
            h.insert(Header {
                key,
                value: Some(*value),
            })
        });
        let mut record = FutureRecord::<[u8], [u8]>::to(topic)
            .partition(partition)
            .payload(value)
            .headers(headers);
        if let Some(key) = key {
            record = record.key(key);
        }
        let delivery = producer
            .send(record, REQUEST_TIMEOUT)
            .await
            .map_err(|(e, _)| anyhow!("cannot produce to {topic}/{partition}: {e}"))?;
        Ok(delivery.offset)
    }

    fn client_config(&self) -> ClientConfig {
        let mut config = client_config(&self.bootstrap(), self.sign_in);
        if let Some((_, tls)) = &self.tls {
            config
                .set("security.protocol", "ssl")
                .set("ssl.ca.pem", &tls.ca_pem)
                .set("ssl.certificate.pem", &tls.certificate.certificate_pem)
                .set("ssl.key.pem", &tls.certificate.key_pem);
        }
        config
    }
}

impl Drop for TansuBroker {
    fn drop(&mut self) {
        // `kill_on_drop` covers the child too; killing here makes it immediate.
        let _ = self.child.start_kill();
    }
}

/// `SHOAL_TANSU` if set, else `.shoal/bin/tansu` of this repository (installed by
/// `deploy/local/ensure-tools.sh`).
pub fn tansu_binary() -> Result<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    find_binary(std::env::var_os(BINARY_ENV), &repo)
}

fn find_binary(configured: Option<OsString>, repo: &Path) -> Result<PathBuf> {
    if let Some(configured) = configured.filter(|p| !p.is_empty()) {
        let configured = PathBuf::from(configured);
        if configured.is_file() {
            return Ok(configured);
        }
        bail!("{BINARY_ENV}={} does not exist", configured.display());
    }
    let local = repo.join(LOCAL_BINARY);
    if local.is_file() {
        return Ok(local);
    }
    bail!(
        "the tansu broker was not found at {LOCAL_BINARY}: run deploy/local/ensure-tools.sh \
         (installs it, once, in about 10 minutes) or set {BINARY_ENV} to a tansu 0.6 binary \
         built with the libsql feature"
    )
}

fn client_config(bootstrap: &str, sign_in: SignIn) -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap);
    if sign_in == SignIn::Scram {
        config
            .set("security.protocol", "SASL_PLAINTEXT")
            .set("sasl.mechanisms", "SCRAM-SHA-512")
            .set("sasl.username", TEST_CLIENT_USER)
            .set("sasl.password", TEST_CLIENT_PASSWORD);
    }
    config
}

/// tansu on a free port (retried when the port was taken meanwhile), behind `front`.
async fn launch(binary: &Path, dir: &Path, sign_in: SignIn, front: Front<'_>) -> Result<Started> {
    let mut last_error = anyhow!("tansu did not start");
    for _ in 0..START_ATTEMPTS {
        let port = free_port()?;
        let tls = match front {
            Front::Tls(ca) => Some(TlsFront::bind(ca).await?),
            Front::None | Front::Relay => None,
        };
        let relay = match front {
            Front::Relay => Some(Relay::bind().await?),
            Front::None | Front::Tls(_) => None,
        };
        let advertised = tls
            .as_ref()
            .map(|(f, _)| f.port)
            .or(relay.as_ref().map(|(r, _)| r.port))
            .unwrap_or(port);
        match spawn_on(binary, dir, port, advertised, sign_in).await {
            Ok((child, output)) => {
                let front = tls.map(|(front, pending)| {
                    pending.relay_to(port);
                    front
                });
                let relay = relay.map(|(relay, pending)| {
                    pending.relay_to(port);
                    relay
                });
                return Ok(Started {
                    child,
                    port,
                    advertised,
                    output,
                    front,
                    relay,
                });
            }
            Err(StartError::PortTaken(e)) => last_error = e,
            Err(StartError::Failed(e)) => return Err(e),
        }
    }
    Err(last_error)
}

/// `tansu user create` (SCRAM-SHA-512) for the test client and each of `users`.
async fn create_users(binary: &Path, port: u16, users: &[(&str, &str)]) -> Result<()> {
    let broker = format!("tcp://127.0.0.1:{port}");
    let all =
        std::iter::once((TEST_CLIENT_USER, TEST_CLIENT_PASSWORD)).chain(users.iter().copied());
    for (name, password) in all {
        let output = Command::new(binary)
            .args([
                "user",
                "create",
                "--broker",
                &broker,
                "--mechanism",
                "scram512",
            ])
            .args([name, password])
            .stdin(Stdio::null())
            .output()
            .await
            .with_context(|| format!("cannot run {} user create", binary.display()))?;
        if !output.status.success() {
            bail!(
                "tansu user create {name} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    Ok(())
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

/// What tansu printed, both streams in arrival order, the last [`OUTPUT_TAIL`] lines.
#[derive(Clone, Default)]
struct Output {
    lines: Arc<Mutex<Vec<String>>>,
}

impl Output {
    fn tail(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        lines.join("\n")
    }

    fn push(&self, line: String) {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == OUTPUT_TAIL {
            lines.remove(0);
        }
        lines.push(line);
    }
}

enum StartError {
    PortTaken(anyhow::Error),
    Failed(anyhow::Error),
}

/// tansu on `port`, telling clients to connect to `advertised` (its TLS front's, if any).
async fn spawn_on(
    binary: &Path,
    dir: &Path,
    port: u16,
    advertised: u16,
    sign_in: SignIn,
) -> Result<(Child, Output), StartError> {
    let url = format!("tcp://127.0.0.1:{port}");
    let advertised = format!("tcp://127.0.0.1:{advertised}");
    let mut command = Command::new(binary);
    command.arg("broker");
    if sign_in == SignIn::Scram {
        command.arg("--authentication");
    }
    let mut child = command
        .args(["--cluster-id", "shoal-test"])
        .args(["--listener-url", &url])
        .args(["--advertised-listener-url", &advertised])
        // Relative to the working directory: the temporary one.
        .args(["--storage-engine", "sqlite://tansu.db"])
        .arg("--silent")
        .env_remove("STORAGE_ENGINE")
        .env_remove("SCHEMA_REGISTRY")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot run {}", binary.display()))
        .map_err(StartError::Failed)?;
    let output = Output::default();
    if let Some(stdout) = child.stdout.take() {
        tokio::spawn(collect(BufReader::new(stdout), output.clone()));
    }
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(collect(BufReader::new(stderr), output.clone()));
    }

    let ready = tokio::time::timeout(START_TIMEOUT, async {
        tokio::select! {
            answered = answers_metadata(port, sign_in) => Ok(answered),
            exited = child.wait() => Err(exited),
        }
    })
    .await;
    let failure = match ready {
        Ok(Ok(())) => return Ok((child, output)),
        Ok(Err(exited)) => {
            // Let the readers drain what the process wrote before it exited.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let status = exited.map_or_else(|e| e.to_string(), |s| s.to_string());
            format!("exited ({status}) before answering on port {port}")
        }
        Err(_) => {
            let _ = child.start_kill();
            format!("did not answer a metadata request on port {port} within {START_TIMEOUT:?}")
        }
    };
    let printed = output.tail();
    let error = anyhow!("{} {failure}; it printed:\n{printed}", binary.display());
    if printed
        .to_ascii_lowercase()
        .contains("address already in use")
    {
        Err(StartError::PortTaken(error))
    } else {
        Err(StartError::Failed(error))
    }
}

/// Returns once the broker on `port` answers a metadata request listing itself.
async fn answers_metadata(port: u16, sign_in: SignIn) {
    let bootstrap = format!("127.0.0.1:{port}");
    loop {
        // A client connecting before the port is open backs off for up to 10 s: wait for the
        // port first, then ask.
        if tokio::net::TcpStream::connect(&bootstrap).await.is_ok() {
            let bootstrap = bootstrap.clone();
            let answered = tokio::task::spawn_blocking(move || {
                let client: rdkafka::consumer::BaseConsumer =
                    client_config(&bootstrap, sign_in).create().ok()?;
                let metadata = client.fetch_metadata(None, Duration::from_secs(2)).ok()?;
                (!metadata.brokers().is_empty()).then_some(())
            })
            .await;
            if matches!(answered, Ok(Some(()))) {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn collect(reader: BufReader<impl AsyncRead + Unpin>, output: Output) {
    let mut lines = reader.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        output.push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_is_found_or_the_error_says_how_to_install_it() -> Result<()> {
        let repo = tempfile::tempdir()?;
        let err = find_binary(None, repo.path()).unwrap_err().to_string();
        for named in [LOCAL_BINARY, "ensure-tools.sh", BINARY_ENV] {
            assert!(err.contains(named), "{err}");
        }
        let err = find_binary(Some("/nonexistent/tansu".into()), repo.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "SHOAL_TANSU=/nonexistent/tansu does not exist"
        );

        let local = repo.path().join(LOCAL_BINARY);
        std::fs::create_dir_all(local.parent().context("has a parent")?)?;
        std::fs::write(&local, "")?;
        assert_eq!(find_binary(Some("".into()), repo.path())?, local);
        let configured = repo.path().join("my-tansu");
        std::fs::write(&configured, "")?;
        assert_eq!(
            find_binary(Some(configured.clone().into()), repo.path())?,
            configured
        );
        Ok(())
    }
}
