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

/// Where the binary comes from when set (see [`tansu_binary`]).
pub const BINARY_ENV: &str = "SHOAL_TANSU";
const LOCAL_BINARY: &str = ".shoal/bin/tansu";

const START_ATTEMPTS: usize = 5;
const START_TIMEOUT: Duration = Duration::from_secs(30);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Lines of the broker's output kept for error messages.
const OUTPUT_TAIL: usize = 40;

/// A running tansu broker; killed when dropped.
pub struct TansuBroker {
    child: Child,
    port: u16,
    output: Output,
    producer: OnceCell<FutureProducer>,
    _dir: tempfile::TempDir,
}

impl TansuBroker {
    /// Starts tansu on a free loopback port and waits until it answers a metadata request.
    pub async fn start() -> Result<TansuBroker> {
        let binary = tansu_binary()?;
        let dir = tempfile::tempdir()?;
        let mut last_error = anyhow!("tansu did not start");
        for _ in 0..START_ATTEMPTS {
            let port = free_port()?;
            match spawn_on(&binary, dir.path(), port).await {
                Ok((child, output)) => {
                    return Ok(TansuBroker {
                        child,
                        port,
                        output,
                        producer: OnceCell::new(),
                        _dir: dir,
                    });
                }
                Err(StartError::PortTaken(e)) => last_error = e,
                Err(StartError::Failed(e)) => return Err(e),
            }
        }
        Err(last_error)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1:PORT`, for `bootstrap.servers`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
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
        let mut config = ClientConfig::new();
        config.set("bootstrap.servers", self.bootstrap());
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

async fn spawn_on(binary: &Path, dir: &Path, port: u16) -> Result<(Child, Output), StartError> {
    let url = format!("tcp://127.0.0.1:{port}");
    let mut child = Command::new(binary)
        .arg("broker")
        .args(["--cluster-id", "shoal-test"])
        .args(["--listener-url", &url])
        .args(["--advertised-listener-url", &url])
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
            answered = answers_metadata(port) => Ok(answered),
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
async fn answers_metadata(port: u16) {
    let bootstrap = format!("127.0.0.1:{port}");
    loop {
        // A client connecting before the port is open backs off for up to 10 s: wait for the
        // port first, then ask.
        if tokio::net::TcpStream::connect(&bootstrap).await.is_ok() {
            let bootstrap = bootstrap.clone();
            let answered = tokio::task::spawn_blocking(move || {
                let client: rdkafka::consumer::BaseConsumer = ClientConfig::new()
                    .set("bootstrap.servers", &bootstrap)
                    .create()
                    .ok()?;
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
