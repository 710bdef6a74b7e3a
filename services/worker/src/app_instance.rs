//! Runs one hosted app instance: a listener per enabled function whose trigger kind the worker
//! knows (see `triggers`), each with its outputs bound and a statistics line. A function whose
//! trigger or outputs cannot be bound does not listen; its statistics line says why. The
//! instance runs until its `stop` token is cancelled and its listeners have drained.

use std::sync::Arc;
use std::time::Duration;

use shoal_domain::bindings::Binding;
use shoal_invoker::Invoker;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::bind_error::BindError;
use crate::breaker::held::HeldMessages;
use crate::breaker::{Breakers, FunctionKey};
use crate::concurrency::{CallSlots, SlotLease};
use crate::config::WorkerConfig;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::invocation::FunctionHost;
use crate::outputs;
use crate::stats::{ListenerKey, ListenerStats, StatsRegistry};
use crate::triggers::{self, kind::TriggerKind, kind::TriggerListener};
use crate::watcher::WriteWatcher;

/// What every hosted instance of the worker shares.
#[derive(Clone)]
pub struct Services {
    pub stats: Arc<StatsRegistry>,
    pub watcher: Arc<WriteWatcher>,
    pub breakers: Arc<Breakers>,
    pub invoker: Invoker,
    /// For what deliveries keep in Postgres (the messages a breaker held back).
    pub pool: sqlx::PgPool,
}

pub async fn run_app(
    app: HostedApp,
    config: WorkerConfig,
    services: Services,
    stop: CancellationToken,
    abandon: CancellationToken,
) {
    let stats = &services.stats;
    // The app's handler and connections get its tenant's allowances on top of the worker's.
    let services = &Services {
        invoker: services.invoker.for_tenant(&app.egress_allow),
        ..services.clone()
    };
    // A handler the egress policy refuses by its text is never called: its listeners do not
    // start, so messages stay in the queue instead of failing into poison.
    let handler = services
        .invoker
        .egress()
        .check_url(&app.handler.url)
        .map_err(|refusal| refusal.to_string());
    let mut listeners = JoinSet::new();
    let mut lines = Vec::new();
    for function in app.functions.iter().filter(|f| f.spec.runs()) {
        let Some(trigger) = function.spec.trigger() else {
            continue;
        };
        // httpTrigger functions are invoked through the webhook ingress, not a listener.
        if trigger.answers_its_caller() {
            continue;
        }
        // A trigger nothing in Shoal runs (`Binding::has_runner`, e.g. cosmosDBTrigger) has no
        // listener and no line: a "stopped" line would make the whole app's health an error,
        // while its diagnostics already say the function runs nowhere and gets no instances.
        let Some(kind) = triggers::kind_of(trigger) else {
            continue;
        };
        let key = key(
            &app,
            function,
            kind.binding_type(),
            kind.source(trigger, &app),
        );
        let line = stats.register(key, "starting");
        let bound =
            bind(&handler, kind, trigger, &app, function, &config).map(|(listener, outputs)| {
                let host = host(&app, function, &config, services, outputs, line.clone());
                (listener, host)
            });
        match bound {
            Ok((listener, host)) => {
                let host = Arc::new(host);
                let lease = slot_lease(&app, function, &config, services, &host);
                let listening = listener.listen(host, stop.clone(), abandon.clone());
                match lease {
                    Some(lease) => listeners.spawn(lease.renewed_while(listening)),
                    None => listeners.spawn(listening),
                };
            }
            Err(error) => {
                tracing::warn!(instance = %app.instance, function = function.name, reason = %error, label = error.label(), "listener not started");
                stats.not_started().count_label(error.label());
                line.set_status(format!("stopped: {error}"));
            }
        }
        lines.push(line);
    }
    while listeners.join_next().await.is_some() {}
    // Listeners end only once stopped; an instance none of whose functions could start keeps
    // its statistics lines (each saying why) until it is stopped too.
    stop.cancelled().await;
    for line in &lines {
        stats.unregister(line);
    }
}

fn key(
    app: &HostedApp,
    function: &HostedFunction,
    trigger: &'static str,
    source: String,
) -> ListenerKey {
    ListenerKey {
        instance: app.instance.clone(),
        function: function.name.clone(),
        trigger,
        source,
    }
}

/// The handler, the trigger, then the outputs: the first that cannot be bound says why.
fn bind(
    handler: &Result<(), String>,
    kind: &dyn TriggerKind,
    trigger: &Binding,
    app: &HostedApp,
    function: &HostedFunction,
    config: &WorkerConfig,
) -> Result<(Box<dyn TriggerListener>, Vec<outputs::Output>), BindError> {
    handler.clone().map_err(BindError::Handler)?;
    let listener = kind.bind(function, trigger, app, config)?;
    let outputs = outputs::bind(app, function, config).map_err(BindError::Output)?;
    Ok((listener, outputs))
}

fn host(
    app: &HostedApp,
    function: &HostedFunction,
    config: &WorkerConfig,
    services: &Services,
    outputs: Vec<outputs::Output>,
    stats: Arc<ListenerStats>,
) -> FunctionHost {
    let key = FunctionKey {
        tenant: app.instance.tenant.clone(),
        app: app.instance.app.clone(),
        function: function.name.clone(),
    };
    let held = HeldMessages::new(services.pool.clone(), key.clone());
    let breaker = services
        .breakers
        .register(key, function.spec.breaker(), app.secret.clone());
    breaker.health.aim(
        app.handler.url.clone(),
        services.invoker.clone(),
        app.handler.health.clone(),
    );
    stats.watch_handler(breaker.health.clone());
    let timeout = Duration::from_secs(u64::from(app.handler.timeout_seconds))
        .min(app.host.function_timeout.as_duration());
    let slots = function.spec.max_concurrency.map(CallSlots::new);
    if let Some(slots) = &slots {
        stats.watch_slots(slots.clone());
    }
    FunctionHost {
        tenant: app.instance.tenant.clone(),
        app: app.instance.app.clone(),
        instance: app.instance.index,
        worker: config.name.clone(),
        function: function.name.clone(),
        trigger: function
            .spec
            .trigger()
            .map(|t| t.name().as_str().to_owned())
            .unwrap_or_default(),
        output_names: outputs.iter().map(|o| o.binding.clone()).collect(),
        outputs,
        handler: app.handler.url.clone(),
        timeout,
        retry: function
            .spec
            .retry
            .clone()
            .or_else(|| app.host.retry.clone()),
        secret: app.secret.clone(),
        invoker: services.invoker.clone(),
        stats,
        watcher: services.watcher.clone(),
        breaker,
        held,
        slots,
        retry_divisor: config.retry_divisor,
    }
}

/// The lease that keeps a capped function's slots (None without `maxConcurrency`).
fn slot_lease(
    app: &HostedApp,
    function: &HostedFunction,
    config: &WorkerConfig,
    services: &Services,
    host: &FunctionHost,
) -> Option<SlotLease> {
    Some(SlotLease {
        slots: host.slots.clone()?,
        pool: services.pool.clone(),
        key: FunctionKey {
            tenant: app.instance.tenant.clone(),
            app: app.instance.app.clone(),
            function: function.name.clone(),
        },
        worker: config.name.clone(),
        instance: app.instance.index,
        generation: uuid::Uuid::new_v4(),
        longest_call: host.timeout,
    })
}
