//! The tenant's quotas where a write can pass them (`shoal_domain::quotas`): apps per tenant,
//! settings per app and the webhook rate when an app is written, functions per app when a
//! function is created. A count past a quota is 409, a value past one 422 at its field; both
//! name the limit and its value. Counts are taken with the row that owns them locked (the
//! tenant's, the app's), so concurrent creates are counted one after the other.

use shoal_domain::apps::AppSpec;
use shoal_domain::quotas::Quotas;
use shoal_domain::validation::FieldError;
use shoal_store::{StoreError, TenantId, Tx, apps, functions, tenants};

use crate::error::ApiError;
use crate::state::AppState;

/// An app about to be written with `settings` settings; `creating` when no app of that name
/// exists yet.
pub async fn check_app(
    state: &AppState,
    tx: &mut Tx,
    tenant: &TenantId,
    spec: &AppSpec,
    settings: usize,
    creating: bool,
) -> Result<(), ApiError> {
    let quotas = effective(state, tx, tenant, creating).await?;
    let mut problems = Vec::new();
    if settings > quotas.max_settings_per_app as usize {
        problems.push(FieldError {
            path: "appSettings".into(),
            message: format!(
                "{settings} settings; the tenant's apps may have at most {} (maxSettingsPerApp)",
                quotas.max_settings_per_app
            ),
        });
    }
    let cap = quotas.max_webhook_requests_per_second;
    if spec.webhooks.requests_per_second > cap {
        problems.push(FieldError {
            path: "webhooks.requestsPerSecond".into(),
            message: format!(
                "the tenant's apps may take at most {cap} requests a second \
                 (maxWebhookRequestsPerSecond)"
            ),
        });
    }
    if u64::from(spec.webhooks.burst) > 2 * u64::from(cap) {
        problems.push(FieldError {
            path: "webhooks.burst".into(),
            message: format!(
                "at most {} (twice the tenant's maxWebhookRequestsPerSecond of {cap})",
                2 * u64::from(cap)
            ),
        });
    }
    if !problems.is_empty() {
        return Err(ApiError::Validation(problems));
    }
    if creating && apps::count(tx, tenant).await? >= quotas.max_apps {
        return Err(ApiError::Conflict(format!(
            "tenant {tenant} may have at most {} apps (its maxApps quota)",
            quotas.max_apps
        )));
    }
    Ok(())
}

/// A function about to be written; refused if it would be one more than the tenant's apps may
/// have. A missing app is `NotFound`.
pub async fn check_function(
    state: &AppState,
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    function: &str,
) -> Result<(), ApiError> {
    functions::lock_app(tx, tenant, app).await?;
    match functions::get(tx, tenant, app, function).await {
        Ok(_) => return Ok(()),
        Err(StoreError::NotFound) => {}
        Err(e) => return Err(e.into()),
    }
    let quotas = effective(state, tx, tenant, false).await?;
    if functions::count_of_app(tx, tenant, app).await? >= quotas.max_functions_per_app {
        return Err(ApiError::Conflict(format!(
            "app {app} may have at most {} functions (tenant {tenant}'s maxFunctionsPerApp quota)",
            quotas.max_functions_per_app
        )));
    }
    Ok(())
}

/// The tenant's quotas: its own limits over the platform's defaults. `lock` holds the tenant
/// row for counting its apps.
async fn effective(
    state: &AppState,
    tx: &mut Tx,
    tenant: &TenantId,
    lock: bool,
) -> Result<Quotas, ApiError> {
    Ok(tenants::limits(tx, tenant.as_str(), lock)
        .await?
        .effective(&state.tenant_defaults))
}
