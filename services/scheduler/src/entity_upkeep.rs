//! Keeping Service Bus entities as their functions declare them (`entity` on a
//! `serviceBusTrigger`: `lockDuration`, `maxDeliveryCount`, …): the leader's own step, taken
//! after the tick's fenced write and apart from the metric reads, which only read.
//!
//! Every entity some running function declares settings for is read (`GET` of its
//! description) at most every [`CHECK_EVERY`], or at once when the declaration changes; when
//! the live entity differs, it is updated (`PUT` with `If-Match: *`) inside a transaction that
//! holds the leader's fence (`leadership::fence` locks the lease row), so a scheduler that is
//! no longer leader, or a standby taking over meanwhile, never writes a tenant's entity: the new
//! leader cannot take the lease while the update runs, and an old leader's update is refused
//! before it starts. An update that fails is audited and tried again after [`RETRY_AFTER`];
//! the step takes at most its budget a tick, and what it did not reach waits for the next.
//!
//! When several functions declare settings for one entity, the first in app-key order wins,
//! so two declarations never take turns rewriting it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use shoal_connectors::{ConnectorOptions, QueueError, ServiceBusAdmin};
use shoal_domain::binding_kinds::service_bus;
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::egress::AllowList;
use shoal_domain::names::TenantName;
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_domain::service_bus_entity::settings::{EntitySettings, SettingDrift, drift, reconciled};
use shoal_domain::trigger_source::TriggerSource;
use shoal_egress::Egress;
use shoal_store::audit::{self, AuditEntry};
use shoal_store::{StoreError, TenantId, begin_platform, begin_tenant, leadership};

use crate::catalog::{AppKey, ScalableApp};
use crate::trigger_metrics::service_bus_admin;

/// How often an entity that had its declared settings is read again.
pub const CHECK_EVERY: Duration = Duration::from_secs(60);

/// How long after a failed update (or a failed read) the entity is tried again.
pub const RETRY_AFTER: Duration = Duration::from_secs(300);

/// The longest one read or update may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// A namespace connection, as whom and under which tenant's allowances: what one client serves.
type Signer = (ConnectionSpec, AppIdentities, AllowList);

/// One entity some function declares settings for.
#[derive(Clone, Debug)]
struct Declared {
    app: AppKey,
    function: String,
    settings: EntitySettings,
}

/// When an entity was last looked at, for which declaration, and whether that failed.
struct Checked {
    at: Instant,
    settings: EntitySettings,
    failed: bool,
}

/// One update of a live entity's settings (or a failed attempt), for the audit log.
#[derive(Clone, Debug)]
struct Reconciliation {
    app: AppKey,
    function: String,
    /// `queue orders`, `subscription audit of topic events`.
    entity: String,
    changed: Vec<SettingDrift>,
    /// Why the update failed; None when it was made.
    error: Option<String>,
}

pub struct EntityUpkeep {
    connector: ConnectorOptions,
    egress: Egress,
    clients: HashMap<Signer, Result<ServiceBusAdmin, String>>,
    checked: HashMap<(Signer, EntityPath), Checked>,
}

/// The fenced part of the leader's identity: who holds the lease, with which epoch.
#[derive(Clone, Copy)]
pub struct Fence<'a> {
    pub pool: &'a sqlx::PgPool,
    pub holder: &'a str,
    pub epoch: i64,
}

impl EntityUpkeep {
    pub fn new(connector: ConnectorOptions, egress: Egress) -> EntityUpkeep {
        EntityUpkeep {
            connector,
            egress,
            clients: HashMap::new(),
            checked: HashMap::new(),
        }
    }

