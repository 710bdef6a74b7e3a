//! The `api` part: the management API under load against pgbench executing the store's SQL
//! for the same operation, on one scratch database (see the crate's documentation).

use std::time::Duration;

use anyhow::{Result, bail};
use bytes::Bytes;
use hyper::Method;
use shoal_testkit::ScratchDatabase;

use crate::args::Args;
use crate::load::{self, APP_BODY, LoadPlan};
use crate::parts::Interrupted;
use crate::report::{self, Figure, Goal};
use crate::server::{Server, ShoalBin};
use crate::{database, pgbench};

/// The tenant the bench creates its apps in.
pub const TENANT: &str = "bench";
/// More failed requests than this fraction fails the run.
pub const MAX_ERROR_RATE: f64 = 0.001;

/// The API part. Owns the database: whatever happens in between, it is dropped at the end.
pub async fn run(args: &Args, shoal: &ShoalBin) -> Result<()> {
    if args.connections == 0 || args.apps == 0 || args.duration_secs == 0 {
        bail!("--connections, --apps and --duration-secs must be positive");
    }
    let database = ScratchDatabase::create(&args.database_url, "shoal_bench").await?;
    eprintln!("shoal-bench: database {}", database.name());
    let outcome = tokio::select! {
        outcome = with_server(args, shoal, &database) => outcome,
        _ = tokio::signal::ctrl_c() => Err(Interrupted.into()),
    };
    let dropped = database.drop_now().await;
    outcome.and(dropped)
}

/// Owns the server: it is stopped whatever the measurement's outcome.
async fn with_server(args: &Args, shoal: &ShoalBin, database: &ScratchDatabase) -> Result<()> {
    shoal.migrate(database.url()).await?;
    let server = Server::start(shoal, database.url()).await?;
    let outcome = measure(args, shoal, &server, database).await;
    let stopped = server.stop().await;
    outcome.and(stopped)
}

async fn measure(
    args: &Args,
    shoal: &ShoalBin,
    server: &Server,
    database: &ScratchDatabase,
) -> Result<()> {
    let token = shoal.platform_admin_token(server).await?;
    let body = Bytes::from_static(APP_BODY.as_bytes());
    load::create_tenant_and_apps(server.addr(), &token, TENANT, args.apps, &body).await?;
    eprintln!(
        "shoal-bench: tenant `{TENANT}` with {} apps created",
        args.apps
    );

    let plan = |method: Method, body: Option<Bytes>| LoadPlan {
        addr: server.addr(),
        token: token.clone(),
        tenant: TENANT,
        apps: args.apps,
        connections: args.connections,
        pace: None,
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
        method,
        body,
    };
    let pgbench = pgbench::Pgbench {
        program: args.pgbench.clone(),
        url: database.url().to_owned(),
        role: database::app_role(database.url()).await?,
        clients: args.connections,
        threads: args.pgbench_threads,
        warmup: Duration::from_secs(args.warmup_secs),
        duration: Duration::from_secs(args.duration_secs),
    };
    // The issue sets goals for GET only: at least 0.4 of pgbench's rate, p99 under 10 ms.
    let get_goal = Goal {
        min_ratio: Some(0.40),
        max_p99: Some(Duration::from_millis(10)),
    };
    let put_goal = Goal {
        min_ratio: None,
        max_p99: None,
    };

    let get_variables = vec![
        ("tenant", TENANT.to_owned()),
        ("apps", args.apps.to_string()),
    ];
    let mut put_variables = get_variables.clone();
    put_variables.extend(stored_app_variables());

    let mut figures = Vec::new();
    for (name, method, body, script, variables, goal) in [
        (
            "GET app",
            Method::GET,
            None,
            "pgbench-get-app.sql",
            get_variables,
            get_goal,
        ),
        (
            "PUT app",
            Method::PUT,
            Some(body.clone()),
            "pgbench-put-app.sql",
            put_variables,
            put_goal,
        ),
    ] {
        eprintln!(
            "shoal-bench: {name}: shoal, {} connections",
            args.connections
        );
        let shoal_load = load::run(plan(method, body)).await?;
        eprintln!("shoal-bench: {name}: pgbench {script}");
        let tps = pgbench.run(&args.scripts.join(script), &variables).await?;
        figures.push(Figure {
            name,
            shoal: shoal_load,
            pgbench_tps: tps,
            goal,
        });
    }

    let noisy = crate::noisy::measure(args, shoal, server, &token).await?;

    println!();
    for figure in &figures {
        println!("{}", report::line(figure));
    }
    println!("{noisy}");
    let failed: Vec<String> = figures
        .iter()
        .filter(|figure| figure.shoal.error_rate() > MAX_ERROR_RATE)
        .map(report::errors)
        .collect();
    if !failed.is_empty() {
        bail!("too many failed requests: {}", failed.join("; "));
    }
    Ok(())
}

/// What the store writes for [`APP_BODY`], as pgbench-put-app.sql's variables: the spec without
/// settings, and the settings with values sealed the way AES-256-GCM seals them (12-byte nonce,
/// ciphertext as long as the value, 16-byte tag), so rows have the size Shoal's have.
fn stored_app_variables() -> Vec<(&'static str, String)> {
    let sealed = |value: &str| {
        let bytes: Vec<u8> = (0..12 + value.len() + 16).map(|_| rand::random()).collect();
        let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        // An element of a Postgres array literal: `"\\x…"`, its backslash escaped.
        format!(r#""\\x{hex}""#)
    };
    let vals = format!(
        "{{{},{}}}",
        sealed("UseDevelopmentStorage=true"),
        sealed("s3cr3t")
    );
    vec![
        (
            "spec",
            r#"{"handler":{"url":"http://127.0.0.1:9/handler"}}"#.to_owned(),
        ),
        ("names", "{AzureWebJobsStorage,MySecret}".to_owned()),
        ("vals", vals),
        ("secrets", "{f,t}".to_owned()),
        // The audit entry's principal: the token's subject.
        ("principal", "bench".to_owned()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_settings_are_array_literals_of_aes_gcm_sized_bytea() {
        let variables: std::collections::HashMap<_, _> =
            stored_app_variables().into_iter().collect();
        let vals = &variables["vals"];
        let elements: Vec<&str> = vals
            .trim_start_matches('{')
            .trim_end_matches('}')
            .split(',')
            .collect();
        let hex_lengths: Vec<usize> = elements
            .iter()
            .map(|element| {
                element
                    .trim_start_matches(r#""\\x"#)
                    .trim_end_matches('"')
                    .len()
            })
            .collect();
        assert_eq!(
            hex_lengths,
            [2 * (12 + 26 + 16), 2 * (12 + 6 + 16)],
            "{vals}"
        );
        assert!(elements.iter().all(|e| e.starts_with(r#""\\x"#)), "{vals}");
    }
}
