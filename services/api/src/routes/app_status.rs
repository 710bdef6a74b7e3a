//! What `GET /v1/tenants/{tenant}/apps?expand=status` adds to each app of a page (as ARM's
//! `$expand=instanceView` does for virtual machines): its instances now and desired, and a
//! health summary (`shoal_domain::diagnostics::health`). A handful of queries for the whole page,
//! never one per app: its functions, the tenant's breakers that are not closed, the live
//! listeners and the instance counts. The checks are the diagnostics' own, but for those that
//! reach out to a storage account or identity provider; `…/diagnostics` makes them all.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use shoal_domain::diagnostics::health::{HealthSummary, check_listeners, summarize};
use shoal_domain::diagnostics::{
    check_breaker, check_function, check_host_config, check_undeclared_outputs,
};
use shoal_domain::host_config::HostConfig;
use shoal_store::apps::AppRecord;
use shoal_store::{TenantId, Tx, breakers, functions, scale, workers};
use utoipa::ToSchema;

use crate::error::ApiError;

/// An app's live state, as the apps list shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    /// Instances placed on workers now.
    pub current_instances: u32,
    /// The scheduler's latest decision; 0 until it has decided for the app.
    pub desired_instances: u32,
    pub health: HealthSummary,
}

/// The status of each app of `records`, by app name.
pub async fn of_page(
    tx: &mut Tx,
    tenant: &TenantId,
    records: &[AppRecord],
) -> Result<HashMap<String, AppStatus>, ApiError> {
    let names: Vec<String> = records.iter().map(|r| r.name.clone()).collect();
    let functions = functions::all_of_apps(tx, tenant, &names).await?;
    let instances = scale::instances_of_apps(tx, tenant, &names).await?;
    let breakers = breakers::open_of_tenant(tx, tenant).await?;
    let mut listeners = workers::live_listeners(tx).await?;
    listeners.retain(|l| l.tenant == tenant.as_str());

    let mut statuses = HashMap::with_capacity(records.len());
    for record in records {
        let is_mine = |app: &str| app.eq_ignore_ascii_case(&record.name);
        let settings: BTreeMap<String, String> = record
            .settings
            .iter()
            .map(|s| (s.name.clone(), s.value.clone()))
            .collect();
        let app_listeners: Vec<_> = listeners
            .iter()
            .filter(|l| is_mine(&l.app))
            .cloned()
            .collect();
        let host = HostConfig::from_stored(
            record
                .written_document()
                .get("hostConfig")
                .unwrap_or(&serde_json::Value::Null),
        );
        let mut checks = Vec::new();
        for function in functions.iter().filter(|f| is_mine(&f.app)) {
            let spec = super::functions::parse_stored(function)?.spec;
            checks.extend(check_function(&function.name, &spec, &settings, &host));
            checks.extend(check_undeclared_outputs(
                &function.name,
                &spec,
                &app_listeners,
            ));
            let breaker = breakers
                .iter()
                .find(|b| is_mine(&b.app) && b.function == function.name);
            if let Some(breaker) = breaker {
                checks.extend(check_breaker(
                    &function.name,
                    breaker.state,
                    breaker.cause,
                    breaker.changed_at,
                    breaker.failures.first().map(|f| f.reason.as_str()),
                ));
            }
        }
        let host_config = record
            .written_document()
            .get("hostConfig")
            .cloned()
            .unwrap_or_default();
        checks.extend(check_host_config(&host_config));
        let from_listeners = check_listeners(&app_listeners, &checks);
        checks.extend(from_listeners);
        let counts = instances.get(&record.name).copied().unwrap_or_default();
        statuses.insert(
            record.name.clone(),
            AppStatus {
                current_instances: counts.placed,
                desired_instances: counts.desired,
                health: summarize(&checks),
            },
        );
    }
    Ok(statuses)
}
