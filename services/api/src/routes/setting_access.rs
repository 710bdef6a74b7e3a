//! Who sees and who may redirect an app's settings: values show in app reads only to callers
//! allowed `settings/list` (as Azure shows a Reader no app-setting values), and a write that
//! changes where a connection's credentials are sent needs the rights to read them
//! (`shoal_domain::secret_routes`).

use std::collections::BTreeMap;

use shoal_domain::names::{AppName, TenantName};
use shoal_domain::rbac::Scope;
use shoal_domain::rbac::actions;
use shoal_domain::secret_routes;
use shoal_domain::settings::StoredSetting;

use super::Authorized;
use crate::access::{Caller, permits};
use crate::error::ApiError;

/// Whether `caller` sees setting values in app reads (`settings/list` at the app).
pub(super) fn shows_values(caller: &Caller, tenant: &TenantName, app: &str) -> bool {
    AppName::parse(app).is_ok_and(|app| {
        permits(
            caller,
            actions::APP_SETTINGS_LIST,
            &Scope::app(tenant, &app),
        )
    })
}

/// A write that changes where a stored credential is sent needs the rights to read it
/// (`shoal_domain::secret_routes`): 403 naming the first such setting otherwise.
pub(super) fn check_secret_routes(
    authorized: &Authorized<'_>,
    tenant: &TenantName,
    app: &str,
    before: &[StoredSetting],
    after: &[StoredSetting],
) -> Result<(), ApiError> {
    let map = |s: &[StoredSetting]| -> BTreeMap<String, String> {
        s.iter()
            .map(|s| (s.name.clone(), s.value.clone()))
            .collect()
    };
    let changed = secret_routes::changed_secret_routes(&map(before), &map(after));
    let Some(first) = changed.first() else {
        return Ok(());
    };
    let scope = match AppName::parse(app) {
        Ok(name) => Scope::app(tenant, &name),
        Err(_) => return Ok(()),
    };
    let missing: Vec<&str> = secret_routes::REQUIRED_ACTIONS
        .into_iter()
        .filter(|action| !permits(authorized.caller(), action, &scope))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(ApiError::Forbidden(format!(
        "appSettings.{first} decides where the connection's credentials are sent; changing it \
         needs {} at {scope}",
        missing.join(" and ")
    )))
}
