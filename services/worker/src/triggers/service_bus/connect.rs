//! Connecting a listener to its namespace, and opening receivers, with retries: while the
//! namespace cannot be reached (or refuses the credentials) the listener's statistics line says
//! why, the error counts under `poll_trigger`, and it tries again after a growing pause, until
//! it is stopped.

use std::future::Future;

use shoal_connectors::{ConnectorOptions, ServiceBusError, ServiceBusNamespace};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use tokio_util::sync::CancellationToken;

use crate::error::WorkerError;
use crate::stats::ListenerStats;
use crate::triggers::backoff::Retry;

/// A resolved connection, and how its app signs in.
pub struct Connector {
    pub spec: ConnectionSpec,
    pub identities: AppIdentities,
    pub options: ConnectorOptions,
}

/// Reports a failure of `step` on the listener's line and in the error counts.
pub fn report(stats: &ListenerStats, step: &str, error: ServiceBusError) {
    stats.set_status(format!("error: {step}: {error}"));
    count(stats, step, error);
}

/// Logs a failure of `step` and counts it, leaving the line to the caller (a session
/// listener's line sums up its slots: see `slots.rs`).
pub fn count(stats: &ListenerStats, step: &str, error: ServiceBusError) {
    tracing::warn!(function = stats.key.function, source = stats.key.source, error = %error, "{step} failed");
    stats.error(&WorkerError::PollTrigger(error.into()));
}

/// `attempt` until it succeeds (reporting each failure) or the listener is stopped (`None`).
pub async fn until_ok<T, F, Fut>(
    stats: &ListenerStats,
    step: &str,
    stop: &CancellationToken,
    mut attempt: F,
) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ServiceBusError>>,
{
    let mut retry = Retry::default();
    loop {
        let result = tokio::select! {
            _ = stop.cancelled() => return None,
            result = attempt() => result,
        };
        match result {
            Ok(value) => return Some(value),
            Err(e) => {
                report(stats, step, e);
                if !retry.pause(stop).await {
                    return None;
                }
            }
        }
    }
}

/// The namespace connection, once it could be made.
pub async fn namespace(
    connector: &Connector,
    stats: &ListenerStats,
    stop: &CancellationToken,
) -> Option<ServiceBusNamespace> {
    stats.set_status("connecting");
    let namespace = until_ok(stats, "connecting to the namespace", stop, || {
        ServiceBusNamespace::connect_for_app(
            &connector.spec,
            &connector.options,
            &connector.identities,
        )
    })
    .await?;
    stats.set_token_error(namespace.last_token_error());
    tracing::info!(
        function = stats.key.function,
        connection = namespace.describe(),
        "connected to Service Bus"
    );
    Some(namespace)
}
