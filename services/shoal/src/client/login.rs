//! `shoal login` and `shoal logout`: check a credential against the API (`GET /v1/me`) and save
//! it as a profile, or forget one.

use std::io::Read;

use clap::Args;

use super::api::Api;
use super::failure::{AUTH, Failure};
use super::output::{self, Output};
use super::profiles::{Credential, Profile, Profiles};
use super::session::{me, parse_url};

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("credential").required(true).args(["token", "client_id"])))]
pub struct LoginArgs {
    /// The API's base URL, e.g. `https://shoal.example.com` (`http://127.0.0.1:8080` for
    /// `shoal dev`).
    #[arg(long)]
    pub url: String,
    /// A bearer token (`-`: read it from standard input, so it stays out of the shell's
    /// history).
    #[arg(long)]
    pub token: Option<String>,
    /// A service principal's client id; its secret comes from `--client-secret`.
    #[arg(long, requires = "client_secret")]
    pub client_id: Option<String>,
    /// The service principal's client secret (`-`: read it from standard input).
    #[arg(long, env = "SHOAL_CLIENT_SECRET", hide_env_values = true)]
    pub client_secret: Option<String>,
    /// The tenant commands act in (default: the one the credential belongs to).
    #[arg(long)]
    pub tenant: Option<String>,
    /// The profile to save (`--profile` on every other command picks it).
    #[arg(long, env = "SHOAL_PROFILE", default_value = "default")]
    pub profile: String,
    #[arg(long, short = 'o', value_enum, default_value = "table")]
    pub output: Output,
}

#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The profile to forget.
    #[arg(long, env = "SHOAL_PROFILE", default_value = "default")]
    pub profile: String,
}

pub async fn login(args: LoginArgs) -> Result<(), Failure> {
    let url = parse_url(&args.url)?;
    let credential = match (args.token, args.client_id, args.client_secret) {
        (Some(token), _, _) => Credential::Token {
            token: from_stdin_if_dash(token, "--token")?,
        },
        (None, Some(client_id), Some(secret)) => Credential::ClientSecret {
            client_id,
            client_secret: from_stdin_if_dash(secret, "--client-secret")?,
        },
        _ => {
            return Err(Failure::usage(
                "give --token, or --client-id and --client-secret",
            ));
        }
    };
    let api = Api::new(url.clone(), credential.clone().into(), String::new())?;
    api.sign_in().await?;
    let caller = me(&api).await?;
    let tenant = args
        .tenant
        .or_else(|| caller["tenant"].as_str().map(str::to_owned));
    let Some(tenant) = tenant else {
        return Err(Failure::usage(
            "the credential names no tenant (a platform administrator's): pass --tenant NAME",
        ));
    };
    let mut profiles = Profiles::load()?;
    profiles.profiles.insert(
        args.profile.clone(),
        Profile {
            url: url.to_string(),
            tenant: Some(tenant.clone()),
            credential,
        },
    );
    let file = profiles.save()?;
    match args.output {
        Output::Json => output::json(&serde_json::json!({
            "profile": args.profile,
            "url": url.as_str(),
            "tenant": tenant,
            "subject": caller["subject"],
            "file": file.display().to_string(),
        })),
        Output::Table => println!(
            "Logged in to {url} as {} in tenant {tenant} (profile {:?}, saved in {}).",
            output::cell(&caller, "/subject"),
            args.profile,
            file.display()
        ),
    }
    Ok(())
}

pub fn logout(args: LogoutArgs) -> Result<(), Failure> {
    let mut profiles = Profiles::load()?;
    if profiles.profiles.remove(&args.profile).is_none() {
        println!("No profile {:?}: nothing to forget.", args.profile);
        return Ok(());
    }
    let file = profiles.save()?;
    println!(
        "Logged out: profile {:?} removed from {}.",
        args.profile,
        file.display()
    );
    Ok(())
}

/// The value, or standard input's first line when it is `-`.
pub fn from_stdin_if_dash(value: String, flag: &str) -> Result<String, Failure> {
    if value != "-" {
        return Ok(value);
    }
    let mut text = String::new();
    std::io::stdin()
        .take(64 * 1024)
        .read_to_string(&mut text)
        .map_err(|e| Failure::usage(format!("{flag} -: cannot read standard input: {e}")))?;
    let line = text.lines().next().unwrap_or_default().trim().to_owned();
    if line.is_empty() {
        return Err(Failure::new(
            AUTH,
            format!("{flag} -: standard input is empty"),
        ));
    }
    Ok(line)
}
