//! The demo's HTTP function `welcome`, served through the webhook ingress: it needs no local
//! service, only the API `shoal dev` always runs.

use serde_json::{Value, json};

use super::kind::{ApiAccess, DemoKind, LocalServices};
use super::{APP, TENANT};

pub struct Welcome;

impl DemoKind for Welcome {
    fn function(&self) -> &'static str {
        "welcome"
    }

    fn function_json(&self) -> Value {
        json!({"bindings": [
            {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["post"]},
            {"type": "http", "direction": "out", "name": "res"}
        ]})
    }

    fn answer(&self, request: &Value) -> Value {
        // The caller's answer goes through the `res` output, as a custom handler's does.
        let name = request["Data"]["req"]["Query"]["name"]
            .as_str()
            .unwrap_or("stranger");
        json!({
            "Outputs": {"res": {
                "statusCode": 200,
                "headers": {"Content-Type": "application/json"},
                "body": {"greeting": format!("Welcome, {name}!"), "function": self.function()},
            }},
            "Logs": [format!("welcomed {name:?}")],
        })
    }

    fn hints(&self, _services: &LocalServices, api: &ApiAccess) -> String {
        let function = self.function();
        let ApiAccess {
            base: api,
            invoker_token: invoker,
        } = api;
        format!(
            "The HTTP function {function} through the webhook ingress, with a token that holds only the\n\
             Function Invoker role in {TENANT} (add ?mode=async for a 202 and a status URL):\n\n  \
             export SHOAL_INVOKE_TOKEN={invoker}\n  \
             curl -s -X POST '{api}/webhooks/{TENANT}/{APP}/{function}?name=world' -H \"Authorization: Bearer $SHOAL_INVOKE_TOKEN\"\n"
        )
    }
}
