//! Owns what the worker should host, read from Postgres: the app instances ([`AppInstance`],
//! [`Wanted`]) and the configuration snapshot each runs with ([`HostedApp`]). Nothing here runs
//! or claims anything (see `supervisor.rs`).
//!
//! Both ways of hosting read an app's configuration through one loader ([`load_app`]): in
//! all-apps mode for every running app (instance 0), in assigned mode for the instances the
//! scheduler placed on this worker. An app that is gone, not `Running`, or no longer validates
//! is not hosted.

use shoal_domain::egress::AllowList;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use shoal_domain::apps::{AppState, Handler};
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::functions::FunctionSpec;
use shoal_domain::host_config::{HostConfig, HostDefaults};
use shoal_domain::names::TenantName;
use shoal_domain::webhooks::WebhookSecret;
use shoal_store::apps::AppRecord;
use shoal_store::assignments::{self, InstanceKey};
use shoal_store::crypto::Cipher;
use shoal_store::{StoreError, TenantId, Tx, apps, begin_platform, begin_tenant, functions};
use shoal_store::{principals, revalidate, signing_secrets, tenants};

use crate::config::Hosting;

/// One instance of an app; a worker hosts at most one instance of each app.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AppInstance {
    pub tenant: String,
    pub app: String,
    pub index: u32,
}

impl AppInstance {
    pub fn key(&self) -> InstanceKey {
        InstanceKey {
            tenant: self.tenant.clone(),
            app: self.app.clone(),
            instance: self.index,
        }
    }

    /// `tenant/app`, as configuration notifications name an app.
    pub fn app_path(&self) -> String {
        format!("{}/{}", self.tenant, self.app)
    }
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
    /// The identities the app's connections may sign in as (and whether its tenant may use
    /// the host's identity).
    pub identities: AppIdentities,
    /// The tenant's egress allowances, added to the worker's for this app's handler and
    /// connections.
    pub egress_allow: AllowList,
    pub functions: Vec<HostedFunction>,
    pub fingerprint: u64,
}

#[derive(Clone, Debug)]
pub struct HostedFunction {
    pub name: String,
    pub spec: FunctionSpec,
}

/// An app instance the worker should host.
#[derive(Clone, Debug)]
pub struct Wanted {
    pub app: HostedApp,
    /// False for an assignment stamped with an older epoch than the current leader's: it was
    /// written by a deposed leader (or not yet confirmed by the new one), so the instance must
    /// not start from it; if it already runs, it keeps running until its row changes.
    pub may_start: bool,
}

/// What one read of Postgres says the worker should host.
#[derive(Debug, Default)]
pub struct Loaded {
    pub wanted: Vec<Wanted>,
    /// `tenant/app` of every app assigned to the worker, hosted or not (a stopped app that is
    /// started again must be noticed); empty in all-apps mode, where every app concerns it.
    pub assigned_apps: HashSet<String>,
}

/// Reads what the worker should host. A stored app or function that no longer validates is
/// skipped with an error in the log rather than stopping the others.
pub async fn load(
    hosting: Hosting,
    worker: &str,
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    defaults: &HostDefaults,
) -> Result<Loaded, StoreError> {
    match hosting {
        Hosting::AllApps => Ok(Loaded {
            wanted: all_running_apps(pool, cipher, defaults).await?,
            assigned_apps: HashSet::new(),
        }),
        Hosting::Assigned => assigned(worker, pool, cipher, defaults).await,
    }
}

async fn all_running_apps(
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    defaults: &HostDefaults,
) -> Result<Vec<Wanted>, StoreError> {
    let mut tx = begin_platform(pool).await?;
    let names = tenants::all_names(&mut tx).await?;
    shoal_store::commit(tx).await?;
    let mut wanted = Vec::new();
    for name in names {
        let Some(tenant) = tenant_id(&name) else {
            continue;
        };
        let mut tx = begin_tenant(pool, &tenant).await?;
        for record in apps::all_of_tenant(&mut tx, &tenant, cipher).await? {
            if let Some(app) = load_app(&mut tx, &tenant, cipher, defaults, record, 0).await? {
                wanted.push(Wanted {
                    app,
                    may_start: true,
                });
            }
        }
        shoal_store::commit(tx).await?;
    }
    Ok(wanted)
}

