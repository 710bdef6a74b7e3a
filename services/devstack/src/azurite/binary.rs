//! Finding the Azurite queue service's binary.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// Where the binary comes from, in this order (see [`azurite_binary`]).
pub const BINARY_ENV: &str = "SHOAL_AZURITE_BIN";
const LOCAL_BINARY: &str = "deploy/local/node_modules/.bin/azurite-queue";
const PATH_BINARY: &str = "azurite-queue";

/// `SHOAL_AZURITE_BIN` if set, else `deploy/local/node_modules/.bin/azurite-queue` of this
/// repository (installed by `deploy/local/ensure-tools.sh`), else `azurite-queue` on `PATH`.
pub fn azurite_binary() -> Result<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    find_binary(
        std::env::var_os(BINARY_ENV),
        &repo,
        std::env::var_os("PATH"),
    )
}

fn find_binary(
    configured: Option<OsString>,
    repo: &Path,
    path: Option<OsString>,
) -> Result<PathBuf> {
    if let Some(configured) = configured.filter(|p| !p.is_empty()) {
        let configured = PathBuf::from(configured);
        if configured.is_file() {
            return Ok(configured);
        }
        bail!("{BINARY_ENV}={} does not exist", configured.display());
    }
    let local = repo.join(LOCAL_BINARY);
    if local.is_file() {
        return Ok(local);
    }
    if let Some(found) = path.and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(PATH_BINARY))
            .find(|candidate| candidate.is_file())
    }) {
        return Ok(found);
    }
    bail!(
        "Azurite's queue service was not found: set {BINARY_ENV} to an azurite-queue binary, \
         run deploy/local/ensure-tools.sh (installs {LOCAL_BINARY}), or put {PATH_BINARY} on PATH"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn binary_is_found_in_order_or_named_in_the_error() -> Result<()> {
        let repo = tempfile::tempdir()?;
        let on_path = tempfile::tempdir()?;
        let configured = repo.path().join("my-azurite");
        std::fs::write(&configured, "")?;
        let path_binary = on_path.path().join(PATH_BINARY);
        std::fs::write(&path_binary, "")?;
        let path = Some(std::env::join_paths([on_path.path()])?);

        let found = find_binary(Some(configured.clone().into()), repo.path(), path.clone())?;
        assert_eq!(found, configured);
        let err = find_binary(
            Some("/nonexistent/azurite".into()),
            repo.path(),
            path.clone(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "SHOAL_AZURITE_BIN=/nonexistent/azurite does not exist"
        );
        assert_eq!(find_binary(None, repo.path(), path.clone())?, path_binary);

        let local = repo.path().join(LOCAL_BINARY);
        std::fs::create_dir_all(local.parent().context("has a parent")?)?;
        std::fs::write(&local, "")?;
        assert_eq!(find_binary(Some("".into()), repo.path(), path)?, local);

        let err = find_binary(None, on_path.path(), None)
            .unwrap_err()
            .to_string();
        for named in [BINARY_ENV, LOCAL_BINARY, "ensure-tools.sh", "PATH"] {
            assert!(err.contains(named), "{err}");
        }
        Ok(())
    }
}
