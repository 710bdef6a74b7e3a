//! A timer function's schedule status in Postgres (`shoal_store::timer_schedules`), read and
//! moved on as this worker.

use shoal_domain::names::TenantName;
use shoal_domain::timer_trigger::ScheduleStatus;
use shoal_store::breakers::FunctionRef;
use shoal_store::{StoreError, TenantId, begin_tenant, timer_schedules};

use crate::invocation::FunctionHost;

pub(super) struct StatusStore {
    pool: sqlx::PgPool,
    tenant: Option<TenantId>,
    app: String,
    function: String,
    /// The worker whose instance claim fences each move; None when it hosts every app by itself
    /// (no scheduler, no claims).
    worker: Option<String>,
}

impl StatusStore {
    pub fn of(function: &FunctionHost, fenced: bool) -> StatusStore {
        StatusStore {
            pool: function.held.pool().clone(),
            tenant: TenantName::parse(&function.tenant).ok().map(TenantId::new),
            app: function.app.clone(),
            function: function.function.clone(),
            worker: fenced.then(|| function.worker.clone()),
        }
    }

    pub async fn get(&self) -> Result<Option<ScheduleStatus>, StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        let status = timer_schedules::get(&mut tx, self.function_ref(tenant)).await?;
        shoal_store::commit(tx).await?;
        Ok(status)
    }

    /// Moves the status from `read` to `next`: true when this worker moved it (see
    /// `timer_schedules::advance`).
    pub async fn advance(
        &self,
        read: Option<&ScheduleStatus>,
        next: &ScheduleStatus,
    ) -> Result<bool, StoreError> {
        let tenant = self.tenant()?;
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        let moved = timer_schedules::advance(
            &mut tx,
            self.function_ref(tenant),
            self.worker.as_deref(),
            read,
            next,
        )
        .await?;
        shoal_store::commit(tx).await?;
        Ok(moved)
    }

    /// The tenant's id; its name came from Postgres, so it always parses.
    fn tenant(&self) -> Result<&TenantId, StoreError> {
        self.tenant.as_ref().ok_or(StoreError::NotFound)
    }

    fn function_ref<'a>(&'a self, tenant: &'a TenantId) -> FunctionRef<'a> {
        FunctionRef {
            tenant,
            app: &self.app,
            function: &self.function,
        }
    }
}
