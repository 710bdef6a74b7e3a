//! A RabbitMQ trigger's backlog: the messages ready in its queue, as KEDA's RabbitMQ scaler
//! reads them in `QueueLength` mode over AMQP and the extension's `RabbitMQListener.GetMetricsAsync`
//! does (`queue.declare` with `passive`, which only reads: a queue that does not exist is an
//! error, never created). Messages delivered and not yet acknowledged are not counted: they are
//! in a listener's hands, which the planner already sees.

use std::sync::Arc;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_connectors::ConnectorOptions;
use shoal_connectors::amqp::lapin::options::QueueDeclareOptions;
use shoal_connectors::amqp::lapin::types::FieldTable;
use shoal_connectors::amqp::lapin::{Channel, Connection};
use shoal_connectors::amqp::{self, AmqpError, Confirms};
use shoal_domain::binding_kinds::rabbitmq::TRIGGER_TYPE;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::trigger_source::{TriggerSource, without_credentials};
use shoal_egress::Egress;
use tokio::sync::Mutex;

use super::{Account, MetricClient, MetricKind, QueueReading, ReadFailure};

pub(super) struct RabbitMqMetrics;

impl MetricKind for RabbitMqMetrics {
    fn source_kind(&self) -> &'static str {
        TRIGGER_TYPE
    }

    /// One broker URI (with its credentials) is one account.
    fn account(&self, source: &TriggerSource) -> Account {
        Account::of_broker(source)
    }

    fn connect(
        &self,
        account: &Account,
        _identities: &AppIdentities,
        egress: &Egress,
        _options: &ConnectorOptions,
    ) -> Result<Arc<dyn MetricClient>, String> {
        let Account::Broker { uri, .. } = account else {
            return Err("a RabbitMQ queue is read through its broker's URI".to_owned());
        };
        if let Ok(url) = url::Url::parse(uri) {
            egress.check_url(&url).map_err(|r| r.to_string())?;
        }
        Ok(Arc::new(Broker {
            uri: uri.clone(),
            egress: egress.clone(),
            channel: Mutex::new(None),
        }))
    }
}

/// One broker, its connection made on the first read and again after a failed one.
struct Broker {
    uri: String,
    egress: Egress,
    channel: Mutex<Option<(Connection, Channel)>>,
}

impl MetricClient for Broker {
    fn read<'a>(
        &'a self,
        source: &'a TriggerSource,
        _queue_time: bool,
    ) -> BoxFuture<'a, Result<QueueReading, ReadFailure>> {
        async move {
            let TriggerSource::Broker(broker) = source else {
                return Err(ReadFailure::from("not a broker source".to_owned()));
            };
            let mut held = self.channel.lock().await;
            if held.is_none() {
                *held = Some(self.open().await.map_err(|e| e.to_string())?);
            }
            let Some((_, channel)) = held.as_ref() else {
                return Err(ReadFailure::from("no channel".to_owned()));
            };
            let options = QueueDeclareOptions {
                passive: true,
                ..QueueDeclareOptions::default()
            };
            let read = channel
                .queue_declare(
                    broker.entity.as_str().into(),
                    options,
                    FieldTable::default(),
                )
                .await;
            match read {
                Ok(queue) => Ok(QueueReading::backlog(u64::from(queue.message_count()))),
                Err(e) => {
                    // A passive declare of a missing queue closes the channel: start afresh.
                    if let Some((connection, _)) = held.take() {
                        let _ = connection.close(200, "read failed".into()).await;
                    }
                    Err(ReadFailure::from(format!(
                        "reading queue {} on {}: {e}",
                        broker.entity,
                        without_credentials(&self.uri)
                    )))
                }
            }
        }
        .boxed()
    }
}

impl Broker {
    async fn open(&self) -> Result<(Connection, Channel), AmqpError> {
        amqp::channel(
            &self.uri,
            &self.egress,
            "shoal scheduler",
            Confirms::Off,
            amqp::CONSUMES_NOTHING,
        )
        .await
        .map(|opened| (opened.connection, opened.channel))
    }
}
