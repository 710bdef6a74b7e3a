//! Storage Queue readings, as Azure's scale controller takes them: the queue's approximate
//! message count (`QueueScaleMonitor`/`QueueTargetScaler` in azure-sdk-for-net
//! `Microsoft.Azure.WebJobs.Extensions.Storage.Queues`), and for incremental scaling the age of
//! the oldest visible message. A queue nobody has created yet holds no backlog.

use std::sync::Arc;

use chrono::Utc;
use futures::future::BoxFuture;
use shoal_connectors::{ConnectorOptions, QueueError, StorageQueues};
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::egress::destinations;
use shoal_domain::trigger_source::{self, TriggerSource};
use shoal_egress::Egress;

use super::{Account, MetricClient, MetricKind, QueueReading, ReadFailure};

pub(super) struct StorageQueueMetrics;

impl MetricKind for StorageQueueMetrics {
    fn source_kind(&self) -> &'static str {
        trigger_source::STORAGE_QUEUE
    }

    fn account(&self, source: &TriggerSource) -> Account {
        let TriggerSource::StorageQueue { connection, .. } = source else {
            // Not reached: `KINDS` finds these metrics by the source's kind. Another kind's
            // source gets an account this kind's `connect` refuses.
            return Account::of_broker(source);
        };
        Account::Azure(Box::new(connection.clone()))
    }

    fn connect(
        &self,
        account: &Account,
        identities: &AppIdentities,
        egress: &Egress,
        options: &ConnectorOptions,
    ) -> Result<Arc<dyn MetricClient>, String> {
        let Account::Azure(connection) = account else {
            return Err("a storage queue is read through an Azure connection".to_owned());
        };
        egress.check_destinations(&destinations::of_connection(connection))?;
        let queues = StorageQueues::connect_for_app(connection, options, identities)
            .map_err(|e| e.to_string())?;
        Ok(Arc::new(queues))
    }
}

impl MetricClient for StorageQueues {
    fn read<'a>(
        &'a self,
        source: &'a TriggerSource,
        queue_time: bool,
    ) -> BoxFuture<'a, Result<QueueReading, ReadFailure>> {
        Box::pin(async move {
            let TriggerSource::StorageQueue { queue, .. } = source else {
                return Err(ReadFailure::from("not a storage queue".to_owned()));
            };
            read(self, queue, queue_time)
                .await
                .map_err(ReadFailure::from)
        })
    }
}

async fn read(
    queues: &StorageQueues,
    name: &str,
    queue_time: bool,
) -> Result<QueueReading, String> {
    let queue = queues.queue(name).map_err(|e| e.to_string())?;
    let length = match queue.approximate_length().await {
        Ok(length) => length,
        Err(QueueError::QueueNotFound { .. }) => {
            return Ok(QueueReading {
                queue_time_ms: queue_time.then_some(0),
                ..QueueReading::backlog(0)
            });
        }
        Err(e) => return Err(e.to_string()),
    };
    let queue_time_ms = if queue_time {
        let oldest = queue
            .oldest_visible_inserted_at()
            .await
            .map_err(|e| e.to_string())?;
        Some(oldest.map_or(0, |at| {
            u64::try_from((Utc::now() - at).num_milliseconds()).unwrap_or(0)
        }))
    } else {
        None
    };
    Ok(QueueReading {
        queue_time_ms,
        ..QueueReading::backlog(length)
    })
}
