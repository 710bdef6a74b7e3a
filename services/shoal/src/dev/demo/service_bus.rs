//! The demo's Service Bus function `orders`: the local stand-in's queue `demo-orders` →
//! handler → `serviceBus` output to `demo-receipts`. It runs only when the stand-in does; the
//! stand-in declares both queues when it starts (`dev::service_bus`).

use serde_json::{Value, json};

use super::kind::{ApiAccess, DemoKind, LocalServices};
use crate::dev::service_bus::{ORDERS_QUEUE, RECEIPTS_QUEUE, describe};

/// The app setting naming the stand-in (`connection: "ServiceBus"`).
const SETTING: &str = "ServiceBus";

pub struct Orders;

impl DemoKind for Orders {
    fn function(&self) -> &'static str {
        "orders"
    }

    fn runs_here(&self, services: &LocalServices) -> bool {
        services.service_bus_connection.is_some()
    }

    fn function_json(&self) -> Value {
        json!({"bindings": [
            {"type": "serviceBusTrigger", "direction": "in", "name": "order",
             "queueName": ORDERS_QUEUE, "connection": SETTING},
            {"type": "serviceBus", "direction": "out", "name": "receipt",
             "queueName": RECEIPTS_QUEUE, "connection": SETTING}
        ]})
    }

    fn app_settings(&self, services: &LocalServices) -> Vec<(&'static str, String)> {
        services
            .service_bus_connection
            .iter()
            .map(|connection| (SETTING, connection.clone()))
            .collect()
    }

    fn answer(&self, request: &Value) -> Value {
        // The body arrives as a string (as Azure passes it to custom handlers); JSON is read
        // as such, so the receipt shows the order's fields.
        let order = &request["Data"]["order"];
        let order = order
            .as_str()
            .and_then(|text| serde_json::from_str::<Value>(text).ok())
            .unwrap_or_else(|| order.clone());
        let metadata = &request["Metadata"];
        // A receipt with message properties, so the output's property mapping shows.
        json!({
            "Outputs": {"receipt": {
                "Body": {"received": order, "function": self.function()},
                "CorrelationId": metadata["MessageId"],
                "ApplicationProperties": {"deliveryCount": metadata["DeliveryCount"]},
            }},
            "Logs": [format!(
                "received order {} (delivery {})",
                metadata["MessageId"], metadata["DeliveryCount"]
            )],
        })
    }

    /// The stand-in's own lines first (its connection string is what the commands use), then
    /// how to send an order and read the receipts with Microsoft's Python SDK (installed by
    /// `make dev`).
    fn hints(&self, services: &LocalServices, _api: &ApiAccess) -> String {
        let Some(connection) = &services.service_bus_connection else {
            // Not reached: a kind that does not run here is not asked for its lines.
            return String::new();
        };
        let function = self.function();
        let python = ".shoal/python/bin/python";
        format!(
            "{}\n\
             Demo: function {function}: Service Bus queue {ORDERS_QUEUE} → handler → queue {RECEIPTS_QUEUE}.\n\
             Send with any Service Bus SDK, e.g. Python:\n\n  \
             {python} -c 'import sys; from azure.servicebus import ServiceBusClient, ServiceBusMessage as M; \
             c = ServiceBusClient.from_connection_string(sys.argv[1]); \
             c.get_queue_sender(\"{ORDERS_QUEUE}\").send_messages(M(\"{{\\\"item\\\": \\\"tea\\\"}}\", application_properties={{\"priority\": \"high\"}}))' \\\n    '{connection}'\n\n\
             and read the receipts:\n\n  \
             {python} -c 'import sys; from azure.servicebus import ServiceBusClient; \
             r = ServiceBusClient.from_connection_string(sys.argv[1]).get_queue_receiver(\"{RECEIPTS_QUEUE}\", max_wait_time=5); \
             [print(str(m)) or r.complete_message(m) for m in r]' \\\n    '{connection}'\n",
            describe(connection)
        )
    }
}
