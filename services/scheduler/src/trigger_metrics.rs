//! Trigger metrics for the scale math: storage queue lengths (and, for incremental scaling,
//! the age of the oldest visible message, see [`storage_queue`]), Service Bus active message
//! counts (see [`service_bus`]), stream consumer-group lags (see [`streams`]) and RabbitMQ
//! queue depths (see [`rabbitmq`]), read through the connectors. Each kind of source is a
//! module implementing [`MetricKind`] and a line in [`KINDS`]; this one keeps what holds for
//! all of them.
//!
//! Reads are pure reads: nothing on a tenant's source changes because the scheduler looked at
//! it (keeping a Service Bus entity's declared settings is a step of its own, after the
//! leader's fence: `entity_upkeep`).
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

mod rabbitmq;
mod service_bus;
mod storage_queue;
mod streams;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::future::BoxFuture;
use shoal_connectors::ConnectorOptions;
use shoal_domain::connection::ConnectionSpec;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::egress::AllowList;
use shoal_domain::scale::ScaleMode;
use shoal_domain::stream_trigger::source::is_secret_property;
use shoal_domain::trigger_source::{TriggerSource, without_credentials};
use shoal_egress::Egress;
use tokio::task::JoinSet;

use crate::catalog::{ScalableApp, ScalableFunction};
use crate::config::MetricsConfig;

pub(crate) use service_bus::admin as service_bus_admin;

/// How metrics read one kind of trigger source: the account a source is read through, and a
/// client for an account. One module a kind, and a line in [`KINDS`].
trait MetricKind: Send + Sync {
    /// The kind of source it reads, as [`TriggerSource::kind`] names it (`storageQueue`, a
    /// broker's trigger `type`).
    fn source_kind(&self) -> &'static str;

    /// The account `source` is read through: sources of one kind on one account (with the same
    /// identities and egress allowances) share a client and the account's read budget.
    fn account(&self, source: &TriggerSource) -> Account;

    /// A client for `account`, signed in as `identities`, connecting only where `egress`
    /// allows. A connection whose settings name a refused address by their text is not made
    /// (the error says which setting and why).
    fn connect(
        &self,
        account: &Account,
        identities: &AppIdentities,
        egress: &Egress,
        options: &ConnectorOptions,
    ) -> Result<Arc<dyn MetricClient>, String>;

    /// Whether a reading may be refused for lack of rights, the planner then scaling on the
    /// listeners' own load (which the tick reads only when some function may need it).
    fn may_be_listen_only(&self) -> bool {
        false
    }
}

/// Whether `source`'s reading may be refused for lack of rights (see
/// [`MetricKind::may_be_listen_only`]).
pub fn may_be_listen_only(source: &TriggerSource) -> bool {
    kind_of(source).may_be_listen_only()
}

/// One account's client.
trait MetricClient: Send + Sync {
    /// Reads `source`'s backlog; `queue_time` asks for the oldest message's age too
    /// (incremental scaling). A pure read: nothing on the source changes.
    fn read<'a>(
        &'a self,
        source: &'a TriggerSource,
        queue_time: bool,
    ) -> BoxFuture<'a, Result<QueueReading, ReadFailure>>;
}

/// Every kind of source the scheduler reads, one line each.
const KINDS: &[&dyn MetricKind] = &[
    &storage_queue::StorageQueueMetrics,
    &service_bus::ServiceBusMetrics,
    &streams::StreamMetrics,
    &rabbitmq::RabbitMqMetrics,
];

/// The metric reads of `source`'s kind; a kind with none answers every read with why.
fn kind_of(source: &TriggerSource) -> &'static dyn MetricKind {
    let kind = source.kind();
    KINDS
        .iter()
        .copied()
        .find(|k| k.source_kind() == kind)
        .unwrap_or(&Unread)
}

/// A source whose kind has no metric reads: every read says so.
struct Unread;

impl MetricKind for Unread {
    fn source_kind(&self) -> &'static str {
        "unread"
    }

    fn account(&self, source: &TriggerSource) -> Account {
        Account::of_broker(source)
    }

    fn connect(
        &self,
        account: &Account,
        _identities: &AppIdentities,
        _egress: &Egress,
        _options: &ConnectorOptions,
    ) -> Result<Arc<dyn MetricClient>, String> {
        Err(format!("Shoal cannot read the backlog of {account:?} yet"))
    }
}

/// What one client serves: an Azure connection (storage account, namespace), or the client
/// properties of a service signed in to with properties (a stream's brokers). `Debug` masks
/// secrets.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Account {
    /// Boxed: the connection settings are far larger than a list of properties.
    Azure(Box<ConnectionSpec>),
    Properties(Properties),
    /// A broker reached by URI (see `TriggerSource::Broker`): its kind and the URI, a secret.
    Broker {
        kind: &'static str,
        uri: String,
    },
}

impl Account {
    /// The account of a broker source (any other source gives an empty property list).
    pub fn of_broker(source: &TriggerSource) -> Account {
        match source {
            TriggerSource::Broker(broker) => Account::Broker {
                kind: broker.kind,
                uri: broker.uri.clone(),
            },
            _ => Account::Properties(Properties::new(Vec::new())),
        }
    }
}

/// Client properties, sorted; `Debug` masks secret ones.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Properties(Vec<(String, String)>);

impl Properties {
    pub fn new(mut properties: Vec<(String, String)>) -> Properties {
        properties.sort();
        Properties(properties)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(k, v)| {
                let shown = if is_secret_property(k) {
                    "***"
                } else {
                    v.as_str()
                };
                format!("{k}={shown}")
            }))
            .finish()
    }
}

