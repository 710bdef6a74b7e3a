//! What a function's trigger is reached with, as its worker reaches it: the function and its
//! app as stored, the app's settings and connections, the identities the API's host may sign
//! in as, and the tenant's egress policy. The poison endpoints (reading and replaying what
//! failed), the send endpoint (putting a test message on the trigger) and diagnostics' live
//! checks all load it here and resolve the trigger's source from it
//! (`crate::routes::kinds::Target::of`), so they connect as the same app, to the same entity,
//! under the same egress checks.

use std::collections::BTreeMap;

use shoal_connectors::ConnectorOptions;
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::egress::AllowList;
use shoal_domain::egress::destinations;
use shoal_domain::functions::FunctionSpec;
use shoal_domain::host_config::HostConfig;
use shoal_egress::{Egress, EgressError};
use shoal_store::{
    TenantId, apps, begin_tenant, functions as stored_functions, principals, tenants,
};

use crate::error::ApiError;
use crate::routes::functions::parse_stored;
use crate::state::AppState;

/// A function with what its trigger needs to be reached as the app.
pub(crate) struct FunctionContext {
    /// Whose function it is: refusals name it, and a stream function's replay position is
    /// kept under these names.
    pub tenant: TenantId,
    pub app: String,
    pub function: String,
    pub spec: FunctionSpec,
    pub settings: BTreeMap<String, String>,
    pub host: HostConfig,
    pub identities: AppIdentities,
    /// The API's egress policy with the tenant's allowances: every connection to the tenant's
    /// storage account, namespace or brokers is checked against it before it is dialled.
    pub egress: Egress,
}

impl FunctionContext {
    pub async fn load(
        state: &AppState,
        id: &TenantId,
        app: &str,
        function: &str,
    ) -> Result<FunctionContext, ApiError> {
        let mut tx = begin_tenant(&state.pool, id).await?;
        let record = stored_functions::get(&mut tx, id, app, function).await?;
        let app_record = apps::get(&mut tx, id, &state.cipher, app).await?;
        let app_spec = crate::routes::apps::parse_stored(&app_record)?.spec;
        let identities = principals::app_identities(&mut tx, id, app, &app_spec.identity).await?;
        let egress_allow = tenants::egress_allow(&mut tx, id.as_str()).await?;
        shoal_store::commit(tx).await?;
        let host = HostConfig::from_stored(
            app_record
                .written_document()
                .get("hostConfig")
                .unwrap_or(&serde_json::Value::Null),
        );
        let spec = parse_stored(&record)?.spec;
        let settings = app_record
            .settings
            .into_iter()
            .map(|s| (s.name, s.value))
            .collect();
        let allow =
            AllowList::from_items(egress_allow.iter().map(String::as_str)).unwrap_or_default();
        Ok(FunctionContext {
            tenant: id.clone(),
            app: app.to_owned(),
            function: function.to_owned(),
            spec,
            settings,
            host,
            identities,
            egress: state.egress().for_tenant(&allow),
        })
    }

    /// How the API connects to the tenant's storage account or namespace: under the egress
    /// policy (a storage endpoint's or namespace's addresses are checked when dialled).
    pub fn connector_options(&self) -> ConnectorOptions {
        ConnectorOptions {
            egress: Some(self.egress.clone()),
            ..ConnectorOptions::default()
        }
    }

    /// Every address `connection` dials (storage endpoint, namespace, authority host), checked
    /// with the egress policy before anything connects: a refusal is a 409 naming the setting
    /// (the request is fine; the app's settings point where the tenant may not connect), a
    /// name that does not resolve a 502. The connectors check again when they dial.
    pub async fn check_egress(&self, connection: &ConnectionSpec) -> Result<(), ApiError> {
        for destination in destinations::of_connection(connection) {
            // The authority host is reached over HTTP through the guarded client, which checks
            // it as an authority (`EgressPolicy::check_authority`), not as a destination.
            if destination.setting.ends_with("__authorityHost") {
                continue;
            }
            match self
                .egress
                .resolve(&destination.host, destination.port)
                .await
            {
                Ok(_) => {}
                Err(e @ EgressError::Refused(_)) => {
                    return Err(ApiError::Conflict(format!(
                        "{}: {e}: the egress policy does not allow the API to connect there",
                        destination.setting
                    )));
                }
                Err(e) => {
                    return Err(ApiError::Storage(format!("{}: {e}", destination.setting)));
                }
            }
        }
        Ok(())
    }
}
