//! A cluster's brokers checked against the egress policy before a client of Shoal's dials
//! them: the bootstrap servers by every address their names resolve to, then the brokers the
//! cluster advertises.
//!
//! librdkafka resolves and connects on its own, and goes on to every broker it learns of; rdkafka
//! builds consumers and producers from a configuration where no connect hook can be set. So the
//! check runs before the client that does the work is made, with a client of
//! `shoal_kafka_guard`'s, whose every connection passes the policy in librdkafka's connect
//! callback: it asks the (checked) bootstrap servers for the cluster's metadata, never dialling
//! a refused address, and every advertised broker is then resolved and checked. What the check
//! cannot see: a broker name that re-resolves to a refused address between the check and the
//! working client's own lookup, and brokers a cluster starts advertising after the check (each
//! listener restart checks again).

use std::time::Duration;

use rdkafka::types::RDKafkaErrorCode;
use shoal_domain::egress::destinations;
use shoal_egress::{Egress, EgressError};

use super::{KafkaError, KafkaProperties};

/// How long the metadata request may take.
const METADATA_TIMEOUT: Duration = Duration::from_secs(10);

/// Checks `props`' bootstrap servers and the brokers the cluster advertises for `topic`, under
/// `setting` (the name the refusal is reported by: `brokerList`, or the connection's).
pub async fn check_cluster(
    props: &KafkaProperties,
    topic: &str,
    setting: &str,
    egress: &Egress,
) -> Result<(), KafkaError> {
    let servers = props.get("bootstrap.servers").unwrap_or_default();
    for server in destinations::of_brokers(setting, servers) {
        egress
            .resolve(&server.host, server.port)
            .await
            .map_err(|e| refusal(setting, None, &e))?;
    }
    for (host, port) in advertised_brokers(props, topic, setting, egress).await? {
        let Ok(port) = u16::try_from(port) else {
            return Err(KafkaError::InvalidRequest(format!(
                "{setting}: the cluster advertises {host}:{port}, which is not a TCP port"
            )));
        };
        egress
            .resolve(&host, port)
            .await
            .map_err(|e| refusal(setting, Some(&format!("{host}:{port}")), &e))?;
    }
    Ok(())
}

fn refusal(setting: &str, advertised: Option<&str>, error: &EgressError) -> KafkaError {
    let at = match advertised {
        Some(broker) => format!("{setting}: the cluster advertises {broker}"),
        None => setting.to_owned(),
    };
    match error {
        EgressError::Refused(_) => KafkaError::Refused(format!("{at}: {error}")),
        // librdkafka would not resolve it either; it may resolve later.
        EgressError::Unresolved { .. } => KafkaError::Unavailable {
            op: "resolve the brokers",
            message: format!("{at}: {error}"),
        },
    }
}

/// `(host, port)` of every broker in the cluster's metadata, asked of the bootstrap servers by a
/// guarded client that then goes away. A broker the guard refused to dial meanwhile (librdkafka
/// goes on to brokers it learns of) is the answer, whatever the metadata request did.
async fn advertised_brokers(
    props: &KafkaProperties,
    topic: &str,
    setting: &str,
    egress: &Egress,
) -> Result<Vec<(String, i32)>, KafkaError> {
    let redactor = props.redactor();
    let client = shoal_kafka_guard::guarded_client(&props.client_config(&[]), egress.clone())
        .map_err(|e| KafkaError::from_rdkafka(&redactor, "check the brokers", Some(topic), &e))?;
    let topic = topic.to_owned();
    let setting = setting.to_owned();
    tokio::task::spawn_blocking(move || {
        let metadata = client.fetch_metadata(None, METADATA_TIMEOUT);
        if let Some(first) = client.context().refused().into_iter().next() {
            return Err(refusal(&setting, Some(&first.broker), &first.error));
        }
        // The client's own error says more (a failed sign-in) than the request's ("transport
        // failure").
        let metadata = metadata.map_err(|e| {
            let op = "read the cluster's brokers";
            match shoal_kafka_guard::take_errors(&client)
                .into_iter()
                .find(|(code, _)| *code != RDKafkaErrorCode::BrokerTransportFailure)
            {
                Some((code, text)) => KafkaError::from_code(
                    op,
                    Some(&topic),
                    code,
                    redactor.redact(&format!("{code}: {text}")),
                ),
                None => KafkaError::from_rdkafka(&redactor, op, Some(&topic), &e),
            }
        })?;
        let brokers = metadata
            .brokers()
            .iter()
            .map(|b| (b.host().to_owned(), b.port()))
            .collect();
        drop(client);
        Ok(brokers)
    })
    .await
    .map_err(|e| KafkaError::Other {
        op: "check the brokers",
        message: format!("the task failed: {e}"),
    })?
}
