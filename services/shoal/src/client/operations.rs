//! The operating commands: `shoal scale show`, `shoal poison list|replay`,
//! `shoal breaker pause|resume` and `shoal diagnostics`.

use clap::{Args, Subcommand};
use serde_json::json;
use shoal_client::routes;

use super::api::{Api, Call};
use super::failure::Failure;
use super::output::{self, Output, cell};

#[derive(Debug, Subcommand)]
pub enum ScaleCommand {
    /// Instances now and desired, where they run, and the latest decisions with their reasons.
    Show {
        #[arg(long, env = "SHOAL_APP")]
        app: String,
        /// How many of the latest decisions, 0–100.
        #[arg(long, default_value_t = 10)]
        decisions: u32,
    },
}

#[derive(Debug, Subcommand)]
pub enum PoisonCommand {
    /// Peek at the oldest messages of a function's poison queue (nothing changes).
    List {
        function: String,
        #[arg(long, env = "SHOAL_APP")]
        app: String,
        /// How many messages, 1–32.
        #[arg(long, default_value_t = 10)]
        top: u32,
    },
    /// Move poison messages back to the function's trigger queue.
    Replay(ReplayArgs),
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    pub function: String,
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
    /// Up to this many from the front of the poison queue, 1–1000 (default: the API's, 32).
    #[arg(long, conflicts_with = "message_ids")]
    pub count: Option<u32>,
    /// Only these messages (ids as `shoal poison list` shows them); repeatable.
    #[arg(long = "message-id", value_name = "ID")]
    pub message_ids: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum BreakerCommand {
    /// Open a function's circuit breaker by hand: its listeners stop receiving.
    Pause {
        function: String,
        #[arg(long, env = "SHOAL_APP")]
        app: String,
    },
    /// Close a function's circuit breaker: it receives again.
    Resume {
        function: String,
        #[arg(long, env = "SHOAL_APP")]
        app: String,
    },
}

pub async fn scale(api: &Api, output: Output, command: ScaleCommand) -> Result<(), Failure> {
    let ScaleCommand::Show { app, decisions } = command;
    let call = Call::new(routes::SCALE, &[api.tenant.as_str(), &app]).query("decisions", decisions);
    let status = api.send(call).await?.body;
    if output == Output::Json {
        output::json(&status);
        return Ok(());
    }
    output::fields(&[
        ("app", app),
        ("mode", cell(&status, "/mode")),
        ("current", cell(&status, "/currentInstances")),
        ("desired", cell(&status, "/desiredInstances")),
        ("waiting", cell(&status, "/waiting")),
    ]);
    println!();
    let rows: Vec<Vec<String>> = status["decisions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            vec![
                cell(d, "/at"),
                format!("{} → {}", cell(d, "/from"), cell(d, "/to")),
                cell(d, "/reason"),
            ]
        })
        .collect();
    output::table(&["DECIDED", "INSTANCES", "REASON"], &rows);
    Ok(())
}

pub async fn poison(api: &Api, output: Output, command: PoisonCommand) -> Result<(), Failure> {
    let tenant = api.tenant.as_str();
    match command {
        PoisonCommand::List { function, app, top } => {
            let call = Call::new(routes::POISON, &[tenant, &app, &function]).query("top", top);
            let queue = api.send(call).await?.body;
            if output == Output::Json {
                output::json(&queue);
                return Ok(());
            }
            println!(
                "{} (about {} messages; trigger queue {})",
                cell(&queue, "/poisonQueue"),
                cell(&queue, "/approximateCount"),
                cell(&queue, "/triggerQueue")
            );
            let rows: Vec<Vec<String>> = queue["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| {
                    vec![
                        cell(m, "/messageId"),
                        cell(m, "/insertedAt"),
                        cell(m, "/dequeueCount"),
                        cell(m, "/body"),
                    ]
                })
                .collect();
            output::table(&["ID", "INSERTED", "DEQUEUES", "BODY"], &rows);
            Ok(())
        }
        PoisonCommand::Replay(args) => {
            let mut body = json!({});
            if let Some(count) = args.count {
                body["count"] = json!(count);
            }
            if !args.message_ids.is_empty() {
                body["messageIds"] = json!(args.message_ids);
            }
            let call =
                Call::new(routes::REPLAY_POISON, &[tenant, &args.app, &args.function]).body(body);
            let result = api.send(call).await?.body;
            match output {
                Output::Json => output::json(&result),
                Output::Table => {
                    println!("Replayed {} messages.", cell(&result, "/replayed"));
                    let not_found = result["notFound"].as_array().map_or(0, Vec::len);
                    if not_found > 0 {
                        println!("Not in the poison queue: {}", result["notFound"]);
                    }
                }
            }
            Ok(())
        }
    }
}

pub async fn breaker(api: &Api, output: Output, command: BreakerCommand) -> Result<(), Failure> {
    let (route, function, app) = match command {
        BreakerCommand::Pause { function, app } => (routes::PAUSE, function, app),
        BreakerCommand::Resume { function, app } => (routes::RESUME, function, app),
    };
    let call = Call::new(route, &[api.tenant.as_str(), &app, &function]);
    let breaker = api.send(call).await?.body;
    match output {
        Output::Json => output::json(&breaker),
        Output::Table => println!(
            "Function {function} of app {app}: breaker {} ({}).",
            cell(&breaker, "/state"),
            cell(&breaker, "/cause")
        ),
    }
    Ok(())
}

pub async fn diagnostics(api: &Api, output: Output, app: &str) -> Result<(), Failure> {
    let call = Call::new(routes::DIAGNOSTICS, &[api.tenant.as_str(), app]);
    let report = api.send(call).await?.body;
    if output == Output::Json {
        output::json(&report);
        return Ok(());
    }
    let healthy = report["healthy"].as_bool().unwrap_or(false);
    println!(
        "app {app}: {}",
        if healthy { "healthy" } else { "has errors" }
    );
    let rows: Vec<Vec<String>> = report["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            vec![
                cell(c, "/status"),
                cell(c, "/function"),
                cell(c, "/subject"),
                cell(c, "/detail"),
            ]
        })
        .collect();
    output::table(&["STATUS", "FUNCTION", "SUBJECT", "DETAIL"], &rows);
    Ok(())
}
