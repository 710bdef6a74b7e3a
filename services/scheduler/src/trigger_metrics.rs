//! Trigger metrics for the scale math: storage queue lengths (and, for incremental scaling,
//! the age of the oldest visible message) and Service Bus active message counts (see
//! [`service_bus`]), read through the connectors.
//!
//! Reads are cached and staggered: a queue is read at most every `min_interval`, one account
//! gets at most `reads_per_account_per_tick` reads per tick (stalest first, so every queue
//! takes its turn) with `concurrency_per_account` in flight, and a tick waits only its budget
//! for them. A read still running then lands in the cache for the next tick instead of
//! delaying every app's decision. Queues named by several functions or apps are read once.
//! Service Bus entities take the same path, one namespace counting as one account; so do
//! stream triggers' consumer-group lags (see [`streams`]), one set of brokers and credentials
//! counting as one account.
//!
//! Every read goes where the egress policy allows: the scheduler's (`--egress-allow`) with the
//! app's tenant's allowances. A connection whose settings name a refused address by their text
//! is never made; the connectors check every address a name resolves to before dialling it,
//! and a stream's brokers (bootstrap and advertised) are checked before its lag is read. The
//! tenant's allowances are part of a source's key, so two tenants never share a client or a
//! reading across different policies.

mod service_bus;
mod streams;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::StreamExt;
use shoal_connectors::{ConnectorOptions, QueueError, ServiceBusAdmin, StorageQueues};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::egress::AllowList;
use shoal_domain::egress::destinations;
use shoal_domain::scale::ScaleMode;
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_egress::Egress;
use tokio::task::JoinSet;

use crate::catalog::{MetricSource, ScalableApp};
use crate::config::MetricsConfig;

pub use service_bus::{Declared, Reconciliation};
pub use streams::Brokers;

/// What is read: a storage queue, a Service Bus entity, or a consumer group's lag on a topic.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Target {
    StorageQueue(String),
    ServiceBus(EntityPath),
    Stream { group: String, topic: String },
}

/// How a source is reached: an Azure connection, or a stream's brokers.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SourceConnection {
    /// Boxed: the connection settings are far larger than a stream's brokers.
    Azure(Box<ConnectionSpec>),
    Brokers(Brokers),
}

/// A source as metrics know it: the connection it is read with and what it names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceKey {
    pub connection: SourceConnection,
    /// Part of the key: two tenants' identical settings sign in as different identities and
    /// must never share a client.
    pub identities: AppIdentities,
    /// The app's tenant's egress allowances, which the client connects under.
    pub egress_allow: AllowList,
    pub target: Target,
}

impl SourceKey {
    fn signer(&self) -> Signer {
        let service = match self.target {
            Target::StorageQueue(_) => Backend::StorageQueues,
            Target::ServiceBus(_) => Backend::ServiceBus,
            Target::Stream { .. } => Backend::Kafka,
        };
        (
            service,
            self.connection.clone(),
            self.identities.clone(),
            self.egress_allow.clone(),
        )
    }

