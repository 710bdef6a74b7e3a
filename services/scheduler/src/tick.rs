//! One tick of the leader, with its I/O: read workers and apps, refresh metrics, plan, write
//! what changed in one transaction fenced by the leader's epoch, then keep declared entity
//! settings (each update fenced too).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use opentelemetry::trace::SpanKind;
use shoal_domain::egress::AllowList;
use shoal_domain::placement::{Assignment, TenantPlacement, WorkerSlot};
use shoal_domain::scale::ScaleMode;
use shoal_store::assignments::{self, AssignmentRecord, InstanceKey};
use shoal_store::crypto::Cipher;
use shoal_store::scale::{self, DecisionRecord};
use shoal_store::scale_samples::{self, SampleRecord};
use shoal_store::workers::LiveWorker;
use shoal_store::{StoreError, begin_platform, leadership, workers};
use shoal_trace_export::span;

use crate::catalog::{AppKey, Catalog, Snapshot};
use crate::config::SchedulerConfig;
use crate::entity_upkeep::{EntityUpkeep, Fence};
use crate::planner::{InFlight, Inputs, ListenerCounts, Plan, Planner};
use crate::samples;
use crate::trigger_metrics::{self, MetricReader, Reading};

/// The instrumentation scope of the scheduler's spans.
pub(crate) const SCOPE: &str = "shoal-scheduler";

/// What the leader keeps between ticks.
pub struct Leader {
    pub holder: String,
    pub epoch: i64,
    planner: Planner,
    /// The assignments as last written (or as found on taking over).
    assignments: Vec<AssignmentRecord>,
    /// Whether every assignment carries this leader's epoch yet.
    confirmed: bool,
    /// Each app's desired count as stored: a decision is recorded when it differs, so a tick
    /// whose write failed is recorded by the next one.
    recorded: HashMap<AppKey, u32>,
    ticks: u64,
    /// When the last scale samples were recorded (`samples`).
    last_sample: Option<Instant>,
    /// Why each app waits for instances, as last written (see `scale::set_waiting`).
    waiting: HashMap<AppKey, String>,
    /// Keeps declared Service Bus entity settings, after each tick's fenced write.
    upkeep: EntityUpkeep,
}

/// What a tick did and how long each part took.
#[derive(Clone, Debug, Default)]
pub struct TickReport {
    pub apps: usize,
    pub workers: usize,
    pub total_desired: u64,
    pub placed: usize,
    pub unplaced: usize,
    /// Each tenant's desired, shared and placed instances (the worker autoscaler's view of a
    /// shortfall per tenant).
    pub tenants: Vec<TenantPlacement>,
    /// Decisions that changed an app's desired instances.
    pub changed: usize,
    pub upserts: usize,
    pub removals: usize,
    pub read: Duration,
    pub metrics: Duration,
    pub plan: Duration,
    pub write: Duration,
    /// Keeping declared entity settings (`entity_upkeep`).
    pub upkeep: Duration,
}

/// The parts a tick works with.
pub struct TickContext<'a> {
    pub pool: &'a sqlx::PgPool,
    pub cipher: &'a Cipher,
    pub config: &'a SchedulerConfig,
    pub catalog: &'a mut Catalog,
    pub metrics: &'a mut MetricReader,
}

impl Leader {
    /// Starts leading with `epoch`: the predecessor's desired counts and assignments are the
    /// starting point, so a change of leader moves nothing by itself.
    pub async fn take_over(
        pool: &sqlx::PgPool,
        holder: &str,
        epoch: i64,
        config: &SchedulerConfig,
    ) -> Result<Leader, StoreError> {
        let mut tx = begin_platform(pool).await?;
        let desired = scale::all_desired(&mut tx).await?;
        let assignments = assignments::all(&mut tx).await?;
        shoal_store::commit(tx).await?;
        let recorded: HashMap<AppKey, u32> = desired
            .into_iter()
            .map(|d| {
                (
                    AppKey {
                        tenant: d.tenant,
                        app: d.app,
                    },
                    d.desired,
                )
            })
            .collect();
        let mut planner = Planner::new(config.scale_in_window, config.balance);
        planner.seed(recorded.iter().map(|(k, v)| (k.clone(), *v)));
        Ok(Leader {
            holder: holder.to_owned(),
            epoch,
            planner,
            assignments,
            confirmed: false,
            recorded,
            ticks: 0,
            last_sample: None,
            waiting: HashMap::new(),
            upkeep: EntityUpkeep::new(config.connector.clone(), config.egress.clone()),
        })
    }

