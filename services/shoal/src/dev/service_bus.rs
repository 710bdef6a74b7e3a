//! The local Service Bus stand-in `shoal dev` runs (crate `shoal-local-bus`; Azure Service Bus
//! cannot run here), in memory on a free port, with the demo's entities declared in the
//! emulator's `Config.json` shape. Its connection string works with any Service Bus SDK that
//! honours `UseDevelopmentEmulator=true`.

use anyhow::Context;
use shoal_local_bus::{LocalBus, LocalBusConfig};

/// The queue the demo's Service Bus function listens to.
pub const ORDERS_QUEUE: &str = "demo-orders";
/// The queue its `serviceBus` output binding sends receipts to.
pub const RECEIPTS_QUEUE: &str = "demo-receipts";

/// Starts the stand-in with the demo's queues.
pub async fn start() -> anyhow::Result<LocalBus> {
    let config = LocalBusConfig::from_json(&format!(
        r#"{{"UserConfig": {{"Namespaces": [{{"Name": "shoal-dev", "Queues": [
            {{"Name": "{ORDERS_QUEUE}", "Properties": {{"MaxDeliveryCount": 5, "LockDuration": "PT30S"}}}},
            {{"Name": "{RECEIPTS_QUEUE}"}}
        ]}}]}}}}"#
    ))
    .context("the demo's local Service Bus configuration")?;
    LocalBus::start(config)
        .await
        .context("starting the local Service Bus stand-in")
}

/// The lines `shoal dev` prints about the stand-in: what it is and its connection string,
/// which the demo's printed commands use.
pub fn describe(connection: &str) -> String {
    format!(
        "Local Service Bus stand-in (AMQP 1.0 and the management API on one port, in memory; a\n\
         stand-in for development, not Azure Service Bus — see docs/local-bus.md)\n\n  \
         connection string {connection}\n"
    )
}
