//! The queue messages a function's breaker gave back without invoking them, kept in Postgres
//! (`shoal_store::held_messages`) so that every worker can take them out of a message's
//! dequeue count: Azure Storage counts each receive and cannot take one back.

use chrono::{DateTime, Utc};
use shoal_domain::names::TenantName;
use shoal_store::breakers::FunctionRef;
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

    /// How many times `message_id` was held back.
    pub async fn holds(&self, message_id: &str) -> Result<u32, StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        let holds = held_messages::holds(&mut tx, self.function(tenant), message_id).await?;
        shoal_store::commit(tx).await?;
        Ok(holds)
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
