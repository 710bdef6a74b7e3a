//! Stored apps and functions parsed again by this build's rules, for the processes that act on
//! them (the worker hosts them, the scheduler scales them).
//!
//! What was valid when written may not be now (a stricter rule, a hand-edited row). Each
//! consumer skips such an app or function with an error in the log rather than stop acting on
//! the others; `skipped` says in that log line what the consumer does without it.

use shoal_domain::apps::AppSpec;
use shoal_domain::functions::FunctionSpec;

use crate::apps::AppRecord;
use crate::functions::FunctionRecord;

/// The app's specification (its settings included), or None (logged) when it no longer
/// validates.
pub fn app(tenant: &str, record: &AppRecord, skipped: &'static str) -> Option<AppSpec> {
    match AppSpec::parse(&record.name, &record.written_document()) {
        Ok(written) => Some(written.spec),
        Err(e) => {
            tracing::error!(tenant, app = record.name, error = %e, skipped, "stored app no longer validates");
            None
        }
    }
}

/// Each function that still validates with its specification, in the order given; the others
/// are logged and left out.
pub fn functions<'a>(
    tenant: &str,
    records: impl IntoIterator<Item = &'a FunctionRecord>,
    skipped: &'static str,
) -> Vec<(&'a FunctionRecord, FunctionSpec)> {
    records
        .into_iter()
        .filter_map(|f| match FunctionSpec::parse(&f.name, &f.spec) {
            Ok(written) => Some((f, written.spec)),
            Err(e) => {
                tracing::error!(tenant, app = f.app, function = f.name, error = %e, skipped, "stored function no longer validates");
                None
            }
        })
        .collect()
}
