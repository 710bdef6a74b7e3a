//! The demo `shoal dev` sets up: the app `demo/hello`, served by a small handler (the kind of
//! code a tenant deploys), with one function of each kind in [`KINDS`] whose local service
//! this run started — `greet` (Storage queue `demo-in` → `demo-out`), `orders` (the local
//! Service Bus stand-in's `demo-orders` → `demo-receipts`) and `welcome` (HTTP through the
//! webhook ingress). Adding a kind to the demo is a module implementing [`DemoKind`] and a line
//! in [`KINDS`].

mod handler;
mod http;
mod kind;
mod service_bus;
mod storage_queue;

use anyhow::Context;
use serde_json::{Map, Value, json};
use shoal_domain::apps::AppSpec;
use shoal_domain::names::TenantName;
use shoal_domain::settings::settings_to_store;
use shoal_domain::webhooks::WebhookSecret;
use shoal_store::crypto::Cipher;
use shoal_store::tenants::TenantWrite;
use shoal_store::{Precondition, StoreError, TenantId, apps, begin_platform, begin_tenant};
use shoal_store::{functions, signing_secrets, tenants};

pub use handler::{bind as bind_handler, start as start_handler};
pub use kind::{ApiAccess, DemoKind, LocalServices};

pub const TENANT: &str = "demo";
pub const APP: &str = "hello";

/// Every kind of function the demo app has, in the order the banner tells of them.
const KINDS: &[&dyn DemoKind] = &[&storage_queue::Greet, &http::Welcome, &service_bus::Orders];

/// The kind whose function is `function`, which the handler asks to answer it.
fn kind_of(function: &str) -> Option<&'static dyn DemoKind> {
    KINDS.iter().copied().find(|k| k.function() == function)
}

/// The kinds whose local service this run started.
fn running<'a>(services: &'a LocalServices) -> impl Iterator<Item = &'static dyn DemoKind> + 'a {
    KINDS.iter().copied().filter(|k| k.runs_here(services))
}

/// The app settings of `kinds`, in one object. Two kinds may share a setting (two Storage
/// kinds, say) only if they agree on its value, or one would silently point the other at the
/// wrong service.
fn merged_settings<'k>(
    kinds: impl Iterator<Item = &'k dyn DemoKind>,
    services: &LocalServices,
) -> anyhow::Result<Map<String, Value>> {
    let mut settings = Map::new();
    for kind in kinds {
        for (name, value) in kind.app_settings(services) {
            match settings.get(name) {
                Some(Value::String(set)) if *set != value => anyhow::bail!(
                    "the demo's {} and another function want different values for the app setting {name}",
                    kind.function()
                ),
                _ => {
                    settings.insert(name.into(), value.into());
                }
            }
        }
    }
    Ok(settings)
}

/// Writes the demo tenant, app and functions (replacing earlier runs' with this run's handler
/// and service addresses) and returns the app's signing secret.
pub async fn ensure_app(
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    handler_url: &str,
    services: &LocalServices,
) -> anyhow::Result<WebhookSecret> {
    let mut tx = begin_platform(pool).await?;
    if !tenants::exists(&mut tx, TENANT).await? {
        tenants::put(
            &mut tx,
            TENANT,
            &TenantWrite {
                display_name: "Demo".into(),
                limits: Default::default(),
                allow_host_identity: false,
                egress_allow: Vec::new(),
            },
            Precondition::None,
        )
        .await?;
    }
    shoal_store::commit(tx).await?;
    let tenant = TenantId::new(TenantName::parse(TENANT).map_err(anyhow::Error::msg)?);
    let body = json!({
        "handler": {"url": handler_url},
        "appSettings": merged_settings(running(services), services)?,
    });
    let written = AppSpec::parse(APP, &body).map_err(|e| anyhow::anyhow!("demo app: {e:?}"))?;
    let settings = settings_to_store(&written.spec.app_settings, &[])
        .map_err(|e| anyhow::anyhow!("demo app settings: {e:?}"))?;
    let mut tx = begin_tenant(pool, &tenant).await?;
    apps::put(
        &mut tx,
        &tenant,
        cipher,
        APP,
        &written.stored,
        &settings,
        Precondition::None,
    )
    .await
    .context("writing the demo app")?;
    for kind in KINDS {
        let function = kind.function();
        if kind.runs_here(services) {
            functions::put(
                &mut tx,
                &tenant,
                APP,
                function,
                &kind.function_json(),
                Precondition::None,
            )
            .await
            .with_context(|| format!("writing the demo function {function}"))?;
        } else {
            // An earlier run's function would have a listener chase a service (and a setting)
            // this run does not have.
            match functions::delete(&mut tx, &tenant, APP, function, Precondition::None).await {
                Ok(()) | Err(StoreError::NotFound) => {}
                Err(e) => {
                    return Err(e)
                        .with_context(|| format!("removing the demo function {function}"));
                }
            }
        }
    }
    let secret = signing_secrets::get_or_create(&mut tx, &tenant, cipher, APP).await?;
    shoal_store::commit(tx).await?;
    Ok(secret)
}

/// Lets each running kind create what its printed commands need, so they work at once.
pub async fn prepare(services: &LocalServices) -> anyhow::Result<()> {
    for kind in running(services) {
        kind.prepare(services)
            .await
            .with_context(|| format!("preparing the demo function {}", kind.function()))?;
    }
    Ok(())
}

/// The lines `shoal dev` prints about the demo: each running kind's, a blank line between.
pub fn instructions(services: &LocalServices, api: &ApiAccess) -> String {
    running(services)
        .map(|kind| kind.hints(services, api))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests;
