//! `shoal app list|show|create|delete` and `shoal app settings …` (settings.rs).

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use shoal_client::routes;

use super::api::{Api, Call, Precondition};
use super::failure::{CONFLICT, Failure};
use super::output::{self, Output, cell};
use super::project::{self, ExportArgs, ImportArgs};
use super::settings::{self, SettingsCommand};

#[derive(Debug, Subcommand)]
pub enum AppCommand {
    /// List the tenant's apps.
    List,
    /// Show an app.
    Show { name: String },
    /// Create an app calling the handler at `--handler-url` (fails if it exists).
    Create(CreateArgs),
    /// Delete an app with its functions and settings.
    Delete {
        name: String,
        /// Only if the app is still this version (its `etag`): exit code 5 if it changed.
        #[arg(long)]
        if_match: Option<String>,
    },
    /// List, set and unset an app's settings.
    #[command(subcommand)]
    Settings(SettingsCommand),
    /// Create or update an app from an Azure Functions project folder (host.json, one folder
    /// per function, local.settings.json); `--dry-run` prints the diff.
    Import(ImportArgs),
    /// Write an app into a new folder as an Azure Functions project.
    Export(ExportArgs),
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    pub name: String,
    /// The custom handler's base URL, e.g. `https://handler.example.com/api`.
    #[arg(long)]
    pub handler_url: String,
    /// How long an invocation may take, 1–3600 seconds (default: the API's).
    #[arg(long)]
    pub timeout_seconds: Option<u32>,
    /// An app setting `NAME=VALUE` (repeatable).
    #[arg(long = "setting", value_name = "NAME=VALUE", value_parser = settings::parse_pair)]
    pub settings: Vec<(String, String)>,
}

pub async fn run(api: &Api, output: Output, command: AppCommand) -> Result<(), Failure> {
    match command {
        AppCommand::List => list(api, output).await,
        AppCommand::Show { name } => {
            let app = get(api, &name).await?.body;
            show(&app, output);
            Ok(())
        }
        AppCommand::Create(args) => create(api, output, args).await,
        AppCommand::Delete { name, if_match } => {
            let precondition = if_match.map_or(Precondition::None, Precondition::Matches);
            let tenant = api.tenant.as_str();
            api.send(Call::new(routes::DELETE_APP, &[tenant, &name]).precondition(precondition))
                .await?;
            if output == Output::Table {
                println!("Deleted app {name}.");
            }
            Ok(())
        }
        AppCommand::Settings(command) => settings::run(api, output, command).await,
        AppCommand::Import(args) => project::import(api, output, args).await,
        AppCommand::Export(args) => project::export(api, output, args).await,
    }
}

pub async fn get(api: &Api, name: &str) -> Result<super::api::Answer, Failure> {
    api.send(Call::new(routes::GET_APP, &[api.tenant.as_str(), name]))
        .await
}

async fn list(api: &Api, output: Output) -> Result<(), Failure> {
    let apps = api
        .list_all(routes::LIST_APPS, &[api.tenant.as_str()])
        .await?;
    if output == Output::Json {
        output::json(&Value::Array(apps));
        return Ok(());
    }
    let rows: Vec<Vec<String>> = apps
        .iter()
        .map(|app| {
            vec![
                cell(app, "/name"),
                cell(app, "/state"),
                cell(app, "/handler/url"),
                cell(app, "/updatedAt"),
            ]
        })
        .collect();
    output::table(&["NAME", "STATE", "HANDLER", "UPDATED"], &rows);
    Ok(())
}

fn show(app: &Value, output: Output) {
    if output == Output::Json {
        output::json(app);
        return;
    }
    let settings = app["appSettings"]
        .as_object()
        .map(|s| s.keys().cloned().collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    output::fields(&[
        ("name", cell(app, "/name")),
        ("tenant", cell(app, "/tenant")),
        ("state", cell(app, "/state")),
        ("handler", cell(app, "/handler/url")),
        (
            "timeout",
            format!("{}s", cell(app, "/handler/timeoutSeconds")),
        ),
        ("scale limit", cell(app, "/scale/limit")),
        ("scale mode", cell(app, "/scale/mode")),
        ("identity", cell(app, "/identity/type")),
        ("settings", settings),
        ("etag", cell(app, "/etag")),
        ("updated", cell(app, "/updatedAt")),
    ]);
}

async fn create(api: &Api, output: Output, args: CreateArgs) -> Result<(), Failure> {
    let mut handler = json!({ "url": args.handler_url });
    if let Some(timeout) = args.timeout_seconds {
        handler["timeoutSeconds"] = json!(timeout);
    }
    let mut body = json!({ "handler": handler });
    if !args.settings.is_empty() {
        body["appSettings"] = args
            .settings
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
    }
    let call = Call::new(routes::PUT_APP, &[api.tenant.as_str(), &args.name])
        .body(body)
        .precondition(Precondition::Absent);
    let app = match api.send(call).await {
        Ok(answer) => answer.body,
        Err(failure) if failure.code == CONFLICT => {
            return Err(Failure::new(
                CONFLICT,
                format!(
                    "app {} already exists in tenant {} (`shoal app show {}`)",
                    args.name, api.tenant, args.name
                ),
            ));
        }
        Err(failure) => return Err(failure),
    };
    show(&app, output);
    Ok(())
}
