//! A real `shoal serve` on a scratch database with the tenant `contoso`, and the client
//! commands run as a user would: the `shoal` binary with its own config directory.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shoal_testkit::{ScratchDatabase, admin_url};

pub const SHOAL: &str = env!("CARGO_BIN_EXE_shoal");
pub const TENANT: &str = "contoso";

pub struct Server {
    pub db: ScratchDatabase,
    pub key: String,
    pub base: String,
    /// A platform administrator's token.
    pub admin: String,
    /// An Owner of `contoso`.
    pub owner: String,
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// An operator command (`token`) against the server's database.
fn operator(server_db: &ScratchDatabase, key: &str, args: &[&str]) -> String {
    let output = Command::new(SHOAL)
        .args(args)
        .env("DATABASE_URL", server_db.url())
        .env("SHOAL_SECRET_KEY", key)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_owned()
}

impl Server {
    /// Serve on a fresh database (migrated by `--migrate`) with the tenant `contoso`.
    pub async fn start() -> Server {
        let db = ScratchDatabase::create(&admin_url(), "shoal_client")
            .await
            .unwrap();
        let key = shoal_store::crypto::SecretKey::generate().to_base64();
        let listen = format!("127.0.0.1:{}", free_port());
        let child = Command::new(SHOAL)
            .args(["serve", "--migrate", "--listen", &listen])
            .env("DATABASE_URL", db.url())
            .env("SHOAL_SECRET_KEY", &key)
            .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let base = format!("http://{listen}");
        let http = reqwest::Client::new();
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = http.get(format!("{base}/readyz")).send().await
                && r.status().is_success()
            {
                break;
            }
            assert!(Instant::now() < until, "serve did not become ready");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let admin = operator(
            &db,
            &key,
            &["token", "--subject", "ops", "--platform-admin"],
        );
        let owner = operator(
            &db,
            &key,
            &[
                "token",
                "--subject",
                "alice",
                "--tenant",
                TENANT,
                "--role",
                "Owner",
            ],
        );
        let server = Server {
            db,
            key,
            base,
            admin,
            owner,
            child,
        };
        let created = server
            .request(
                reqwest::Method::PUT,
                &format!("/v1/tenants/{TENANT}"),
                Some(json!({})),
            )
            .await;
        assert_eq!(created.0, 201, "{}", created.1);
        server
    }

    /// A token with `role` in `contoso`.
    pub fn token(&self, subject: &str, role: &str) -> String {
        operator(
            &self.db,
            &self.key,
            &[
                "token",
                "--subject",
                subject,
                "--tenant",
                TENANT,
                "--role",
                role,
            ],
        )
    }

    /// An administrator's request; its status and body.
    pub async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = reqwest::Client::new()
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(&self.admin);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }
}

/// `shoal scheduler` and `shoal worker` beside a [`Server`], on its database and key, as a
/// deployment runs them: the functions the API holds run. Killed (and reaped) when dropped.
pub struct Roles {
    children: Vec<Child>,
}

impl Drop for Roles {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Server {
    /// A scheduler (a 500 ms tick) and one worker (test timings: a 200 ms refresh and
    /// heartbeat) reaching loopback destinations, as the tests' Azurite and handlers are.
    pub fn start_roles(&self) -> Roles {
        let spawn = |args: &[&str], timings: &[(&str, &str)]| {
            Command::new(SHOAL)
                .args(args)
                .args(["--listen", "127.0.0.1:0"])
                .env("DATABASE_URL", self.db.url())
                .env("SHOAL_SECRET_KEY", &self.key)
                .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
                .env("RUST_LOG", "warn")
                .envs(timings.iter().copied())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .unwrap()
        };
        let scheduler = spawn(
            &[
                "scheduler",
                "--name",
                "s1",
                "--tick",
                "500ms",
                "--lease-ttl",
                "3s",
            ],
            &[],
        );
        let worker = spawn(
            &["worker", "--name", "w1"],
            &[
                ("SHOAL_TEST_REFRESH_MS", "200"),
                ("SHOAL_TEST_HEARTBEAT_MS", "200"),
            ],
        );
        Roles {
            children: vec![scheduler, worker],
        }
    }
}

/// A user's terminal: the `shoal` binary with its own config directory and no `SHOAL_*`
/// variables but those a test sets.
pub struct User {
    pub config: tempfile::TempDir,
    env: Vec<(String, String)>,
}

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Exit code 0, else the test fails showing what was printed.
    pub fn ok(self) -> Run {
        assert_eq!(self.code, 0, "{self:#?}");
        self
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {self:#?}"))
    }
}

impl Default for User {
    fn default() -> User {
        User::new()
    }
}

impl User {
    pub fn new() -> User {
        User {
            config: tempfile::tempdir().unwrap(),
            env: Vec::new(),
        }
    }

    /// A user already logged in to `server` as an Owner of `contoso` (through `SHOAL_URL` and
    /// `SHOAL_TOKEN`, the variables scripts use).
    pub fn owner_of(server: &Server) -> User {
        let mut user = User::new();
        user.set("SHOAL_URL", &server.base);
        user.set("SHOAL_TOKEN", &server.owner);
        user
    }

    pub fn set(&mut self, name: &str, value: &str) {
        self.env.push((name.to_owned(), value.to_owned()));
    }

    pub fn profiles(&self) -> PathBuf {
        self.config.path().join("shoal").join("profiles.json")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(SHOAL);
        command
            .args(args)
            .env("XDG_CONFIG_HOME", self.config.path())
            .env("HOME", self.config.path())
            .env("RUST_LOG", "warn");
        for name in [
            "SHOAL_URL",
            "SHOAL_TOKEN",
            "SHOAL_TENANT",
            "SHOAL_APP",
            "SHOAL_PROFILE",
            "SHOAL_CLIENT_SECRET",
            "DATABASE_URL",
            "SHOAL_SECRET_KEY",
        ] {
            command.env_remove(name);
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        command
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with_stdin(args, "")
    }

    pub fn run_with_stdin(&self, args: &[&str], stdin: &str) -> Run {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// A command left running (`invocations tail`), its output piped.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }
}

/// A queue-triggered function's `function.json` written into `dir/<name>/function.json`.
pub fn function_file(dir: &std::path::Path, name: &str, body: &Value) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let file = folder.join("function.json");
    std::fs::write(&file, serde_json::to_string_pretty(body).unwrap()).unwrap();
    file
}

pub fn queue_function(queue: &str) -> Value {
    json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg",
        "queueName": queue, "connection": "AzureWebJobsStorage"}]})
}
