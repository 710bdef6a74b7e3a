//! What the ingress needs to know about an app's HTTP-triggered functions, in memory: the
//! handler, the signing secret, each function's binding names and the app's limits. A request
//! in the steady state reads only this; Postgres is read when an app is first invoked and
//! again after it changed.
//!
//! Freshness: every change to an app, its settings, its functions or its signing secret
//! notifies `shoal_config` with `tenant/app` (migration 0004's triggers; regenerating the
//! secret updates the app's row), and the listener drops that entry. The listener proves it
//! is alive at least every second (a notification or a ping); when it has not for
//! [`DEAF_TOLERANCE`] an entry is trusted only that long after it was loaded, so a dead
//! connection costs at most a few seconds of staleness, never more. On every (re)connection
//! the whole catalog is dropped, because notifications sent meanwhile are lost.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use shoal_domain::apps::{AppSpec, AppState as RunState};
use shoal_domain::binding_kinds::http;
use shoal_domain::egress::AllowList;
use shoal_domain::functions::FunctionSpec;
use shoal_domain::invocation::forward::is_http_in_and_out;
use shoal_domain::invocation::http::HttpOutput;
use shoal_domain::rate_limit::TokenBucket;
use shoal_domain::webhook_limits::WebhookLimits;
use shoal_domain::webhooks::WebhookSecret;
use shoal_invoker::Invoker;
use shoal_store::crypto::Cipher;
use shoal_store::{StoreError, TenantId, apps, begin_tenant, functions, signing_secrets};

/// How long entries are trusted past the listener's last sign of life.
pub const DEAF_TOLERANCE: Duration = Duration::from_secs(3);
/// More entries than this (mostly names that do not exist) and the catalog starts over,
/// so a caller spraying random app names cannot grow it without bound.
const MAX_ENTRIES: usize = 10_000;

/// An app as the ingress sees it.
#[derive(Debug)]
pub struct HttpApp {
    pub tenant: TenantId,
    pub name: String,
    pub running: bool,
    pub handler: url::Url,
    /// The process's invoker with the tenant's egress allowances.
    pub invoker: Invoker,
    /// `min(handler.timeoutSeconds, hostConfig.functionTimeout)`, as for queue deliveries.
    pub timeout: Duration,
    pub secret: WebhookSecret,
    pub limits: WebhookLimits,
    /// Enabled HTTP-triggered functions by lower-cased name (function names match
    /// case-insensitively in URLs, as in Azure).
    functions: HashMap<String, Arc<HttpFunction>>,
    /// Shared with the entries that replace this one, so reloads do not refill it.
    bucket: Arc<Mutex<TokenBucket>>,
}

impl HttpApp {
    pub fn function(&self, name: &str) -> Option<&Arc<HttpFunction>> {
        self.functions.get(&name.to_ascii_lowercase())
    }

    /// Takes a request from the app's token bucket.
    pub fn admit(&self, now: Instant) -> Result<(), shoal_domain::rate_limit::RetryAfter> {
        lock(&self.bucket).try_acquire(now)
    }
}

#[derive(Debug)]
pub struct HttpFunction {
    /// As stored (the handler is called at `{handler}/{name}`).
    pub name: String,
    /// The trigger binding's name: `Data.<trigger>`.
    pub trigger: String,
    /// Upper-case methods the trigger allows; `None`: all.
    pub methods: Option<Vec<String>>,
    pub output: HttpOutputName,
    /// Every output binding's name: what the handler's `Outputs` may hold.
    pub outputs: Vec<String>,
    /// Outputs other than the HTTP response (queue, Service Bus …), which the ingress does not
    /// write yet.
    pub unwritten_outputs: Vec<String>,
    /// The request goes to the handler as is, not in the envelope: the app sets
    /// `customHandler.enableForwardingHttpRequest` and the function is HTTP in and out.
    pub forward: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HttpOutputName {
    Named(String),
    Return,
    None,
}

impl HttpFunction {
    pub fn http_output(&self) -> HttpOutput<'_> {
        match &self.output {
            HttpOutputName::Named(name) => HttpOutput::Named(name),
            HttpOutputName::Return => HttpOutput::Return,
            HttpOutputName::None => HttpOutput::None,
        }
    }

    pub fn allows(&self, method: &str) -> bool {
        self.methods
            .as_ref()
            .is_none_or(|methods| methods.iter().any(|m| m.eq_ignore_ascii_case(method)))
    }
}

struct Entry {
    loaded_at: Instant,
    valid: AtomicBool,
    /// `None`: there is no such app (remembered too, so unknown names cost no query each).
    app: Option<Arc<HttpApp>>,
}

pub struct Catalog {
    invoker: Invoker,
    pool: sqlx::PgPool,
    cipher: Cipher,
    entries: RwLock<HashMap<String, Arc<Entry>>>,
    buckets: Mutex<HashMap<String, Arc<Mutex<TokenBucket>>>>,
    /// One load at a time per app; concurrent misses wait for it instead of querying too.
    loading: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// Bumped by every invalidation: a load that overlapped one is used once, not kept.
    generation: AtomicU64,
    base: Instant,
    /// Milliseconds after `base` when the listener last proved it was receiving; 0: never.
    confirmed_ms: AtomicU64,
}

