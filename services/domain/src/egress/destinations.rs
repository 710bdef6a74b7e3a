//! Where a tenant's connection settings make a worker connect, named by the setting that says
//! so: a storage account's queue endpoint, a Service Bus namespace, an identity connection's
//! service and authority, a Kafka broker list. Checked with the policy when a listener or an
//! output binds, so a refused destination starts nothing and its status names the setting.

use crate::connection::ConnectionSpec;

/// One host and port a connection dials, and the setting that named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub setting: String,
    pub host: String,
    pub port: u16,
}

/// AMQP over TLS, what Service Bus clients dial (plain AMQP for the development emulator).
const AMQPS_PORT: u16 = 5671;
const AMQP_PORT: u16 = 5672;
/// Kafka's port when a broker list entry names none.
const KAFKA_PORT: u16 = 9092;

fn of_url(setting: String, url: &url::Url, default_port: u16) -> Option<Destination> {
    Some(Destination {
        setting,
        host: url.host_str()?.to_owned(),
        port: url
            .port()
            .or_else(|| url.port_or_known_default())
            .unwrap_or(default_port),
    })
}

/// What a resolved connection dials.
pub fn of_connection(spec: &ConnectionSpec) -> Vec<Destination> {
    match spec {
        ConnectionSpec::StorageConnectionString(s) => {
            of_url(s.setting.clone(), &s.queue_endpoint, 443)
                .into_iter()
                .collect()
        }
        ConnectionSpec::ServiceBusConnectionString(s) => {
            let port = if s.development_emulator {
                AMQP_PORT
            } else {
                AMQPS_PORT
            };
            of_url(s.setting.clone(), &s.endpoint, port)
                .into_iter()
                .collect()
        }
        ConnectionSpec::Identity(i) => {
            let port = if i.service_uri.scheme() == "sb" {
                AMQPS_PORT
            } else {
                443
            };
            let service = of_url(
                format!("{}__serviceUri", i.setting_prefix),
                &i.service_uri,
                port,
            );
            let authority = i
                .authority_host
                .as_ref()
                .and_then(|url| of_url(format!("{}__authorityHost", i.setting_prefix), url, 443));
            service.into_iter().chain(authority).collect()
        }
    }
}

/// A Kafka `bootstrap.servers` list: `host:port` entries separated by commas (IPv6 in
/// brackets), as librdkafka reads it.
pub fn of_brokers(setting: &str, servers: &str) -> Vec<Destination> {
    servers
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|entry| {
            let entry = entry.split_once("://").map_or(entry, |(_, rest)| rest);
            let (host, port) = match entry.rsplit_once(':') {
                Some((host, port)) if !host.ends_with(':') && port.parse::<u16>().is_ok() => {
                    (host, port.parse().unwrap_or(KAFKA_PORT))
                }
                _ => (entry, KAFKA_PORT),
            };
            Destination {
                setting: setting.to_owned(),
                host: host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned(),
                port,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::connection::{ConnectionKind, resolve};

    fn destinations(kind: ConnectionKind, settings: &[(&str, &str)]) -> Vec<Destination> {
        let settings: BTreeMap<String, String> = settings
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect();
        of_connection(&resolve(kind, Some("Conn"), &settings).unwrap())
    }

    fn d(setting: &str, host: &str, port: u16) -> Destination {
        Destination {
            setting: setting.into(),
            host: host.into(),
            port,
        }
    }

    #[test]
    fn connections_name_their_hosts_ports_and_settings() {
        assert_eq!(
            destinations(
                ConnectionKind::StorageQueue,
                &[(
                    "Conn",
                    "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=a2V5;QueueEndpoint=http://127.0.0.1:10001/a"
                )]
            ),
            [d("Conn", "127.0.0.1", 10001)]
        );
        assert_eq!(
            destinations(
                ConnectionKind::ServiceBus,
                &[(
                    "Conn",
                    "Endpoint=sb://169.254.169.254/;SharedAccessKeyName=k;SharedAccessKey=v"
                )]
            ),
            [d("Conn", "169.254.169.254", 5671)]
        );
        assert_eq!(
            destinations(
                ConnectionKind::StorageQueue,
                &[
                    ("Conn__queueServiceUri", "https://10.0.0.4"),
                    ("Conn__credential", "clientsecret"),
                    ("Conn__clientId", "c"),
                    ("Conn__tenantId", "t"),
                    ("Conn__clientSecret", "s"),
                    ("Conn__authorityHost", "https://login.example:8443"),
                ]
            ),
            [
                d("Conn__serviceUri", "10.0.0.4", 443),
                d("Conn__authorityHost", "login.example", 8443)
            ]
        );
    }

    #[test]
    fn broker_lists_split_into_hosts_and_ports() {
        assert_eq!(
            of_brokers(
                "brokerList",
                "127.0.0.1:9093, [::1]:9094,kafka.example,SASL_SSL://b.example:9095"
            ),
            [
                d("brokerList", "127.0.0.1", 9093),
                d("brokerList", "::1", 9094),
                d("brokerList", "kafka.example", 9092),
                d("brokerList", "b.example", 9095),
            ]
        );
    }
}
