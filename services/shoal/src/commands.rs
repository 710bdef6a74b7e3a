//! What each sub-command does.

use std::time::Duration;

use anyhow::Context;
use shoal_api::external_issuers::ExternalIssuersConfig;
use shoal_api::identity::{Principal, Role};
use shoal_api::issuance::TokenConfig;
use shoal_api::tokens::TokenService;
use shoal_api::tokens::rotation::DEFAULT_GRACE;
use shoal_api::{ApiConfig, Application, IdentityConfig};
use shoal_domain::names::TenantName;
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{PoolConfig, connect_lazy, migrate};
use tokio_util::sync::CancellationToken;

use crate::cli::{Cli, Command, KeysCommand, RotateArgs, ServeArgs, TokenArgs};

pub async fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Migrate(args) => {
            migrate(args.url.expose())
                .await
                .context("migrating the database")?;
            tracing::info!("migrations applied");
            Ok(())
        }
        Command::Serve(args) => serve(args).await,
        Command::Openapi => {
            let json = shoal_api::openapi()
                .to_pretty_json()
                .context("rendering the OpenAPI document")?;
            println!("{json}");
            Ok(())
        }
        Command::Token(args) => {
            println!("{}", token(&args).await?);
            Ok(())
        }
        Command::Keys(KeysCommand::Rotate(args)) => rotate_keys(args).await,
        Command::Worker(args) => crate::worker::run(args).await,
        Command::Scheduler(args) => crate::scheduler::run(args).await,
        Command::Dev(args) => crate::dev::run(args).await,
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    shoal_api::external_issuers::check_distinct(&args.external_issuers, &args.issuer.issuer)
        .map_err(|e| anyhow::anyhow!("--external-issuer {e}"))?;
    if args.migrate {
        migrate(args.database.url.expose())
            .await
            .context("migrating the database")?;
    }
    let config = ApiConfig {
        listen: args.listen,
        database_url: args.database.url,
        secret_key: args.secret.key,
        issuer: args.issuer.issuer,
        audience: args.issuer.audience,
        max_body_bytes: args.max_body_bytes,
        identity: IdentityConfig {
            tokens: TokenConfig {
                public_url: args.public_url,
                lifetime: args.token_lifetime,
                ..TokenConfig::default()
            },
            external_issuers: ExternalIssuersConfig {
                issuers: args.external_issuers,
                ..ExternalIssuersConfig::default()
            },
        },
        pool: PoolConfig {
            max_connections: args
                .db_max_connections
                .unwrap_or_else(shoal_store::pool::default_max_connections),
            ..PoolConfig::default()
        },
    };
    let app = Application::build(config).await?;
    tracing::info!(port = app.port(), "serving the API");
    let shutdown = shutdown_on_signal();
    app.run_until_stopped(shutdown).await?;
    tracing::info!("API stopped");
    Ok(())
}

async fn token(args: &TokenArgs) -> anyhow::Result<String> {
    let principal = match &args.tenant {
        None => Principal::PlatformAdmin {
            subject: args.subject.clone(),
        },
        Some(tenant) => Principal::operator(
            &args.subject,
            &TenantName::parse(tenant).map_err(|e| anyhow::anyhow!("--tenant {e}"))?,
            Role::parse(&args.role)
                .context("--role must be Owner, Contributor, Reader or \"Function Invoker\"")?,
        ),
    };
    if args.subject.trim().is_empty() {
        anyhow::bail!("--subject must not be empty");
    }
    issue_token(
        args.database.url.expose(),
        &args.secret.key,
        &args.issuer.issuer,
        &args.issuer.audience,
        &principal,
        args.ttl,
    )
    .await
}

/// Issues a token with the signing key stored in Postgres (created on first use).
pub async fn issue_token(
    database_url: &str,
    key: &SecretKey,
    issuer: &str,
    audience: &str,
    principal: &Principal,
    ttl: Duration,
) -> anyhow::Result<String> {
    let pool = connect_lazy(
        database_url,
        &PoolConfig {
            max_connections: 1,
            ..PoolConfig::default()
        },
    )?;
    let tokens = TokenService::new(issuer, audience);
    tokens
        .load_or_create(&pool, &Cipher::new(key))
        .await
        .context("loading the signing key (has `shoal migrate` run, and is SHOAL_SECRET_KEY the server's?)")?;
    pool.close().await;
    tokens
        .issue(principal, ttl)
        .map_err(|e| anyhow::anyhow!("issuing the token: {e}"))
}

/// `shoal keys rotate`: a new signing key; the current ones verify until the grace ends.
async fn rotate_keys(args: RotateArgs) -> anyhow::Result<()> {
    let pool = connect_lazy(
        args.database.url.expose(),
        &PoolConfig {
            max_connections: 1,
            ..PoolConfig::default()
        },
    )?;
    // Issuer and audience do not matter for rotating keys.
    let tokens = TokenService::new(
        shoal_api::tokens::DEFAULT_ISSUER,
        shoal_api::tokens::DEFAULT_AUDIENCE,
    );
    let audit = shoal_store::audit::AuditEntry {
        principal: "shoal keys rotate",
        action: shoal_domain::rbac::actions::SIGNING_KEYS_ROTATE,
        resource: "/v1/signingKeys",
        outcome: "succeeded",
        request_id: None,
    };
    let rotation = tokens
        .rotate(
            &pool,
            &Cipher::new(&args.secret.key),
            args.grace.unwrap_or(DEFAULT_GRACE),
            &audit,
        )
        .await
        .context("rotating the signing key (has `shoal migrate` run, and is SHOAL_SECRET_KEY the server's?)")?;
    pool.close().await;
    println!("signing key {} signs from now on", rotation.kid);
    for key in &rotation.retiring {
        println!(
            "key {} verifies until {}",
            key.kid,
            key.verify_until
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
    }
    Ok(())
}

/// A token cancelled by SIGINT or SIGTERM.
pub fn shutdown_on_signal() -> CancellationToken {
    let token = CancellationToken::new();
    let fire = token.clone();
    tokio::spawn(async move {
        let ctrl_c = tokio::signal::ctrl_c();
        #[cfg(unix)]
        {
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(term) => term,
                    Err(err) => {
                        tracing::error!(error = %err, "cannot listen for SIGTERM");
                        let _ = ctrl_c.await;
                        fire.cancel();
                        return;
                    }
                };
            tokio::select! {
                _ = ctrl_c => tracing::info!("SIGINT received; shutting down"),
                _ = term.recv() => tracing::info!("SIGTERM received; shutting down"),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = ctrl_c.await;
        }
        fire.cancel();
    });
    token
}
