//! Probes a Service Bus trigger's entity through the management API for diagnostics, with the
//! app's connection (and, for identity-based connections, as the app signs in where this
//! process can). The probe is bounded in time: a namespace that does not answer is reported,
//! never waited on.

use std::collections::BTreeMap;
use std::time::Duration;

use shoal_connectors::{ConnectorOptions, QueueError, ServiceBusAdmin};
use shoal_domain::binding_kinds::service_bus;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::diagnostics::{Check, EntityProbe, check_service_bus_entity};
use shoal_domain::egress::destinations;
use shoal_domain::functions::FunctionSpec;
use shoal_domain::host_config::HostConfig;
use shoal_domain::trigger_source::{TriggerSource, resolve};
use shoal_egress::Egress;

/// Longest a diagnostics request waits for one namespace.
const PROBE_TIMEOUT: Duration = Duration::from_secs(8);

/// The entity checks of the function's Service Bus trigger; none for other triggers, or when
/// the connection or entity name does not resolve (reported by the other checks).
pub(super) async fn entity_checks(
    function: &str,
    spec: &FunctionSpec,
    settings: &BTreeMap<String, String>,
    host: &HostConfig,
    identities: &AppIdentities,
    egress: &Egress,
) -> Vec<Check> {
    let Some(binding) = spec.trigger() else {
        return Vec::new();
    };
    let Some(Ok(trigger)) = service_bus::trigger(binding) else {
        return Vec::new();
    };
    let Some(Ok(TriggerSource::ServiceBus { connection, entity })) =
        resolve(binding, settings, host)
    else {
        return Vec::new();
    };
    // A namespace the egress policy refuses is not probed: a probe's answer would tell open
    // ports of internal addresses from closed ones.
    let refused = egress.check_destinations(&destinations::of_connection(&connection));
    let probe = match refused.and_then(|()| {
        ServiceBusAdmin::connect_for_app(&connection, &ConnectorOptions::default(), identities)
            .map_err(|e| e.to_string())
    }) {
        Err(e) => EntityProbe::NotChecked(e),
        Ok(admin) => match tokio::time::timeout(PROBE_TIMEOUT, admin.entity(&entity)).await {
            Err(_) => {
                EntityProbe::Unreachable(format!("no answer within {} s", PROBE_TIMEOUT.as_secs()))
            }
            Ok(Ok(description)) => EntityProbe::Found(description.settings),
            Ok(Err(QueueError::EntityNotFound { .. })) => EntityProbe::NotFound,
            Ok(Err(QueueError::Unauthorized(why))) => EntityProbe::ListenOnly(why),
            Ok(Err(e @ (QueueError::Unavailable(_) | QueueError::Tls(_)))) => {
                EntityProbe::Unreachable(e.to_string())
            }
            Ok(Err(e)) => EntityProbe::NotChecked(e.to_string()),
        },
    };
    check_service_bus_entity(
        function,
        trigger.name.as_str(),
        &entity,
        trigger.entity.as_ref(),
        &probe,
    )
}
