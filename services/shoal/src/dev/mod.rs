//! `shoal dev`: everything in one process on embedded defaults. A private Postgres cluster
//! (unless `DATABASE_URL` is set) and a secret key are kept under `.shoal/`, so the data and
//! tokens survive restarts.

pub mod postgres;

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use shoal_api::auth::Principal;
use shoal_api::{ApiConfig, Application};
use shoal_store::crypto::SecretKey;
use shoal_store::pool::{PoolConfig, migrate};

use crate::cli::DevArgs;
use crate::commands::{issue_token, shutdown_on_signal};

pub async fn run(args: DevArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.dir)
        .with_context(|| format!("creating {}", args.dir.display()))?;
    let secret_key = dev_secret_key(&args.dir)?;
    let (database_url, cluster) = match &args.database_url {
        Some(url) => (url.clone(), None),
        None => {
            let cluster = postgres::PrivateCluster::start(&args.dir.join("postgres")).await?;
            (cluster.database_url(), Some(cluster))
        }
    };
    let result = serve(&args, &database_url, secret_key).await;
    if let Some(cluster) = cluster
        && let Err(err) = cluster.stop().await
    {
        tracing::warn!(error = %err, "could not stop the private Postgres cluster");
    }
    result
}

async fn serve(args: &DevArgs, database_url: &str, secret_key: SecretKey) -> anyhow::Result<()> {
    migrate(database_url)
        .await
        .context("migrating the database")?;
    let issuer = shoal_api::tokens::DEFAULT_ISSUER;
    let audience = shoal_api::tokens::DEFAULT_AUDIENCE;
    let config = ApiConfig {
        listen: args.listen,
        database_url: database_url.to_string(),
        secret_key: secret_key.clone(),
        issuer: issuer.into(),
        audience: audience.into(),
        max_body_bytes: shoal_api::DEFAULT_MAX_BODY_BYTES,
        pool: PoolConfig::default(),
    };
    let app = Application::build(config).await?;
    let admin = Principal::PlatformAdmin {
        subject: "dev-admin".into(),
    };
    let token = issue_token(
        database_url,
        &secret_key,
        issuer,
        audience,
        &admin,
        Duration::from_secs(24 * 3600),
    )
    .await?;
    let base = format!("http://{}:{}", args.listen.ip(), app.port());
    println!(
        "\nShoal is running.\n\n  API            {base}/v1\n  API reference  {base}/docs\n  OpenAPI        {base}/openapi.json\n  Metrics        {base}/metrics\n\n\
         Platform-admin token (valid 24 h):\n\n  export SHOAL_TOKEN={token}\n\n\
         Try:\n\n  curl -s -X PUT {base}/v1/tenants/demo -H \"Authorization: Bearer $SHOAL_TOKEN\" \\\n    -H 'Content-Type: application/json' -d '{{\"displayName\": \"Demo\"}}'\n\n\
         Stop with Ctrl-C.\n"
    );
    app.run_until_stopped(shutdown_on_signal()).await?;
    Ok(())
}

/// The dev secret key, generated once and kept (owner-only) so stored secrets stay readable.
fn dev_secret_key(dir: &Path) -> anyhow::Result<SecretKey> {
    let path = dir.join("secret-key");
    if let Ok(text) = std::fs::read_to_string(&path) {
        return SecretKey::from_base64(&text)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()));
    }
    let key = SecretKey::generate();
    std::fs::write(&path, key.to_base64())
        .with_context(|| format!("writing {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(key)
}
