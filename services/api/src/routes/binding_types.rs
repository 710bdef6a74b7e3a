//! `GET /v1/bindingTypes`: every binding type Shoal knows with the JSON Schema of its
//! properties, so a client (the dashboard's binding forms) builds a binding field by field
//! from what validation itself reads (`shoal_domain::bindings::catalog`), never from a list of
//! its own. Any authenticated caller may read it: it says what Shoal accepts, nothing of any
//! tenant.

use axum::Json;
use serde::Serialize;
use shoal_domain::bindings::{BindingType, binding_types};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_FUNCTIONS;
use crate::access::Caller;
use crate::error::Problem;
use crate::state::AppState;

#[derive(Debug, Serialize, ToSchema)]
pub struct BindingTypeList {
    /// In the order validation's errors list them: the built-in kinds, then the table's.
    pub items: Vec<BindingType>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_binding_types))
}

/// List every binding type with the schema of its properties.
#[utoipa::path(get, path = "/v1/bindingTypes", tag = TAG_FUNCTIONS,
    responses(
        (status = 200, body = BindingTypeList, examples(
            ("queue trigger" = (summary = "One item", value = json!({"items": [{
                "type": "queueTrigger", "direction": "in", "runs": true,
                "schema": {"type": "object", "required": ["name", "queueName"], "properties": {
                    "name": {"type": "string"},
                    "queueName": {"type": "string", "minLength": 3, "maxLength": 1024},
                    "connection": {"type": "string", "description": "App setting (or prefix of settings) naming the account; empty means `AzureWebJobsStorage`."},
                    "dataType": {"type": "string", "enum": ["string", "binary", "stream"]}
                }}
            }]})))
        )),
        (status = 401, body = Problem, description = "No bearer token, or one that does not verify")))]
pub async fn list_binding_types(_caller: Caller) -> Json<BindingTypeList> {
    Json(BindingTypeList {
        items: binding_types(),
    })
}