    /// The key of a function's source, read under its tenant's egress allowances; None for a
    /// source nothing reads.
    pub fn of(source: &MetricSource, egress_allow: &AllowList) -> Option<SourceKey> {
        let egress_allow = egress_allow.clone();
        match source {
            MetricSource::StorageQueue {
                connection,
                identities,
                queue,
            } => Some(SourceKey {
                connection: SourceConnection::Azure(connection.clone()),
                identities: identities.clone(),
                egress_allow,
                target: Target::StorageQueue(queue.clone()),
            }),
            MetricSource::ServiceBus {
                connection,
                identities,
                entity,
                ..
            } => Some(SourceKey {
                connection: SourceConnection::Azure(connection.clone()),
                identities: identities.clone(),
                egress_allow,
                target: Target::ServiceBus(entity.clone()),
            }),
            MetricSource::Stream(stream) => Some(SourceKey {
                connection: SourceConnection::Brokers(Brokers::of(stream)),
                identities: AppIdentities::default(),
                egress_allow,
                target: Target::Stream {
                    group: stream.consumer_group.clone(),
                    topic: stream.topic.clone(),
                },
            }),
            MetricSource::Unreadable(_) => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Backend {
    StorageQueues,
    ServiceBus,
    Kafka,
}

/// A service, a connection, whose identity it signs in as and under which tenant's egress
/// allowances: what one client serves.
type Signer = (Backend, SourceConnection, AppIdentities, AllowList);

#[derive(Clone)]
enum Client {
    Queues(StorageQueues),
    ServiceBus(ServiceBusAdmin),
    Kafka(Arc<streams::Cluster>),
}

/// What one read found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueReading {
    /// The backlog: messages, or a consumer group's lag.
    pub length: u64,
    /// Age of the oldest visible message, when asked for (incremental scaling).
    pub queue_time_ms: Option<u64>,
    /// A topic's partition count (streams), which caps the instances.
    pub partitions: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Reading {
    pub result: Result<QueueReading, String>,
    pub at: Instant,
    /// The source refused the read for lack of rights (Service Bus: a listen-only key or
    /// role); scaling falls back to the listeners' own load.
    pub listen_only: bool,
}

/// What a tick wants of one source.
#[derive(Clone, Debug, Default)]
struct Wanted {
    /// Some function on it scales incrementally and wants the oldest message's age.
    queue_time: bool,
    /// The entity settings to keep (Service Bus), from the first function declaring any.
    declared: Option<Declared>,
}

#[derive(Default)]
pub(crate) struct Shared {
    readings: HashMap<SourceKey, Reading>,
    in_flight: HashSet<SourceKey>,
    /// When updating an entity's settings last failed, so a failing update is retried slowly.
    reconcile_failed: HashMap<SourceKey, Instant>,
    /// Updates since the tick last took them, for its audit entries.
    reconciliations: Vec<Reconciliation>,
}

pub struct MetricReader {
    config: MetricsConfig,
    connector: ConnectorOptions,
    egress: Egress,
    clients: HashMap<Signer, Result<Client, String>>,
    shared: Arc<Mutex<Shared>>,
}

impl MetricReader {
    pub fn new(config: MetricsConfig, connector: ConnectorOptions, egress: Egress) -> MetricReader {
        MetricReader {
            config,
            connector,
            egress,
            clients: HashMap::new(),
            shared: Arc::default(),
        }
    }

    /// Starts reads for the stalest queues of `apps` and waits up to `budget` for them, each
    /// under its tenant's allowances (`egress_allow`, by tenant name; none when absent).
    pub async fn refresh(
        &mut self,
        apps: &[Arc<ScalableApp>],
        egress_allow: &HashMap<String, AllowList>,
        budget: Duration,
    ) {
        let now = Instant::now();
        // Every source wanted this tick, whether any function on it wants the queue time, and
        // the settings to keep (apps in key order, so the same function's declaration wins).
        let mut wanted: HashMap<SourceKey, Wanted> = HashMap::new();
        let mut running: Vec<&Arc<ScalableApp>> = apps.iter().filter(|a| a.running).collect();
        running.sort_by(|a, b| a.key.cmp(&b.key));
        let none = AllowList::default();
        for app in running {
            let allow = egress_allow.get(&app.key.tenant).unwrap_or(&none);
            for f in &app.functions {
                let Some(key) = SourceKey::of(&f.source, allow) else {
                    continue;
                };
                let entry = wanted.entry(key).or_default();
                entry.queue_time |= app.mode == ScaleMode::Incremental;
                if let MetricSource::ServiceBus {
                    declared: Some(settings),
                    ..
                } = &f.source
                    && entry.declared.is_none()
                {
                    entry.declared = Some(Declared {
                        app: app.key.clone(),
                        function: f.name.clone(),
                        settings: settings.as_ref().clone(),
                    });
                }
            }
        }
        let mut stale: HashMap<Signer, Vec<(Option<Instant>, SourceKey, Wanted)>> = HashMap::new();
        // Connections nobody names any more are dropped with their clients.
        let named: HashSet<Signer> = wanted.keys().map(SourceKey::signer).collect();
        {
            let mut shared = lock(&self.shared);
            // Forget queues nobody names any more.
            shared.readings.retain(|k, _| wanted.contains_key(k));
            for (key, want) in wanted {
                if shared.in_flight.contains(&key) {
                    continue;
                }
                let last = shared.readings.get(&key).map(|r| r.at);
                if last.is_some_and(|at| now.duration_since(at) < self.config.min_interval) {
                    continue;
                }
                stale
                    .entry(key.signer())
                    .or_default()
                    .push((last, key, want));
            }
        }
        self.clients.retain(|c, _| named.contains(c));
        let mut reads = JoinSet::new();
        for (signer, mut keys) in stale {
            // Never-read queues first, then the stalest.
            keys.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.target.cmp(&b.1.target)));
            keys.truncate(self.config.reads_per_account_per_tick);
            let client = self
                .clients
                .entry(signer.clone())
                .or_insert_with(|| connect(&signer, &self.connector, &self.egress))
                .clone();
            let shared = self.shared.clone();
            {
                let mut guard = lock(&shared);
                for (_, key, _) in &keys {
                    guard.in_flight.insert(key.clone());
                }
            }
            let concurrency = self.config.concurrency_per_account.max(1);
            reads.spawn(async move {
                futures::stream::iter(keys)
                    .for_each_concurrent(concurrency, |(_, key, want)| {
                        let client = client.clone();
                        let shared = shared.clone();
                        async move {
                            // Stamped with when the read began: the value is at least that
                            // fresh, and the next tick (one `min_interval` later) reads again
                            // rather than finding it a few milliseconds too young.
                            let at = Instant::now();
                            let (result, listen_only) = match (&client, &key.target) {
                                (Ok(Client::Queues(queues)), Target::StorageQueue(queue)) => {
                                    (read(queues, queue, want.queue_time).await, false)
                                }
                                (Ok(Client::ServiceBus(admin)), Target::ServiceBus(entity)) => {
                                    service_bus::read(admin, entity, &key, want.declared, &shared)
                                        .await
                                }
                                (Ok(Client::Kafka(cluster)), Target::Stream { group, topic }) => {
                                    (cluster.read(group, topic).await, false)
                                }
                                (Ok(_), _) => (
                                    Err("the connection serves another service".to_owned()),
                                    false,
                                ),
                                (Err(e), _) => (Err(e.clone()), false),
                            };
                            let mut guard = lock(&shared);
                            guard.in_flight.remove(&key);
                            guard.readings.insert(
                                key,
                                Reading {
                                    result,
                                    at,
                                    listen_only,
                                },
                            );
                        }
                    })
                    .await;
            });
        }
        let waited =
            tokio::time::timeout(budget, async { while reads.join_next().await.is_some() {} })
                .await;
        if waited.is_err() {
            tracing::debug!("metric reads still running after the tick's budget; used next tick");
            reads.detach_all();
        }
    }

    /// The latest reading of a function's source under its tenant's allowances (None: never
    /// read yet).
    pub fn reading(&self, source: &MetricSource, egress_allow: &AllowList) -> Option<Reading> {
        match (SourceKey::of(source, egress_allow), source) {
            (Some(key), _) => lock(&self.shared).readings.get(&key).cloned(),
            (None, MetricSource::Unreadable(why)) => Some(Reading {
                result: Err(why.clone()),
                at: Instant::now(),
                listen_only: false,
            }),
            (None, _) => None,
        }
    }

    /// The entity updates made since the last call, for the audit log.
    pub fn take_reconciliations(&self) -> Vec<Reconciliation> {
        std::mem::take(&mut lock(&self.shared).reconciliations)
    }
}

/// The client a signer's reads share. Under the scheduler's policy with the tenant's
/// allowances: a connection whose settings name a refused address by their text is not made
/// (the reading says which setting and why); names are checked as they resolve.
fn connect(
    signer: &Signer,
    connector: &ConnectorOptions,
    egress: &Egress,
) -> Result<Client, String> {
    let (service, connection, identities, allow) = signer;
    let egress = egress.for_tenant(allow);
    let options = ConnectorOptions {
        egress: Some(egress.clone()),
        ..connector.clone()
    };
    match (service, connection) {
        (Backend::StorageQueues, SourceConnection::Azure(connection)) => {
            egress.check_destinations(&destinations::of_connection(connection))?;
            StorageQueues::connect_for_app(connection, &options, identities)
                .map(Client::Queues)
                .map_err(|e| e.to_string())
        }
        (Backend::ServiceBus, SourceConnection::Azure(connection)) => {
            egress.check_destinations(&destinations::of_connection(connection))?;
            ServiceBusAdmin::connect_for_app(connection, &options, identities)
                .map(Client::ServiceBus)
                .map_err(|e| e.to_string())
        }
        (Backend::Kafka, SourceConnection::Brokers(brokers)) => Ok(Client::Kafka(Arc::new(
            streams::Cluster::new(brokers, egress),
        ))),
        _ => Err("the connection serves another service".to_owned()),
    }
}

pub(crate) fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    // A panic while holding the lock leaves plain data behind; keep using it.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

async fn read(
    queues: &StorageQueues,
    name: &str,
    queue_time: bool,
) -> Result<QueueReading, String> {
    let queue = queues.queue(name).map_err(|e| e.to_string())?;
    let length = match queue.approximate_length().await {
        Ok(length) => length,
        // A queue nobody has created yet holds no backlog.
        Err(QueueError::QueueNotFound { .. }) => {
            return Ok(QueueReading {
                length: 0,
                queue_time_ms: queue_time.then_some(0),
                partitions: None,
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
        length,
        queue_time_ms,
        partitions: None,
    })
}
