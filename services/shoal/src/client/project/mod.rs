//! `shoal app import` and `shoal app export`: an Azure Functions custom-handler project
//! (`host.json`, one folder per function with its `function.json`, `local.settings.json`) moved
//! onto an app and back. Import reads the project ([`files`]), maps it ([`mapping`]), diffs it
//! against the app ([`plan`]) and writes only what differs, each write conditional on the
//! version read (`If-None-Match: *` to create, `If-Match` to change), so a second run writes
//! nothing and an edit made meanwhile is refused (exit 5), never overwritten.

mod export;
mod files;
mod mapping;
mod plan;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::path::PathBuf;

use clap::Args;
use serde_json::{Value, json};
use shoal_client::routes;

use super::api::{Api, Call, Precondition};
use super::failure::{API_ERROR, AUTH, Failure, NOT_FOUND};
use super::output::{self, Output};
use mapping::Note;
use plan::{Current, Line, Plan, Write};

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The project folder: host.json, one folder per function, local.settings.json.
    pub folder: PathBuf,
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
    /// The custom handler's base URL; required when the app does not exist yet.
    #[arg(long)]
    pub handler_url: Option<String>,
    /// Print the plan as a diff against the app; write nothing.
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A new or empty folder to write the project into.
    pub folder: PathBuf,
    #[arg(long, env = "SHOAL_APP")]
    pub app: String,
}

pub async fn import(api: &Api, output: Output, args: ImportArgs) -> Result<(), Failure> {
    let project = files::read(&args.folder)?;
    let mapped = mapping::map(&project).map_err(|problems| {
        Failure::new(
            API_ERROR,
            format!(
                "{}: the project cannot be imported; nothing was written\n  {}",
                args.folder.display(),
                problems.join("\n  ")
            ),
        )
    })?;
    let (current, etags) = read_current(api, &args.app).await?;
    let plan = plan::plan(&mapped, &current, args.handler_url.as_deref())
        .map_err(|message| Failure::usage(format!("--app {}: {message}", args.app)))?;
    let mut notes = mapped.notes.clone();
    notes.extend(plan.notes.iter().cloned());
    if !args.dry_run {
        apply(api, &args.app, &plan, &etags).await?;
    }
    report(output, &args, &plan, &notes);
    Ok(())
}

/// The app's version (`ETag`) and each function's, for the conditional writes.
struct Etags {
    app: Option<String>,
    functions: BTreeMap<String, String>,
}

async fn read_current(api: &Api, app: &str) -> Result<(Current, Etags), Failure> {
    let tenant = api.tenant.as_str();
    let answer = match api.send(Call::new(routes::GET_APP, &[tenant, app])).await {
        Ok(answer) => answer,
        Err(failure) if failure.code == NOT_FOUND => {
            let etags = Etags {
                app: None,
                functions: BTreeMap::new(),
            };
            return Ok((Current::default(), etags));
        }
        Err(failure) => return Err(failure),
    };
    let settings = revealed_settings(api, app).await.map_err(|failure| {
        if failure.code == AUTH {
            Failure::new(
                AUTH,
                format!(
                    "import compares the app's setting values, read with POST …/settings/list, \
                     which this credential may not call: {}",
                    failure.message
                ),
            )
        } else {
            failure
        }
    })?;
    let mut functions = BTreeMap::new();
    let mut etags = Etags {
        app: answer.etag,
        functions: BTreeMap::new(),
    };
    for function in api.list_all(routes::LIST_FUNCTIONS, &[tenant, app]).await? {
        let name = function["name"].as_str().unwrap_or_default().to_owned();
        if let Some(etag) = function["etag"].as_str() {
            etags.functions.insert(name.clone(), etag.to_owned());
        }
        functions.insert(name, function);
    }
    let current = Current {
        app: Some(answer.body),
        settings,
        functions,
    };
    Ok((current, etags))
}

async fn revealed_settings(api: &Api, app: &str) -> Result<BTreeMap<String, String>, Failure> {
    let call = Call::new(routes::LIST_SETTINGS, &[api.tenant.as_str(), app]);
    let body = api.send(call).await?.body;
    Ok(export::settings_of(&body["appSettings"]))
}

