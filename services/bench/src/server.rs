//! The `shoal` binary under test: `migrate`, `token` and a `serve` process the bench starts on a
//! free port and stops at the end.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use base64::Engine;
use http::{Method, StatusCode};
use rand::RngCore;
use tokio::process::{Child, Command};

use crate::http::Connection;

/// How long `shoal serve` may take to answer `/readyz`.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long it may take to shut down after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);

pub struct ShoalBin {
    path: PathBuf,
    /// `SHOAL_SECRET_KEY` shared by `serve` and `token`: base64 of 32 random bytes.
    secret_key: String,
}

impl ShoalBin {
    /// The given path, else `shoal` beside this binary (both are built into the same target
    /// directory), else `$CARGO_TARGET_DIR/release/shoal` (default `target`).
    pub fn locate(path: Option<PathBuf>) -> Result<ShoalBin> {
        let path = match path {
            Some(path) => path,
            None => {
                let sibling = std::env::current_exe()
                    .ok()
                    .and_then(|exe| Some(exe.parent()?.join("shoal")));
                match sibling {
                    Some(sibling) if sibling.is_file() => sibling,
                    _ => {
                        let target = std::env::var_os("CARGO_TARGET_DIR")
                            .map(PathBuf::from)
                            .unwrap_or_else(|| PathBuf::from("target"));
                        target.join("release").join("shoal")
                    }
                }
            }
        };
        if !path.is_file() {
            bail!(
                "{} not found: build it with `cargo build --release -p shoal` or set SHOAL_BIN",
                path.display()
            );
        }
        let mut key = [0u8; 32];
        rand::rng().fill_bytes(&mut key);
        Ok(ShoalBin {
            path,
            secret_key: base64::engine::general_purpose::STANDARD.encode(key),
        })
    }

    /// The `SHOAL_SECRET_KEY` every process gets, for what the bench writes through the store
    /// itself.
    pub fn secret_key(&self) -> &str {
        &self.secret_key
    }

    pub fn command(&self, database_url: &str) -> Command {
        let mut command = Command::new(&self.path);
        command
            .env("DATABASE_URL", database_url)
            .env("SHOAL_SECRET_KEY", &self.secret_key)
            // The bench's handlers listen on loopback, which Shoal refuses unless allowed.
            .env("SHOAL_EGRESS_ALLOW", "127.0.0.0/8,::1")
            // Trace export is on only where the tracing part turns it on: a collector named in
            // the bench's own environment would add its cost to every other figure.
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    }

    pub async fn migrate(&self, database_url: &str) -> Result<()> {
        let output = self
            .command(database_url)
            .arg("migrate")
            .output()
            .await
            .with_context(|| format!("cannot run {}", self.path.display()))?;
        if !output.status.success() {
            bail!(
                "shoal migrate failed ({}): {}",
                output.status,
                output_text(&output)
            );
        }
        Ok(())
    }

    /// `shoal token --subject bench --platform-admin`, which prints the token and nothing else.
    pub async fn platform_admin_token(&self, server: &Server) -> Result<String> {
        self.token(server, &["--subject", "bench", "--platform-admin"])
            .await
    }

    /// A token of `role` in `tenant`, throttled as the tenant's principals are.
    pub async fn tenant_token(&self, server: &Server, tenant: &str, role: &str) -> Result<String> {
        let subject = format!("bench-{tenant}");
        self.token(
            server,
            &["--subject", &subject, "--tenant", tenant, "--role", role],
        )
        .await
    }

    async fn token(&self, server: &Server, args: &[&str]) -> Result<String> {
        let output = self
            .command(&server.database_url)
            .arg("token")
            .args(args)
            .output()
            .await
            .with_context(|| format!("cannot run {}", self.path.display()))?;
        let token = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        if !output.status.success() || token.is_empty() || token.contains(char::is_whitespace) {
            bail!(
                "shoal token failed ({}): {}",
                output.status,
                output_text(&output)
            );
        }
        Ok(token)
    }
}

