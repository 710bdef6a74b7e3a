//! The Terraform part of `make bench`: `terraform apply` of 50 apps with 2 functions each
//! through this provider, against the same resources created with plain HTTP `PUT`s in the same
//! run, printed as a ratio (goal ≤ 3×), and the time of the re-plan that follows (nothing to
//! change). Both sides write with ten requests in flight, Terraform's default `-parallelism`.
//! A third figure is Terraform's own floor: an apply of the same graph of `terraform_data`
//! resources (built into Terraform: no provider process, no API), so the run shows how much of
//! the apply no provider can remove.
//!
//! Needs `SHOAL_BIN` (a release `shoal`), `DATABASE_URL` (an admin connection; a scratch
//! database is created and dropped), the release provider beside this example's directory, and
//! `.shoal/python/bin/terraform` (or `SHOAL_TERRAFORM`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use futures::StreamExt;
use serde_json::json;
use shoal_testkit::{ScratchDatabase, admin_url};

const APPS: usize = 50;
const FUNCTIONS_PER_APP: usize = 2;
const PARALLELISM: usize = 10;
const GOAL: f64 = 3.0;

fn secret_key() -> String {
    use base64::Engine;
    let key: [u8; 32] = rand::random();
    base64::engine::general_purpose::STANDARD.encode(key)
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn app_body() -> serde_json::Value {
    json!({
        "handler": {"url": "http://127.0.0.1:9/api"},
        "appSettings": {"AzureWebJobsStorage": "UseDevelopmentStorage=true"},
        "scale": {"limit": 10}
    })
}

fn function_body(app: usize, function: usize) -> serde_json::Value {
    json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": format!("q-{app}-{function}")}]})
}

fn terraform_config(tenant: &str) -> String {
    format!(
        r#"
terraform {{
  required_providers {{
    shoal = {{ source = "shoal/shoal" }}
  }}
}}
provider "shoal" {{}}

resource "shoal_function_app" "app" {{
  count   = {APPS}
  tenant  = "{tenant}"
  name    = "app-${{count.index}}"
  handler = {{ url = "http://127.0.0.1:9/api" }}
  app_settings = {{ AzureWebJobsStorage = "UseDevelopmentStorage=true" }}
  scale = {{ limit = 10 }}
}}

resource "shoal_function" "function" {{
  count           = {APPS} * {FUNCTIONS_PER_APP}
  function_app_id = shoal_function_app.app[floor(count.index / {FUNCTIONS_PER_APP})].id
  name            = "f-${{count.index % {FUNCTIONS_PER_APP}}}"
  config_json = jsonencode({{
    bindings = [{{ type = "queueTrigger", direction = "in", name = "m", queueName = "q-${{count.index}}" }}]
  }})
}}
"#
    )
}

/// The same graph as [`terraform_config`] with Terraform's built-in `terraform_data`: 50
/// resources and 100 that each depend on one of them.
fn floor_config() -> String {
    format!(
        r#"
resource "terraform_data" "app" {{
  count = {APPS}
  input = "app-${{count.index}}"
}}

resource "terraform_data" "function" {{
  count = {APPS} * {FUNCTIONS_PER_APP}
  input = "${{terraform_data.app[floor(count.index / {FUNCTIONS_PER_APP})].output}}-f-${{count.index % {FUNCTIONS_PER_APP}}}"
}}
"#
    )
}

async fn put(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    path: &str,
    body: serde_json::Value,
) -> Result<()> {
    let response = http
        .put(format!("{base}{path}"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await?;
    ensure!(
        response.status().is_success(),
        "PUT {path}: {}",
        response.status()
    );
    Ok(())
}

/// The reference: the same apps and functions with plain `PUT`s, apps first, `PARALLELISM` in
/// flight.
async fn plain_http(base: &str, token: &str, tenant: &str) -> Result<Duration> {
    let http = reqwest::Client::new();
    let started = Instant::now();
    let results: Vec<Result<()>> = futures::stream::iter(0..APPS)
        .map(|a| {
            let http = http.clone();
            async move {
                put(
                    &http,
                    base,
                    token,
                    &format!("/v1/tenants/{tenant}/apps/app-{a}"),
                    app_body(),
                )
                .await
            }
        })
        .buffer_unordered(PARALLELISM)
        .collect()
        .await;
    results.into_iter().collect::<Result<Vec<_>>>()?;
    let results: Vec<Result<()>> = futures::stream::iter(0..APPS * FUNCTIONS_PER_APP)
        .map(|i| {
            let http = http.clone();
            let (a, f) = (i / FUNCTIONS_PER_APP, i % FUNCTIONS_PER_APP);
            async move {
                put(
                    &http,
                    base,
                    token,
                    &format!("/v1/tenants/{tenant}/apps/app-{a}/functions/f-{f}"),
                    function_body(a, f),
                )
                .await
            }
        })
        .buffer_unordered(PARALLELISM)
        .collect()
        .await;
    results.into_iter().collect::<Result<Vec<_>>>()?;
    Ok(started.elapsed())
}

fn terraform(dir: &Path, base: &str, token: &str, args: &[&str]) -> Result<Duration> {
    let bin = std::env::var("SHOAL_TERRAFORM")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../.shoal/python/bin/terraform")
        });
    let started = Instant::now();
    let output = Command::new(&bin)
        .args(args)
        .current_dir(dir)
        .env("TF_CLI_CONFIG_FILE", dir.join("cli.tfrc"))
        .env("TF_IN_AUTOMATION", "1")
        .env("CHECKPOINT_DISABLE", "1")
        .env("SHOAL_ENDPOINT", base)
        .env("SHOAL_TOKEN", token)
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    let elapsed = started.elapsed();
    if !output.status.success() && output.status.code() != Some(2) {
        bail!(
            "terraform {args:?} failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(elapsed)
}

#[tokio::main]
async fn main() -> Result<()> {
    let shoal = std::env::var("SHOAL_BIN").context("set SHOAL_BIN to a release shoal binary")?;
    let provider_dir = std::env::current_exe()?
        .parent()
        .and_then(Path::parent)
        .context("the example's directory")?
        .to_path_buf();
    ensure!(
        provider_dir.join("terraform-provider-shoal").exists(),
        "{} has no terraform-provider-shoal: cargo build --release -p terraform-provider-shoal",
        provider_dir.display()
    );
    let db = ScratchDatabase::create(&admin_url(), "shoal_tf_bench").await?;
    let key = secret_key();
    let run = |args: &[&str]| -> Result<String> {
        let out = Command::new(&shoal)
            .args(args)
            .env("DATABASE_URL", db.url())
            .env("SHOAL_SECRET_KEY", &key)
            .env("RUST_LOG", "warn")
            .output()?;
        ensure!(
            out.status.success(),
            "shoal {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8(out.stdout)?.trim().to_owned())
    };
    run(&["migrate"])?;
    let token = run(&[
        "token",
        "--subject",
        "bench",
        "--platform-admin",
        "--ttl",
        "1h",
    ])?;
    let listen = format!("127.0.0.1:{}", free_port()?);
    let _server = Server(
        Command::new(&shoal)
            .args(["serve", "--listen", &listen])
            .env("DATABASE_URL", db.url())
            .env("SHOAL_SECRET_KEY", &key)
            // The apps' handler is on loopback, which the strict egress policy refuses (422).
            .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .spawn()?,
    );
    let base = format!("http://{listen}");
    let http = reqwest::Client::new();
    let until = Instant::now() + Duration::from_secs(60);
    while !http
        .get(format!("{base}/readyz"))
        .send()
        .await
        .is_ok_and(|r| r.status().is_success())
    {
        ensure!(Instant::now() < until, "shoal serve did not become ready");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for tenant in ["bench-http", "bench-tf"] {
        put(
            &http,
            &base,
            &token,
            &format!("/v1/tenants/{tenant}"),
            json!({}),
        )
        .await?;
    }

    let reference = plain_http(&base, &token, "bench-http").await?;

    let dir = tempfile::tempdir()?;
    std::fs::write(
        dir.path().join("cli.tfrc"),
        format!(
            "provider_installation {{\n  dev_overrides {{\n    \"shoal/shoal\" = \"{}\"\n  }}\n  direct {{}}\n}}\n",
            provider_dir.display()
        ),
    )?;
    std::fs::write(dir.path().join("main.tf"), terraform_config("bench-tf"))?;
    let apply = terraform(
        dir.path(),
        &base,
        &token,
        &[
            "apply",
            "-auto-approve",
            "-no-color",
            &format!("-parallelism={PARALLELISM}"),
        ],
    )?;
    let replan = terraform(
        dir.path(),
        &base,
        &token,
        &[
            "plan",
            "-detailed-exitcode",
            "-no-color",
            &format!("-parallelism={PARALLELISM}"),
        ],
    )?;

    let floor_dir = tempfile::tempdir()?;
    std::fs::write(floor_dir.path().join("cli.tfrc"), "")?;
    std::fs::write(floor_dir.path().join("main.tf"), floor_config())?;
    let floor = terraform(
        floor_dir.path(),
        &base,
        &token,
        &[
            "apply",
            "-auto-approve",
            "-no-color",
            &format!("-parallelism={PARALLELISM}"),
        ],
    )?;

    let ratio = apply.as_secs_f64() / reference.as_secs_f64();
    println!(
        "terraform: {APPS} apps with {FUNCTIONS_PER_APP} functions each, {PARALLELISM} writes in flight"
    );
    println!("  plain HTTP PUTs     {:>8.2} s", reference.as_secs_f64());
    println!("  terraform apply     {:>8.2} s", apply.as_secs_f64());
    println!(
        "  ratio               {ratio:>8.2}x (goal <= {GOAL}x) {}",
        if ratio <= GOAL { "met" } else { "NOT MET" }
    );
    println!(
        "  terraform alone     {:>8.2} s (the same graph of terraform_data, no provider: {:.2}x \
         the PUTs; the apply spends {:.2} s more, in the provider's calls and in Terraform's \
         work on larger resources and state)",
        floor.as_secs_f64(),
        floor.as_secs_f64() / reference.as_secs_f64(),
        (apply.as_secs_f64() - floor.as_secs_f64()).max(0.0)
    );
    println!(
        "  terraform plan      {:>8.2} s (re-plan, {} resources, nothing to change)",
        replan.as_secs_f64(),
        APPS * (1 + FUNCTIONS_PER_APP)
    );
    drop(_server);
    db.drop_now().await?;
    Ok(())
}
