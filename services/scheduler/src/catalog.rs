//! What the scheduler knows of the apps: for each, its scale settings and, per trigger
//! function, the target rule and where its metric is read. Read from Postgres every tick, but
//! parsed again only for apps whose ETag (or one of whose functions' ETags) changed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use shoal_domain::apps::{AppSpec, AppState, Identity};
use shoal_domain::bindings::Binding;
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::egress::AllowList;
use shoal_domain::functions::FunctionSpec;
use shoal_domain::host_config::HostConfig;
use shoal_domain::names::TenantName;
use shoal_domain::quotas::Quotas;
use shoal_domain::scale::{ScaleMode, TargetRule, needs_an_instance, target_rule};
use shoal_domain::trigger_source::{TriggerSource, resolve};
use shoal_store::crypto::Cipher;
use shoal_store::{
    StoreError, TenantId, apps, begin_platform, begin_tenant, functions, principals, revalidate,
    tenants,
};

/// An app, named `tenant/app` as placement keys it (neither name may contain a slash).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AppKey {
    pub tenant: String,
    pub app: String,
}

impl AppKey {
    /// The key placement uses.
    pub fn placement_key(&self) -> String {
        format!("{}/{}", self.tenant, self.app)
    }

    pub fn from_placement_key(key: &str) -> Option<AppKey> {
        let (tenant, app) = key.split_once('/')?;
        Some(AppKey {
            tenant: tenant.to_owned(),
            app: app.to_owned(),
        })
    }
}

impl std::fmt::Display for AppKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.tenant, self.app)
    }
}

/// An app as the scale math sees it.
#[derive(Clone, Debug)]
pub struct ScalableApp {
    pub key: AppKey,
    /// Stopped apps want no instances.
    pub running: bool,
    pub mode: ScaleMode,
    pub limit: u32,
    pub minimum: u32,
    /// Count only messages no worker holds (see `trigger_metrics`).
    pub visible_only: bool,
    /// The app's `identity`, from which [`ScalableApp::identities`] are read every tick.
    pub identity: Identity,
    /// The identities its identity-based connections sign in as (empty when it has none).
    pub identities: AppIdentities,
    pub functions: Vec<ScalableFunction>,
}

impl ScalableApp {
    /// Whether any metric is read through an identity-based connection.
    fn signs_in(&self) -> bool {
        self.functions.iter().any(|f| {
            f.source
                .as_ref()
                .ok()
                .and_then(TriggerSource::connection)
                .is_some_and(|c| matches!(c, ConnectionSpec::Identity(_)))
        })
    }
}

/// A trigger function that scales on a backlog.
#[derive(Clone, Debug)]
pub struct ScalableFunction {
    pub name: String,
    /// The trigger binding as written, for the steps that keep what it declares on its source
    /// (`entity_upkeep`).
    pub trigger: Binding,
    pub rule: TargetRule,
    pub source: MetricSource,
    /// `maxConcurrency`: the function never asks for more instances than this.
    pub max_concurrency: Option<u32>,
}

/// Where a function's metric comes from: its trigger's source, or why it has none (yet). A
/// function without one falls back to incremental votes, which without readings keep the app
/// at one instance so the listener runs and reports its state.
pub type MetricSource = Result<TriggerSource, String>;

/// The apps and tenant quotas read in one tick.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub apps: Vec<Arc<ScalableApp>>,
    /// `maxInstances` per tenant: its own or the platform's default (None only where a test
    /// builds a snapshot without quotas).
    pub quotas: HashMap<String, Option<u32>>,
    /// Each tenant's egress allowances (set by a platform admin), which its apps' trigger
    /// metrics are read under; read every tick, since they change without any app's ETag.
    pub egress_allow: HashMap<String, AllowList>,
}

struct Cached {
    /// The app's ETag, then its functions' in name order.
    versions: Vec<shoal_store::Etag>,
    /// None when the stored app no longer validates (logged once, not every tick).
    app: Option<Arc<ScalableApp>>,
}

