//! `shoal func list|show|apply|delete`: an app's functions. `apply -f function.json` creates the
//! function or replaces it, conditional on the version it read (`If-None-Match: *` to create,
//! `If-Match` to replace), so an edit made in between is reported, not overwritten.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::Value;
use shoal_client::routes;

use super::api::{Api, Call, Precondition};
use super::failure::{Failure, NOT_FOUND};
use super::output::{self, Output, cell};

#[derive(Debug, Subcommand)]
pub enum FuncCommand {
    /// List an app's functions.
    List {
        #[arg(long, env = "SHOAL_APP")]
        app: String,
    },
    /// Show a function.
    Show {
        name: String,
        #[arg(long, env = "SHOAL_APP")]
        app: String,
    },
    /// Create or replace a function from its `function.json`.
    Apply(ApplyArgs),
    /// Delete a function.
    Delete {
        name: String,
        #[arg(long, env = "SHOAL_APP")]
        app: String,
        /// Only if the function is still this version (its `etag`): exit code 5 if it changed.
        #[arg(long)]
        if_match: Option<String>,
    },
}

#[derive(Debug, Args)]
pub struct ApplyArgs {
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
    /// The `function.json` (Azure Functions' shape: `bindings`, `disabled`, `retry`, …).
    #[arg(long, short = 'f', value_name = "FILE")]
    pub file: PathBuf,
    /// The function's name (default: the file's folder, as in an Azure Functions project:
    /// `orders/function.json` is `orders`).
    #[arg(long)]
    pub name: Option<String>,
}

pub async fn run(api: &Api, output: Output, command: FuncCommand) -> Result<(), Failure> {
    let tenant = api.tenant.as_str();
    match command {
        FuncCommand::List { app } => {
            let functions = api
                .list_all(routes::LIST_FUNCTIONS, &[tenant, &app])
                .await?;
            if output == Output::Json {
                output::json(&Value::Array(functions));
                return Ok(());
            }
            let rows: Vec<Vec<String>> = functions
                .iter()
                .map(|f| {
                    vec![
                        cell(f, "/name"),
                        cell(f, "/triggerType"),
                        cell(f, "/disabled"),
                        cell(f, "/updatedAt"),
                    ]
                })
                .collect();
            output::table(&["NAME", "TRIGGER", "DISABLED", "UPDATED"], &rows);
            Ok(())
        }
        FuncCommand::Show { name, app } => {
            let function = api
                .send(Call::new(routes::GET_FUNCTION, &[tenant, &app, &name]))
                .await?
                .body;
            show(&function, output);
            Ok(())
        }
        FuncCommand::Apply(args) => apply(api, output, args).await,
        FuncCommand::Delete {
            name,
            app,
            if_match,
        } => {
            let precondition = if_match.map_or(Precondition::None, Precondition::Matches);
            let call = Call::new(routes::DELETE_FUNCTION, &[tenant, &app, &name])
                .precondition(precondition);
            api.send(call).await?;
            if output == Output::Table {
                println!("Deleted function {name} of app {app}.");
            }
            Ok(())
        }
    }
}

fn show(function: &Value, output: Output) {
    if output == Output::Json {
        output::json(function);
        return;
    }
    let bindings = function["bindings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            format!(
                "{} {} {}",
                cell(b, "/direction"),
                cell(b, "/type"),
                cell(b, "/name")
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    output::fields(&[
        ("name", cell(function, "/name")),
        ("app", cell(function, "/app")),
        ("trigger", cell(function, "/triggerType")),
        ("disabled", cell(function, "/disabled")),
        ("bindings", bindings),
        ("etag", cell(function, "/etag")),
        ("updated", cell(function, "/updatedAt")),
    ]);
}

/// The function's name from its file's folder.
fn name_from_path(file: &Path) -> Option<String> {
    let folder = file
        .canonicalize()
        .ok()?
        .parent()?
        .file_name()?
        .to_str()?
        .to_owned();
    Some(folder)
}

async fn apply(api: &Api, output: Output, args: ApplyArgs) -> Result<(), Failure> {
    let shown = args.file.display();
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| Failure::usage(format!("-f {shown}: {e}")))?;
    let body: Value = serde_json::from_str(&text)
        .map_err(|e| Failure::usage(format!("-f {shown}: not JSON ({e})")))?;
    let name = match args.name.or_else(|| name_from_path(&args.file)) {
        Some(name) => name,
        None => {
            return Err(Failure::usage(format!(
                "-f {shown}: name the function with --name"
            )));
        }
    };
    let tenant = api.tenant.as_str();
    let params = [tenant, args.app.as_str(), name.as_str()];
    let (precondition, verb) = match api.send(Call::new(routes::GET_FUNCTION, &params)).await {
        Ok(current) => (
            current
                .etag
                .map_or(Precondition::None, Precondition::Matches),
            "Updated",
        ),
        Err(failure) if failure.code == NOT_FOUND => (Precondition::Absent, "Created"),
        Err(failure) => return Err(failure),
    };
    let call = Call::new(routes::PUT_FUNCTION, &params)
        .body(body)
        .precondition(precondition);
    let function = api
        .send(call)
        .await
        .map_err(|f| Failure::new(f.code, format!("-f {shown}: {}", f.message)))?
        .body;
    match output {
        Output::Json => output::json(&function),
        Output::Table => println!(
            "{verb} function {name} of app {} ({}).",
            args.app,
            cell(&function, "/triggerType")
        ),
    }
    Ok(())
}