async fn assigned(
    worker: &str,
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    defaults: &HostDefaults,
) -> Result<Loaded, StoreError> {
    let mut tx = begin_platform(pool).await?;
    let (epoch, rows) = assignments::of_worker(&mut tx, worker).await?;
    shoal_store::commit(tx).await?;
    let assigned_apps = rows
        .iter()
        .map(|r| format!("{}/{}", r.tenant, r.app))
        .collect();
    let mut by_tenant: BTreeMap<String, BTreeSet<(String, u32, bool)>> = BTreeMap::new();
    for row in rows {
        by_tenant.entry(row.tenant).or_default().insert((
            row.app,
            row.instance,
            row.epoch == epoch,
        ));
    }
    let mut wanted = Vec::new();
    for (name, instances) in by_tenant {
        let Some(tenant) = tenant_id(&name) else {
            continue;
        };
        let mut tx = begin_tenant(pool, &tenant).await?;
        for (app, index, current) in instances {
            let record = match apps::get(&mut tx, &tenant, cipher, &app).await {
                Ok(record) => record,
                // Deleted since it was assigned; its assignment cascades away.
                Err(StoreError::NotFound) => continue,
                Err(e) => return Err(e),
            };
            if let Some(app) = load_app(&mut tx, &tenant, cipher, defaults, record, index).await? {
                wanted.push(Wanted {
                    app,
                    may_start: current,
                });
            }
        }
        shoal_store::commit(tx).await?;
    }
    Ok(Loaded {
        wanted,
        assigned_apps,
    })
}

fn tenant_id(name: &str) -> Option<TenantId> {
    match TenantName::parse(name) {
        Ok(tenant) => Some(TenantId::new(tenant)),
        Err(_) => {
            tracing::error!(
                tenant = name,
                "stored tenant name no longer validates; skipped"
            );
            None
        }
    }
}

/// One app instance's configuration: None when the app is not running or no longer validates.
async fn load_app(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    defaults: &HostDefaults,
    record: AppRecord,
    index: u32,
) -> Result<Option<HostedApp>, StoreError> {
    let Some(spec) = revalidate::app(tenant.as_str(), &record, "not hosted") else {
        return Ok(None);
    };
    if spec.state != AppState::Running {
        return Ok(None);
    }
    let empty = serde_json::Value::Object(Default::default());
    let written = record.spec.get("hostConfig").unwrap_or(&empty);
    let host = match HostConfig::parse_with_defaults(written, "hostConfig", defaults) {
        Ok(host) => host,
        Err(e) => {
            tracing::error!(%tenant, app = record.name, error = %e, "stored hostConfig no longer validates; not hosted");
            return Ok(None);
        }
    };
    let secret = signing_secrets::get_or_create(tx, tenant, cipher, &record.name).await?;
    let identities = principals::app_identities(tx, tenant, &record.name, &spec.identity).await?;
    let stored_allow = shoal_store::tenants::egress_allow(tx, tenant.as_str()).await?;
    // Written through the API, which validated every entry; one that no longer parses is
    // dropped (stricter, never wider) with an error in the log.
    let egress_allow = AllowList::from_items(stored_allow.iter().map(String::as_str))
        .unwrap_or_else(|e| {
            tracing::error!(%tenant, error = %e, "a stored egress allowance no longer parses; the tenant gets none");
            AllowList::default()
        });
    let mut fingerprint = DefaultHasher::new();
    record.etag.hash(&mut fingerprint);
    secret.expose().hash(&mut fingerprint);
    identities.hash(&mut fingerprint);
    stored_allow.hash(&mut fingerprint);
    let stored = functions::all_of_app(tx, tenant, &record.name).await?;
    for f in &stored {
        f.etag.hash(&mut fingerprint);
    }
    let hosted_functions = revalidate::functions(tenant.as_str(), &stored, "not listening")
        .into_iter()
        .map(|(f, spec)| HostedFunction {
            name: f.name.clone(),
            spec,
        })
        .collect();
    Ok(Some(HostedApp {
        instance: AppInstance {
            tenant: tenant.to_string(),
            app: record.name,
            index,
        },
        handler: spec.handler,
        host,
        settings: spec.app_settings,
        secret,
        identities,
        egress_allow,
        functions: hosted_functions,
        fingerprint: fingerprint.finish(),
    }))
}
