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

/// The lines `shoal dev` prints about the stand-in: its connection string and how to send to
/// the demo queue and read the receipts with Microsoft's Python SDK (installed by `make dev`).
pub fn instructions(bus: &LocalBus) -> String {
    let connection = bus.connection_string();
    let python = ".shoal/python/bin/python";
    format!(
        "Local Service Bus stand-in (AMQP 1.0 and the management API on one port, in memory; a\n\
         stand-in for development, not Azure Service Bus — see docs/local-bus.md)\n\n  \
         connection string {connection}\n\n\
         Demo: function orders: Service Bus queue {ORDERS_QUEUE} → handler → queue {RECEIPTS_QUEUE}.\n\
         Send with any Service Bus SDK, e.g. Python:\n\n  \
         {python} -c 'import sys; from azure.servicebus import ServiceBusClient, ServiceBusMessage as M; \
         c = ServiceBusClient.from_connection_string(sys.argv[1]); \
         c.get_queue_sender(\"{ORDERS_QUEUE}\").send_messages(M(\"{{\\\"item\\\": \\\"tea\\\"}}\", application_properties={{\"priority\": \"high\"}}))' \\\n    '{connection}'\n\n\
         and read the receipts:\n\n  \
         {python} -c 'import sys; from azure.servicebus import ServiceBusClient; \
         r = ServiceBusClient.from_connection_string(sys.argv[1]).get_queue_receiver(\"{RECEIPTS_QUEUE}\", max_wait_time=5); \
         [print(str(m)) or r.complete_message(m) for m in r]' \\\n    '{connection}'\n"
    )
}