impl Catalog {
    /// Each app's entry calls its handler through `invoker` with the app's tenant's egress
    /// allowances added.
    pub fn new(pool: sqlx::PgPool, cipher: Cipher, invoker: Invoker) -> Catalog {
        Catalog {
            invoker,
            pool,
            cipher,
            entries: RwLock::new(HashMap::new()),
            buckets: Mutex::new(HashMap::new()),
            loading: Mutex::new(HashMap::new()),
            generation: AtomicU64::new(0),
            base: Instant::now(),
            confirmed_ms: AtomicU64::new(0),
        }
    }

    /// The app `tenant/app`, or `None` when it does not exist.
    pub async fn app(
        &self,
        tenant: &TenantId,
        app: &str,
    ) -> Result<Option<Arc<HttpApp>>, StoreError> {
        let key = format!("{tenant}/{app}");
        if let Some(found) = self.fresh(&key) {
            return Ok(found);
        }
        let gate = lock(&self.loading).entry(key.clone()).or_default().clone();
        let _loading = gate.lock().await;
        if let Some(found) = self.fresh(&key) {
            return Ok(found);
        }
        let generation = self.generation.load(Ordering::Acquire);
        let loaded = self.load(&key, tenant, app).await;
        if let Ok(loaded) = &loaded {
            let entry = Arc::new(Entry {
                loaded_at: Instant::now(),
                valid: AtomicBool::new(self.generation.load(Ordering::Acquire) == generation),
                app: loaded.clone(),
            });
            let mut entries = write(&self.entries);
            if entries.len() >= MAX_ENTRIES {
                entries.retain(|_, e| e.app.is_some());
                if entries.len() >= MAX_ENTRIES {
                    entries.clear();
                }
            }
            entries.insert(key.clone(), entry);
        }
        lock(&self.loading).remove(&key);
        loaded
    }

    fn fresh(&self, key: &str) -> Option<Option<Arc<HttpApp>>> {
        let entry = read(&self.entries).get(key)?.clone();
        if !entry.valid.load(Ordering::Acquire) {
            return None;
        }
        let confirmed =
            self.base + Duration::from_millis(self.confirmed_ms.load(Ordering::Acquire));
        let vouched = entry.loaded_at.max(confirmed);
        (vouched.elapsed() < DEAF_TOLERANCE).then(|| entry.app.clone())
    }

    /// The listener saw a change to `tenant/app`.
    /// `tenant/app`, or `tenant/` for every app of the tenant (its egress allowances changed).
    pub fn invalidate(&self, key: &str) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        let entries = read(&self.entries);
        if key.ends_with('/') {
            for (_, entry) in entries.iter().filter(|(k, _)| k.starts_with(key)) {
                entry.valid.store(false, Ordering::Release);
            }
        } else if let Some(entry) = entries.get(key) {
            entry.valid.store(false, Ordering::Release);
        }
    }

    /// The listener (re)connected: anything may have changed meanwhile.
    pub fn invalidate_all(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        write(&self.entries).clear();
    }

    /// The listener is receiving: everything it has not announced is unchanged until now.
    pub fn confirm_listening(&self) {
        let ms = u64::try_from(self.base.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.confirmed_ms.fetch_max(ms.max(1), Ordering::AcqRel);
    }

    async fn load(
        &self,
        key: &str,
        tenant: &TenantId,
        name: &str,
    ) -> Result<Option<Arc<HttpApp>>, StoreError> {
        let mut tx = begin_tenant(&self.pool, tenant).await?;
        let record = match apps::get(&mut tx, tenant, &self.cipher, name).await {
            Ok(record) => record,
            Err(StoreError::NotFound) => {
                lock(&self.buckets).remove(key);
                return Ok(None);
            }
            Err(other) => return Err(other),
        };
        // Created on first use, as the workers do; its notification then reloads this entry.
        let secret = signing_secrets::get_or_create(&mut tx, tenant, &self.cipher, name).await?;
        let functions = functions::all_of_app(&mut tx, tenant, name).await?;
        let stored_allow = shoal_store::tenants::egress_allow(&mut tx, tenant.as_str()).await?;
        shoal_store::commit(tx).await?;
        // Validated when written; one that no longer parses gives the tenant none (stricter).
        let egress_allow = AllowList::from_items(stored_allow.iter().map(String::as_str))
            .unwrap_or_else(|e| {
                tracing::error!(%tenant, error = %e, "a stored egress allowance no longer parses");
                AllowList::default()
            });

        let spec = AppSpec::parse(&record.name, &record.written_document())
            .map_err(|e| StoreError::Corrupt(format!("stored app {name}: {e}")))?
            .spec;
        let forwarding = spec
            .host_config
            .custom_handler
            .enable_forwarding_http_request;
        let functions = functions
            .iter()
            .filter_map(|f| {
                let parsed = FunctionSpec::parse(&f.name, &f.spec).ok()?.spec;
                let function = http_function(&f.name, &parsed, forwarding)?;
                Some((f.name.to_ascii_lowercase(), Arc::new(function)))
            })
            .collect();
        let limits = spec.webhooks;
        let bucket = {
            let mut buckets = lock(&self.buckets);
            let bucket = buckets.entry(key.to_owned()).or_insert_with(|| {
                Arc::new(Mutex::new(TokenBucket::new(
                    limits.requests_per_second,
                    limits.burst,
                    Instant::now(),
                )))
            });
            lock(bucket).reconfigure(limits.requests_per_second, limits.burst, Instant::now());
            bucket.clone()
        };
        Ok(Some(Arc::new(HttpApp {
            tenant: tenant.clone(),
            name: record.name,
            running: spec.state == RunState::Running,
            timeout: Duration::from_secs(u64::from(spec.handler.timeout_seconds))
                .min(spec.host_config.function_timeout.as_duration()),
            handler: spec.handler.url,
            invoker: self.invoker.for_tenant(&egress_allow),
            secret,
            limits,
            functions,
            bucket,
        })))
    }
}

