//! The test harness: a scratch database with a tenant, Azurite, a recording handler, apps
//! written through the store as the API writes them, and an in-process worker.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};
use shoal_connectors::{ConnectorOptions, Queue, QueueMessage, StorageQueues};
use shoal_domain::apps::AppSpec;
use shoal_domain::circuit_breaker::BreakerCause;
use shoal_domain::connection::{ConnectionKind, resolve};
use shoal_domain::names::TenantName;
use shoal_domain::settings::settings_to_store;
use shoal_domain::webhooks::WebhookSecret;
use shoal_store::assignments::{self, AssignmentRecord, InstanceKey};
use shoal_store::breakers::{self, FunctionRef};
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{PoolConfig, connect_lazy, migrate};
use shoal_store::tenants::TenantWrite;
use shoal_store::{
    Precondition, TenantId, apps, begin_platform, begin_tenant, functions, leadership,
    signing_secrets, tenants,
};
use shoal_testkit::ScratchDatabase;
use shoal_testkit::azurite::Azurite;
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use shoal_worker::{Hosting, Worker, WorkerConfig, WorkerHandle};
use tokio_util::sync::CancellationToken;

pub const TENANT: &str = "contoso";
pub const APP: &str = "orders";

pub struct Harness {
    /// Kept so the database lives (and is dropped) with the harness.
    _db: ScratchDatabase,
    /// For worker processes (services/shoal/tests/worker_process.rs includes this file).
    #[allow(dead_code)]
    pub database_url: String,
    #[allow(dead_code)]
    pub secret_key: SecretKey,
    pub pool: sqlx::PgPool,
    pub cipher: Cipher,
    pub azurite: Azurite,
    pub handler: RecordingHandler,
    /// The tests' own client for Azurite, by connection string.
    pub queues: StorageQueues,
}

pub struct RunningWorker {
    pub stop: CancellationToken,
    pub handle: WorkerHandle,
    pub stats: std::sync::Arc<shoal_worker::StatsRegistry>,
}

impl RunningWorker {
    pub async fn shut_down(self) -> Result<()> {
        self.stop.cancel();
        tokio::time::timeout(Duration::from_secs(30), self.handle.stopped())
            .await
            .context("worker did not stop")?
    }
}

impl Harness {
    pub async fn start(behaviour: Behaviour) -> Result<Harness> {
        Self::start_with(Azurite::start().await?, behaviour).await
    }

    pub async fn start_with(azurite: Azurite, behaviour: Behaviour) -> Result<Harness> {
        Self::start_on(&shoal_testkit::admin_url(), azurite, behaviour).await
    }

    /// A harness whose scratch database lives on the Postgres server at `admin_url` (e.g. a
    /// private cluster a test restarts).
    pub async fn start_on(
        admin_url: &str,
        azurite: Azurite,
        behaviour: Behaviour,
    ) -> Result<Harness> {
        let db = ScratchDatabase::create(admin_url, "shoal_worker").await?;
        migrate(db.url()).await?;
        let pool = connect_lazy(db.url(), &PoolConfig::default())?;
        let secret_key = SecretKey::generate();
        let cipher = Cipher::new(&secret_key);
        put_tenant(&pool, &[]).await?;
        let queues = if azurite.is_https() {
            connect_queues(
                &identity_settings(&azurite),
                &ConnectorOptions {
                    extra_root_ca_pem: Some(azurite.ca_pem().as_bytes().to_vec()),
                    ..ConnectorOptions::default()
                },
            )?
        } else {
            StorageQueues::from_connection_string(
                &azurite.connection_string(),
                &ConnectorOptions::default(),
            )?
        };
        Ok(Harness {
            handler: RecordingHandler::start(behaviour).await?,
            database_url: db.url().to_owned(),
            secret_key,
            _db: db,
            pool,
            cipher,
            azurite,
            queues,
        })
    }

    /// Replaces the tenant's egress allowances, as a platform admin's write does.
    #[allow(dead_code)]
    pub async fn set_egress_allow(&self, allow: &[&str]) -> Result<()> {
        put_tenant(&self.pool, allow).await
    }

    pub fn queue(&self, name: &str) -> Queue {
        self.queues.queue(name).expect("valid queue name")
    }

    /// Creates the queue and enqueues `text` as is.
    pub async fn enqueue(&self, queue: &str, text: &str) -> Result<()> {
        let q = self.queue(queue);
        q.create_if_missing().await?;
        q.enqueue(text).await?;
        Ok(())
    }

