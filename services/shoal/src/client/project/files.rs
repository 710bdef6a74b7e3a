//! An Azure Functions project on disk: `host.json` at the root, one folder per function holding
//! its `function.json`, and `local.settings.json`. The Functions host reads the same layout:
//! every directory of the script root with a `function.json` is a function named after the
//! directory (Azure/azure-functions-host, src/WebJobs.Script/Host/HostFunctionMetadataProvider.cs);
//! other folders (the handler's sources, `.vscode`, `bin`) are not functions and are not read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::super::failure::Failure;

/// The project's documents, as JSON, keyed by what they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Project {
    pub host: Value,
    /// `function.json` of each function, by folder name.
    pub functions: BTreeMap<String, Value>,
    /// `local.settings.json`; projects keep it out of source control, so it may be absent.
    pub local_settings: Option<Value>,
}

pub const HOST_JSON: &str = "host.json";
pub const FUNCTION_JSON: &str = "function.json";
pub const LOCAL_SETTINGS_JSON: &str = "local.settings.json";

/// Reads the project in `folder`; a missing folder or `host.json`, or a file that is not JSON,
/// is a usage error naming the file.
pub fn read(folder: &Path) -> Result<Project, Failure> {
    if !folder.is_dir() {
        return Err(Failure::usage(format!(
            "{}: no such folder (an Azure Functions project: host.json and one folder per function)",
            folder.display()
        )));
    }
    let host_file = folder.join(HOST_JSON);
    if !host_file.is_file() {
        return Err(Failure::usage(format!(
            "{}: not found; an Azure Functions project has host.json at its root",
            host_file.display()
        )));
    }
    let host = read_json(&host_file)?;
    let mut functions = BTreeMap::new();
    let entries = std::fs::read_dir(folder)
        .map_err(|e| Failure::usage(format!("{}: {e}", folder.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| Failure::usage(format!("{}: {e}", folder.display())))?;
        let file = entry.path().join(FUNCTION_JSON);
        if !entry.path().is_dir() || !file.is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        functions.insert(name, read_json(&file)?);
    }
    let settings_file = folder.join(LOCAL_SETTINGS_JSON);
    let local_settings = if settings_file.is_file() {
        Some(read_json(&settings_file)?)
    } else {
        None
    };
    Ok(Project {
        host,
        functions,
        local_settings,
    })
}

fn read_json(file: &Path) -> Result<Value, Failure> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::usage(format!("{}: not JSON ({e})", file.display())))
}

/// Writes `project` into `folder`, which must not exist yet or be empty: an export never
/// overwrites files it did not write.
pub fn write(folder: &Path, project: &Project) -> Result<Vec<PathBuf>, Failure> {
    let not_empty = std::fs::read_dir(folder).is_ok_and(|mut e| e.next().is_some());
    if not_empty {
        return Err(Failure::usage(format!(
            "{}: is not empty; export into a new or empty folder",
            folder.display()
        )));
    }
    let mut written = vec![write_json(&folder.join(HOST_JSON), &project.host)?];
    for (name, function) in &project.functions {
        written.push(write_json(
            &folder.join(name).join(FUNCTION_JSON),
            function,
        )?);
    }
    if let Some(settings) = &project.local_settings {
        let file = write_json(&folder.join(LOCAL_SETTINGS_JSON), settings)?;
        // It holds the settings' values, secrets included: readable by its owner only, as
        // `shoal login` keeps its profiles.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
        written.push(file);
    }
    Ok(written)
}

fn write_json(file: &Path, value: &Value) -> Result<PathBuf, Failure> {
    let cannot = |e: std::io::Error| Failure::usage(format!("{}: {e}", file.display()));
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(cannot)?;
    }
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Failure::usage(format!("{}: {e}", file.display())))?;
    text.push('\n');
    std::fs::write(file, text).map_err(cannot)?;
    Ok(file.to_owned())
}
