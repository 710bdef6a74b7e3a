//! Runs one hosted app instance: a listener per enabled trigger function, each with its
//! resolved connection, queues and output bindings. A function whose connection or queue
//! cannot be resolved does not listen; its statistics line says why.

use std::sync::Arc;
use std::time::Duration;

use shoal_connectors::{Queue, StorageQueues};
use shoal_domain::bindings::Binding;
use shoal_domain::connection::{ConnectionKind, resolve};
use shoal_domain::queue_trigger::{poison_queue_name, trigger_queue_name};
use tokio::sync::OnceCell;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::config::WorkerConfig;
use crate::delivery::FunctionContext;
use crate::hosting::{HostedApp, HostedFunction};
use crate::invoker::Invoker;
use crate::listener::QueueListener;
use crate::outputs::OutputQueue;
use crate::stats::{ListenerKey, ListenerStats, StatsRegistry};
use crate::watcher::QueueWatcher;

pub async fn run_app(
    app: HostedApp,
    config: WorkerConfig,
    stats: Arc<StatsRegistry>,
    watcher: Arc<QueueWatcher>,
    invoker: Invoker,
    stop: CancellationToken,
    abandon: CancellationToken,
) {
    let mut listeners = JoinSet::new();
    let mut lines = Vec::new();
    for function in app.functions.iter().filter(|f| f.spec.runs()) {
        let Some(trigger) = function.spec.trigger() else {
            continue;
        };
        let Binding::QueueTrigger(queue_trigger) = trigger else {
            // httpTrigger functions are invoked through the webhook ingress, not a listener.
            if !matches!(trigger, Binding::HttpTrigger(_)) {
                let key = key(&app, function, trigger.type_name(), String::new());
                lines.push(stats.register(
                    key,
                    format!(
                        "stopped: {} listeners are not available yet",
                        trigger.type_name()
                    ),
                ));
            }
            continue;
        };
        let source = queue_trigger
            .queue_name
            .resolve(&app.settings)
            .unwrap_or_else(|_| queue_trigger.queue_name.clone())
            .as_str()
            .to_owned();
        let key = key(&app, function, "queueTrigger", source);
        let line = stats.register(key, "starting");
        match context(
            &app,
            function,
            &config,
            &invoker,
            line.clone(),
            watcher.clone(),
        ) {
            Ok(ctx) => {
                listeners.spawn(
                    QueueListener {
                        options: ctx.options.clone(),
                        context: Arc::new(ctx),
                        stop: stop.clone(),
                        abandon: abandon.clone(),
                    }
                    .run(),
                );
            }
            Err(reason) => {
                tracing::warn!(instance = %app.instance, function = function.name, reason, "listener not started");
                line.set_status(format!("stopped: {reason}"));
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

/// Everything the listener needs, or why it cannot run (never containing a secret value).
fn context(
    app: &HostedApp,
    function: &HostedFunction,
    config: &WorkerConfig,
    invoker: &Invoker,
    stats: Arc<ListenerStats>,
    watcher: Arc<QueueWatcher>,
) -> Result<FunctionContext, String> {
    let Some(Binding::QueueTrigger(trigger)) = function.spec.trigger() else {
        return Err("not a queue trigger".into());
    };
    let queues = connect(trigger.connection.as_deref(), app, config)?;
    let queue_name = trigger_queue_name(&trigger.queue_name, &app.settings)?;
    let queue_name = queue_name.as_str();
    let queue = queues.queue(queue_name).map_err(|e| e.to_string())?;
    let poison = queues
        .queue(&poison_queue_name(queue_name))
        .map_err(|e| e.to_string())?;
    let mut outputs = Vec::new();
    let mut output_names = Vec::new();
    for binding in function.spec.bindings.iter().filter(|b| !b.is_trigger()) {
        match binding {
            Binding::Queue(out) => {
                let queues = connect(out.connection.as_deref(), app, config)?;
                let name = out.queue_name.resolve(&app.settings)?;
                let name = name.as_str();
                let queue: Queue = queues.queue(name).map_err(|e| e.to_string())?;
                outputs.push(OutputQueue::new(
                    out.name.as_str().to_owned(),
                    queue,
                    app.host.extensions.queues.message_encoding,
                ));
                output_names.push(out.name.as_str().to_owned());
            }
            other => {
                return Err(format!(
                    "{} output bindings are not available yet (binding {})",
                    other.type_name(),
                    other.name().as_str()
                ));
            }
        }
    }
    let timeout = Duration::from_secs(u64::from(app.handler.timeout_seconds))
        .min(app.host.function_timeout.as_duration());
    Ok(FunctionContext {
        tenant: app.instance.tenant.clone(),
        app: app.instance.app.clone(),
        instance: app.instance.index,
        worker: config.name.clone(),
        function: function.name.clone(),
        binding: trigger.name.as_str().to_owned(),
        trigger_data_type: trigger.data_type,
        queue,
        poison,
        poison_created: OnceCell::new(),
        outputs,
        output_names,
        options: app.host.extensions.queues.clone(),
        handler: app.handler.url.clone(),
        timeout,
        secret: app.secret.clone(),
        invoker: invoker.clone(),
        invisibility: config.invisibility,
        stats,
        watcher,
    })
}

fn connect(
    connection: Option<&str>,
    app: &HostedApp,
    config: &WorkerConfig,
) -> Result<StorageQueues, String> {
    let spec = resolve(ConnectionKind::StorageQueue, connection, &app.settings)
        .map_err(|e| e.to_string())?;
    StorageQueues::connect_for_app(&spec, &config.connector, &app.identities)
        .map_err(|e| e.to_string())
}
