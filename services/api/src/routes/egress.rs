//! The egress policy at write time: a destination whose text alone says it is refused (a
//! literal internal address in any spelling, `localhost`, the metadata names) is a 422 at its
//! field, so the tenant learns at once instead of from a listener that never starts. Names are
//! checked again, on every resolved address, each time a process connects.

use shoal_domain::apps::AppSpec;
use shoal_domain::egress::AllowList;
use shoal_domain::egress::check_url_field;
use shoal_domain::functions::FunctionSpec;
use shoal_domain::names::TenantName;
use shoal_store::{TenantId, begin_tenant, tenants};

use crate::error::ApiError;
use crate::state::AppState;

/// `handler.url`, with the tenant's allowances (read only when the platform's refuse it).
pub(crate) async fn check_app(
    state: &AppState,
    tenant: &TenantName,
    app: &AppSpec,
) -> Result<(), ApiError> {
    let url = &app.handler.url;
    if state.egress().policy().check_url(url).is_ok() {
        return Ok(());
    }
    let id = TenantId::new(tenant.clone());
    let mut tx = begin_tenant(&state.pool, &id).await?;
    let stored = tenants::egress_allow(&mut tx, tenant.as_str()).await?;
    shoal_store::commit(tx).await?;
    let allow = AllowList::from_items(stored.iter().map(String::as_str)).unwrap_or_default();
    let policy = state.egress().policy().for_tenant(&allow);
    Ok(check_url_field(&policy, "handler.url", url)?)
}

/// `circuitBreaker.notifyUrl`: operator events go out with the platform's allowances only (a
/// worker posts them for whichever tenant's breaker changed).
pub(crate) fn check_function(state: &AppState, function: &FunctionSpec) -> Result<(), ApiError> {
    let Some(url) = function
        .circuit_breaker
        .as_ref()
        .and_then(|b| b.notify_url.as_ref())
    else {
        return Ok(());
    };
    Ok(check_url_field(
        state.egress().policy(),
        "circuitBreaker.notifyUrl",
        url,
    )?)
}
