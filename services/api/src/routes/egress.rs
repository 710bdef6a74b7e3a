//! The egress policy at write time: a destination whose text alone says it is refused (a
//! literal internal address in any spelling, `localhost`, the metadata names) is a 422 at its
//! field, so the tenant learns at once instead of from a listener that never starts. Names are
//! checked again, on every resolved address, each time a process connects.

use std::collections::BTreeMap;

use shoal_domain::apps::AppSpec;
use shoal_domain::egress::{AllowList, EgressPolicy, check_authority_field, check_url_field};
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
    let policy = tenant_policy(state, &mut tx, tenant).await?;
    shoal_store::commit(tx).await?;
    Ok(check_url_field(&policy, "handler.url", url)?)
}

/// Every `…__authorityHost` among `settings` is an Entra ID authority or allowed by the
/// operator (`EgressPolicy::check_authority`), a 422 at the setting otherwise. Checked after
/// the caller was found allowed to route the connection's secret, so a caller who may not
/// gets 403 whatever the value.
pub(crate) async fn check_authorities(
    state: &AppState,
    tx: &mut shoal_store::Tx,
    tenant: &TenantName,
    settings: &BTreeMap<String, String>,
) -> Result<(), ApiError> {
    let hosts: Vec<(&String, url::Url)> = settings
        .iter()
        .filter(|(name, _)| name.to_ascii_lowercase().ends_with("__authorityhost"))
        // A value that is no URL is the connection's own error, reported where it resolves.
        .filter_map(|(name, value)| url::Url::parse(value).ok().map(|url| (name, url)))
        .collect();
    let platform = state.egress().policy();
    if hosts
        .iter()
        .all(|(_, url)| platform.check_authority(url).is_ok())
    {
        return Ok(());
    }
    let policy = tenant_policy(state, tx, tenant).await?;
    for (name, url) in hosts {
        check_authority_field(&policy, &format!("appSettings.{name}"), &url)?;
    }
    Ok(())
}

/// The platform's policy with the tenant's allowances (set by a platform admin).
async fn tenant_policy(
    state: &AppState,
    tx: &mut shoal_store::Tx,
    tenant: &TenantName,
) -> Result<EgressPolicy, ApiError> {
    let stored = tenants::egress_allow(tx, tenant.as_str()).await?;
    let allow = AllowList::from_items(stored.iter().map(String::as_str)).unwrap_or_default();
    Ok(state.egress().policy().for_tenant(&allow))
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
