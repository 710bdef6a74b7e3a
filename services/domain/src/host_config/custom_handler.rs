//! `customHandler` in `host.json`. Shoal's handlers *are* custom handlers, so most of the
//! section describes how the Functions host starts the handler process, which Shoal never
//! does (it calls `handler.url`); those keys are stored without effect. One key has a
//! meaning: `enableForwardingHttpRequest`.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::section::Section;
use super::stored::CUSTOM_HANDLER_DESCRIPTION;
use crate::validation::Problems;

#[derive(Clone, Debug, Default, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomHandler {
    /// When true, a function whose trigger is `httpTrigger` and whose only output is an `http`
    /// binding gets the caller's HTTP request as is (method, path, query, headers, body) at
    /// `{handler.url}/{function}`, and its raw response is returned to the caller, instead of
    /// the custom-handler JSON envelope. Default false, as in Azure.
    pub enable_forwarding_http_request: bool,
    /// Stored as written; no effect (Shoal does not start the handler process).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub description: Option<Value>,
}

pub(super) fn parse(problems: &mut Problems, root: &Section) -> CustomHandler {
    let section = root.child(
        problems,
        "customHandler",
        &["description", "enableForwardingHttpRequest"],
    );
    CustomHandler {
        enable_forwarding_http_request: section.boolean(
            problems,
            "enableForwardingHttpRequest",
            false,
        ),
        description: section.stored(problems, "description", &CUSTOM_HANDLER_DESCRIPTION),
    }
}
