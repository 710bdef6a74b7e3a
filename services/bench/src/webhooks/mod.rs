//! `webhooks`: what the webhook ingress adds to calling a function's handler directly.
//!
//! A scratch database, `shoal serve` on it, and the queue part's trivial handler answering
//! every request with an HTTP response (`Outputs.res`, 200 "ok"). One app with one
//! HTTP-triggered function (rate limit raised out of the way), and a token that may invoke
//! it (Function Invoker; token verification and the RBAC check run on every request). Then,
//! with the same client and the same request body, each of:
//!
//! * **direct**: POST the signed custom-handler request to the handler, built the way Shoal
//!   builds it (the domain's `http_payload`, the app's signing secret) before the clock starts,
//!   so the figure is the handler's round trip alone;
//! * **shoal**: `POST /webhooks/bench/hooks/echo` with the bearer token and the same body;
//!
//! measured twice: one client sending one request after another (latency: what the ingress
//! adds to one call) and `--webhook-connections` clients at once (throughput). The scratch
//! database is dropped and the server stopped at the end, also on failure.

mod load;

use std::time::Duration;

use anyhow::{Context, Result, bail};
use bytes::Bytes;
use http::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_domain::webhooks::WebhookSecret;
use shoal_testkit::ScratchDatabase;

use crate::http::Connection;
use crate::load::LoadResult;
use crate::queue::handler::Handler;
use crate::server::{Server, ShoalBin};

pub use load::Target;

const TENANT: &str = "bench";
const APP: &str = "hooks";
const FUNCTION: &str = "echo";
/// A small JSON webhook, as a caller would send.
pub const BODY: &[u8] = br#"{"order":1005,"quantity":2,"colour":"black","note":"bench"}"#;
/// What the handler answers: an HTTP response through the function's `res` output.
const ANSWER: &[u8] = br#"{"Outputs":{"res":{"statusCode":200,"body":"ok"}}}"#;

pub struct WebhookPlan<'a> {
    pub shoal: &'a ShoalBin,
    pub admin_url: &'a str,
    pub warmup: Duration,
    pub duration: Duration,
    pub connections: usize,
}

pub struct WebhookFigures {
    pub connections: usize,
    /// One client, sequential.
    pub shoal_sequential: LoadResult,
    pub direct_sequential: LoadResult,
    /// `connections` clients.
    pub shoal_concurrent: LoadResult,
    pub direct_concurrent: LoadResult,
}

/// Owns the scratch database: dropped whatever happens in between.
pub async fn run(plan: &WebhookPlan<'_>) -> Result<WebhookFigures> {
    if plan.connections == 0 || plan.duration.is_zero() {
        bail!("--webhook-connections and --duration-secs must be positive");
    }
    let database = ScratchDatabase::create(plan.admin_url, "shoal_bench_webhooks").await?;
    eprintln!("shoal-bench: webhooks: database {}", database.name());
    let outcome = with_server(plan, &database).await;
    let dropped = database.drop_now().await;
    let figures = outcome?;
    dropped?;
    Ok(figures)
}

async fn with_server(plan: &WebhookPlan<'_>, database: &ScratchDatabase) -> Result<WebhookFigures> {
    plan.shoal.migrate(database.url()).await?;
    let server = Server::start(plan.shoal, database.url()).await?;
    let outcome = measure(plan, &server, database.url()).await;
    let stopped = server.stop().await;
    let figures = outcome?;
    stopped?;
    Ok(figures)
}

async fn measure(
    plan: &WebhookPlan<'_>,
    server: &Server,
    database_url: &str,
) -> Result<WebhookFigures> {
    let registered = Registered::create(plan.shoal, server, database_url).await?;
    let (shoal, direct) = (registered.shoal(server), registered.direct(server));
    let (warmup, duration) = (plan.warmup, plan.duration);
    let direct_sequential = run_load("webhooks", &direct, 1, warmup, duration).await?;
    let shoal_sequential = run_load("webhooks", &shoal, 1, warmup, duration).await?;
    let connections = plan.connections;
    let direct_concurrent = run_load("webhooks", &direct, connections, warmup, duration).await?;
    let shoal_concurrent = run_load("webhooks", &shoal, connections, warmup, duration).await?;
    Ok(WebhookFigures {
        connections: plan.connections,
        shoal_sequential,
        direct_sequential,
        shoal_concurrent,
        direct_concurrent,
    })
}

