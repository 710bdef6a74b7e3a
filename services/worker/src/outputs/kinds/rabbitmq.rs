//! The `rabbitMQ` output: the handler's output published to a queue through the default
//! exchange (routing key = queue name), as the extension's `RabbitMQAsyncCollector` does:
//! a string as its UTF-8 bytes, an array as one message per element, any other JSON value
//! serialized. Every message is confirmed by the broker before the invocation counts as done.
//! The connection is made on first use, under the egress policy, and made again after a
//! failed write.

use futures::FutureExt as _;
use serde_json::Value;
use shoal_connectors::amqp::lapin::options::BasicPublishOptions;
use shoal_connectors::amqp::lapin::types::{AMQPValue, FieldTable};
use shoal_connectors::amqp::lapin::{BasicProperties, Channel, Connection};
use shoal_connectors::amqp::{self, AmqpError, Confirms};
use shoal_domain::binding_kinds::KindBinding;
use shoal_domain::binding_kinds::rabbitmq::{
    DataType, OUTPUT_TYPE, OutputBinding, check_queue_name, connection_uri, output_body,
    resolve_queue_name,
};
use shoal_domain::invocation::queue_output_messages;
use shoal_domain::trace_context::TraceContext;
use shoal_egress::Egress;
use tokio::sync::Mutex;

use super::{Bound, KindTarget, OutputKind, Prepared};
use crate::config::WorkerConfig;
use crate::error::OutputWriteError;
use crate::hosted_apps::HostedApp;

pub struct RabbitMqOutput;

impl OutputKind for RabbitMqOutput {
    fn binding_type(&self) -> &'static str {
        OUTPUT_TYPE
    }

    fn bind(
        &self,
        binding: &KindBinding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Bound, String> {
        let out: OutputBinding = binding.typed()?;
        let uri = connection_uri(out.connection_string_setting.as_deref(), &app.settings)?;
        let egress = config.egress.for_tenant(&app.egress_allow);
        if let Ok(url) = url::Url::parse(&uri) {
            egress.check_url(&url).map_err(|r| {
                format!(
                    "{}: {r}",
                    out.connection_string_setting.as_deref().unwrap_or_default()
                )
            })?;
        }
        // A name with expressions is resolved per invocation; any other once, now.
        let templated = out.queue_name.contains(['{', '}']);
        let queue = if templated {
            String::new()
        } else {
            resolve_queue_name(&out.queue_name, &app.settings)?
        };
        Ok(Bound {
            name: templated.then(|| out.queue_name.clone()),
            target: Box::new(Publisher {
                uri,
                egress,
                queue,
                binary: out.data_type == Some(DataType::Binary),
                name: format!(
                    "shoal {}/{} output {}",
                    app.instance.tenant, app.instance.app, out.name
                ),
                channel: Mutex::new(None),
            }),
        })
    }
}

struct Publisher {
    uri: String,
    egress: Egress,
    /// The queue, when its name has no expressions.
    queue: String,
    /// `dataType: binary`: each message is base64 the handler wrote, published as its bytes.
    binary: bool,
    name: String,
    channel: Mutex<Option<(Connection, Channel)>>,
}

impl KindTarget for Publisher {
    fn check_name(&self, _written: &str, resolved: String) -> Result<String, String> {
        match check_queue_name(&resolved) {
            Ok(()) => Ok(resolved),
            Err(e) => Err(format!("{resolved:?} {e}")),
        }
    }

    fn prepare<'a>(
        &'a self,
        value: &'a Value,
        trace: &'a TraceContext,
    ) -> Result<Prepared<'a>, OutputWriteError> {
        let bodies = queue_output_messages(value)
            .iter()
            .map(|m| self.body(m))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Box::new(move |name, _| {
            async move {
                if bodies.is_empty() {
                    return Ok(0);
                }
                let queue = name.as_deref().unwrap_or(&self.queue);
                let mut held = self.channel.lock().await;
                if held.is_none() {
                    *held = Some(self.open().await?);
                }
                let Some((_, channel)) = held.as_ref() else {
                    return Err("no channel".into());
                };
                let published = publish(channel, queue, &bodies, trace).await;
                if published.is_err() {
                    // Made again on the next write.
                    if let Some((connection, _)) = held.take() {
                        let _ = connection.close(200, "write failed".into()).await;
                    }
                }
                published?;
                Ok(bodies.len())
            }
            .boxed()
        }))
    }
}

impl Publisher {
    fn body(&self, message: &str) -> Result<Vec<u8>, OutputWriteError> {
        Ok(output_body(message, self.binary)?)
    }

    async fn open(&self) -> Result<(Connection, Channel), AmqpError> {
        amqp::channel(
            &self.uri,
            &self.egress,
            &self.name,
            Confirms::On,
            amqp::CONSUMES_NOTHING,
        )
        .await
        .map(|opened| (opened.connection, opened.channel))
    }
}

/// Publishes every body, then waits for every confirm; a `nack` fails the write.
async fn publish(
    channel: &Channel,
    queue: &str,
    bodies: &[Vec<u8>],
    trace: &TraceContext,
) -> Result<(), OutputWriteError> {
    // The consumer continues the attempt's trace (the handler's answer names no headers).
    let mut headers = FieldTable::default();
    for (name, value) in trace.headers() {
        headers.insert(name.into(), AMQPValue::LongString(value.into()));
    }
    let mut confirms = Vec::with_capacity(bodies.len());
    for body in bodies {
        let confirm = channel
            .basic_publish(
                "".into(),
                queue.into(),
                BasicPublishOptions::default(),
                body,
                BasicProperties::default()
                    .with_delivery_mode(2)
                    .with_headers(headers.clone()),
            )
            .await?;
        confirms.push(confirm);
    }
    for confirm in confirms {
        if !confirm.await?.is_ack() {
            return Err(format!("the broker refused a message for queue {queue}").into());
        }
    }
    Ok(())
}