/// A running `shoal serve`.
pub struct Server {
    child: Child,
    addr: SocketAddr,
    database_url: String,
    log: PathBuf,
}

impl Server {
    /// Starts `shoal serve` on a free port, its output in a log file (per-request logging to a
    /// terminal would cost the server CPU), and waits until `/readyz` answers 200.
    pub async fn start(shoal: &ShoalBin, database_url: &str) -> Result<Server> {
        Server::start_serving(shoal, database_url, None).await
    }

    /// The same, serving the dashboard built in `web_dir` (`--web-dir`) when given.
    pub async fn start_serving(
        shoal: &ShoalBin,
        database_url: &str,
        web_dir: Option<&std::path::Path>,
    ) -> Result<Server> {
        Server::launch(shoal, database_url, web_dir, &[]).await
    }

    /// `shoal serve` with these environment variables added (the tracing figures' `OTEL_*`).
    pub async fn start_with_env(
        shoal: &ShoalBin,
        database_url: &str,
        env: &[(&str, String)],
    ) -> Result<Server> {
        Server::launch(shoal, database_url, None, env).await
    }

    async fn launch(
        shoal: &ShoalBin,
        database_url: &str,
        web_dir: Option<&std::path::Path>,
        env: &[(&str, String)],
    ) -> Result<Server> {
        let addr = free_addr()?;
        let log = std::env::temp_dir().join(format!("shoal-bench-{}.log", std::process::id()));
        let file = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let mut command = shoal.command(database_url);
        command
            .args(["serve", "--listen", &addr.to_string()])
            .stdout(file.try_clone()?)
            .stderr(file);
        if let Some(web_dir) = web_dir {
            command.arg("--web-dir").arg(web_dir);
        }
        for (name, value) in env {
            command.env(name, value);
        }
        if std::env::var_os("RUST_LOG").is_none() {
            command.env("RUST_LOG", "warn");
        }
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {}", shoal.path.display()))?;
        let mut server = Server {
            child,
            addr,
            database_url: database_url.to_owned(),
            log,
        };
        if let Err(error) = server.wait_until_ready().await {
            let tail = server.log_tail();
            let _ = server.stop().await;
            return Err(anyhow!("{error:#}; its output:\n{tail}"));
        }
        Ok(server)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    async fn wait_until_ready(&mut self) -> Result<()> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("shoal serve exited ({status}) before it was ready");
            }
            if let Ok(mut connection) = Connection::open(self.addr, None).await
                && let Ok((StatusCode::OK, _)) = connection.send(Method::GET, "/readyz", None).await
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!("shoal serve did not answer /readyz with 200 within {READY_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGTERM (graceful shutdown), then SIGKILL if it does not end in time.
    pub async fn stop(mut self) -> Result<()> {
        terminate(&mut self.child, "shoal serve").await?;
        let _ = std::fs::remove_file(&self.log);
        Ok(())
    }

    fn log_tail(&self) -> String {
        log_tail(&self.log)
    }
}

/// SIGTERM (graceful shutdown), then SIGKILL if the process does not end within
/// [`STOP_TIMEOUT`].
pub async fn terminate(child: &mut Child, what: &str) -> Result<()> {
    if child.try_wait()?.is_some() {
        return Ok(());
    }
    let pid = child.id().ok_or_else(|| anyhow!("{what} has no pid"))?;
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .await;
    match tokio::time::timeout(STOP_TIMEOUT, child.wait()).await {
        Ok(status) => {
            status?;
        }
        Err(_) => {
            child.kill().await?;
            eprintln!("shoal-bench: {what} ignored SIGTERM for {STOP_TIMEOUT:?}; killed");
        }
    }
    Ok(())
}

/// The last 30 lines of a log file.
pub fn log_tail(path: &std::path::Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

/// What a failed command said: its stderr, else its stdout.
fn output_text(output: &std::process::Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.trim().is_empty() {
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    } else {
        stderr.trim().to_owned()
    }
}

pub fn free_addr() -> Result<SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").context("no free port")?;
    Ok(listener.local_addr()?)
}
