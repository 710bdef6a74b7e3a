//! The `$cbs` node: claims-based security. A client puts a token for an audience
//! (`put-token`, type `servicebus.windows.net:sastoken`) before attaching links; the connection
//! keeps the grant and checks it on every attach and management request. Response keys are
//! `status-code` / `status-description` (`azure-sdk-for-python` `servicebus/_pyamqp/cbs.py`).

use chrono::{DateTime, Utc};
use fe2o3_amqp::types::messaging::{AmqpValue, Body, Message};
use fe2o3_amqp::types::primitives::Value;

use super::wire;
use crate::config::SasPolicy;
use crate::sas::{self, Grant};

pub const CBS_NODE: &str = "$cbs";
const KEYS: (&str, &str) = ("status-code", "status-description");
const SAS_TOKEN_TYPE: &str = "servicebus.windows.net:sastoken";

/// Handles a put-token request; the grant goes to `grants` when the token is good.
pub fn handle(
    request: &Message<Body<Value>>,
    policies: &[SasPolicy],
    grants: &mut Vec<Grant>,
    now: DateTime<Utc>,
) -> Message<Body<Value>> {
    let respond = |status, description: &str| {
        wire::response(request, KEYS, status, description, None, Value::Null)
    };
    if wire::app_property(request, "operation").as_deref() != Some("put-token") {
        return respond(400, "The only operation on $cbs is put-token.");
    }
    let token_type = wire::app_property(request, "type").unwrap_or_default();
    let token = match &request.body {
        Body::Value(AmqpValue(Value::String(token))) => token.as_str(),
        _ => return respond(400, "The token must be a string body."),
    };
    // The Python SDK puts its SAS tokens with type `jwt` (`_pyamqp/authentication.py`
    // `JWTTokenAuth`), .NET with `servicebus.windows.net:sastoken`; Service Bus goes by the
    // token itself. Real JWTs (Entra ID) are not implemented by the stand-in.
    let is_sas = token.starts_with("SharedAccessSignature ");
    if !is_sas {
        return respond(
            401,
            &format!(
                "Only SharedAccessSignature tokens are supported by the local stand-in (type {token_type:?}, expected {SAS_TOKEN_TYPE} or a SAS sent as jwt)."
            ),
        );
    }
    match sas::verify(token, policies, now) {
        Ok(grant) => {
            grants.retain(|g| g.expires_at > now);
            grants.push(grant);
            respond(202, "Accepted")
        }
        Err(e) => respond(401, &format!("InvalidSignature: {e}")),
    }
}
