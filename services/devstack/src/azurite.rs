//! Azurite's queue service for tests, benchmarks and `shoal dev`: started in memory on a free
//! port, stopped when the value is dropped, its access log (one line per request) captured so
//! tests can count requests.
//!
//! [`Azurite::start_oauth`] runs it over HTTPS with `--oauth basic`, using a throwaway CA, and
//! starts a local token endpoint that stands in for Entra ID (see [`token_endpoint`]).

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;

mod binary;
mod tls;
pub mod token_endpoint;

pub use binary::{BINARY_ENV, azurite_binary};
use tls::TestCa;
use token_endpoint::TokenEndpoint;
pub use token_endpoint::{CLIENT_ID, CLIENT_SECRET, FederatedCredential, TENANT_ID, storage_token};

/// The emulator's account and its published key (not a secret).
pub const ACCOUNT_NAME: &str = "devstoreaccount1";
pub const ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

const START_ATTEMPTS: usize = 5;
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Azurite prints this once it accepts connections.
const READY_LINE: &str = "successfully listens on";

/// A running Azurite queue service; killed when dropped.
pub struct Azurite {
    child: Child,
    port: u16,
    https: bool,
    output: Output,
    oauth: Option<OAuth>,
    _dir: tempfile::TempDir,
}

struct OAuth {
    ca: TestCa,
    token_endpoint: TokenEndpoint,
}

/// Flags of an Azurite process beyond its port and TLS.
#[derive(Clone, Copy, Default)]
struct Launch {
    /// `--silent`: no access log.
    silent: bool,
    /// `--skipApiVersionCheck`: any `x-ms-version` is served.
    any_api_version: bool,
}

