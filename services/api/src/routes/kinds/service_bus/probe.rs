//! Probes a Service Bus trigger's entity through the management API for diagnostics, with the
//! app's connection (and, for identity-based connections, as the app signs in where this
//! process can). The probe is bounded in time: a namespace that does not answer is reported,
//! never waited on.

use std::time::Duration;

use shoal_connectors::{QueueError, ServiceBusAdmin};
use shoal_domain::diagnostics::{Check, EntityProbe, check_service_bus_entity};
use shoal_domain::egress::destinations;

use crate::error::ApiError;
use crate::routes::kinds::Target;

/// Longest a diagnostics request waits for one namespace.
const PROBE_TIMEOUT: Duration = Duration::from_secs(8);

/// The entity checks of the function's Service Bus trigger; none when its binding cannot be
/// read (reported by the other checks).
pub(super) async fn entity_checks(function: &str, target: Target<'_>) -> Vec<Check> {
    let Ok((trigger, connection, entity)) = super::entity(&target) else {
        return Vec::new();
    };
    let (identities, egress) = (&target.context.identities, &target.context.egress);
    // A namespace the egress policy refuses is not probed: a probe's answer would tell open
    // ports of internal addresses from closed ones. Its name is checked first, then the
    // addresses it resolves to (under the tenant's policy, as the worker dials it); the client
    // checks them again when it dials.
    let checked = match egress.check_destinations(&destinations::of_connection(connection)) {
        Err(refused) => Err(EntityProbe::NotChecked(refused)),
        Ok(()) => match target.context.check_egress(connection).await {
            Ok(()) => Ok(()),
            Err(refused @ ApiError::Conflict(_)) => {
                Err(EntityProbe::NotChecked(refused.to_string()))
            }
            Err(unresolved) => Err(EntityProbe::Unreachable(unresolved.to_string())),
        },
    };
    let connected = checked.and_then(|()| {
        ServiceBusAdmin::connect_for_app(
            connection,
            &target.context.connector_options(),
            identities,
        )
        .map_err(|e| EntityProbe::NotChecked(e.to_string()))
    });
    let probe = match connected {
        Err(probe) => probe,
        Ok(admin) => match tokio::time::timeout(PROBE_TIMEOUT, admin.entity(entity)).await {
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
        entity,
        trigger.entity.as_ref(),
        &probe,
    )
}
