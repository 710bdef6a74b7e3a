//! `shoal worker` processes for the process tests: spawned with test timings against a
//! worker-test [`Harness`](super::support::Harness), killed and reaped when a test ends early.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::host_identity::HostIdentity;
use super::support::Harness;

pub const SHOAL: &str = env!("CARGO_BIN_EXE_shoal");

/// A worker process, killed (and reaped) if a test ends early. Every worker runs with a host
/// identity in its environment ([`HostIdentity`]); no tenant here is opted in to it, so a
/// worker that ever asked its host's managed-identity endpoint for a token fails the test.
pub struct WorkerProcess {
    child: Option<Child>,
    pub host: HostIdentity,
    /// Whether a test opted a tenant in to the host identity.
    pub host_identity_allowed: bool,
}

impl WorkerProcess {
    pub fn child(&self) -> &Child {
        self.child.as_ref().expect("running")
    }

    pub fn take(mut self) -> Child {
        self.child.take().expect("running")
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !self.host_identity_allowed && !std::thread::panicking() {
            assert_eq!(
                self.host.requests(),
                0,
                "a worker used its host's managed identity for a tenant that is not opted in"
            );
        }
    }
}

pub fn spawn_worker(h: &Harness, name: &str) -> WorkerProcess {
    spawn_worker_with(h, name, &["--all-apps"])
}

pub fn spawn_worker_with(h: &Harness, name: &str, hosting: &[&str]) -> WorkerProcess {
    spawn_worker_env(h, name, hosting, &[])
}

/// [`spawn_worker_with`] and more environment variables.
pub fn spawn_worker_env(
    h: &Harness,
    name: &str,
    hosting: &[&str],
    env: &[(&str, &str)],
) -> WorkerProcess {
    let host = HostIdentity::start();
    let child = Command::new(SHOAL)
        .args(["worker", "--name", name, "--listen", "127.0.0.1:0"])
        .args(hosting)
        .env("DATABASE_URL", &h.database_url)
        .env("SHOAL_SECRET_KEY", h.secret_key.to_base64())
        // Test-only timings: a 3-second invisibility so a crashed worker's message comes back
        // quickly, and a fast refresh.
        .env("SHOAL_TEST_INVISIBILITY_MS", "3000")
        .env("SHOAL_TEST_REFRESH_MS", "200")
        .env("SHOAL_TEST_HEARTBEAT_MS", "200")
        .env("RUST_LOG", "warn")
        .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
        .envs(host.env())
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("shoal worker starts");
    WorkerProcess {
        child: Some(child),
        host,
        host_identity_allowed: false,
    }
}

pub fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .arg(signal)
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

pub async fn wait_exit(mut child: Child, timeout: Duration) -> std::process::ExitStatus {
    tokio::task::spawn_blocking(move || {
        let until = std::time::Instant::now() + timeout;
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            if std::time::Instant::now() > until {
                let _ = child.kill();
                panic!("the worker did not exit within {timeout:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    })
    .await
    .unwrap()
}