    /// The plan phase: pure, from what the read and metrics phases found.
    fn plan(
        &mut self,
        snapshot: &Snapshot,
        readings: &HashMap<(AppKey, String), Reading>,
        in_flight: &InFlight,
        listener_counts: &ListenerCounts,
        live: &[LiveWorker],
    ) -> Planned {
        let slots: Vec<WorkerSlot> = live
            .iter()
            .map(|w| WorkerSlot {
                name: w.name.clone(),
                capacity: w.capacity,
            })
            .collect();
        let current: Vec<Assignment> = self
            .assignments
            .iter()
            .map(|a| Assignment {
                app: format!("{}/{}", a.tenant, a.app),
                index: a.instance,
                worker: a.worker.clone(),
            })
            .collect();
        let plan = self.planner.plan(&Inputs {
            snapshot,
            readings,
            in_flight,
            listeners: listener_counts,
            workers: &slots,
            hold_limit: smallest_hold_limit(live),
            current: &current,
            now: Instant::now(),
        });
        let wanted: Vec<AssignmentRecord> = plan
            .placement
            .assignments
            .iter()
            .filter_map(|a| {
                let key = AppKey::from_placement_key(&a.app)?;
                Some(AssignmentRecord {
                    tenant: key.tenant,
                    app: key.app,
                    instance: a.index,
                    worker: a.worker.clone(),
                    epoch: self.epoch,
                })
            })
            .collect();
        let (upserts, removals) = diff(&self.assignments, &wanted);
        let stored = |key: &AppKey| self.recorded.get(key).copied().unwrap_or(0);
        let changed: Vec<DecisionRecord> = plan
            .decisions
            .iter()
            .filter(|(key, d)| stored(key) != d.to)
            .map(|(key, d)| DecisionRecord {
                tenant: key.tenant.clone(),
                app: key.app.clone(),
                at: chrono::Utc::now(),
                from: stored(key),
                to: d.to,
                mode: mode_name(d.mode).to_owned(),
                reason: d.reason.clone(),
                metrics: serde_json::to_value(&d.functions).unwrap_or_default(),
                epoch: self.epoch,
            })
            .collect();
        let waiting: HashMap<AppKey, String> = plan
            .decisions
            .iter()
            .filter(|(_, d)| d.to > 0)
            .filter_map(|(key, _)| {
                let why = plan.placement.waiting(&key.placement_key())?;
                Some((key.clone(), why))
            })
            .collect();
        let waiting_changes = waiting_changes(&self.waiting, &waiting, !self.confirmed);
        let sampled = samples::due(self.last_sample, Instant::now()).then(|| {
            samples::samples(
                plan.decisions.iter().map(|(key, d)| (key, d.to)),
                readings,
                &wanted,
            )
        });
        Planned {
            plan,
            wanted,
            upserts,
            removals,
            changed,
            waiting,
            waiting_changes,
            sampled,
        }
    }