    /// Writes the app `APP` with this `hostConfig`, the storage connection and the handler.
    pub async fn put_app(&self, host_config: Value, extra: Value) -> Result<()> {
        self.put_app_named(APP, host_config, extra).await
    }

    /// The app settings that reach Azurite: a connection string, or over HTTPS an identity.
    pub fn storage_settings(&self) -> Value {
        if self.azurite.is_https() {
            return Value::Object(
                identity_settings(&self.azurite)
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect(),
            );
        }
        json!({"AzureWebJobsStorage": self.azurite.connection_string()})
    }

    pub async fn put_app_named(&self, app: &str, host_config: Value, extra: Value) -> Result<()> {
        let mut body = json!({
            "handler": {"url": self.handler.url().as_str(), "timeoutSeconds": 5},
            "appSettings": self.storage_settings(),
            "hostConfig": host_config,
        });
        merge(&mut body, extra);
        let written = AppSpec::parse(app, &body).map_err(|e| anyhow::anyhow!("{e:?}"))?;
        let stored = settings_to_store(&written.spec.app_settings, &[])
            .map_err(|e| anyhow::anyhow!("{e:?}"))?;
        let tenant = tenant();
        let mut tx = begin_tenant(&self.pool, &tenant).await?;
        apps::put(
            &mut tx,
            &tenant,
            &self.cipher,
            app,
            &written.stored,
            &stored,
            Precondition::None,
        )
        .await?;
        shoal_store::commit(tx).await?;
        Ok(())
    }

    /// The app with `queues` as its `host.json` queue settings, and `function` on the queue
    /// `jobs` with `extra` beside its bindings (`retry`, `circuitBreaker`).
    pub async fn put_jobs_function(
        &self,
        queues: Value,
        function: &str,
        extra: Value,
    ) -> Result<()> {
        self.put_app(json!({"extensions": {"queues": queues}}), json!({}))
            .await?;
        let mut body = json!({"bindings": queue_trigger("jobs")});
        merge(&mut body, extra);
        self.put_function_body(APP, function, body).await
    }

    pub async fn put_function(&self, name: &str, bindings: Value) -> Result<()> {
        self.put_function_in(APP, name, bindings).await
    }

    pub async fn put_function_in(&self, app: &str, name: &str, bindings: Value) -> Result<()> {
        self.put_function_body(app, name, json!({"bindings": bindings}))
            .await
    }

    /// A function with a whole `function.json` body (`bindings`, `retry`, …).
    pub async fn put_function_body(&self, app: &str, name: &str, body: Value) -> Result<()> {
        let tenant = tenant();
        let mut tx = begin_tenant(&self.pool, &tenant).await?;
        functions::put(&mut tx, &tenant, app, name, &body, Precondition::None).await?;
        shoal_store::commit(tx).await?;
        Ok(())
    }

    pub async fn secret(&self) -> Result<WebhookSecret> {
        let tenant = tenant();
        let mut tx = begin_tenant(&self.pool, &tenant).await?;
        let secret = signing_secrets::get_or_create(&mut tx, &tenant, &self.cipher, APP).await?;
        shoal_store::commit(tx).await?;
        Ok(secret)
    }

    /// A worker hosting one instance of every running app (no scheduler), re-reading them
    /// every 200 ms.
    pub fn worker_config(&self, name: &str) -> WorkerConfig {
        let mut config = self.assigned_worker_config(name);
        config.hosting = Hosting::AllApps;
        config.refresh_interval = Duration::from_millis(200);
        config
    }

    /// A worker hosting what is assigned to it (see [`Harness::lead`] and
    /// [`Harness::assign`]). It re-reads only every minute, so what it does within the test's
    /// time comes from notifications.
    pub fn assigned_worker_config(&self, name: &str) -> WorkerConfig {
        let mut config = WorkerConfig::new(name);
        assert_eq!(config.hosting, Hosting::Assigned);
        config.refresh_interval = Duration::from_secs(60);
        config.heartbeat_interval = Some(Duration::from_millis(200));
        config.drain_deadline = Duration::from_secs(10);
        // The suites' handlers listen on loopback; the worker is strict unless told.
        config.egress = shoal_egress::Egress::new(shoal_domain::egress::EgressPolicy::new(
            shoal_domain::egress::AllowList::parse(shoal_testkit::EGRESS_ALLOW_LOOPBACK).unwrap(),
            Vec::new(),
        ));
        if self.azurite.is_https() {
            config.connector = ConnectorOptions {
                extra_root_ca_pem: Some(self.azurite.ca_pem().as_bytes().to_vec()),
                ..ConnectorOptions::default()
            };
        }
        config
    }

