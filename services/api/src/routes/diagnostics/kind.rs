//! The live checks of a trigger whose kind probes its source (`crate::routes::kinds`): the
//! function's trigger is reached as its app, through the tenant's egress policy, exactly as
//! the send and poison routes reach it.

use shoal_domain::diagnostics::Check;
use shoal_store::TenantId;

use crate::routes::kinds::{self, Target};
use crate::routes::trigger_source::FunctionContext;
use crate::state::AppState;

/// The kind's checks of `function`'s source; none for other triggers, or when the source does
/// not resolve (reported by the binding's own checks).
pub(super) async fn source_checks(
    state: &AppState,
    tenant: &TenantId,
    app: &str,
    function: &str,
) -> Vec<Check> {
    let Ok(context) = FunctionContext::load(state, tenant, app, function).await else {
        return Vec::new();
    };
    let Ok(Some(target)) = Target::of(&context) else {
        return Vec::new();
    };
    let Some(routes) = kinds::find(target.binding.type_name()) else {
        return Vec::new();
    };
    routes.probe(function, target).await
}
