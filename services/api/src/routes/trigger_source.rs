//! What a function's trigger reads from, resolved the way its worker resolves it: the function
//! and its app as stored, the app's settings and connections, the identities the API's host may
//! sign in as, and the tenant's egress policy. The poison endpoints (reading and replaying what
//! failed) and the send endpoint (putting a test message on the trigger) both reach the
//! tenant's queues and brokers through this one place, so they connect as the same app, to the
//! same entity, under the same egress checks.

use std::collections::BTreeMap;

use shoal_connectors::{ConnectorOptions, ServiceBusError, ServiceBusNamespace};
use shoal_domain::binding_kinds::service_bus::{self, ServiceBusTriggerBinding};
use shoal_domain::binding_kinds::stream::is_stream;
use shoal_domain::binding_kinds::{BrokerSource, KindBinding};
use shoal_domain::bindings::Binding;
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::egress::AllowList;
use shoal_domain::egress::destinations;
use shoal_domain::functions::FunctionSpec;
use shoal_domain::host_config::HostConfig;
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_domain::stream_trigger::source::StreamSource;
use shoal_domain::trigger_source::{TriggerSource as ResolvedSource, resolve};
use shoal_egress::{Egress, EgressError};
use shoal_store::{
    TenantId, apps, begin_tenant, functions as stored_functions, principals, tenants,
};

use crate::error::ApiError;
use crate::routes::functions::parse_stored;
use crate::state::AppState;

/// A function with what its trigger needs to be reached as the app.
pub(crate) struct FunctionContext {
    pub spec: FunctionSpec,
    pub settings: BTreeMap<String, String>,
    pub host: HostConfig,
    pub identities: AppIdentities,
    /// The API's egress policy with the tenant's allowances: every connection to the tenant's
    /// storage account, namespace or brokers is checked against it before it is dialled.
    pub egress: Egress,
}

/// The function's trigger and where it reads from.
pub(crate) enum TriggerSource<'a> {
    StorageQueue {
        connection: ConnectionSpec,
        queue_name: String,
    },
    ServiceBus {
        binding: Box<ServiceBusTriggerBinding>,
        connection: ConnectionSpec,
        entity: EntityPath,
    },
    /// `kafkaTrigger` or `eventHubTrigger` (Event Hubs through its Kafka endpoint).
    Stream {
        binding: &'a Binding,
        source: StreamSource,
    },
    /// A kind of `shoal_domain::binding_kinds` (RabbitMQ): what the API does with it is the
    /// kind's own, in `crate::routes::kinds`.
    Kind {
        binding: &'a KindBinding,
        source: BrokerSource,
    },
    /// Any other trigger (its `type`), or none.
    Other(Option<&'static str>),
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

    /// The trigger's source, resolved from the app's settings as the worker resolves it
    /// (`shoal_domain::trigger_source::resolve`); 409 when they do not resolve (the function
    /// cannot be reached as things stand, whatever the request).
    pub fn trigger(&self) -> Result<TriggerSource<'_>, ApiError> {
        let Some(binding) = self.spec.trigger() else {
            return Ok(TriggerSource::Other(None));
        };
        let source = match resolve(binding, &self.settings, &self.host) {
            None => return Ok(TriggerSource::Other(Some(binding.type_name()))),
            Some(Ok(source)) => source,
            Some(Err(e)) => {
                let what = if is_stream(binding) { "topic" } else { "queue" };
                return Err(ApiError::Conflict(format!(
                    "the trigger's {what} cannot be used: {e}"
                )));
            }
        };
        Ok(match (source, binding) {
            (ResolvedSource::StorageQueue { connection, queue }, _) => {
                TriggerSource::StorageQueue {
                    connection,
                    queue_name: queue,
                }
            }
            (ResolvedSource::ServiceBus { connection, entity }, binding) => {
                match service_bus::trigger(binding) {
                    // Checked when it was stored; one its type can no longer read is a conflict.
                    Some(read) => TriggerSource::ServiceBus {
                        binding: Box::new(read.map_err(ApiError::Conflict)?),
                        connection,
                        entity,
                    },
                    // Not reachable: only a `serviceBusTrigger` resolves to a Service Bus entity.
                    None => TriggerSource::Other(Some(binding.type_name())),
                }
            }
            (ResolvedSource::Stream(source), binding) => TriggerSource::Stream { binding, source },
            (ResolvedSource::Broker(source), binding) => TriggerSource::Kind { binding, source },
        })
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

/// The trigger's Service Bus namespace, connected as the app: 409 when the connection cannot
/// be used as configured, 502 when the namespace does not answer.
pub(crate) async fn open_namespace(
    connection: &ConnectionSpec,
    options: &ConnectorOptions,
    identities: &AppIdentities,
) -> Result<ServiceBusNamespace, ApiError> {
    ServiceBusNamespace::connect_for_app(connection, options, identities)
        .await
        .map_err(|e| match e {
            ServiceBusError::InvalidConnection(why) => {
                ApiError::Conflict(format!("the trigger's namespace cannot be used: {why}"))
            }
            other => ApiError::Storage(format!("the namespace cannot be reached: {other}")),
        })
}
