//! `shoal token` and `shoal keys rotate`: Shoal's own tokens and signing keys, from the
//! command line.

use std::time::Duration;

use anyhow::Context;
use shoal_api::identity::{Principal, Role};
use shoal_api::tokens::TokenService;
use shoal_api::tokens::rotation::DEFAULT_GRACE;
use shoal_domain::names::TenantName;
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{PoolConfig, connect_lazy};

use crate::cli::{RotateArgs, TokenArgs};

pub async fn token(args: &TokenArgs) -> anyhow::Result<String> {
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
pub async fn rotate_keys(args: RotateArgs) -> anyhow::Result<()> {
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
