//! Shoal's Postgres persistence.
//!
//! Postgres is the single source of truth: tenants, apps (their specification as written),
//! app settings (every value encrypted with AES-256-GCM under `SHOAL_SECRET_KEY`), functions,
//! principals, role definitions and assignments, token signing keys, each app's webhook signing
//! secret, the worker registry with its heartbeats and the audit log. One
//! module per aggregate holds that aggregate's SQL. Tenant-scoped functions take a
//! [`TenantId`] and run inside a transaction that has set `shoal.tenant_id`, so row-level
//! security backs up every `where tenant_id = …`; platform-scoped functions say so in their
//! names or docs.

pub mod apps;
pub mod assignments;
pub mod audit;
pub mod breakers;
pub mod concurrency_slots;
mod conditional;
pub mod crypto;
mod error;
pub mod functions;
pub mod held_messages;
pub mod invocation_log;
pub mod invocation_recorder;
pub mod invocation_telemetry;
pub mod leadership;
pub mod listen;
pub mod metrics;
pub mod page;
pub mod parked_retries;
pub mod pool;
pub mod principals;
pub mod revalidate;
pub mod roles;
pub mod scale;
pub mod scale_samples;
pub mod signing_keys;
pub mod signing_secrets;
mod tenant;
pub mod tenants;
pub mod timer_schedules;
pub mod webhook_invocations;
pub mod workers;

pub use conditional::{EtagList, Precondition, lost_create_race};
pub use error::StoreError;
pub use tenant::{TenantId, begin_platform, begin_tenant};

/// The transaction type every repository function takes; the caller owns begin/commit.
pub type Tx = sqlx::Transaction<'static, sqlx::Postgres>;

/// An entity tag: changes on every write, compared for `If-Match`.
pub type Etag = uuid::Uuid;

/// Whether a create-or-replace created the resource (201) or replaced it (200).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Replaced,
}

/// Commits a transaction, mapping the error like every other store call.
pub async fn commit(tx: Tx) -> Result<(), StoreError> {
    Ok(tx.commit().await?)
}
