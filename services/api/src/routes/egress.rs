//! The egress policy at write time: a destination whose text alone says it is refused (a
//! literal internal address in any spelling, `localhost`, the metadata names) is a 422 at its
//! field, so the tenant learns at once instead of from a listener that never starts. Names are
//! checked again, on every resolved address, each time a process connects.

use shoal_domain::apps::AppSpec;
use shoal_domain::egress::check_url_field;
use shoal_domain::functions::FunctionSpec;
use shoal_domain::validation::Problems;

use crate::error::ApiError;
use crate::state::AppState;

/// `handler.url`.
pub(crate) fn check_app(state: &AppState, app: &AppSpec) -> Result<(), ApiError> {
    let mut problems = Problems::new();
    if let Err(e) = check_url_field(state.egress().policy(), "handler.url", &app.handler.url) {
        problems.absorb(e);
    }
    Ok(problems.finish()?)
}

/// `circuitBreaker.notifyUrl`.
pub(crate) fn check_function(state: &AppState, function: &FunctionSpec) -> Result<(), ApiError> {
    let Some(url) = function
        .circuit_breaker
        .as_ref()
        .and_then(|b| b.notify_url.as_ref())
    else {
        return Ok(());
    };
    Ok(check_url_field(
        state.egress().policy(),
        "circuitBreaker.notifyUrl",
        url,
    )?)
}