impl fmt::Debug for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Account::Azure(connection) => connection.fmt(f),
            Account::Properties(properties) => properties.fmt(f),
            Account::Broker { kind, uri } => {
                write!(f, "{kind} at {}", without_credentials(uri))
            }
        }
    }
}

/// A source as metrics know it: its kind, the account it is read through, and what it names.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceKey {
    kind: &'static str,
    account: Account,
    /// Part of the key: two tenants' identical settings sign in as different identities and
    /// must never share a client.
    identities: AppIdentities,
    /// The app's tenant's egress allowances, which the client connects under.
    egress_allow: AllowList,
    /// What the source reads on its account ([`TriggerSource::describe`]).
    target: String,
}

impl SourceKey {
    /// The key of a function's source, read under its tenant's egress allowances, signed in
    /// as the app's identities.
    pub fn of(
        source: &TriggerSource,
        identities: &AppIdentities,
        egress_allow: &AllowList,
    ) -> SourceKey {
        SourceKey {
            kind: source.kind(),
            account: kind_of(source).account(source),
            identities: identities.clone(),
            egress_allow: egress_allow.clone(),
            target: source.describe(),
        }
    }

    fn signer(&self) -> Signer {
        (
            self.kind,
            self.account.clone(),
            self.identities.clone(),
            self.egress_allow.clone(),
        )
    }
}

/// A kind of source, an account, whose identity it signs in as and under which tenant's
/// egress allowances: what one client serves.
type Signer = (&'static str, Account, AppIdentities, AllowList);

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

impl QueueReading {
    /// A backlog of `length` messages, and nothing else known.
    pub fn backlog(length: u64) -> QueueReading {
        QueueReading {
            length,
            queue_time_ms: None,
            partitions: None,
        }
    }
}

/// Why a read found nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ReadFailure {
    why: String,
    /// The source refused the read for lack of rights (Service Bus: a listen-only key or
    /// role).
    listen_only: bool,
}

impl From<String> for ReadFailure {
    fn from(why: String) -> ReadFailure {
        ReadFailure {
            why,
            listen_only: false,
        }
    }
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
#[derive(Clone, Debug)]
struct Wanted {
    /// The source, as the first function naming it resolved it.
    source: TriggerSource,
    /// Some function on it scales incrementally and wants the oldest message's age.
    queue_time: bool,
}

#[derive(Default)]
pub(crate) struct Shared {
    readings: HashMap<SourceKey, Reading>,
    in_flight: HashSet<SourceKey>,
}

pub struct MetricReader {
    config: MetricsConfig,
    connector: ConnectorOptions,
    egress: Egress,
    clients: HashMap<Signer, Result<Arc<dyn MetricClient>, String>>,
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
        // Every source wanted this tick, and whether any function on it wants the queue time.
        let mut wanted: HashMap<SourceKey, Wanted> = HashMap::new();
        let none = AllowList::default();
        for app in apps.iter().filter(|a| a.running) {
            let allow = egress_allow.get(&app.key.tenant).unwrap_or(&none);
            for f in &app.functions {
                let Ok(source) = &f.source else {
                    continue;
                };
                let key = SourceKey::of(source, &app.identities, allow);
                let entry = wanted.entry(key).or_insert_with(|| Wanted {
                    source: source.clone(),
                    queue_time: false,
                });
                entry.queue_time |= app.mode == ScaleMode::Incremental;
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
                .or_insert_with(|| {
                    connect(&signer, &keys[0].2.source, &self.connector, &self.egress)
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
                    .for_each_concurrent(concurrency, |(_, key, want)| {
                        let client = client.clone();
                        let shared = shared.clone();
                        async move {
                            // Stamped with when the read began: the value is at least that
                            // fresh, and the next tick (one `min_interval` later) reads again
                            // rather than finding it a few milliseconds too young.
                            let at = Instant::now();
                            let result = match &client {
                                Ok(client) => client.read(&want.source, want.queue_time).await,
                                Err(e) => Err(ReadFailure::from(e.clone())),
                            };
                            let listen_only = result.as_ref().is_err_and(|e| e.listen_only);
                            let mut guard = lock(&shared);
                            guard.in_flight.remove(&key);
                            guard.readings.insert(
                                key,
                                Reading {
                                    result: result.map_err(|e| e.why),
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

    /// The latest reading of `function`'s source, as `app`'s under its tenant's allowances
    /// (None: never read yet).
    pub fn reading(
        &self,
        app: &ScalableApp,
        function: &ScalableFunction,
        egress_allow: &AllowList,
    ) -> Option<Reading> {
        match &function.source {
            Ok(source) => {
                let key = SourceKey::of(source, &app.identities, egress_allow);
                lock(&self.shared).readings.get(&key).cloned()
            }
            Err(why) => Some(Reading {
                result: Err(why.clone()),
                at: Instant::now(),
                listen_only: false,
            }),
        }
    }
}

/// The client a signer's reads share, made by the source's kind under the scheduler's policy
/// with the tenant's allowances.
fn connect(
    signer: &Signer,
    source: &TriggerSource,
    connector: &ConnectorOptions,
    egress: &Egress,
) -> Result<Arc<dyn MetricClient>, String> {
    let (_, account, identities, allow) = signer;
    let egress = egress.for_tenant(allow);
    let options = ConnectorOptions {
        egress: Some(egress.clone()),
        ..connector.clone()
    };
    kind_of(source).connect(account, identities, &egress, &options)
}

pub(crate) fn lock(shared: &Mutex<Shared>) -> std::sync::MutexGuard<'_, Shared> {
    // A panic while holding the lock leaves plain data behind; keep using it.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