    /// Each phase is a span under the tick's (when the caller made one current, see
    /// `runtime`), with the store operations it runs under it.
    pub async fn tick(&mut self, cx: TickContext<'_>) -> Result<TickReport, StoreError> {
        let mut report = TickReport::default();
        let started = Instant::now();
        let (live, snapshot, in_flight, listener_counts) =
            phase("read", read(cx.pool, cx.cipher, cx.catalog)).await?;
        report.read = started.elapsed();

        let started = Instant::now();
        let readings = phase("metrics", async {
            cx.metrics
                .refresh(
                    &snapshot.apps,
                    &snapshot.egress_allow,
                    cx.config.metrics_budget(),
                )
                .await;
            let mut readings: HashMap<(AppKey, String), Reading> = HashMap::new();
            let none = AllowList::default();
            for app in &snapshot.apps {
                let allow = snapshot.egress_allow.get(&app.key.tenant).unwrap_or(&none);
                for f in &app.functions {
                    if let Some(reading) = cx.metrics.reading(app, f, allow) {
                        readings.insert((app.key.clone(), f.name.clone()), reading);
                    }
                }
            }
            readings
        })
        .await;
        report.metrics = started.elapsed();

        let started = Instant::now();
        let planned = phase("plan", async {
            self.plan(&snapshot, &readings, &in_flight, &listener_counts, &live)
        })
        .await;
        report.plan = started.elapsed();

        let started = Instant::now();
        phase("write", async {
            let mut tx = begin_platform(cx.pool).await?;
            leadership::fence(&mut tx, &self.holder, self.epoch).await?;
            if !self.confirmed {
                let restamped = assignments::confirm_all(&mut tx, self.epoch).await?;
                tracing::info!(
                    epoch = self.epoch,
                    restamped,
                    "confirmed the placement found on taking over"
                );
            }
            assignments::apply(&mut tx, self.epoch, &planned.upserts, &planned.removals).await?;
            scale::record(&mut tx, &planned.changed).await?;
            if !self.confirmed {
                scale::clear_waiting(&mut tx).await?;
            }
            scale::set_waiting(&mut tx, &planned.waiting_changes).await?;
            if let Some(sampled) = &planned.sampled {
                scale_samples::record(&mut tx, sampled).await?;
            }
            self.ticks += 1;
            if self.ticks.is_multiple_of(60) {
                let forgotten = workers::prune(&mut tx, cx.config.forget_workers_after).await?;
                if forgotten > 0 {
                    tracing::info!(forgotten, "forgot workers long gone");
                }
                scale::prune_decisions(&mut tx).await?;
                scale_samples::prune(&mut tx).await?;
            }
            shoal_store::commit(tx).await
        })
        .await?;
        if planned.sampled.is_some() {
            self.last_sample = Some(Instant::now());
        }
        report.write = started.elapsed();

        // Only a leader whose write went through keeps entities, each update under the fence.
        let started = Instant::now();
        let fence = Fence {
            pool: cx.pool,
            holder: &self.holder,
            epoch: self.epoch,
        };
        phase(
            "upkeep",
            self.upkeep.run(
                fence,
                &snapshot.apps,
                &snapshot.egress_allow,
                cx.config.metrics_budget(),
            ),
        )
        .await?;
        report.upkeep = started.elapsed();

        for d in &planned.changed {
            tracing::info!(app = %format!("{}/{}", d.tenant, d.app), from = d.from, to = d.to, reason = d.reason, "scale decision");
        }
        if !planned.plan.placement.unplaced.is_empty() {
            tracing::warn!(
                unplaced = planned.plan.placement.unplaced.len(),
                workers = live.len(),
                "instances without a worker: not enough live workers or capacity"
            );
        }
        report.apps = snapshot.apps.len();
        report.workers = live.len();
        report.total_desired = planned.plan.total_desired;
        report.placed = planned.wanted.len();
        report.unplaced = planned.plan.placement.unplaced.len();
        report.tenants = planned.plan.placement.tenants.clone();
        report.changed = planned.changed.len();
        report.upserts = planned.upserts.len();
        report.removals = planned.removals.len();
        self.assignments = planned.wanted;
        self.waiting = planned.waiting;
        self.confirmed = true;
        self.recorded = planned
            .plan
            .decisions
            .iter()
            .filter(|(_, d)| d.to > 0)
            .map(|(key, d)| (key.clone(), d.to))
            .collect();
        Ok(report)
    }
}

/// What the plan phase decided, for the write phase and the report.
struct Planned {
    plan: Plan,
    wanted: Vec<AssignmentRecord>,
    upserts: Vec<AssignmentRecord>,
    removals: Vec<InstanceKey>,
    changed: Vec<DecisionRecord>,
    waiting: HashMap<AppKey, String>,
    waiting_changes: Vec<(String, String, Option<String>)>,
    sampled: Option<Vec<SampleRecord>>,
}

/// The read phase: live workers, the apps, and (when some app needs them) the listeners' load.
async fn read(
    pool: &sqlx::PgPool,
    cipher: &Cipher,
    catalog: &mut Catalog,
) -> Result<(Vec<LiveWorker>, Snapshot, InFlight, ListenerCounts), StoreError> {
    let mut tx = begin_platform(pool).await?;
    let live = workers::live(&mut tx).await?;
    shoal_store::commit(tx).await?;
    let snapshot = catalog.load(pool, cipher).await?;
    // The listeners' load: for visibleOnly apps, and for functions whose metric may turn
    // out unreadable (Service Bus: listen-only rights).
    let needs_listeners = snapshot.apps.iter().any(|a| {
        a.visible_only
            || a.functions.iter().any(|f| {
                f.source
                    .as_ref()
                    .is_ok_and(trigger_metrics::may_be_listen_only)
            })
    });
    let mut in_flight = InFlight::new();
    let mut listener_counts = ListenerCounts::new();
    if needs_listeners {
        let mut tx = begin_platform(pool).await?;
        let listeners = workers::live_listeners(&mut tx).await?;
        shoal_store::commit(tx).await?;
        for l in listeners {
            let key = (l.tenant, l.app, l.function);
            if l.status == "listening" {
                *listener_counts.entry(key.clone()).or_default() += 1;
            }
            *in_flight.entry(key).or_default() += l.in_flight;
        }
    }
    Ok((live, snapshot, in_flight, listener_counts))
}

