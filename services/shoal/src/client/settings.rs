//! `shoal app settings list|set|unset`: an app's settings through merge patches of
//! `appSettings`, conditional on the version read so a concurrent edit is never overwritten.
//!
//! The API decides which settings are secret (masked on read) from their name and value
//! (`shoal_domain::settings::is_secret_setting`); `--secret` reads the value from standard
//! input, so it stays out of the shell's history, and refuses a setting the API would show in
//! the clear, with the same rule the API applies.

use clap::{Args, Subcommand};
use serde_json::{Map, Value, json};
use shoal_client::routes;
use shoal_domain::settings::is_secret_setting;

use super::api::{Api, Call, Precondition};
use super::failure::{Failure, NOT_FOUND};
use super::login::from_stdin_if_dash;
use super::output::{self, Output};

#[derive(Debug, Subcommand)]
pub enum SettingsCommand {
    /// List an app's settings (secret values masked unless `--reveal`).
    List {
        #[arg(long, env = "SHOAL_APP")]
        app: String,
        /// Show secret values too (`POST …/settings/list`, audited; needs more than Reader).
        #[arg(long)]
        reveal: bool,
    },
    /// Set settings: `NAME=VALUE …`, or with `--secret`, `NAME` alone and the value on
    /// standard input.
    Set(SetArgs),
    /// Remove settings.
    Unset {
        #[arg(long, env = "SHOAL_APP")]
        app: String,
        #[arg(required = true, value_name = "NAME")]
        names: Vec<String>,
    },
}

#[derive(Debug, Args)]
pub struct SetArgs {
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
    /// The value is a secret: read it from standard input when not given as `NAME=VALUE`, and
    /// refuse a name and value the API would not mask.
    #[arg(long)]
    pub secret: bool,
    #[arg(required = true, value_name = "NAME=VALUE")]
    pub pairs: Vec<String>,
}

pub async fn run(api: &Api, output: Output, command: SettingsCommand) -> Result<(), Failure> {
    match command {
        SettingsCommand::List { app, reveal } => list(api, output, &app, reveal).await,
        SettingsCommand::Set(args) => set(api, output, args).await,
        SettingsCommand::Unset { app, names } => unset(api, output, &app, &names).await,
    }
}

/// `NAME=VALUE` as a pair; the name must not be empty.
pub fn parse_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(format!("{text:?}: expected NAME=VALUE")),
    }
}

async fn list(api: &Api, output: Output, app: &str, reveal: bool) -> Result<(), Failure> {
    let settings = if reveal {
        let call = Call::new(routes::LIST_SETTINGS, &[api.tenant.as_str(), app]);
        api.send(call).await?.body["appSettings"].clone()
    } else {
        read_app(api, app).await?.body["appSettings"].clone()
    };
    if output == Output::Json {
        output::json(&settings);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = settings
        .as_object()
        .into_iter()
        .flatten()
        .map(|(name, value)| {
            vec![
                name.clone(),
                output::one_line(value.as_str().unwrap_or_default()),
            ]
        })
        .collect();
    output::table(&["NAME", "VALUE"], &rows);
    Ok(())
}

async fn set(api: &Api, output: Output, args: SetArgs) -> Result<(), Failure> {
    let mut patch = Map::new();
    for pair in &args.pairs {
        let (name, value) = match (parse_pair(pair), args.secret) {
            (Ok(pair), _) => pair,
            (Err(_), true) if !pair.contains('=') && args.pairs.len() == 1 => {
                (pair.clone(), from_stdin_if_dash("-".to_owned(), pair)?)
            }
            (Err(e), _) => {
                return Err(Failure::usage(format!(
                    "{e} (with --secret, one NAME alone reads its value from standard input)"
                )));
            }
        };
        if args.secret && !is_secret_setting(&name, &value) {
            return Err(Failure::usage(format!(
                "--secret {name}: the API masks a setting when its name contains secret, \
                 password, pwd, key, token or connectionstring, or its value carries a \
                 credential; {name} would be shown in the clear. Rename it (e.g. {name}_SECRET)"
            )));
        }
        patch.insert(name, Value::String(value));
    }
    let names: Vec<String> = patch.keys().cloned().collect();
    let app = patch_settings(api, &args.app, patch).await?;
    report(&app, output, &names, "Set");
    Ok(())
}

async fn unset(api: &Api, output: Output, app: &str, names: &[String]) -> Result<(), Failure> {
    let current = read_app(api, app).await?;
    let missing: Vec<&str> = names
        .iter()
        .filter(|n| current.body["appSettings"].get(n.as_str()).is_none())
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(Failure::new(
            NOT_FOUND,
            format!("app {app} has no setting {}", missing.join(", ")),
        ));
    }
    let patch = names.iter().map(|n| (n.clone(), Value::Null)).collect();
    let call = Call::new(routes::PATCH_APP, &[api.tenant.as_str(), app])
        .body(json!({ "appSettings": Value::Object(patch) }))
        .precondition(etag_of(&current));
    let updated = api.send(call).await?.body;
    report(&updated, output, names, "Unset");
    Ok(())
}

/// Merges `settings` into the app's, conditional on the version just read.
async fn patch_settings(
    api: &Api,
    app: &str,
    settings: Map<String, Value>,
) -> Result<Value, Failure> {
    let current = read_app(api, app).await?;
    let call = Call::new(routes::PATCH_APP, &[api.tenant.as_str(), app])
        .body(json!({ "appSettings": Value::Object(settings) }))
        .precondition(etag_of(&current));
    Ok(api.send(call).await?.body)
}

/// The app as `GET …/apps/{app}` shows it, with its `ETag`.
async fn read_app(api: &Api, app: &str) -> Result<super::api::Answer, Failure> {
    api.send(Call::new(routes::GET_APP, &[api.tenant.as_str(), app]))
        .await
}

fn etag_of(answer: &super::api::Answer) -> Precondition {
    answer
        .etag
        .clone()
        .map_or(Precondition::None, Precondition::Matches)
}

fn report(app: &Value, output: Output, names: &[String], verb: &str) {
    if output == Output::Json {
        output::json(&app["appSettings"]);
        return;
    }
    for name in names {
        let shown = app["appSettings"][name.as_str()].as_str().unwrap_or("-");
        let secret = if shown == shoal_domain::settings::MASK {
            " (secret: reads show ********)"
        } else {
            ""
        };
        println!(
            "{verb} {name} on app {}{secret}.",
            output::cell(app, "/name")
        );
    }
}
