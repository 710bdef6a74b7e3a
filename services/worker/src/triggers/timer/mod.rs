//! The `timerTrigger`: invokes the function on its schedule, as Azure Functions' timer
//! extension does (azure-webjobs-sdk-extensions, `Extensions/Timers/Listener/TimerListener.cs`),
//! with every decision from `shoal_domain::timer_trigger` and the schedule's status in Postgres
//! (`shoal_store::timer_schedules`), shared by the fleet: whichever instance moves the status on
//! from an occurrence fires it, so a timer runs once per occurrence however many instances host
//! it, and a worker whose instance claim lapsed fires nothing.

mod listener;
mod status_store;

use std::sync::Arc;

use chrono_tz::Tz;
use futures::FutureExt as _;
use futures::future::BoxFuture;
use shoal_domain::binding_kinds::timer::{TRIGGER_TYPE, TriggerBinding as TimerBinding, timer_of};
use shoal_domain::bindings::Binding;
use shoal_domain::timer_trigger::{Schedule, resolve_schedule, time_zone, use_monitor};
use tokio_util::sync::CancellationToken;

use crate::bind_error::BindError;
use crate::config::{Hosting, WorkerConfig};
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::invocation::FunctionHost;
use crate::triggers::kind::{TriggerKind, TriggerListener};

pub struct TimerTrigger;

impl TriggerKind for TimerTrigger {
    fn binding_type(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn source(&self, trigger: &Binding, app: &HostedApp) -> String {
        let Some(Ok(trigger)) = timer_binding(trigger) else {
            return String::new();
        };
        match resolve_schedule(&trigger.schedule, &app.settings) {
            Ok(schedule) => schedule.to_string(),
            Err(_) => trigger.schedule.clone(),
        }
    }

    fn bind(
        &self,
        _function: &HostedFunction,
        trigger: &Binding,
        app: &HostedApp,
        config: &WorkerConfig,
    ) -> Result<Box<dyn TriggerListener>, BindError> {
        let trigger = timer_binding(trigger)
            .ok_or(BindError::Mismatch("timer trigger"))?
            .map_err(BindError::Source)?;
        let schedule =
            resolve_schedule(&trigger.schedule, &app.settings).map_err(BindError::Source)?;
        let tz = time_zone(&app.settings).map_err(BindError::Source)?;
        Ok(Box::new(BoundTimer {
            binding: trigger.name.as_str().to_owned(),
            monitor: use_monitor(trigger.use_monitor, &schedule),
            run_on_startup: trigger.run_on_startup,
            schedule,
            tz,
            fenced: config.hosting == Hosting::Assigned,
        }))
    }
}

/// The timer binding of `trigger` read into its type, when it is one.
fn timer_binding(trigger: &Binding) -> Option<Result<TimerBinding, String>> {
    timer_of(trigger)
}

/// A timer with its schedule and time zone resolved.
struct BoundTimer {
    binding: String,
    schedule: Schedule,
    tz: Tz,
    /// `useMonitor` in force: a missed occurrence runs once, past due.
    monitor: bool,
    run_on_startup: bool,
    /// Each occurrence is fired only under this worker's claim on the instance (scheduled
    /// hosting); a worker hosting every app by itself has no claims to fence with.
    fenced: bool,
}

impl TriggerListener for BoundTimer {
    fn listen(
        self: Box<Self>,
        function: Arc<FunctionHost>,
        stop: CancellationToken,
        abandon: CancellationToken,
    ) -> BoxFuture<'static, ()> {
        listener::run(*self, function, stop, abandon).boxed()
    }
}
