//! `customHandler.enableForwardingHttpRequest`: the caller's HTTP request goes to the handler
//! as is, and the handler's HTTP response comes back as is, instead of the custom-handler JSON
//! envelope (`Data.req` in, `Outputs.res` out).
//!
//! Azure forwards only for a function whose one input is its `httpTrigger` and whose one
//! output is an `http` binding (azure-functions-host:
//! `src/WebJobs.Script/Workers/Http/DefaultHttpWorkerService.cs`, `InvokeAsync` →
//! `ProcessHttpInAndOutInvocationRequest` when `EnableForwardingHttpRequest`, and
//! `FunctionMetadataExtensions.IsHttpInAndOutFunction`); any other function keeps the envelope,
//! because only the envelope can carry other outputs. Azure sends the request to the handler at
//! the request's own path; Shoal's ingress path is `/webhooks/{tenant}/{app}/{function}`, so
//! the handler gets it at `{handler.url}/{function}`, the same address the envelope goes to.

use crate::binding_kinds::http::{OUTPUT_TYPE, TRIGGER_TYPE};
use crate::functions::FunctionSpec;
use crate::invocation::http::{WITHHELD_REQUEST_HEADERS, WITHHELD_RESPONSE_HEADERS};
use crate::webhooks::{HEADER_ID, HEADER_SIGNATURE, HEADER_TIMESTAMP};

/// Whether a function's request is forwarded as is when the app enables forwarding.
pub fn is_http_in_and_out(spec: &FunctionSpec) -> bool {
    let types: Vec<&str> = spec.bindings.iter().map(|b| b.type_name()).collect();
    matches!(
        types.as_slice(),
        [TRIGGER_TYPE, OUTPUT_TYPE] | [OUTPUT_TYPE, TRIGGER_TYPE]
    )
}

/// Whether a header of the caller's request is passed on to the handler. Besides what the
/// envelope withholds (the caller's credentials for Shoal, hop-by-hop headers), the caller may
/// not supply the headers Shoal signs and identifies the call with, nor `Host` and
/// `Content-Length`, which describe Shoal's own request to the handler.
pub fn forwards_request_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !(WITHHELD_REQUEST_HEADERS.contains(&name.as_str())
        || matches!(
            name.as_str(),
            "host" | "content-length" | HEADER_ID | HEADER_TIMESTAMP | HEADER_SIGNATURE
        )
        || name.starts_with("x-shoal-"))
}

/// Whether a header of the handler's response is passed on to the caller: not the ones that
/// describe only the handler's connection (Shoal frames the body itself), nor Shoal's own
/// (`X-Shoal-*`, `X-Request-Id`), which the caller must be able to trust came from Shoal.
/// Headers the response's `Connection` header names are hop-by-hop too; the invoker drops them
/// (RFC 9110 §7.6.1).
pub fn returns_response_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !(WITHHELD_RESPONSE_HEADERS.contains(&name.as_str())
        || name.starts_with("x-shoal-")
        || name == "x-request-id")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(bindings: serde_json::Value) -> FunctionSpec {
        FunctionSpec::parse("f", &json!({ "bindings": bindings }))
            .unwrap()
            .spec
    }

    #[test]
    fn only_http_trigger_with_one_http_output_is_forwarded() {
        let trigger = json!({"type": "httpTrigger", "direction": "in", "name": "req"});
        let http = json!({"type": "http", "direction": "out", "name": "res"});
        let ret = json!({"type": "http", "direction": "out", "name": "$return"});
        let queue =
            json!({"type": "queue", "direction": "out", "name": "q", "queueName": "orders"});
        assert!(is_http_in_and_out(&spec(json!([trigger, http]))));
        assert!(is_http_in_and_out(&spec(json!([ret, trigger]))));
        assert!(!is_http_in_and_out(&spec(json!([trigger]))));
        assert!(!is_http_in_and_out(&spec(json!([trigger, http, queue]))));
        let queue_trigger =
            json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"});
        assert!(!is_http_in_and_out(&spec(json!([queue_trigger, http]))));
    }

    #[test]
    fn credentials_signing_and_hop_by_hop_headers_are_not_forwarded() {
        for kept in [
            "Content-Type",
            "accept",
            "X-Custom",
            "cookie",
            "x-request-id",
        ] {
            assert!(forwards_request_header(kept), "{kept}");
        }
        for dropped in [
            "Authorization",
            "host",
            "Content-Length",
            "transfer-encoding",
            "webhook-signature",
            "Webhook-Id",
            "X-Shoal-Invocation-Id",
        ] {
            assert!(!forwards_request_header(dropped), "{dropped}");
        }
        assert!(returns_response_header("Set-Cookie"));
        assert!(!returns_response_header("Transfer-Encoding"));
        assert!(!returns_response_header("content-length"));
        assert!(!returns_response_header("X-Shoal-Worker"));
        assert!(!returns_response_header("x-request-id"));
    }
}
