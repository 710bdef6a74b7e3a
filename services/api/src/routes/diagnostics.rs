//! `GET …/apps/{app}/diagnostics`: what would stop the app's listeners from starting. A
//! connection that cannot be resolved is not an error when written (settings may arrive
//! later); it is reported here instead, and the listener does not start. Identity-based
//! connections also show how they sign in: the app's Shoal identity, the Entra client it is
//! exchanged for, the federated credential Entra needs, and the last token error listeners
//! reported. What the app's live listeners report (a listener stopped or in error, token
//! errors, outputs the handler sets in vain) is checked here too. The keys of the app's `hostConfig` and its functions' documents
//! that are stored without effect are listed too (`noEffect`), after the function checks.
//! A trigger's source is looked at live by its kind (`routes::kinds`): a Service Bus trigger's
//! entity probed through the management API (missing, unreachable, listen-only, and each
//! declared entity setting the live entity lacks), a RabbitMQ trigger's queue and its
//! dead-letter queue (whether they exist).

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use shoal_domain::connection::outbound::federation_issuer;
use shoal_domain::diagnostics::health::check_listeners;
use shoal_domain::diagnostics::sign_in::{SignInContext, sign_ins};
use shoal_domain::diagnostics::{
    CheckStatus, Diagnostics, check_breaker, check_function, check_host_config,
    check_undeclared_outputs,
};
use shoal_domain::host_config::HostConfig;
use shoal_store::{TenantId, apps, begin_tenant, functions, principals, workers};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_APPS;
use crate::access::Caller;
use crate::access::allow;
use crate::error::{ApiError, Problem};
use crate::extract::AppPath;
use crate::routes::kinds;
use crate::state::AppState;
use shoal_domain::rbac::{Scope, actions};

mod kind;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_diagnostics))
}

/// Check every function's bindings against the app's settings and its live listeners' reports,
/// and list the `hostConfig` and `function.json` keys that are stored but have no effect.
#[utoipa::path(get, path = "/v1/tenants/{tenant}/apps/{app}/diagnostics", tag = TAG_APPS,
    params(("tenant" = shoal_domain::names::TenantName, Path), ("app" = shoal_domain::names::AppName, Path)),
    responses((status = 200, body = Diagnostics), (status = 404, body = Problem)))]
pub async fn get_diagnostics(
    State(state): State<AppState>,
    caller: Caller,
    AppPath(tenant, app): AppPath,
) -> Result<Json<Diagnostics>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::APP_DIAGNOSTICS_READ,
        &Scope::app(&tenant, &app),
    )
    .await?;
    let id = TenantId::new(tenant);
    let mut tx = begin_tenant(&state.pool, &id).await?;
    let record = apps::get(&mut tx, &id, &state.cipher, app.as_str()).await?;
    let functions = functions::all_of_app(&mut tx, &id, app.as_str()).await?;
    let spec = super::apps::parse_stored(&record)?.spec;
    let identities = principals::app_identities(&mut tx, &id, app.as_str(), &spec.identity).await?;
    let listeners = workers::live_listeners_of_app(&mut tx, &id, app.as_str()).await?;
    let breakers: Vec<_> = shoal_store::breakers::open_of_tenant(&mut tx, &id)
        .await?
        .into_iter()
        .filter(|b| b.app == app.as_str())
        .collect();
    shoal_store::commit(tx).await?;
    let token_errors: Vec<(String, String)> = listeners
        .iter()
        .filter_map(|l| Some((l.function.clone(), l.last_token_error.clone()?)))
        .collect();
    let issuer = federation_issuer(&state.issuance.public_url);
    // Validated when written, so this only lists keys; the written form, not the normalized
    // one, tells a legacy key that was overridden from one that was applied.
    let host_config = record
        .written_document()
        .get("hostConfig")
        .cloned()
        .unwrap_or_default();

    let settings: BTreeMap<String, String> = record
        .settings
        .into_iter()
        .map(|s| (s.name, s.value))
        .collect();
    let context = SignInContext {
        settings: &settings,
        identities: &identities,
        issuer: Some(&issuer),
        token_errors: &token_errors,
    };
    let host = HostConfig::from_stored(&host_config);
    let mut checks = Vec::new();
    let mut connections = Vec::new();
    for function in &functions {
        let spec = super::functions::parse_stored(function)?.spec;
        checks.extend(check_function(&function.name, &spec, &settings, &host));
        let (sign_ins, sign_in_checks) = sign_ins(&function.name, &spec, &context);
        connections.extend(sign_ins);
        checks.extend(sign_in_checks);
        checks.extend(check_undeclared_outputs(&function.name, &spec, &listeners));
        // Only a kind that probes looks at its source live (a timer has none to look at).
        if spec
            .trigger()
            .and_then(|t| kinds::find(t.type_name()))
            .is_some_and(|k| k.probes())
        {
            checks.extend(kind::source_checks(&state, &id, app.as_str(), &function.name).await);
        }
        if let Some(breaker) = breakers.iter().find(|b| b.function == function.name) {
            checks.extend(check_breaker(
                &function.name,
                breaker.state,
                breaker.cause,
                breaker.changed_at,
                breaker.failures.first().map(|f| f.reason.as_str()),
            ));
        }
    }
    checks.extend(check_host_config(&host_config));
    // What the live listeners report (stopped, in error, a failed token request), as the apps
    // list's health does, after the configuration checks so a function is not reported twice.
    let from_listeners = check_listeners(&listeners, &checks);
    checks.extend(from_listeners);
    let healthy = checks.iter().all(|c| c.status != CheckStatus::Error);
    Ok(Json(Diagnostics {
        app: record.name,
        healthy,
        checks,
        connections,
    }))
}
