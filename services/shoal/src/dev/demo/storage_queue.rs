//! The demo's Storage queue function `greet`: Azurite's queue `demo-in` → handler → queue
//! `demo-out`. It is the demo's first and the banner's way in, so its lines also say how the
//! app scales and where to see the workers.

use serde_json::{Value, json};

use super::kind::{ApiAccess, DemoKind, LocalServices, Preparing};
use super::{APP, TENANT};

/// The queue `greet` is triggered by.
pub const INPUT_QUEUE: &str = "demo-in";
/// The queue its `queue` output writes the greeting to.
pub const OUTPUT_QUEUE: &str = "demo-out";

pub struct Greet;

impl DemoKind for Greet {
    fn function(&self) -> &'static str {
        "greet"
    }

    fn function_json(&self) -> Value {
        // No `connection`: a queue binding without one uses `AzureWebJobsStorage`, as in Azure.
        json!({"bindings": [
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": INPUT_QUEUE},
            {"type": "queue", "direction": "out", "name": "result", "queueName": OUTPUT_QUEUE}
        ]})
    }

    fn app_settings(&self, services: &LocalServices) -> Vec<(&'static str, String)> {
        vec![("AzureWebJobsStorage", services.storage_connection.clone())]
    }

    fn prepare<'a>(&'a self, services: &'a LocalServices) -> Preparing<'a> {
        Box::pin(async move {
            let queues = shoal_connectors::StorageQueues::from_connection_string(
                &services.storage_connection,
                &Default::default(),
            )?;
            for name in [INPUT_QUEUE, OUTPUT_QUEUE] {
                queues.queue(name)?.create_if_missing().await?;
            }
            Ok(())
        })
    }

    fn answer(&self, request: &Value) -> Value {
        let text = request["Data"]["msg"].as_str().unwrap_or_default();
        // The attempt shows in the result so a redelivery can be told from the first try.
        let attempt = &request["Metadata"]["DequeueCount"];
        json!({
            "Outputs": {"result": {
                "greeting": format!("Hello, {text}!"),
                "function": self.function(),
                "attempt": attempt,
            }},
            "Logs": [format!("greeted {text:?} (attempt {attempt})")],
        })
    }

    fn hints(&self, services: &LocalServices, api: &ApiAccess) -> String {
        let function = self.function();
        let LocalServices {
            queue_endpoint,
            queue_sas: sas,
            ..
        } = services;
        let api = api.base;
        let version = shoal_connectors::STORAGE_API_VERSION;
        let send = format!(
            "curl -s -X POST '{queue_endpoint}/{INPUT_QUEUE}/messages?{sas}' -H 'x-ms-version: {version}' \\\n      --data \"<QueueMessage><MessageText>$(printf 'world' | base64)</MessageText></QueueMessage>\""
        );
        let peek = format!(
            "curl -s '{queue_endpoint}/{OUTPUT_QUEUE}/messages?peekonly=true&numofmessages=32&{sas}' -H 'x-ms-version: {version}'"
        );
        format!(
            "Demo: app {TENANT}/{APP}, function {function}: queue {INPUT_QUEUE} → handler → queue {OUTPUT_QUEUE}.\n\n\
             Enqueue a message (base64, as Azure Functions expects):\n\n  {send}\n\n\
             The worker's log shows the handler's line (\"greeted \\\"world\\\"\"); the result lands on {OUTPUT_QUEUE}\n\
             (its MessageText is base64 JSON):\n\n  {peek}\n\n\
             The app scales from zero: the scheduler places an instance on one of the three workers\n\
             about a second after the message arrives, and back to zero a minute after the queue is empty:\n\n  \
             curl -s {api}/v1/tenants/{TENANT}/apps/{APP}/scale -H \"Authorization: Bearer $SHOAL_TOKEN\"\n\n\
             Workers, their assignments and listener statistics:\n\n  \
             curl -s {api}/v1/workers -H \"Authorization: Bearer $SHOAL_TOKEN\"\n"
        )
    }
}