    /// Reads the entities due and updates those that drifted, within `budget`. Fails only when
    /// the leader's fence is lost (nothing was written then); other failures are audited and
    /// logged.
    pub async fn run(
        &mut self,
        fence: Fence<'_>,
        apps: &[Arc<ScalableApp>],
        egress_allow: &HashMap<String, AllowList>,
        budget: Duration,
    ) -> Result<(), StoreError> {
        let declared = declared(apps, egress_allow);
        self.checked.retain(|key, _| declared.contains_key(key));
        let named: HashSet<&Signer> = declared.keys().map(|(signer, _)| signer).collect();
        self.clients.retain(|signer, _| named.contains(signer));
        let now = Instant::now();
        let mut due: Vec<((Signer, EntityPath), Declared)> = declared
            .into_iter()
            .filter(|(key, d)| match self.checked.get(key) {
                None => true,
                Some(c) if c.settings != d.settings => true,
                Some(c) => {
                    let wait = if c.failed { RETRY_AFTER } else { CHECK_EVERY };
                    now.duration_since(c.at) >= wait
                }
            })
            .collect();
        // The longest unchecked first, so a budget too small for all of them serves each in turn.
        due.sort_by_key(|(key, _)| self.checked.get(key).map(|c| c.at));
        let deadline = tokio::time::Instant::now() + budget;
        for ((signer, entity), declared) in due {
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            if remaining.is_zero() {
                break;
            }
            let admin = match self
                .clients
                .entry(signer.clone())
                .or_insert_with(|| connect(&signer, &self.connector, &self.egress))
            {
                Ok(admin) => admin.clone(),
                Err(why) => {
                    tracing::debug!(app = %declared.app, function = declared.function, %entity, error = why,
                        "cannot keep the Service Bus entity's declared settings");
                    self.mark(&signer, &entity, &declared, true);
                    continue;
                }
            };
            let outcome =
                tokio::time::timeout(remaining, keep(fence, &admin, &entity, &declared.settings))
                    .await;
            let done = match outcome {
                // Past the budget: tried again next tick.
                Err(_) => break,
                Ok(Err(fenced)) => return Err(fenced),
                Ok(Ok(done)) => done,
            };
            let failed = match done {
                Kept::InStep => false,
                Kept::Unread(why) => {
                    tracing::debug!(app = %declared.app, function = declared.function, %entity, error = why,
                        "could not read the Service Bus entity to keep its declared settings");
                    true
                }
                Kept::Updated { changed, error } => {
                    let failed = error.is_some();
                    audit_update(
                        fence.pool,
                        Reconciliation {
                            app: declared.app.clone(),
                            function: declared.function.clone(),
                            entity: entity.to_string(),
                            changed,
                            error,
                        },
                    )
                    .await;
                    failed
                }
            };
            self.mark(&signer, &entity, &declared, failed);
        }
        Ok(())
    }

    fn mark(&mut self, signer: &Signer, entity: &EntityPath, declared: &Declared, failed: bool) {
        self.checked.insert(
            (signer.clone(), entity.clone()),
            Checked {
                at: Instant::now(),
                settings: declared.settings.clone(),
                failed,
            },
        );
    }
}

/// Every entity running functions declare settings for, with the first declaration in
/// app-key order.
fn declared(
    apps: &[Arc<ScalableApp>],
    egress_allow: &HashMap<String, AllowList>,
) -> HashMap<(Signer, EntityPath), Declared> {
    let mut running: Vec<&Arc<ScalableApp>> = apps.iter().filter(|a| a.running).collect();
    running.sort_by(|a, b| a.key.cmp(&b.key));
    let none = AllowList::default();
    let mut declared = HashMap::new();
    for app in running {
        let allow = egress_allow.get(&app.key.tenant).unwrap_or(&none);
        for f in &app.functions {
            let (Some(Ok(trigger)), Ok(TriggerSource::ServiceBus { connection, entity })) =
                (service_bus::trigger(&f.trigger), &f.source)
            else {
                continue;
            };
            let Some(settings) = trigger.entity.as_ref().filter(|e| e.declares_entity()) else {
                continue;
            };
            let signer = (connection.clone(), app.identities.clone(), allow.clone());
            declared
                .entry((signer, entity.clone()))
                .or_insert_with(|| Declared {
                    app: app.key.clone(),
                    function: f.name.clone(),
                    settings: settings.clone(),
                });
        }
    }
    declared
}