async fn apply(api: &Api, app: &str, plan: &Plan, etags: &Etags) -> Result<(), Failure> {
    let tenant = api.tenant.as_str();
    let version = |etag: Option<&String>| {
        etag.cloned()
            .map_or(Precondition::None, Precondition::Matches)
    };
    for write in &plan.writes {
        let call = match write {
            Write::CreateApp(body) => Call::new(routes::PUT_APP, &[tenant, app])
                .body(body.clone())
                .precondition(Precondition::Absent),
            Write::PatchApp(patch) => Call::new(routes::PATCH_APP, &[tenant, app])
                .body(patch.clone())
                .precondition(version(etags.app.as_ref())),
            Write::CreateFunction(name, body) => {
                Call::new(routes::PUT_FUNCTION, &[tenant, app, name.as_str()])
                    .body(body.clone())
                    .precondition(Precondition::Absent)
            }
            Write::ReplaceFunction(name, body) => {
                Call::new(routes::PUT_FUNCTION, &[tenant, app, name.as_str()])
                    .body(body.clone())
                    .precondition(version(etags.functions.get(name)))
            }
        };
        api.send(call).await?;
    }
    Ok(())
}

fn report(output: Output, args: &ImportArgs, plan: &Plan, notes: &[Note]) {
    if output == Output::Json {
        let changes: Vec<Value> = plan
            .diff
            .iter()
            .map(|(resource, lines)| json!({"resource": resource, "changes": lines.iter().map(line_text).collect::<Vec<_>>()}))
            .collect();
        let listed: Vec<Value> = notes
            .iter()
            .map(|n| json!({"at": n.at, "outcome": n.outcome.label(), "why": n.why}))
            .collect();
        output::json(&json!({
            "app": args.app,
            "dryRun": args.dry_run,
            "changes": changes,
            "notes": listed,
        }));
        return;
    }
    if plan.is_empty() {
        println!(
            "No changes: app {} already matches {}.",
            args.app,
            args.folder.display()
        );
    } else {
        for (resource, lines) in &plan.diff {
            println!("{resource}:");
            for line in lines {
                println!("  {}", line_text(line));
            }
        }
        let verb = if args.dry_run { "Would write" } else { "Wrote" };
        println!(
            "{verb} {} change(s) to app {}.",
            plan.writes.len(),
            args.app
        );
    }
    if !notes.is_empty() {
        println!("\nNot mapped one to one:");
        let rows: Vec<Vec<String>> = notes
            .iter()
            .map(|n| vec![n.outcome.label().to_owned(), n.at.clone(), n.why.clone()])
            .collect();
        output::table(&["OUTCOME", "WHERE", "WHY"], &rows);
    }
}

fn line_text(line: &Line) -> String {
    match line {
        Line::Added(path, new) => format!("+ {path}: {new}"),
        Line::Removed(path, old) => format!("- {path}: {old}"),
        Line::Changed(path, old, new) => format!("~ {path}: {old} -> {new}"),
    }
}

pub async fn export(api: &Api, output: Output, args: ExportArgs) -> Result<(), Failure> {
    let tenant = api.tenant.as_str();
    let app = api
        .send(Call::new(routes::GET_APP, &[tenant, &args.app]))
        .await
        .map_err(|f| match f.code {
            NOT_FOUND => Failure::new(
                NOT_FOUND,
                format!(
                    "app {} not found in tenant {} (`shoal app list`)",
                    args.app, api.tenant
                ),
            ),
            _ => f,
        })?
        .body;
    // Secret values are masked in the app's document; the raw values come from settings/list
    // when the caller may read them, else the mask is written and an import keeps the app's
    // value for it (the API treats a written mask as "unchanged").
    let (settings, masked) = match revealed_settings(api, &args.app).await {
        Ok(settings) => (settings, false),
        Err(failure) if failure.code == AUTH => (export::settings_of(&app["appSettings"]), true),
        Err(failure) => return Err(failure),
    };
    let functions = api
        .list_all(routes::LIST_FUNCTIONS, &[tenant, &args.app])
        .await?;
    let project = export::project(&app["hostConfig"], &functions, &settings)
        .map_err(|e| Failure::new(API_ERROR, format!("app {}: {e}", args.app)))?;
    let written = files::write(&args.folder, &project)?;
    match output {
        Output::Json => output::json(&json!({
            "app": args.app,
            "files": written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "secretsMasked": masked,
        })),
        Output::Table => {
            for file in &written {
                println!("Wrote {}", file.display());
            }
            if masked {
                println!(
                    "Secret values are written as {} (this credential may not read them); an \
                     import keeps the app's values for them.",
                    shoal_domain::settings::MASK
                );
            } else {
                println!(
                    "local.settings.json holds the settings' values in the clear, secrets \
                     included: keep it out of source control."
                );
            }
        }
    }
    Ok(())
}
