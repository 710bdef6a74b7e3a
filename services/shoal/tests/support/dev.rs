//! Reading what `shoal dev` prints, shared by the tests that start it.

use std::process::ChildStdout;
use std::time::Duration;

/// Everything `shoal dev` printed up to its "Stop with Ctrl-C" line (waiting up to two
/// minutes for it).
pub async fn banner(stdout: ChildStdout) -> String {
    let read = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut text = String::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let line = line.unwrap();
            text.push_str(&line);
            text.push('\n');
            if line.contains("Stop with Ctrl-C") {
                break;
            }
        }
        text
    });
    tokio::time::timeout(Duration::from_secs(120), read)
        .await
        .expect("dev started")
        .unwrap()
}

/// The rest of the banner line that starts with `prefix` (e.g. `export SHOAL_TOKEN=`).
pub fn printed(banner: &str, prefix: &str) -> String {
    banner
        .lines()
        .find_map(|l| l.trim().strip_prefix(prefix))
        .unwrap_or_else(|| panic!("`{prefix}` is printed: {banner}"))
        .trim()
        .to_string()
}

/// A running `shoal dev` on a free port with its state in `dir`, stopped with SIGTERM (and
/// killed after 30 s) when dropped. (Not every test binary that reads the banner starts dev
/// this way: the CLI test runs it without `DATABASE_URL`.)
#[allow(dead_code)]
pub struct DevProcess {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT` of its API.
    pub base: String,
    /// What it printed up to "Stop with Ctrl-C".
    pub banner: String,
}

#[allow(dead_code)]
impl DevProcess {
    /// Starts `shoal dev` against `database_url` with this `RUST_LOG`, its log going to
    /// `stderr`, and waits for its banner.
    pub async fn start(
        database_url: &str,
        dir: &std::path::Path,
        rust_log: &str,
        stderr: std::process::Stdio,
    ) -> DevProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_shoal"))
            .args(["dev", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--dir")
            .arg(dir)
            .env("DATABASE_URL", database_url)
            .env_remove("SHOAL_SECRET_KEY")
            .env("RUST_LOG", rust_log)
            .stdout(std::process::Stdio::piped())
            .stderr(stderr)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut dev = DevProcess {
            child,
            base: format!("http://127.0.0.1:{port}"),
            banner: String::new(),
        };
        dev.banner = banner(stdout).await;
        dev
    }
}

impl Drop for DevProcess {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let until = std::time::Instant::now() + Duration::from_secs(30);
        while std::time::Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