/// Keeps parsed apps between ticks.
pub struct Catalog {
    cache: HashMap<AppKey, Cached>,
    /// `maxInstances` for tenants whose own limits do not set it (`--tenant-defaults`).
    default_max_instances: u32,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::new(&Quotas::default())
    }
}

impl Catalog {
    pub fn new(tenant_defaults: &Quotas) -> Catalog {
        Catalog {
            cache: HashMap::new(),
            default_max_instances: tenant_defaults.max_instances,
        }
    }

    /// Reads every tenant's apps and functions: first their ETags (two small queries per
    /// tenant), then, only for a tenant where something changed, the apps with their settings
    /// and functions, parsing again just the apps whose ETags moved.
    pub async fn load(
        &mut self,
        pool: &sqlx::PgPool,
        cipher: &Cipher,
    ) -> Result<Snapshot, StoreError> {
        let mut tx = begin_platform(pool).await?;
        let quotas = tenants::all_quotas(&mut tx).await?;
        shoal_store::commit(tx).await?;
        let mut snapshot = Snapshot::default();
        let mut seen = HashMap::with_capacity(self.cache.len());
        for (name, quota) in quotas {
            let Ok(tenant) = TenantName::parse(&name) else {
                tracing::error!(
                    tenant = name,
                    "stored tenant name no longer validates; its apps are not scaled"
                );
                continue;
            };
            let quota = quota.unwrap_or(self.default_max_instances);
            snapshot.quotas.insert(name.clone(), Some(quota));
            let tenant = TenantId::new(tenant);
            let mut tx = begin_tenant(pool, &tenant).await?;
            let allow = egress_allow(&mut tx, &name).await?;
            if !allow.is_empty() {
                snapshot.egress_allow.insert(name.clone(), allow);
            }
            let versions = self.versions(&mut tx, &tenant).await?;
            let unchanged = versions.iter().all(|(key, v)| {
                self.cache
                    .get(key)
                    .is_some_and(|cached| &cached.versions == v)
            });
            if unchanged {
                for (key, _) in versions {
                    if let Some(mut cached) = self.cache.remove(&key) {
                        cached.app = with_identities(&mut tx, &tenant, cached.app).await?;
                        snapshot.apps.extend(cached.app.clone());
                        seen.insert(key, cached);
                    }
                }
                shoal_store::commit(tx).await?;
                continue;
            }
            let records = apps::all_of_tenant(&mut tx, &tenant, cipher).await?;
            let all_functions = functions::all_of_tenant(&mut tx, &tenant).await?;
            let mut by_app: HashMap<&str, Vec<&functions::FunctionRecord>> = HashMap::new();
            for f in &all_functions {
                by_app.entry(f.app.as_str()).or_default().push(f);
            }
            for record in &records {
                let key = AppKey {
                    tenant: name.clone(),
                    app: record.name.clone(),
                };
                let fns = by_app.remove(record.name.as_str()).unwrap_or_default();
                let mut versions = vec![record.etag];
                versions.extend(fns.iter().map(|f| f.etag));
                let app = match self.cache.remove(&key) {
                    Some(cached) if cached.versions == versions => cached.app,
                    _ => parse_app(&key, record, &fns).map(Arc::new),
                };
                let app = with_identities(&mut tx, &tenant, app).await?;
                snapshot.apps.extend(app.clone());
                seen.insert(key, Cached { versions, app });
            }
            shoal_store::commit(tx).await?;
        }
        self.cache = seen;
        Ok(snapshot)
    }

    /// Each app's version vector: its ETag, then its functions' in name order.
    async fn versions(
        &self,
        tx: &mut shoal_store::Tx,
        tenant: &TenantId,
    ) -> Result<Vec<(AppKey, Vec<shoal_store::Etag>)>, StoreError> {
        let app_versions = apps::versions_of_tenant(tx, tenant).await?;
        let function_versions = functions::versions_of_tenant(tx, tenant).await?;
        let mut by_app: HashMap<String, Vec<shoal_store::Etag>> = HashMap::new();
        for (app, etag) in function_versions {
            by_app.entry(app).or_default().push(etag);
        }
        Ok(app_versions
            .into_iter()
            .map(|(app, etag)| {
                let mut versions = vec![etag];
                versions.extend(by_app.remove(&app).unwrap_or_default());
                (
                    AppKey {
                        tenant: tenant.to_string(),
                        app,
                    },
                    versions,
                )
            })
            .collect())
    }
}

