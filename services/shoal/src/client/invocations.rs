//! `shoal invocations list [--failed]` and `shoal invocations tail`: a function's invocation
//! telemetry (`GET …/functions/{function}/invocations`) as a table, and followed live by
//! polling, printing what each poll adds: attempts per minute and every failure with its error
//! and the handler's logs.
//!
//! How soon tail shows an invocation is the poll interval plus how often workers write their
//! telemetry (`shoal_store::invocation_recorder::FLUSH_EVERY`).

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use shoal_client::routes;

use super::api::{Api, Call};
use super::failure::{API_ERROR, Failure};
use super::output::{self, Output, cell};

#[derive(Debug, Subcommand)]
pub enum InvocationsCommand {
    /// Attempts per minute (or, with `--failed`, the latest failed attempts) of an app's
    /// functions.
    List(ListArgs),
    /// Follow an app's invocations as workers record them (Ctrl-C stops).
    Tail(TailArgs),
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
    /// Only this function (default: every function of the app).
    #[arg(long)]
    pub function: Option<String>,
    /// The latest failed attempts, with their error and the handler's logs.
    #[arg(long)]
    pub failed: bool,
    /// How far back, 1–1440 minutes.
    #[arg(long, default_value_t = 60)]
    pub minutes: u32,
}

#[derive(Debug, Args)]
pub struct TailArgs {
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
    /// Only this function (default: every function of the app).
    #[arg(long)]
    pub function: Option<String>,
    /// Time between polls, in milliseconds (at least 250).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(250..=60_000))]
    pub interval_ms: u64,
}

pub async fn run(api: &Api, output: Output, command: InvocationsCommand) -> Result<(), Failure> {
    match command {
        InvocationsCommand::List(args) => list(api, output, args).await,
        InvocationsCommand::Tail(args) => tail(api, output, args).await,
    }
}

/// The functions asked for: the one named, else all of the app's.
async fn functions(api: &Api, app: &str, only: Option<&String>) -> Result<Vec<String>, Failure> {
    if let Some(function) = only {
        return Ok(vec![function.clone()]);
    }
    let all = api
        .list_all(routes::LIST_FUNCTIONS, &[api.tenant.as_str(), app])
        .await?;
    Ok(all
        .iter()
        .filter_map(|f| f["name"].as_str().map(str::to_owned))
        .collect())
}

async fn read(
    api: &Api,
    app: &str,
    function: &str,
    minutes: u32,
    failures: u32,
) -> Result<Value, Failure> {
    let call = Call::new(routes::INVOCATIONS, &[api.tenant.as_str(), app, function])
        .query("minutes", minutes)
        .query("failures", failures);
    Ok(api.send(call).await?.body)
}

/// `item` with the function's name added, for flat JSON lists.
fn tagged(function: &str, item: &Value) -> Value {
    let mut item = item.clone();
    if let Some(object) = item.as_object_mut() {
        object.insert("function".to_owned(), json!(function));
    }
    item
}

async fn list(api: &Api, output: Output, args: ListArgs) -> Result<(), Failure> {
    let mut items = Vec::new();
    for function in functions(api, &args.app, args.function.as_ref()).await? {
        let failures = if args.failed { 50 } else { 0 };
        let body = read(api, &args.app, &function, args.minutes, failures).await?;
        let key = if args.failed { "failures" } else { "minutes" };
        items.extend(
            body[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| tagged(&function, i)),
        );
    }
    let time = if args.failed { "at" } else { "minute" };
    // Newest first for failures, oldest first for minutes, across functions.
    items.sort_by(|a, b| a[time].as_str().cmp(&b[time].as_str()));
    if args.failed {
        items.reverse();
    }
    if output == Output::Json {
        output::json(&Value::Array(items));
        return Ok(());
    }
    if args.failed {
        let rows: Vec<Vec<String>> = items
            .iter()
            .map(|f| {
                vec![
                    cell(f, "/at"),
                    cell(f, "/function"),
                    cell(f, "/invocationId"),
                    format!("{}ms", cell(f, "/durationMs")),
                    cell(f, "/error"),
                ]
            })
            .collect();
        output::table(
            &["AT", "FUNCTION", "INVOCATION", "DURATION", "ERROR"],
            &rows,
        );
    } else {
        // The API's series has every minute of the window; the table shows those with attempts.
        let rows: Vec<Vec<String>> = items
            .iter()
            .filter(|m| m["invocations"].as_i64().unwrap_or(0) > 0)
            .map(|m| {
                vec![
                    cell(m, "/minute"),
                    cell(m, "/function"),
                    cell(m, "/invocations"),
                    cell(m, "/failures"),
                    cell(m, "/p50Ms"),
                    cell(m, "/p95Ms"),
                    cell(m, "/p99Ms"),
                ]
            })
            .collect();
        output::table(
            &[
                "MINUTE",
                "FUNCTION",
                "INVOCATIONS",
                "FAILURES",
                "P50MS",
                "P95MS",
                "P99MS",
            ],
            &rows,
        );
    }
    Ok(())
}