fn connect(
    signer: &Signer,
    connector: &ConnectorOptions,
    egress: &Egress,
) -> Result<ServiceBusAdmin, String> {
    let (connection, identities, allow) = signer;
    let egress = egress.for_tenant(allow);
    let options = ConnectorOptions {
        egress: Some(egress.clone()),
        ..connector.clone()
    };
    service_bus_admin(connection, identities, &egress, &options)
}

/// What keeping one entity came to.
enum Kept {
    /// The live entity has the declared settings (or does not exist yet: the listener reports
    /// a missing entity, and Shoal does not create entities).
    InStep,
    /// It could not be read (no Manage right, the namespace unreachable).
    Unread(String),
    /// It differed and was updated, or the update failed (`error`).
    Updated {
        changed: Vec<SettingDrift>,
        error: Option<String>,
    },
}

/// Reads `entity` and, when it differs from `declared`, updates it under the leader's fence.
/// Err only when the fence is lost.
async fn keep(
    fence: Fence<'_>,
    admin: &ServiceBusAdmin,
    entity: &EntityPath,
    declared: &EntitySettings,
) -> Result<Kept, StoreError> {
    let live = match tokio::time::timeout(CALL_TIMEOUT, admin.entity(entity)).await {
        Err(_) => return Ok(Kept::Unread("no answer in time".to_owned())),
        Ok(Err(QueueError::EntityNotFound { .. })) => return Ok(Kept::InStep),
        Ok(Err(e)) => return Ok(Kept::Unread(e.to_string())),
        Ok(Ok(description)) => description.settings,
    };
    let changed = drift(declared, &live);
    if changed.is_empty() {
        return Ok(Kept::InStep);
    }
    let wanted = reconciled(declared, &live);
    // The lease row stays locked until this transaction ends: no other scheduler becomes
    // leader while the update runs, and one that is no longer leader stops here.
    let mut tx = begin_platform(fence.pool).await?;
    leadership::fence(&mut tx, fence.holder, fence.epoch).await?;
    let error =
        match tokio::time::timeout(CALL_TIMEOUT, admin.update_settings(entity, &wanted)).await {
            Err(_) => Some("no answer in time".to_owned()),
            Ok(Err(e)) => Some(e.to_string()),
            Ok(Ok(_)) => None,
        };
    shoal_store::commit(tx).await?;
    let settings: Vec<&str> = changed.iter().map(|d| d.setting.as_str()).collect();
    match &error {
        None => tracing::info!(%entity, settings = ?settings,
            "updated the Service Bus entity to the declared settings"),
        Some(error) => tracing::warn!(%entity, settings = ?settings, error,
            "could not update the Service Bus entity to the declared settings; retrying later"),
    }
    Ok(Kept::Updated { changed, error })
}

/// One audit entry in the tenant's log for an entity update (or a failed one). A failure to
/// write it is logged, never fatal to the tick.
async fn audit_update(pool: &sqlx::PgPool, r: Reconciliation) {
    let Ok(tenant) = TenantName::parse(&r.app.tenant) else {
        return;
    };
    let tenant = TenantId::new(tenant);
    let resource = format!(
        "tenants/{}/apps/{}/functions/{}",
        r.app.tenant, r.app.app, r.function
    );
    let settings: Vec<String> = r
        .changed
        .iter()
        .map(|d| format!("{} {} -> {}", d.setting, d.live, d.declared))
        .collect();
    let outcome = match &r.error {
        None => format!("updated {}: {}", r.entity, settings.join(", ")),
        Some(e) => format!(
            "failed to update {} ({}): {e}",
            r.entity,
            settings.join(", ")
        ),
    };
    let written = async {
        let mut tx = begin_tenant(pool, &tenant).await?;
        audit::record(
            &mut tx,
            &AuditEntry {
                principal: "shoal-scheduler",
                action: "serviceBus.entity.reconcile",
                resource: &resource,
                outcome: &outcome,
                request_id: None,
            },
        )
        .await?;
        shoal_store::commit(tx).await
    };
    if let Err(e) = written.await {
        tracing::warn!(error = %e, resource, "could not audit a Service Bus entity update");
    }
}
