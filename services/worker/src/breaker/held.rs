//! The queue messages a function's breaker gave back without invoking them, kept in Postgres
//! (`shoal_store::held_messages`) so that every worker can take them out of a message's
//! dequeue count: Azure Storage counts each receive and cannot take one back. A message parked
//! for a far-off retry (`shoal_store::parked_retries`) is held the same way, and says where its
//! retries stand when it comes back.

use chrono::{DateTime, Utc};
use shoal_domain::names::TenantName;
use shoal_store::breakers::FunctionRef;
use shoal_store::parked_retries::{self, ParkedRetry};
use shoal_store::{StoreError, TenantId, begin_tenant, held_messages};

use super::FunctionKey;

/// One function's held messages.
#[derive(Clone)]
pub struct HeldMessages {
    pool: sqlx::PgPool,
    tenant: Option<TenantId>,
    key: FunctionKey,
}

impl HeldMessages {
    pub fn new(pool: sqlx::PgPool, key: FunctionKey) -> HeldMessages {
        HeldMessages {
            pool,
            tenant: TenantName::parse(&key.tenant).ok().map(TenantId::new),
            key,
        }
    }

    /// Records one more hold of `message_id` (which expires at `expires_at`).
    pub async fn hold(
        &self,
        message_id: &str,
        expires_at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        held_messages::hold(&mut tx, self.function(tenant), message_id, expires_at).await?;
        shoal_store::commit(tx).await
    }

    /// How many times `message_id` was held back or parked, and its retries if it is parked.
    pub async fn arrival(
        &self,
        message_id: &str,
    ) -> Result<(u32, Option<ParkedRetry>), StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        let f = self.function(tenant);
        let holds = held_messages::holds(&mut tx, f, message_id).await?;
        let parked = parked_retries::get(&mut tx, f, message_id).await?;
        shoal_store::commit(tx).await?;
        Ok((holds, parked))
    }

    /// Parks `message_id` (which expires at `expires_at`) for its next retry.
    pub async fn park(
        &self,
        message_id: &str,
        parked: &ParkedRetry,
        expires_at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        parked_retries::park(
            &mut tx,
            self.function(tenant),
            message_id,
            parked,
            expires_at,
        )
        .await?;
        shoal_store::commit(tx).await
    }

    /// Forgets `message_id`'s parked retries once it is settled.
    pub async fn unpark(&self, message_id: &str) -> Result<(), StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        parked_retries::unpark(&mut tx, self.function(tenant), message_id).await?;
        shoal_store::commit(tx).await
    }

    /// The database the function's rows are in, which its other durable state (a timer's
    /// schedule status) shares.
    pub fn pool(&self) -> &sqlx::PgPool {
        &self.pool
    }

    /// The tenant's id; its name came from Postgres, so it always parses.
    fn tenant(&self) -> Result<&TenantId, StoreError> {
        self.tenant.as_ref().ok_or(StoreError::NotFound)
    }

    fn function<'a>(&'a self, tenant: &'a TenantId) -> FunctionRef<'a> {
        FunctionRef {
            tenant,
            app: &self.key.app,
            function: &self.key.function,
        }
    }
}