/// The ingress's view of an enabled function with an `httpTrigger`; `None` for any other.
fn http_function(name: &str, spec: &FunctionSpec, forwarding: bool) -> Option<HttpFunction> {
    if !spec.runs() {
        return None;
    }
    let trigger = spec.trigger()?;
    // A stored binding was checked when it was read; one its type can no longer read is not
    // served rather than half-served.
    let trigger = http::trigger_of(trigger)?.ok()?;
    let mut output = HttpOutputName::None;
    let mut outputs = Vec::new();
    let mut unwritten_outputs = Vec::new();
    for binding in spec.bindings.iter().filter(|b| !b.is_trigger()) {
        let binding_name = binding.name().as_str().to_owned();
        match binding.type_name() {
            http::OUTPUT_TYPE if output == HttpOutputName::None => {
                output = if binding.name().is_return() {
                    HttpOutputName::Return
                } else {
                    HttpOutputName::Named(binding_name.clone())
                };
            }
            _ => unwritten_outputs.push(binding_name.clone()),
        }
        outputs.push(binding_name);
    }
    Some(HttpFunction {
        name: name.to_owned(),
        trigger: trigger.name.as_str().to_owned(),
        methods: trigger
            .methods
            .as_ref()
            .map(|methods| methods.iter().map(|m| m.to_ascii_uppercase()).collect()),
        output,
        outputs,
        unwritten_outputs,
        forward: forwarding && is_http_in_and_out(spec),
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn read<T>(l: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|p| p.into_inner())
}

fn write<T>(l: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn function(bindings: serde_json::Value) -> Option<HttpFunction> {
        let spec = FunctionSpec::parse("f", &json!({ "bindings": bindings }))
            .unwrap()
            .spec;
        http_function("f", &spec, false)
    }

    #[test]
    fn http_triggered_functions_with_their_outputs() {
        let f = function(json!([
            {"type": "httpTrigger", "direction": "in", "name": "req", "methods": ["get", "Post"]},
            {"type": "http", "direction": "out", "name": "res"},
            {"type": "queue", "direction": "out", "name": "msg", "queueName": "orders"}
        ]))
        .unwrap();
        assert_eq!(f.trigger, "req");
        assert_eq!(f.output, HttpOutputName::Named("res".into()));
        assert_eq!(f.outputs, ["res", "msg"]);
        assert_eq!(f.unwritten_outputs, ["msg"]);
        assert!(f.allows("POST") && f.allows("get") && !f.allows("DELETE"));

        let r = function(json!([
            {"type": "httpTrigger", "direction": "in", "name": "req"},
            {"type": "http", "direction": "out", "name": "$return"}
        ]))
        .unwrap();
        assert_eq!(r.output, HttpOutputName::Return);
        assert!(r.allows("PATCH"));
    }

    #[test]
    fn only_http_in_and_out_functions_of_a_forwarding_app_forward() {
        let spec = |bindings: serde_json::Value| {
            FunctionSpec::parse("f", &json!({ "bindings": bindings }))
                .unwrap()
                .spec
        };
        let in_out = spec(json!([
            {"type": "httpTrigger", "direction": "in", "name": "req"},
            {"type": "http", "direction": "out", "name": "res"}
        ]));
        assert!(http_function("f", &in_out, true).unwrap().forward);
        assert!(!http_function("f", &in_out, false).unwrap().forward);
        let with_queue = spec(json!([
            {"type": "httpTrigger", "direction": "in", "name": "req"},
            {"type": "http", "direction": "out", "name": "res"},
            {"type": "queue", "direction": "out", "name": "q", "queueName": "orders"}
        ]));
        assert!(!http_function("f", &with_queue, true).unwrap().forward);
    }

    #[test]
    fn other_triggers_are_not_http_functions() {
        assert!(
            function(json!([
                {"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"}
            ]))
            .is_none()
        );
    }
}
