//! `GET …/apps/{app}/diagnostics`: what would stop the app's listeners from starting. A
//! connection that cannot be resolved is not an error when written (settings may arrive
//! later); it is reported here instead, and the listener does not start.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use shoal_domain::bindings::Binding;
use shoal_domain::connection::{ConnectionKind, resolve};
use shoal_domain::functions::FunctionSpec;
use shoal_store::{TenantId, apps, begin_tenant, functions};
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::{TAG_APPS, app_param, tenant_param};
use crate::auth::{Access, Caller};
use crate::error::{ApiError, Problem};
use crate::state::AppState;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum CheckStatus {
    Ok,
    Error,
    /// The binding type is accepted but Shoal runs no listener for it yet.
    Unsupported,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    pub function: String,
    pub binding: String,
    /// What was checked: `connection`, `queueName`, `trigger`.
    pub subject: String,
    pub status: CheckStatus,
    pub detail: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostics {
    pub app: String,
    /// True when no check is in error.
    pub healthy: bool,
    pub checks: Vec<Check>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_diagnostics))
}

/// Check every function's bindings against the app's settings.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/diagnostics", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path)),
    responses((status = 200, body = Diagnostics), (status = 404, body = Problem)))]
pub async fn get_diagnostics(
    State(state): State<AppState>,
    Caller(caller): Caller,
    Path((tenant, app)): Path<(String, String)>,
) -> Result<Json<Diagnostics>, ApiError> {
    let tenant = tenant_param(&tenant)?;
    let app = app_param(&app)?;
    caller.authorize(&tenant, Access::Read)?;
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    let record = apps::get(&mut tx, &id, &state.cipher, app.as_str()).await?;
    let functions = functions::all_of_app(&mut tx, &id, app.as_str()).await?;
    shoal_store::commit(tx).await?;

    let settings: BTreeMap<String, String> = record
        .settings
        .into_iter()
        .map(|s| (s.name, s.value))
        .collect();
    let mut checks = Vec::new();
    for function in &functions {
        let spec = super::functions::parse_stored(function)?.spec;
        checks.extend(check_function(&function.name, &spec, &settings));
    }
    let healthy = checks.iter().all(|c| c.status != CheckStatus::Error);
    Ok(Json(Diagnostics {
        app: record.name,
        healthy,
        checks,
    }))
}

/// The checks for one function (pure, so the rules are unit-tested without HTTP).
pub fn check_function(
    function: &str,
    spec: &FunctionSpec,
    settings: &BTreeMap<String, String>,
) -> Vec<Check> {
    let mut checks = Vec::new();
    let check = |binding: &Binding, subject: &str, status: CheckStatus, detail: String| Check {
        function: function.to_string(),
        binding: binding.name().to_string(),
        subject: subject.to_string(),
        status,
        detail,
    };
    for binding in &spec.bindings {
        let (kind, queue_reference) = match binding {
            Binding::QueueTrigger(b) => (
                Some(ConnectionKind::StorageQueue),
                b.queue_name.setting_reference(),
            ),
            Binding::Queue(b) => (
                Some(ConnectionKind::StorageQueue),
                b.queue_name.setting_reference(),
            ),
            Binding::ServiceBusTrigger(_) | Binding::ServiceBus(_) => {
                (Some(ConnectionKind::ServiceBus), None)
            }
            _ => (None, None),
        };
        if let Some(kind) = kind {
            let outcome = resolve(kind, binding.connection(), settings);
            checks.push(match outcome {
                Ok(spec) => check(binding, "connection", CheckStatus::Ok, spec.describe()),
                Err(err) => check(binding, "connection", CheckStatus::Error, err.to_string()),
            });
        }
        if let Some(setting) = queue_reference {
            checks.push(match settings.get(setting) {
                Some(value) => check(
                    binding,
                    "queueName",
                    CheckStatus::Ok,
                    format!("%{setting}% resolves to {value}"),
                ),
                None => check(
                    binding,
                    "queueName",
                    CheckStatus::Error,
                    format!("app setting {setting} is not set"),
                ),
            });
        }
        if binding.is_trigger()
            && matches!(
                binding,
                Binding::EventHubTrigger(_)
                    | Binding::KafkaTrigger(_)
                    | Binding::CosmosDbTrigger(_)
            )
        {
            checks.push(check(
                binding,
                "trigger",
                CheckStatus::Unsupported,
                format!(
                    "{} is accepted, but Shoal does not run its listener yet",
                    binding.type_name()
                ),
            ));
        }
    }
    checks
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn function(bindings: serde_json::Value) -> FunctionSpec {
        FunctionSpec::parse("f", &json!({ "bindings": bindings }))
            .unwrap()
            .spec
    }

    #[test]
    fn unresolved_connection_is_an_error_check() {
        let spec = function(
            json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders", "connection": "Missing"}]),
        );
        let checks = check_function("f", &spec, &BTreeMap::new());
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0].status, CheckStatus::Error);
        assert_eq!(checks[0].subject, "connection");
    }

    #[test]
    fn development_storage_resolves() {
        let spec = function(
            json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"}]),
        );
        let settings = BTreeMap::from([(
            "AzureWebJobsStorage".to_string(),
            "UseDevelopmentStorage=true".to_string(),
        )]);
        let checks = check_function("f", &spec, &settings);
        assert_eq!(checks[0].status, CheckStatus::Ok, "{}", checks[0].detail);
    }

    #[test]
    fn queue_name_reference_must_be_set() {
        let spec = function(
            json!([{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "%OrdersQueue%"}]),
        );
        let settings = BTreeMap::from([(
            "AzureWebJobsStorage".to_string(),
            "UseDevelopmentStorage=true".to_string(),
        )]);
        let checks = check_function("f", &spec, &settings);
        let queue = checks.iter().find(|c| c.subject == "queueName").unwrap();
        assert_eq!(queue.status, CheckStatus::Error);
    }
}
