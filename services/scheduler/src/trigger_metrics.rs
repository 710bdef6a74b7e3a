//! Trigger metrics for the scale math: storage queue lengths (and, for incremental scaling,
//! the age of the oldest visible message), read through the connectors.
//!
//! Reads are cached and staggered: a queue is read at most every `min_interval`, one account
//! gets at most `reads_per_account_per_tick` reads per tick (stalest first, so every queue
//! takes its turn) with `concurrency_per_account` in flight, and a tick waits only its budget
//! for them. A read still running then lands in the cache for the next tick instead of
//! delaying every app's decision. Queues named by several functions or apps are read once.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::StreamExt;
use shoal_connectors::{ConnectorOptions, QueueError, StorageQueues};
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::scale::ScaleMode;
use tokio::task::JoinSet;

use crate::catalog::{MetricSource, ScalableApp};
use crate::config::MetricsConfig;

/// A queue as metrics know it: the connection it is read with and its name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceKey {
    pub connection: ConnectionSpec,
    /// Part of the key: two tenants' identical settings sign in as different identities and
    /// must never share a client.
    pub identities: AppIdentities,
    pub queue: String,
}

impl SourceKey {
    fn signer(&self) -> Signer {
        (self.connection.clone(), self.identities.clone())
    }
}

/// A connection and whose identity it signs in as: what one client serves.
type Signer = (ConnectionSpec, AppIdentities);

/// What one read found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueReading {
    pub length: u64,
    /// Age of the oldest visible message, when asked for (incremental scaling).
    pub queue_time_ms: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct Reading {
    pub result: Result<QueueReading, String>,
    pub at: Instant,
}

#[derive(Default)]
struct Shared {
    readings: HashMap<SourceKey, Reading>,
    in_flight: HashSet<SourceKey>,
}

pub struct MetricReader {
    config: MetricsConfig,
    connector: ConnectorOptions,
    clients: HashMap<Signer, Result<StorageQueues, String>>,
    shared: Arc<Mutex<Shared>>,
}

impl MetricReader {
    pub fn new(config: MetricsConfig, connector: ConnectorOptions) -> MetricReader {
        MetricReader {
            config,
            connector,
            clients: HashMap::new(),
            shared: Arc::default(),
        }
    }

    /// Starts reads for the stalest queues of `apps` and waits up to `budget` for them.
    pub async fn refresh(&mut self, apps: &[Arc<ScalableApp>], budget: Duration) {
        let now = Instant::now();
        // Every queue wanted this tick, and whether any function on it wants the queue time.
        let mut wanted: HashMap<SourceKey, bool> = HashMap::new();
        for app in apps.iter().filter(|a| a.running) {
            for f in &app.functions {
                if let MetricSource::StorageQueue {
                    connection,
                    identities,
                    queue,
                } = &f.source
                {
                    let key = SourceKey {
                        connection: connection.as_ref().clone(),
                        identities: identities.clone(),
                        queue: queue.clone(),
                    };
                    *wanted.entry(key).or_default() |= app.mode == ScaleMode::Incremental;
                }
            }
        }
        let mut stale: HashMap<Signer, Vec<(Option<Instant>, SourceKey, bool)>> = HashMap::new();
        // Connections nobody names any more are dropped with their clients.
        let named: HashSet<Signer> = wanted.keys().map(SourceKey::signer).collect();
        {
            let mut shared = lock(&self.shared);
            // Forget queues nobody names any more.
            shared.readings.retain(|k, _| wanted.contains_key(k));
            for (key, queue_time) in wanted {
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
                    .push((last, key, queue_time));
            }
        }
        self.clients.retain(|c, _| named.contains(c));
        let mut reads = JoinSet::new();
        for (signer, mut keys) in stale {
            // Never-read queues first, then the stalest.
            keys.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.queue.cmp(&b.1.queue)));
            keys.truncate(self.config.reads_per_account_per_tick);
            let client = self
                .clients
                .entry(signer.clone())
                .or_insert_with(|| {
                    let (connection, identities) = &signer;
                    StorageQueues::connect_for_app(connection, &self.connector, identities)
                        .map_err(|e| e.to_string())
                })
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
                    .for_each_concurrent(concurrency, |(_, key, queue_time)| {
                        let client = client.clone();
                        let shared = shared.clone();
                        async move {
                            // Stamped with when the read began: the value is at least that
                            // fresh, and the next tick (one `min_interval` later) reads again
                            // rather than finding it a few milliseconds too young.
                            let at = Instant::now();
                            let result = match &client {
                                Ok(queues) => read(queues, &key.queue, queue_time).await,
                                Err(e) => Err(e.clone()),
                            };
                            let mut guard = lock(&shared);
                            guard.in_flight.remove(&key);
                            guard.readings.insert(key, Reading { result, at });
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

    /// The latest reading of a function's source (None: never read yet).
    pub fn reading(&self, source: &MetricSource) -> Option<Reading> {
        match source {
            MetricSource::StorageQueue {
                connection,
                identities,
                queue,
            } => lock(&self.shared)
                .readings
                .get(&SourceKey {
                    connection: connection.as_ref().clone(),
                    identities: identities.clone(),
                    queue: queue.clone(),
                })
                .cloned(),
            MetricSource::Unreadable(why) => Some(Reading {
                result: Err(why.clone()),
                at: Instant::now(),
            }),
        }
    }
}

fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
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
    })
}