/// What tail has already shown.
#[derive(Default)]
struct Seen {
    /// (function, minute) → (invocations, failures).
    minutes: HashMap<(String, String), (i64, i64)>,
    failures: HashSet<String>,
}

impl Seen {
    /// What `body` adds for `function`, as lines to print; records it as seen.
    fn news(&mut self, function: &str, body: &Value, output: Output) -> Vec<String> {
        let mut lines = Vec::new();
        for minute in body["minutes"].as_array().into_iter().flatten() {
            let key = (function.to_owned(), cell(minute, "/minute"));
            let now = (
                minute["invocations"].as_i64().unwrap_or(0),
                minute["failures"].as_i64().unwrap_or(0),
            );
            let before = self.minutes.insert(key.clone(), now).unwrap_or((0, 0));
            let (added, failed) = (now.0 - before.0, now.1 - before.1);
            if added <= 0 {
                continue;
            }
            lines.push(match output {
                Output::Json => json!({"kind": "invocations", "function": function,
                    "minute": key.1, "invocations": added, "failures": failed})
                .to_string(),
                Output::Table => format!(
                    "{}  {function}  {added} invocation(s), {failed} failed, p50 {}ms",
                    key.1,
                    cell(minute, "/p50Ms")
                ),
            });
        }
        let mut failures: Vec<&Value> = body["failures"].as_array().into_iter().flatten().collect();
        failures.reverse(); // oldest first
        for failure in failures {
            if !self.failures.insert(cell(failure, "/invocationId")) {
                continue;
            }
            lines.push(match output {
                Output::Json => {
                    json!({"kind": "failure", "failure": tagged(function, failure)}).to_string()
                }
                Output::Table => {
                    let mut text = format!(
                        "{}  {function}  FAILED {} after {}ms: {}",
                        cell(failure, "/at"),
                        cell(failure, "/invocationId"),
                        cell(failure, "/durationMs"),
                        cell(failure, "/error")
                    );
                    for log in failure["logs"].as_array().into_iter().flatten() {
                        text.push_str(&format!(
                            "\n    {}",
                            output::one_line(log.as_str().unwrap_or_default())
                        ));
                    }
                    text
                }
            });
        }
        lines
    }
}

/// Polls until Ctrl-C. The first poll only records what already happened; each later one
/// prints what it adds. A failed poll (the API unreachable, a 5xx) is reported on stderr and
/// retried; a refusal (401, 403, 404) ends the command.
async fn tail(api: &Api, output: Output, args: TailArgs) -> Result<(), Failure> {
    let mut seen = Seen::default();
    let mut functions_list = functions(api, &args.app, args.function.as_ref()).await?;
    for function in &functions_list {
        let body = read(api, &args.app, function, 2, 50).await?;
        seen.news(function, &body, output);
    }
    if output == Output::Table {
        eprintln!("Following app {} (Ctrl-C stops)…", args.app);
    }
    let interval = Duration::from_millis(args.interval_ms);
    let mut polls: u64 = 0;
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => return Ok(()),
            () = tokio::time::sleep(interval) => {}
        }
        polls += 1;
        // New functions appear within about 30 polls.
        if args.function.is_none() && polls.is_multiple_of(30) {
            match functions(api, &args.app, None).await {
                Ok(list) => functions_list = list,
                Err(failure) if failure.code == API_ERROR => eprintln!("{failure}"),
                Err(failure) => return Err(failure),
            }
        }
        for function in &functions_list {
            match read(api, &args.app, function, 2, 50).await {
                Ok(body) => {
                    for line in seen.news(function, &body, output) {
                        println!("{line}");
                    }
                }
                Err(failure) if failure.code == API_ERROR => eprintln!("{failure}"),
                Err(failure) => return Err(failure),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_prints_only_what_each_poll_adds() {
        let mut seen = Seen::default();
        let first = json!({"minutes": [{"minute": "m1", "invocations": 3, "failures": 1, "p50Ms": 5}],
            "failures": [{"invocationId": "a", "at": "t1", "durationMs": 4, "error": "500", "logs": []}]});
        assert_eq!(seen.news("f", &first, Output::Table).len(), 2);
        assert!(
            seen.news("f", &first, Output::Table).is_empty(),
            "nothing new"
        );
        let second = json!({"minutes": [{"minute": "m1", "invocations": 5, "failures": 1, "p50Ms": 5}],
            "failures": [{"invocationId": "a", "at": "t1", "durationMs": 4, "error": "500", "logs": []}]});
        assert_eq!(
            seen.news("f", &second, Output::Table),
            ["m1  f  2 invocation(s), 0 failed, p50 5ms"]
        );
        // The same minute of another function is its own; an invocation id is shown once.
        assert_eq!(
            seen.news("g", &second, Output::Table),
            ["m1  g  5 invocation(s), 1 failed, p50 5ms"]
        );
    }
}