/// `connections` clients calling `target` for the warm-up and then the measured time; `part`
/// names the part in the log line.
pub async fn run_load(
    part: &str,
    target: &Target,
    connections: usize,
    warmup: Duration,
    duration: Duration,
) -> Result<LoadResult> {
    eprintln!(
        "shoal-bench: {part}: {}, {connections} connection(s)",
        target.name()
    );
    load::run(target, connections, warmup, duration).await
}

/// What the ingress figures call, written once per database: the handler, the app's signing
/// secret and a Function Invoker's token. Any `shoal serve` on that database serves it.
pub struct Registered {
    handler: Handler,
    secret: WebhookSecret,
    token: String,
}

impl Registered {
    pub async fn create(
        shoal: &ShoalBin,
        server: &Server,
        database_url: &str,
    ) -> Result<Registered> {
        let handler = Handler::start_answering(Bytes::from_static(ANSWER)).await?;
        let admin = shoal.platform_admin_token(server).await?;
        let secret = register(server, &admin, &handler.url()).await?;
        let token = invoker_token(shoal, database_url).await?;
        Ok(Registered {
            handler,
            secret,
            token,
        })
    }

    /// Through `server`'s ingress.
    pub fn shoal(&self, server: &Server) -> Target {
        Target::Shoal {
            addr: server.addr(),
            token: self.token.clone(),
            path: format!("/webhooks/{TENANT}/{APP}/{FUNCTION}"),
        }
    }

    /// Straight to the handler, with what `server` would send it.
    pub fn direct(&self, server: &Server) -> Target {
        Target::Direct {
            addr: self.handler.addr(),
            secret: self.secret.clone(),
            path: format!("/{FUNCTION}"),
            // What Shoal puts in Data.req.Url for the same call.
            url: format!(
                "http://{}/webhooks/{TENANT}/{APP}/{FUNCTION}",
                server.addr()
            ),
        }
    }
}

/// The tenant, the app (its handler the bench's, limits out of the way) and the function;
/// returns the app's signing secret.
async fn register(server: &Server, admin: &str, handler: &str) -> Result<WebhookSecret> {
    let mut connection = Connection::open(server.addr(), Some(admin)).await?;
    let app = json!({
        "handler": {"url": handler},
        "webhooks": {"requestsPerSecond": 100_000, "burst": 100_000}
    });
    let function = json!({"bindings": [
        {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"]},
        {"type": "http", "direction": "out", "name": "res"}
    ]});
    for (path, body) in [
        (
            format!("/v1/tenants/{TENANT}"),
            // The app's rate is out of the way only if the tenant's quota allows it.
            json!({"displayName": "Bench", "limits": {"maxWebhookRequestsPerSecond": 100_000}}),
        ),
        (format!("/v1/tenants/{TENANT}/apps/{APP}"), app),
        (
            format!("/v1/tenants/{TENANT}/apps/{APP}/functions/{FUNCTION}"),
            function,
        ),
    ] {
        let (status, answer) = connection
            .send(Method::PUT, &path, Some(Bytes::from(body.to_string())))
            .await
            .with_context(|| format!("PUT {path}"))?;
        if !status.is_success() {
            bail!("PUT {path}: {status}: {}", String::from_utf8_lossy(&answer));
        }
    }
    let path = format!("/v1/tenants/{TENANT}/apps/{APP}/signingSecret/list");
    let (status, answer) = connection
        .send(Method::POST, &path, Some(Bytes::from_static(b"{}")))
        .await?;
    if status != StatusCode::OK {
        bail!(
            "POST {path}: {status}: {}",
            String::from_utf8_lossy(&answer)
        );
    }
    let answer: Value = serde_json::from_slice(&answer)?;
    let secret = answer["secret"]
        .as_str()
        .context("the signing secret's answer has no secret")?;
    WebhookSecret::parse(secret).map_err(|e| anyhow::anyhow!("the signing secret: {e}"))
}

/// `shoal token --tenant bench --role "Function Invoker"`: a caller that may invoke and do
/// nothing else, so every request goes through the real role-assignment check.
async fn invoker_token(shoal: &ShoalBin, database_url: &str) -> Result<String> {
    let output = shoal
        .command(database_url)
        .args([
            "token",
            "--subject",
            "bench-invoker",
            "--tenant",
            TENANT,
            "--role",
            "Function Invoker",
        ])
        .output()
        .await
        .context("cannot run shoal token")?;
    let token = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if !output.status.success() || token.is_empty() || token.contains(char::is_whitespace) {
        bail!(
            "shoal token --role \"Function Invoker\" failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(token)
}
