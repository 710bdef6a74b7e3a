//! The Python interpreter with the SDKs Shoal's compatibility tests drive (Microsoft's
//! `azure-servicebus`, ...), installed by `deploy/local/ensure-tools.sh` from
//! `deploy/local/python-requirements.txt` and linked at `<repo>/.shoal/python`.
//!
//! A missing interpreter is a broken test environment, never a reason to skip: [`interpreter`]
//! panics with the command that fixes it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// Overrides where the interpreter is looked up (a `python` with the requirements installed).
pub const PYTHON_ENV_VAR: &str = "SHOAL_PYTHON";

/// The repository root: testkit lives at `<repo>/services/testkit`.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `$SHOAL_PYTHON`, else `<repo>/.shoal/python/bin/python`. Panics, naming
/// `deploy/local/ensure-tools.sh`, when it does not exist.
pub fn interpreter() -> PathBuf {
    locate(std::env::var_os(PYTHON_ENV_VAR), &repo_root())
        .unwrap_or_else(|message| panic!("{message}"))
}

/// Where the interpreter is, or the message that tells the developer how to get it.
fn locate(explicit: Option<std::ffi::OsString>, repo: &Path) -> Result<PathBuf, String> {
    let path = match explicit {
        Some(explicit) => PathBuf::from(explicit),
        None => repo.join(".shoal/python/bin/python"),
    };
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "the Python interpreter for the SDK tests is missing at {} — run \
             deploy/local/ensure-tools.sh (it installs deploy/local/python-requirements.txt \
             and links .shoal/python), or point {PYTHON_ENV_VAR} at a python with them",
            path.display()
        ))
    }
}

/// What a script printed and how it ended.
#[derive(Debug)]
pub struct ScriptOutput {
    pub stdout: String,
    pub stderr: String,
    pub success: bool,
}

/// Runs `script` with `args` and extra `env` under [`interpreter`], killed after `timeout`.
pub async fn run_script(
    script: &Path,
    args: &[&str],
    env: &HashMap<String, String>,
    timeout: Duration,
) -> Result<ScriptOutput> {
    let mut command = tokio::process::Command::new(interpreter());
    command
        .arg(script)
        .args(args)
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command
        .spawn()
        .with_context(|| format!("starting {}", script.display()))?;
    let output = tokio::time::timeout(timeout, child.wait_with_output())
        .await
        .with_context(|| format!("{} ran longer than {timeout:?}", script.display()))?
        .with_context(|| format!("waiting for {}", script.display()))?;
    Ok(ScriptOutput {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        success: output.status.success(),
    })
}

/// Runs a script that prints one JSON document on stdout and returns it parsed; a failing exit
/// or output that is not JSON is an error carrying the script's stderr.
pub async fn run_json(
    script: &Path,
    args: &[&str],
    env: &HashMap<String, String>,
    timeout: Duration,
) -> Result<serde_json::Value> {
    let output = run_script(script, args, env, timeout).await?;
    if !output.success {
        bail!(
            "{} failed\n--- stdout\n{}\n--- stderr\n{}",
            script.display(),
            output.stdout,
            output.stderr
        );
    }
    serde_json::from_str(output.stdout.trim()).with_context(|| {
        format!(
            "{} did not print JSON\n--- stdout\n{}\n--- stderr\n{}",
            script.display(),
            output.stdout,
            output.stderr
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_interpreter_names_ensure_tools() {
        let repo = Path::new("/nonexistent-shoal-checkout");
        let message = locate(None, repo).expect_err("nothing is installed there");
        assert!(
            message.contains("deploy/local/ensure-tools.sh"),
            "{message}"
        );
        assert!(
            message.contains("/nonexistent-shoal-checkout/.shoal/python/bin/python"),
            "{message}"
        );
        let explicit = locate(Some("/nonexistent/python".into()), repo).expect_err("missing");
        assert!(
            explicit.contains("/nonexistent/python") && explicit.contains(PYTHON_ENV_VAR),
            "{explicit}"
        );
    }

    #[test]
    fn an_existing_interpreter_is_found() {
        // Any existing file stands in for the interpreter; locating does not run it.
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        assert_eq!(locate(Some(file.clone().into()), Path::new("/")), Ok(file));
    }
}