/// Azurite's stdout (access log and start-up lines) and stderr, line by line.
#[derive(Clone, Default)]
struct Output {
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Azurite {
    /// Plain HTTP, shared key and SAS authentication.
    pub async fn start() -> Result<Azurite> {
        Self::start_plain(Launch::default()).await
    }

    /// [`Azurite::start`] without the access log (`--silent`): for long runs (`shoal dev`,
    /// benchmarks) where keeping one line per request would only grow memory.
    /// [`Azurite::requests_matching`] sees no requests then.
    pub async fn start_silent() -> Result<Azurite> {
        Self::start_plain(Launch {
            silent: true,
            any_api_version: false,
        })
        .await
    }

    /// [`Azurite::start_silent`] for `shoal dev`, accepting any `x-ms-version`
    /// (`--skipApiVersionCheck`): a developer's current Storage SDK asks for a newer service
    /// version than this Azurite knows and would otherwise get 400 on every call. Tests keep
    /// the check, so the version Shoal pins (`STORAGE_API_VERSION`) stays one Azurite serves.
    pub async fn start_for_dev() -> Result<Azurite> {
        Self::start_plain(Launch {
            silent: true,
            any_api_version: true,
        })
        .await
    }

    async fn start_plain(launch: Launch) -> Result<Azurite> {
        let dir = tempfile::tempdir()?;
        let (child, port, output) = spawn(&dir, None, launch).await?;
        Ok(Azurite {
            child,
            port,
            https: false,
            output,
            oauth: None,
            _dir: dir,
        })
    }

    /// HTTPS with a throwaway CA and `--oauth basic` (bearer tokens accepted besides SAS), plus
    /// a token endpoint on another port serving tokens Azurite accepts.
    pub async fn start_oauth() -> Result<Azurite> {
        let dir = tempfile::tempdir()?;
        let ca = TestCa::generate(dir.path())?;
        let token_endpoint = TokenEndpoint::start(ca.server_config()?).await?;
        let (child, port, output) = spawn(&dir, Some(&ca), Launch::default()).await?;
        Ok(Azurite {
            child,
            port,
            https: true,
            output,
            oauth: Some(OAuth { ca, token_endpoint }),
            _dir: dir,
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Started with [`Azurite::start_oauth`]: HTTPS, bearer tokens.
    pub fn is_https(&self) -> bool {
        self.https
    }

    /// `http://127.0.0.1:PORT/devstoreaccount1` (`https://` when started with OAuth).
    pub fn queue_endpoint(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}/{ACCOUNT_NAME}", self.port)
    }

    /// A connection string with the account key and an explicit queue endpoint.
    pub fn connection_string(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!(
            "DefaultEndpointsProtocol={scheme};AccountName={ACCOUNT_NAME};AccountKey={ACCOUNT_KEY};QueueEndpoint={}",
            self.queue_endpoint()
        )
    }

    #[track_caller]
    fn oauth(&self) -> &OAuth {
        self.oauth.as_ref().expect(
            "only an Azurite started with Azurite::start_oauth has TLS and a token endpoint",
        )
    }

    /// `https://127.0.0.1:PORT/devstoreaccount1`. Panics unless started with
    /// [`Azurite::start_oauth`].
    #[track_caller]
    pub fn https_queue_endpoint(&self) -> String {
        self.oauth();
        self.queue_endpoint()
    }

    /// The PEM of the CA that signed Azurite's and the token endpoint's certificate. Panics
    /// unless started with [`Azurite::start_oauth`].
    #[track_caller]
    pub fn ca_pem(&self) -> &str {
        &self.oauth().ca.ca_pem
    }

    /// The same CA as a file. Panics unless started with [`Azurite::start_oauth`].
    #[track_caller]
    pub fn ca_file(&self) -> &Path {
        &self.oauth().ca.ca_file
    }

    /// `https://127.0.0.1:PORT` of the token endpoint, for `<prefix>__authorityHost`. Panics
    /// unless started with [`Azurite::start_oauth`].
    #[track_caller]
    pub fn authority_host(&self) -> String {
        self.oauth().token_endpoint.authority_host()
    }

    /// Token requests the token endpoint has answered (any outcome).
    #[track_caller]
    pub fn token_requests(&self) -> usize {
        self.oauth().token_endpoint.token_requests()
    }

    /// Adds a federated credential to an Entra client of the token endpoint, so client
    /// assertions with exactly this issuer, subject and audience are exchanged for a storage
    /// token of `client_id`. Panics unless started with [`Azurite::start_oauth`].
    #[track_caller]
    pub fn trust_federated_credential(&self, credential: FederatedCredential) {
        self.oauth().token_endpoint.trust(credential);
    }

    /// Every client assertion presented to the token endpoint, accepted or not.
    #[track_caller]
    pub fn client_assertions(&self) -> Vec<String> {
        self.oauth().token_endpoint.assertions()
    }

    /// `(client id, subject)` of every client assertion the token endpoint accepted.
    #[track_caller]
    pub fn exchanged_assertions(&self) -> Vec<(String, String)> {
        self.oauth().token_endpoint.exchanged()
    }

    /// The app settings of an identity-based `clientsecret` connection named `prefix` to this
    /// Azurite through the token endpoint. Panics unless started with [`Azurite::start_oauth`].
    #[track_caller]
    pub fn client_secret_settings(&self, prefix: &str) -> Vec<(String, String)> {
        [
            ("queueServiceUri", self.https_queue_endpoint()),
            ("credential", "clientsecret".to_owned()),
            ("tenantId", TENANT_ID.to_owned()),
            ("clientId", CLIENT_ID.to_owned()),
            ("clientSecret", CLIENT_SECRET.to_owned()),
            ("authorityHost", self.authority_host()),
        ]
        .into_iter()
        .map(|(property, value)| (format!("{prefix}__{property}"), value))
        .collect()
    }

    /// Every line Azurite printed on stdout so far: start-up lines, then one access-log line
    /// per request (`127.0.0.1 - - [date] "GET /devstoreaccount1/q/messages?… HTTP/1.1" 200 -`).
    pub fn access_log(&self) -> Vec<String> {
        lock(&self.output.stdout).clone()
    }

    /// Access-log lines (requests) for which `matches` holds.
    pub fn requests_matching(&self, matches: impl Fn(&str) -> bool) -> usize {
        lock(&self.output.stdout)
            .iter()
            .filter(|line| is_request_line(line) && matches(line))
            .count()
    }

    /// Access-log lines containing `needle`, e.g. `"GET /devstoreaccount1/orders/messages"`.
    pub fn requests_containing(&self, needle: &str) -> usize {
        self.requests_matching(|line| line.contains(needle))
    }

    /// Waits until at least `count` requests match, or fails after `timeout` (the access log
    /// reaches us shortly after the response does).
    pub async fn wait_for_requests(
        &self,
        count: usize,
        timeout: Duration,
        matches: impl Fn(&str) -> bool,
    ) -> Result<usize> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let seen = self.requests_matching(&matches);
            if seen >= count {
                return Ok(seen);
            }
            if tokio::time::Instant::now() >= deadline {
                bail!("saw {seen} matching Azurite requests, expected at least {count}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Azurite {
    fn drop(&mut self) {
        // `kill_on_drop` covers the child too; killing here makes it immediate.
        let _ = self.child.start_kill();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_request_line(line: &str) -> bool {
    line.contains("\" ") && line.contains(" HTTP/")
}

/// Starts Azurite on a free port, retrying with another port when the one picked was taken
/// in the meantime.
async fn spawn(
    dir: &tempfile::TempDir,
    tls: Option<&TestCa>,
    launch: Launch,
) -> Result<(Child, u16, Output)> {
    let binary = azurite_binary()?;
    let mut last_error = anyhow!("Azurite did not start");
    for _ in 0..START_ATTEMPTS {
        let port = free_port()?;
        match spawn_on(&binary, dir.path(), port, tls, launch).await {
            Ok((child, output)) => return Ok((child, port, output)),
            Err(StartError::PortTaken(e)) => last_error = e,
            Err(StartError::Failed(e)) => return Err(e),
        }
    }
    Err(last_error)
}

fn free_port() -> Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}

enum StartError {
    PortTaken(anyhow::Error),
    Failed(anyhow::Error),
}

async fn spawn_on(
    binary: &Path,
    dir: &Path,
    port: u16,
    tls: Option<&TestCa>,
    launch: Launch,
) -> Result<(Child, Output), StartError> {
    let mut command = Command::new(binary);
    if launch.silent {
        command.arg("--silent");
    }
    if launch.any_api_version {
        command.arg("--skipApiVersionCheck");
    }
    command
        .args(["--inMemoryPersistence", "--disableTelemetry"])
        .args(["--queueHost", "127.0.0.1", "--queuePort", &port.to_string()])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(ca) = tls {
        command
            .arg("--cert")
            .arg(&ca.cert_file)
            .arg("--key")
            .arg(&ca.key_file)
            .args(["--oauth", "basic"]);
    }
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot run {}", binary.display()))
        .map_err(StartError::Failed)?;
    let output = Output::default();
    let (ready_tx, mut ready) = watch::channel(false);
    let stdout = child.stdout.take().map(BufReader::new);
    let stderr = child.stderr.take().map(BufReader::new);
    if let Some(stdout) = stdout {
        tokio::spawn(collect(stdout, output.stdout.clone(), Some(ready_tx)));
    }
    if let Some(stderr) = stderr {
        tokio::spawn(collect(stderr, output.stderr.clone(), None));
    }

    let started = tokio::time::timeout(START_TIMEOUT, async {
        tokio::select! {
            ready = ready.wait_for(|ready| *ready) => ready.is_ok(),
            _ = child.wait() => false,
        }
    })
    .await;
    match started {
        Ok(true) => Ok((child, output)),
        Ok(false) => {
            let _ = child.wait().await;
            // Let the readers drain what the process wrote before it exited.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let printed = [
                lock(&output.stderr).join("\n"),
                lock(&output.stdout).join("\n"),
            ]
            .join("\n")
            .trim()
            .to_owned();
            let error = anyhow!(
                "{} exited before listening on port {port}: {printed}",
                binary.display()
            );
            if printed.contains("EADDRINUSE") {
                Err(StartError::PortTaken(error))
            } else {
                Err(StartError::Failed(error))
            }
        }
        Err(_) => {
            let _ = child.start_kill();
            Err(StartError::Failed(anyhow!(
                "{} did not listen on port {port} within {START_TIMEOUT:?}",
                binary.display()
            )))
        }
    }
}

async fn collect(
    reader: BufReader<impl AsyncRead + Unpin>,
    lines_out: Arc<Mutex<Vec<String>>>,
    ready: Option<watch::Sender<bool>>,
) {
    let mut lines = reader.lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Some(ready) = &ready
            && line.contains(READY_LINE)
        {
            let _ = ready.send(true);
        }
        lock(&lines_out).push(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines_are_told_from_start_up_lines() {
        let cases = [
            (
                "Azurite Queue service successfully listens on http://127.0.0.1:1",
                false,
            ),
            (
                "127.0.0.1 - - [21/Nov/2026:07:41:28 +0000] \"GET /devstoreaccount1/q/messages?numofmessages=1 HTTP/1.1\" 200 -",
                true,
            ),
        ];
        for (line, want) in cases {
            assert_eq!(is_request_line(line), want, "{line}");
        }
    }

    #[test]
    fn storage_token_has_the_claims_azurite_checks() {
        use base64::Engine;
        let token = storage_token(TENANT_ID, Duration::from_secs(600));
        let parts: Vec<&str> = token.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: serde_json::Value = serde_json::from_slice(
            &base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(parts[1])
                .unwrap(),
        )
        .unwrap();
        assert_eq!(claims["aud"], "https://storage.azure.com");
        assert_eq!(
            claims["iss"],
            format!("https://sts.windows.net/{TENANT_ID}/")
        );
        let (nbf, iat, exp) = (
            claims["nbf"].as_u64().unwrap(),
            claims["iat"].as_u64().unwrap(),
            claims["exp"].as_u64().unwrap(),
        );
        assert!(nbf <= iat && exp > iat + 600 - 1, "{claims}");
    }
}