    pub fn start_worker(&self, config: WorkerConfig) -> Result<RunningWorker> {
        self.start_worker_on(config, self.pool.clone())
    }

    /// A worker with its own pool (e.g. through a proxy that can cut Postgres off).
    pub fn start_worker_on(
        &self,
        config: WorkerConfig,
        pool: sqlx::PgPool,
    ) -> Result<RunningWorker> {
        let worker = Worker::new(config, pool, self.cipher.clone());
        let stats = worker.stats();
        let stop = CancellationToken::new();
        let handle = worker.start(stop.clone())?;
        Ok(RunningWorker {
            stop,
            handle,
            stats,
        })
    }

    /// Waits until `queue` holds `n` messages (approximately, as Azure counts), then receives
    /// and returns them (invisible for a minute).
    pub async fn wait_for_messages(
        &self,
        queue: &str,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<QueueMessage>> {
        let q = self.queue(queue);
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let len = match q.approximate_length().await {
                Ok(len) => len as usize,
                Err(shoal_connectors::QueueError::QueueNotFound { .. }) => 0,
                Err(e) => return Err(e.into()),
            };
            if len >= n {
                return Ok(q.receive(32, Duration::from_secs(60)).await?);
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "{queue} has {len} messages, expected {n}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Receives one message (invisible for `visibility`) as soon as one is visible.
    pub async fn receive_when_visible(
        &self,
        queue: &str,
        visibility: Duration,
        timeout: Duration,
    ) -> Result<QueueMessage> {
        let q = self.queue(queue);
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(message) = q.receive(1, visibility).await?.into_iter().next() {
                return Ok(message);
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "no message became visible on {queue}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until the listener of `function` has started `n` polls.
    pub async fn wait_for_polls(
        &self,
        worker: &RunningWorker,
        function: &str,
        n: usize,
        timeout: Duration,
    ) -> Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut seen = Vec::new();
        loop {
            let last = worker
                .stats
                .reports()
                .into_iter()
                .find(|r| r.function == function)
                .and_then(|r| r.last_poll);
            if let Some(at) = last
                && seen.last() != Some(&at)
            {
                seen.push(at);
            }
            if seen.len() >= n {
                return Ok(());
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "{function} polled {} times, expected {n}",
                seen.len()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Plays the scheduler's leader: takes the lease as `holder` (after `previous`, if given,
    /// gives it up) and returns the new epoch.
    #[allow(dead_code)]
    pub async fn lead(&self, holder: &str, previous: Option<(&str, i64)>) -> Result<i64> {
        let mut tx = begin_platform(&self.pool).await?;
        if let Some((previous, epoch)) = previous {
            leadership::release(&mut tx, previous, epoch).await?;
        }
        let lease = leadership::acquire_or_renew(&mut tx, holder, Duration::from_secs(600))
            .await?
            .context("another leader holds the lease")?;
        shoal_store::commit(tx).await?;
        Ok(lease.epoch)
    }

    /// Writes assignments as the leader `holder` of `epoch` does: `place` puts
    /// `(app, instance)` on a worker, `remove` takes `(app, instance)` away.
    #[allow(dead_code)]
    pub async fn assign(
        &self,
        (holder, epoch): (&str, i64),
        place: &[(&str, u32, &str)],
        remove: &[(&str, u32)],
    ) -> Result<()> {
        let upserts: Vec<AssignmentRecord> = place
            .iter()
            .map(|(app, instance, worker)| AssignmentRecord {
                tenant: TENANT.into(),
                app: (*app).into(),
                instance: *instance,
                worker: (*worker).into(),
                epoch,
            })
            .collect();
        let removals: Vec<InstanceKey> = remove
            .iter()
            .map(|(app, instance)| InstanceKey {
                tenant: TENANT.into(),
                app: (*app).into(),
                instance: *instance,
            })
            .collect();
        let mut tx = begin_platform(&self.pool).await?;
        leadership::fence(&mut tx, holder, epoch).await?;
        assignments::apply(&mut tx, epoch, &upserts, &removals).await?;
        shoal_store::commit(tx).await?;
        Ok(())
    }

    /// Which worker holds the claim on `(app, instance)`, if any.
    #[allow(dead_code)]
    pub async fn claim_holder(&self, app: &str, instance: i32) -> Result<Option<String>> {
        Ok(sqlx::query_scalar(
            "select worker from instance_claims
             where tenant_id = $1 and app_name = $2 and instance = $3",
        )
        .bind(TENANT)
        .bind(app)
        .bind(instance)
        .fetch_optional(&self.pool)
        .await?)
    }

    /// The tenant's queue messages parked for a far-off retry (read as the tenant, through its
    /// row security).
    pub async fn parked_retries(&self) -> Result<i64> {
        let id = tenant();
        let mut tx = begin_tenant(&self.pool, &id).await?;
        let count = sqlx::query_scalar("select count(*) from parked_retries where tenant_id = $1")
            .bind(id.as_str())
            .fetch_one(&mut *tx)
            .await?;
        shoal_store::commit(tx).await?;
        Ok(count)
    }

    pub async fn wait_until_empty(&self, queue: &str, timeout: Duration) -> Result<()> {
        let q = self.queue(queue);
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let len = q.approximate_length().await?;
            if len == 0 {
                return Ok(());
            }
            anyhow::ensure!(
                tokio::time::Instant::now() < deadline,
                "{queue} still has {len} messages"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The listeners `worker` runs for `app` as `(instance, status)`.
#[allow(dead_code)]
pub fn listeners_of(worker: &RunningWorker, app: &str) -> Vec<(u32, String)> {
    worker
        .stats
        .reports()
        .into_iter()
        .filter(|r| r.app == app)
        .map(|r| (r.instance, r.status))
        .collect()
}

/// Waits until `worker` is listening for instance `instance` of `app`.
#[allow(dead_code)]
pub async fn wait_listening(
    worker: &RunningWorker,
    app: &str,
    instance: u32,
    timeout: Duration,
) -> Result<()> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let listeners = listeners_of(worker, app);
        if listeners.contains(&(instance, "listening".to_owned())) {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "not listening for {app}#{instance} after {timeout:?}: {listeners:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Waits until `worker` runs no listener for `app`.
#[allow(dead_code)]
pub async fn wait_not_listening(
    worker: &RunningWorker,
    app: &str,
    timeout: Duration,
) -> Result<()> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let listeners = listeners_of(worker, app);
        if listeners.is_empty() {
            return Ok(());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "still listening for {app} after {timeout:?}: {listeners:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Creates or replaces the suite's tenant with these egress allowances.
async fn put_tenant(pool: &sqlx::PgPool, egress_allow: &[&str]) -> Result<()> {
    let mut tx = begin_platform(pool).await?;
    tenants::put(
        &mut tx,
        TENANT,
        &TenantWrite {
            display_name: "Contoso".into(),
            limits: Default::default(),
            allow_host_identity: false,
            egress_allow: egress_allow.iter().map(|s| (*s).to_owned()).collect(),
        },
        Precondition::None,
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(())
}

pub fn tenant() -> TenantId {
    TenantId::new(TenantName::parse(TENANT).expect("valid tenant"))
}

/// An identity-based (`clientsecret`) connection under `AzureWebJobsStorage__…` to an Azurite
/// started with OAuth, through its token endpoint.
pub fn identity_settings(azurite: &Azurite) -> BTreeMap<String, String> {
    azurite
        .client_secret_settings("AzureWebJobsStorage")
        .into_iter()
        .collect()
}

fn connect_queues(
    settings: &BTreeMap<String, String>,
    options: &ConnectorOptions,
) -> Result<StorageQueues> {
    let spec = resolve(ConnectionKind::StorageQueue, None, settings)?;
    Ok(StorageQueues::connect(&spec, options)?)
}

fn merge(into: &mut Value, extra: Value) {
    if let (Value::Object(into), Value::Object(extra)) = (into, extra) {
        for (k, v) in extra {
            into.insert(k, v);
        }
    }
}

pub fn base64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

pub fn queue_trigger(queue: &str) -> Value {
    json!([{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": queue}])
}

/// Pauses or resumes a function's circuit breaker by hand, as the API's pause/resume does.
pub async fn set_by_hand(h: &Harness, function: &str, cause: BreakerCause) -> anyhow::Result<()> {
    let id = tenant();
    let mut tx = shoal_store::begin_tenant(&h.pool, &id).await?;
    breakers::set_by_hand(
        &mut tx,
        FunctionRef {
            tenant: &id,
            app: APP,
            function,
        },
        cause,
        "test",
    )
    .await?;
    shoal_store::commit(tx).await?;
    Ok(())
}