/// The tenant's stored allowances. Written through the API, which validated every entry; one
/// that no longer parses leaves the tenant none (stricter, never wider), with an error logged.
async fn egress_allow(tx: &mut shoal_store::Tx, tenant: &str) -> Result<AllowList, StoreError> {
    let stored = tenants::egress_allow(tx, tenant).await?;
    Ok(
        AllowList::from_items(stored.iter().map(String::as_str)).unwrap_or_else(|e| {
            tracing::error!(tenant, error = %e, "a stored egress allowance no longer parses; the tenant gets none");
            AllowList::default()
        }),
    )
}

/// The app with its identities as they are now: read every tick for apps that sign in with an
/// identity, since an identity, an attachment or the tenant's `allowHostIdentity` can change
/// without the app's ETag moving. The cached app is kept when nothing changed.
async fn with_identities(
    tx: &mut shoal_store::Tx,
    tenant: &TenantId,
    app: Option<Arc<ScalableApp>>,
) -> Result<Option<Arc<ScalableApp>>, StoreError> {
    let Some(app) = app else {
        return Ok(None);
    };
    if !app.signs_in() {
        return Ok(Some(app));
    }
    let identities = principals::app_identities(tx, tenant, &app.key.app, &app.identity).await?;
    if identities == app.identities {
        return Ok(Some(app));
    }
    let mut changed = ScalableApp::clone(&app);
    changed.identities = identities;
    Ok(Some(Arc::new(changed)))
}

/// An app as stored, or None (logged) when it no longer validates.
fn parse_app(
    key: &AppKey,
    record: &apps::AppRecord,
    functions: &[&functions::FunctionRecord],
) -> Option<ScalableApp> {
    let spec = revalidate::app(&key.tenant, record, "not scaled")?;
    let functions = revalidate::functions(&key.tenant, functions.iter().copied(), "not scaled");
    Some(scalable_app(
        key,
        &spec,
        functions.iter().map(|(f, spec)| (f.name.as_str(), spec)),
    ))
}

/// The app as the scale math sees it, from its validated specification and functions (without
/// I/O, so which functions scale, and on what, is tested without Postgres).
fn scalable_app<'a>(
    key: &AppKey,
    spec: &AppSpec,
    functions: impl IntoIterator<Item = (&'a str, &'a FunctionSpec)>,
) -> ScalableApp {
    let mut scalable = Vec::new();
    let mut needs_one = false;
    for (name, function) in functions {
        if !function.runs() {
            continue;
        }
        let Some(trigger) = function.trigger() else {
            continue;
        };
        needs_one |= needs_an_instance(trigger);
        let Some(rule) = target_rule(trigger, &spec.host_config) else {
            continue;
        };
        scalable.push(ScalableFunction {
            name: name.to_owned(),
            trigger: trigger.clone(),
            rule,
            source: metric_source(trigger, &spec.app_settings, &spec.host_config),
            max_concurrency: function.max_concurrency,
        });
    }
    ScalableApp {
        key: key.clone(),
        running: spec.state == AppState::Running,
        mode: spec.scale.mode,
        limit: spec.scale.limit,
        // A timer's occurrences come whatever the backlog: one instance runs them.
        minimum: spec.scale.minimum_instances.max(u32::from(needs_one)),
        visible_only: spec.scale.visible_only,
        identity: spec.identity.clone(),
        identities: AppIdentities::default(),
        functions: scalable,
    }
}

fn metric_source(
    trigger: &Binding,
    settings: &BTreeMap<String, String>,
    host: &HostConfig,
) -> MetricSource {
    match resolve(trigger, settings, host) {
        Some(source) => source.map_err(|e| e.to_string()),
        None => Err(format!(
            "{} triggers have no metric source yet",
            trigger.type_name()
        )),
    }
}

#[cfg(test)]
pub(crate) mod tests;
