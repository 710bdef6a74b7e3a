//! The app instances a worker hosts and the configuration snapshot each runs with.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use shoal_domain::apps::{AppSpec, AppState, Handler};
use shoal_domain::functions::FunctionSpec;
use shoal_domain::host_config::{HostConfig, HostDefaults};
use shoal_domain::names::TenantName;
use shoal_domain::webhooks::WebhookSecret;
use shoal_store::crypto::Cipher;
use shoal_store::{StoreError, TenantId, apps, begin_platform, begin_tenant, functions};
use shoal_store::{signing_secrets, tenants};

use crate::config::Hosting;

/// One instance of an app; a worker hosts at most one instance of each app.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AppInstance {
    pub tenant: String,
    pub app: String,
    pub index: u32,
}

impl std::fmt::Display for AppInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}#{}", self.tenant, self.app, self.index)
    }
}

/// What an app instance runs with, read from Postgres. Any change to it (the app, a function,
/// the signing secret) changes the fingerprint, and the instance's listeners restart.
#[derive(Clone, Debug)]
pub struct HostedApp {
    pub instance: AppInstance,
    pub handler: Handler,
    pub host: HostConfig,
    pub settings: BTreeMap<String, String>,
    pub secret: WebhookSecret,
    pub functions: Vec<HostedFunction>,
    pub fingerprint: u64,
}

#[derive(Clone, Debug)]
pub struct HostedFunction {
    pub name: String,
    pub spec: FunctionSpec,
}

/// Reads the apps the worker should host. A stored app or function that no longer validates
/// is skipped with an error in the log rather than stopping the others.
pub async fn load(
    hosting: Hosting,
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    defaults: &HostDefaults,
) -> Result<Vec<HostedApp>, StoreError> {
    match hosting {
        Hosting::AllApps => all_running_apps(pool, cipher, defaults).await,
    }
}

async fn all_running_apps(
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    defaults: &HostDefaults,
) -> Result<Vec<HostedApp>, StoreError> {
    let mut tx = begin_platform(pool).await?;
    let names = tenants::all_names(&mut tx).await?;
    shoal_store::commit(tx).await?;
    let mut hosted = Vec::new();
    for name in names {
        let Ok(tenant) = TenantName::parse(&name) else {
            tracing::error!(
                tenant = name,
                "stored tenant name no longer validates; skipped"
            );
            continue;
        };
        let tenant = TenantId::new(tenant);
        let mut tx = begin_tenant(pool, &tenant).await?;
        for record in apps::all_of_tenant(&mut tx, &tenant, cipher).await? {
            let spec = match AppSpec::parse(&record.name, &record.written_document()) {
                Ok(written) => written.spec,
                Err(e) => {
                    tracing::error!(%tenant, app = record.name, error = %e, "stored app no longer validates; not hosted");
                    continue;
                }
            };
            if spec.state != AppState::Running {
                continue;
            }
            let host = match record.spec.get("hostConfig") {
                Some(written) => HostConfig::parse_with_defaults(written, "hostConfig", defaults),
                None => HostConfig::parse_with_defaults(
                    &serde_json::Value::Object(Default::default()),
                    "hostConfig",
                    defaults,
                ),
            };
            let host = match host {
                Ok(host) => host,
                Err(e) => {
                    tracing::error!(%tenant, app = record.name, error = %e, "stored hostConfig no longer validates; not hosted");
                    continue;
                }
            };
            let secret =
                signing_secrets::get_or_create(&mut tx, &tenant, cipher, &record.name).await?;
            let mut fingerprint = DefaultHasher::new();
            record.etag.hash(&mut fingerprint);
            secret.expose().hash(&mut fingerprint);
            let mut hosted_functions = Vec::new();
            for f in functions::all_of_app(&mut tx, &tenant, &record.name).await? {
                f.etag.hash(&mut fingerprint);
                match FunctionSpec::parse(&f.name, &f.spec) {
                    Ok(written) => hosted_functions.push(HostedFunction {
                        name: f.name,
                        spec: written.spec,
                    }),
                    Err(e) => {
                        tracing::error!(%tenant, app = record.name, function = f.name, error = %e,
                        "stored function no longer validates; not listening")
                    }
                }
            }
            hosted.push(HostedApp {
                instance: AppInstance {
                    tenant: tenant.to_string(),
                    app: record.name.clone(),
                    index: 0,
                },
                handler: spec.handler,
                host,
                settings: spec.app_settings,
                secret,
                functions: hosted_functions,
                fingerprint: fingerprint.finish(),
            });
        }
        shoal_store::commit(tx).await?;
    }
    Ok(hosted)
}