/// The fewest messages a live worker's listener holds at once: an instance may be placed on any
/// live worker, so it is counted as taking no more than the smallest of them holds. Workers
/// that report no limit (a version from before the report) are left out; when none reports
/// one, None, and targets are taken as written, since nothing says what an instance will hold.
fn smallest_hold_limit(live: &[LiveWorker]) -> Option<u16> {
    live.iter().filter_map(|w| w.hold_limit).min()
}

/// Runs one phase of a tick as a span under the tick's, with the store operations it runs
/// under it (no span when the tick has none: export off).
async fn phase<T>(name: &'static str, work: impl Future<Output = T>) -> T {
    match span::child_of_current(SCOPE, name, SpanKind::Internal, Vec::new()) {
        Some(phase) => {
            let (out, phase) = span::within(phase, work).await;
            phase.end();
            out
        }
        None => work.await,
    }
}

fn mode_name(mode: ScaleMode) -> &'static str {
    match mode {
        ScaleMode::Target => "target",
        ScaleMode::Incremental => "incremental",
    }
}

/// The waiting reasons to write: new or changed ones, and `None` for apps that no longer wait
/// (every one after a `clear`, which forgets them all).
fn waiting_changes(
    before: &HashMap<AppKey, String>,
    after: &HashMap<AppKey, String>,
    clear: bool,
) -> Vec<(String, String, Option<String>)> {
    let mut changes: Vec<(String, String, Option<String>)> = after
        .iter()
        .filter(|(key, why)| clear || before.get(*key) != Some(*why))
        .map(|(key, why)| (key.tenant.clone(), key.app.clone(), Some(why.clone())))
        .collect();
    if !clear {
        changes.extend(
            before
                .keys()
                .filter(|key| !after.contains_key(*key))
                .map(|key| (key.tenant.clone(), key.app.clone(), None)),
        );
    }
    changes.sort();
    changes
}

/// The writes that turn `before` into `after`: new or moved instances, and instances no longer
/// placed. (Restamping unchanged rows with a new leader's epoch is `confirm_all`'s job.)
fn diff(
    before: &[AssignmentRecord],
    after: &[AssignmentRecord],
) -> (Vec<AssignmentRecord>, Vec<InstanceKey>) {
    let old: HashMap<InstanceKey, &str> = before
        .iter()
        .map(|a| (a.key(), a.worker.as_str()))
        .collect();
    let kept: HashSet<InstanceKey> = after.iter().map(AssignmentRecord::key).collect();
    let upserts = after
        .iter()
        .filter(|a| old.get(&a.key()) != Some(&a.worker.as_str()))
        .cloned()
        .collect();
    let removals = before
        .iter()
        .map(AssignmentRecord::key)
        .filter(|k| !kept.contains(k))
        .collect();
    (upserts, removals)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(app: &str) -> AppKey {
        AppKey {
            tenant: "t".into(),
            app: app.into(),
        }
    }

    fn change(app: &str, why: Option<&str>) -> (String, String, Option<String>) {
        ("t".into(), app.into(), why.map(str::to_owned))
    }

    #[test]
    fn the_smallest_reported_hold_limit_caps_what_an_instance_takes() {
        let worker = |name: &str, hold_limit| LiveWorker {
            name: name.into(),
            capacity: 10,
            hold_limit,
        };
        // (case, live workers, the limit targets are capped at)
        let cases = [
            ("no live worker", vec![], None),
            ("one at the defaults", vec![worker("a", Some(32))], Some(32)),
            (
                "the smallest of several",
                vec![worker("a", Some(512)), worker("b", Some(32))],
                Some(32),
            ),
            (
                "a worker reporting none is left out",
                vec![worker("a", None), worker("b", Some(512))],
                Some(512),
            ),
            (
                "none reports a limit",
                vec![worker("a", None), worker("b", None)],
                None,
            ),
        ];
        for (name, live, want) in cases {
            assert_eq!(smallest_hold_limit(&live), want, "{name}");
        }
    }

    #[test]
    fn waiting_reasons_are_written_when_they_change() {
        let before = HashMap::from([(key("a"), "x".to_owned()), (key("b"), "y".to_owned())]);
        let after = HashMap::from([(key("b"), "y".to_owned()), (key("c"), "z".to_owned())]);

        assert_eq!(
            waiting_changes(&before, &after, false),
            [change("a", None), change("c", Some("z"))],
            "a no longer waits, c starts, b is unchanged"
        );
        assert!(waiting_changes(&after, &after, false).is_empty());
        assert_eq!(
            waiting_changes(&before, &after, true),
            [change("b", Some("y")), change("c", Some("z"))],
            "after a clear every reason is written again"
        );
    }
}
