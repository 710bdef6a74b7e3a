//! Where `shoal login` keeps what it signed in with: `$XDG_CONFIG_HOME/shoal/profiles.json`
//! (`~/.config/shoal/profiles.json` without it), readable by the user alone (0600, in a 0700
//! directory) since it holds tokens and client secrets. One file, one entry per `--profile`.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::failure::{AUTH, Failure};

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Profiles {
    #[serde(default)]
    pub profiles: BTreeMap<String, Profile>,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub url: String,
    /// The tenant commands act in unless `--tenant` names another.
    pub tenant: Option<String>,
    pub credential: Credential,
}

impl std::fmt::Debug for Profile {
    // Never prints the token or the secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profile")
            .field("url", &self.url)
            .field("tenant", &self.tenant)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Credential {
    /// A bearer token, used as is until it expires.
    #[serde(rename_all = "camelCase")]
    Token { token: String },
    /// A service principal's client id and secret, traded at `/oauth2/token` on every command.
    #[serde(rename_all = "camelCase")]
    ClientSecret {
        client_id: String,
        client_secret: String,
    },
}

impl From<Credential> for shoal_client::Credentials {
    fn from(credential: Credential) -> shoal_client::Credentials {
        match credential {
            Credential::Token { token } => shoal_client::Credentials::Token(token),
            Credential::ClientSecret {
                client_id,
                client_secret,
            } => shoal_client::Credentials::client_secret(client_id, client_secret),
        }
    }
}

/// The profiles file: under `$XDG_CONFIG_HOME` when it is an absolute path (the XDG base
/// directory rule), else `$HOME/.config`.
pub fn path() -> Result<PathBuf, Failure> {
    let base = match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => match std::env::var_os("HOME") {
            Some(home) if !home.is_empty() => PathBuf::from(home).join(".config"),
            _ => {
                return Err(Failure::usage(
                    "neither XDG_CONFIG_HOME nor HOME is set: nowhere to keep profiles \
                     (or set SHOAL_URL and SHOAL_TOKEN)",
                ));
            }
        },
    };
    Ok(base.join("shoal").join("profiles.json"))
}

impl Profiles {
    /// The saved profiles; none when the file does not exist yet.
    pub fn load() -> Result<Profiles, Failure> {
        let path = path()?;
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                Failure::new(
                    AUTH,
                    format!(
                        "{} is not a profiles file ({e}); remove it and run `shoal login` again",
                        path.display()
                    ),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Profiles::default()),
            Err(e) => Err(Failure::new(
                AUTH,
                format!("cannot read {}: {e}", path.display()),
            )),
        }
    }

    /// Writes the file whole (a new file renamed over the old, so a crash leaves one or the
    /// other), mode 0600 from its creation on.
    pub fn save(&self) -> Result<PathBuf, Failure> {
        let path = path()?;
        let failed =
            |e: std::io::Error| Failure::new(AUTH, format!("cannot write {}: {e}", path.display()));
        let dir = path.parent().unwrap_or(&path);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(failed)?;
        let temporary = path.with_extension(format!("json.{}", std::process::id()));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)
            .map_err(failed)?;
        // An existing temporary file keeps its mode through `open`; make sure.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(failed)?;
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        file.write_all(text.as_bytes()).map_err(failed)?;
        file.sync_all().map_err(failed)?;
        std::fs::rename(&temporary, &path).map_err(failed)?;
        Ok(path)
    }
}
