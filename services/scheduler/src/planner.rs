//! The leader's memory between ticks and the decisions of one tick, without I/O: each app's
//! desired instances, its recent metric samples (for incremental votes) and its recent
//! recommendations (for the scale-in stabilisation window). The domain decides and places;
//! this feeds it and keeps what the next tick needs.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use shoal_domain::placement::{AppDemand, Assignment, Placement, TenantWeight, WorkerSlot, place};
use shoal_domain::scale::{
    FunctionScaleInput, INCREMENTAL_SAMPLES, ListenerLoad, MetricSample, ScaleDecision, ScaleInput,
    decide, held_rule,
};

use crate::catalog::{AppKey, ScalableApp, Snapshot};
use crate::trigger_metrics::Reading;

/// Per-listener messages in flight, by (tenant, app, function), from the workers' heartbeats.
pub type InFlight = HashMap<(String, String, String), u64>;

/// Listeners running, by (tenant, app, function), from the workers' heartbeats: with
/// [`InFlight`], the load a function whose metric cannot be read is scaled on.
pub type ListenerCounts = HashMap<(String, String, String), u32>;

#[derive(Default)]
struct History {
    desired: u32,
    /// Per function: samples oldest first, and when the newest was read (a cached reading is
    /// not sampled twice).
    samples: HashMap<String, (VecDeque<MetricSample>, Option<Instant>)>,
    recommendations: VecDeque<(Instant, u32)>,
}

pub struct Planner {
    scale_in_window: Duration,
    balance: f64,
    apps: HashMap<AppKey, History>,
}

/// One tick's inputs.
pub struct Inputs<'a> {
    pub snapshot: &'a Snapshot,
    /// The latest reading per (app, function); absent when never read.
    pub readings: &'a HashMap<(AppKey, String), Reading>,
    pub in_flight: &'a InFlight,
    pub listeners: &'a ListenerCounts,
    pub workers: &'a [WorkerSlot],
    /// The smallest number of messages a live worker's listener holds at once, among the live
    /// workers that report one: a target that is what a listener holds (RabbitMQ's
    /// `prefetchCount`) is capped at it. None when no live worker reports one; targets are then
    /// used as written (see `held_rule`).
    pub hold_limit: Option<u16>,
    pub current: &'a [Assignment],
    pub now: Instant,
}

/// One tick's outcome.
pub struct Plan {
    /// Every app's decision, in key order.
    pub decisions: Vec<(AppKey, ScaleDecision)>,
    pub placement: Placement,
    /// Sum of desired instances over all apps (exported for autoscaling the workers).
    pub total_desired: u64,
}

impl Planner {
    pub fn new(scale_in_window: Duration, balance: f64) -> Planner {
        Planner {
            scale_in_window,
            balance,
            apps: HashMap::new(),
        }
    }

    /// A new leader starts from the desired counts its predecessor stored.
    pub fn seed(&mut self, desired: impl IntoIterator<Item = (AppKey, u32)>) {
        self.apps.clear();
        for (key, count) in desired {
            self.apps.insert(
                key,
                History {
                    desired: count,
                    ..History::default()
                },
            );
        }
    }

    pub fn desired(&self, key: &AppKey) -> u32 {
        self.apps.get(key).map_or(0, |h| h.desired)
    }

    pub fn plan(&mut self, inputs: &Inputs<'_>) -> Plan {
        let mut apps: Vec<&ScalableApp> = inputs.snapshot.apps.iter().map(|a| a.as_ref()).collect();
        apps.sort_by(|a, b| a.key.cmp(&b.key));
        // Apps that are gone take their history with them.
        let present: std::collections::HashSet<&AppKey> = apps.iter().map(|a| &a.key).collect();
        self.apps.retain(|k, _| present.contains(k));

        // Instances each tenant's apps hold, updated as this tick decides them.
        let mut tenant_used: HashMap<String, u64> = HashMap::new();
        for app in &apps {
            *tenant_used.entry(app.key.tenant.clone()).or_default() +=
                u64::from(self.desired(&app.key));
        }

        let mut decisions = Vec::with_capacity(apps.len());
        for app in apps {
            let history = self.apps.entry(app.key.clone()).or_default();
            let current = history.desired;
            let used = tenant_used
                .get(app.key.tenant.as_str())
                .copied()
                .unwrap_or(0);
            let allowance = inputs
                .snapshot
                .quotas
                .get(&app.key.tenant)
                .copied()
                .flatten()
                .map(|quota| {
                    let others = used.saturating_sub(u64::from(current));
                    u32::try_from(u64::from(quota).saturating_sub(others)).unwrap_or(u32::MAX)
                });
            let decision = if app.running {
                let input = scale_input(app, history, inputs, current, allowance);
                let decision = decide(&input);
                history
                    .recommendations
                    .push_back((inputs.now, decision.recommended));
                decision
            } else {
                stopped(app, current)
            };
            while history
                .recommendations
                .front()
                .is_some_and(|(at, _)| inputs.now.duration_since(*at) > self.scale_in_window)
            {
                history.recommendations.pop_front();
            }
            history.desired = decision.to;
            tenant_used.insert(
                app.key.tenant.clone(),
                used.saturating_sub(u64::from(current)) + u64::from(decision.to),
            );
            decisions.push((app.key.clone(), decision));
        }

        let minimum: HashMap<&AppKey, u32> = inputs
            .snapshot
            .apps
            .iter()
            .map(|a| (&a.key, a.minimum))
            .collect();
        let demands: Vec<AppDemand> = decisions
            .iter()
            .filter(|(_, d)| d.to > 0)
            .map(|(key, d)| AppDemand {
                app: key.placement_key(),
                instances: d.to,
                minimum: minimum.get(key).copied().unwrap_or(0).min(d.to),
            })
            .collect();
        // Short capacity is shared by the tenants' instance quotas (equal without quotas).
        let weights: Vec<TenantWeight> = inputs
            .snapshot
            .quotas
            .iter()
            .map(|(tenant, quota)| TenantWeight {
                tenant: tenant.clone(),
                weight: *quota,
            })
            .collect();
        let placement = place(
            &demands,
            &weights,
            inputs.workers,
            inputs.current,
            self.balance,
        );
        let total_desired = decisions.iter().map(|(_, d)| u64::from(d.to)).sum();
        Plan {
            decisions,
            placement,
            total_desired,
        }
    }
}

fn scale_input(
    app: &ScalableApp,
    history: &mut History,
    inputs: &Inputs<'_>,
    current: u32,
    allowance: Option<u32>,
) -> ScaleInput {
    let mut functions = Vec::with_capacity(app.functions.len());
    for f in &app.functions {
        // What an instance takes is what it holds, on any worker it may be placed on.
        let (rule, held_by_workers) = held_rule(&f.trigger, f.rule, inputs.hold_limit);
        let (samples, last_read) = history.samples.entry(f.name.clone()).or_default();
        // Not read yet (the first read is still running) is not unreadable: no sample, no vote.
        let reading = inputs.readings.get(&(app.key.clone(), f.name.clone()));
        let listener_key = (app.key.tenant.clone(), app.key.app.clone(), f.name.clone());
        let in_flight = inputs.in_flight.get(&listener_key).copied().unwrap_or(0);
        let mut latest_unreadable = false;
        let mut listener_load = None;
        let mut sample =
            |value: u64, queue_time_ms: Option<u64>, partitions: Option<u32>, at: Instant| {
                // A cached reading is sampled once.
                if *last_read != Some(at) {
                    samples.push_back(MetricSample {
                        value,
                        queue_time_ms,
                        partitions,
                    });
                    *last_read = Some(at);
                    while samples.len() > INCREMENTAL_SAMPLES {
                        samples.pop_front();
                    }
                }
            };
        if let Some(reading) = reading {
            match &reading.result {
                Ok(q) => {
                    let held = if app.visible_only { in_flight } else { 0 };
                    sample(
                        q.length.saturating_sub(held),
                        q.queue_time_ms,
                        q.partitions,
                        reading.at,
                    );
                }
                // Without rights to read the backlog, the listeners' load is the signal: the
                // samples become their in-flight counts (DESIGN §5, listen-only fallback).
                Err(why) if reading.listen_only => {
                    latest_unreadable = true;
                    sample(in_flight, None, None, reading.at);
                    let listeners = inputs.listeners.get(&listener_key).copied().unwrap_or(0);
                    listener_load = Some(ListenerLoad {
                        in_flight,
                        capacity: u64::from(listeners) * u64::from(rule.per_instance),
                        cause: why.clone(),
                    });
                }
                Err(_) => latest_unreadable = true,
            }
        }
        functions.push(FunctionScaleInput {
            function: f.name.clone(),
            rule,
            samples: samples.iter().copied().collect(),
            latest_unreadable,
            listener_load,
            max_concurrency: f.max_concurrency,
            held_by_workers,
        });
    }
    history
        .samples
        .retain(|name, _| app.functions.iter().any(|f| &f.name == name));
    ScaleInput {
        mode: app.mode,
        current,
        minimum: app.minimum,
        limit: app.limit,
        tenant_allowance: allowance,
        functions,
        recent_recommendations: history.recommendations.iter().map(|(_, r)| *r).collect(),
    }
}

/// A stopped app wants no instances.
fn stopped(app: &ScalableApp, current: u32) -> ScaleDecision {
    ScaleDecision {
        from: current,
        to: 0,
        recommended: 0,
        mode: app.mode,
        reason: "the app is stopped".into(),
        functions: Vec::new(),
    }
}

#[cfg(test)]
mod from_specs;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use shoal_domain::scale::{MetricKind, ScaleMode, TargetRule};

    use super::*;
    use crate::catalog::ScalableFunction;
    use crate::trigger_metrics::QueueReading;

    fn queue_trigger() -> shoal_domain::bindings::Binding {
        shoal_domain::bindings::parse_bindings(
            &serde_json::json!([{"type": "queueTrigger", "direction": "in", "name": "m",
                                 "queueName": "orders"}]),
            "bindings",
        )
        .expect("a valid trigger")
        .remove(0)
    }

    fn app(tenant: &str, name: &str, limit: u32) -> ScalableApp {
        ScalableApp {
            key: AppKey {
                tenant: tenant.into(),
                app: name.into(),
            },
            running: true,
            mode: ScaleMode::Target,
            limit,
            minimum: 0,
            visible_only: false,
            identity: shoal_domain::apps::Identity {
                kind: shoal_domain::apps::IdentityType::None,
                user_assigned_identities: Vec::new(),
                principal_id: None,
                client_id: None,
            },
            identities: Default::default(),
            functions: vec![ScalableFunction {
                name: "f".into(),
                trigger: queue_trigger(),
                rule: TargetRule {
                    metric: MetricKind::QueueLength,
                    per_instance: 16,
                },
                source: Err("test".into()),
                max_concurrency: None,
            }],
        }
    }

    fn workers(n: usize) -> Vec<WorkerSlot> {
        (0..n)
            .map(|i| WorkerSlot {
                name: format!("w{i}"),
                capacity: 100,
            })
            .collect()
    }

    struct World {
        snapshot: Snapshot,
        readings: HashMap<(AppKey, String), Reading>,
        in_flight: InFlight,
        listeners: ListenerCounts,
        workers: Vec<WorkerSlot>,
    }

    impl World {
        fn new(apps: Vec<ScalableApp>, workers: usize) -> World {
            World {
                snapshot: Snapshot {
                    apps: apps.into_iter().map(Arc::new).collect(),
                    quotas: HashMap::new(),
                    egress_allow: HashMap::new(),
                },
                readings: HashMap::new(),
                in_flight: InFlight::new(),
                listeners: ListenerCounts::new(),
                workers: self::workers(workers),
            }
        }

        fn backlog(&mut self, app: &str, length: u64, at: Instant) {
            let key = self
                .snapshot
                .apps
                .iter()
                .find(|a| a.key.app == app)
                .unwrap()
                .key
                .clone();
            self.readings.insert(
                (key, "f".into()),
                Reading {
                    result: Ok(QueueReading {
                        length,
                        queue_time_ms: None,
                        partitions: None,
                    }),
                    at,
                    listen_only: false,
                },
            );
        }

        fn plan(&self, planner: &mut Planner, current: &[Assignment], now: Instant) -> Plan {
            planner.plan(&Inputs {
                snapshot: &self.snapshot,
                readings: &self.readings,
                in_flight: &self.in_flight,
                listeners: &self.listeners,
                workers: &self.workers,
                hold_limit: None,
                current,
                now,
            })
        }
    }

    fn to_of(plan: &Plan, app: &str) -> u32 {
        plan.decisions
            .iter()
            .find(|(k, _)| k.app == app)
            .unwrap()
            .1
            .to
    }

    #[test]
    fn a_backlog_scales_out_four_per_tick_to_the_limit_on_distinct_workers() {
        let mut world = World::new(vec![app("t", "a", 10)], 12);
        let mut planner = Planner::new(Duration::from_secs(60), 1.25);
        let mut current = Vec::new();
        let start = Instant::now();
        let mut seen = Vec::new();
        for tick in 0..4u64 {
            let now = start + Duration::from_secs(tick);
            world.backlog("a", 1000, now);
            let plan = world.plan(&mut planner, &current, now);
            seen.push(to_of(&plan, "a"));
            current = plan.placement.assignments.clone();
        }
        assert_eq!(seen, [4, 8, 10, 10]);
        let workers: std::collections::HashSet<_> = current.iter().map(|a| &a.worker).collect();
        assert_eq!((current.len(), workers.len()), (10, 10));
    }

    #[test]
    fn the_tenant_quota_caps_the_sum_of_its_apps() {
        let mut world = World::new(
            vec![app("t", "a", 10), app("t", "b", 10), app("u", "c", 10)],
            20,
        );
        world.snapshot.quotas.insert("t".into(), Some(6));
        let mut planner = Planner::new(Duration::from_secs(60), 1.25);
        let start = Instant::now();
        let mut current = Vec::new();
        let mut last = None;
        for tick in 0..4u64 {
            let now = start + Duration::from_secs(tick);
            for name in ["a", "b", "c"] {
                world.backlog(name, 1000, now);
            }
            let plan = world.plan(&mut planner, &current, now);
            current = plan.placement.assignments.clone();
            last = Some(plan);
        }
        let plan = last.unwrap();
        assert_eq!(to_of(&plan, "a") + to_of(&plan, "b"), 6);
        assert_eq!(to_of(&plan, "c"), 10, "another tenant is not limited");
    }

    /// The two workers of capacity 5: tenant b's ten apps keep two instances each,
    /// then tenant a's app arrives with one. a is placed on the next tick; b keeps 9, and
    /// its starved app says why.
    #[test]
    fn a_tenant_below_its_share_is_placed_on_the_next_tick() {
        let minimum = |mut scaled: ScalableApp, n: u32| {
            scaled.minimum = n;
            scaled.functions.clear();
            scaled
        };
        let b: Vec<ScalableApp> = (0..10)
            .map(|i| minimum(app("b", &format!("app-{i}"), 2), 2))
            .collect();
        let mut world = World::new(b.clone(), 2);
        for w in &mut world.workers {
            w.capacity = 5;
        }
        let mut planner = Planner::new(Duration::from_secs(60), 1.25);
        let now = Instant::now();
        let before = world.plan(&mut planner, &[], now).placement;
        assert_eq!(before.assignments.len(), 10);

        world
            .snapshot
            .apps
            .push(Arc::new(minimum(app("a", "late", 1), 1)));
        let after = world
            .plan(
                &mut planner,
                &before.assignments,
                now + Duration::from_secs(1),
            )
            .placement;
        let placed = |tenant: &str| {
            after
                .assignments
                .iter()
                .filter(|x| x.app.starts_with(&format!("{tenant}/")))
                .count()
        };
        assert_eq!((placed("a"), placed("b")), (1, 9));
        let (starved, _) = &after.unplaced[0];
        assert!(
            after
                .waiting(starved)
                .is_some_and(|why| why.starts_with("waiting for capacity: tenant share used")),
            "{:?}",
            after.waiting(starved)
        );
    }

    /// 64 messages of which workers report 48 in flight, 16 per instance: counting the whole
    /// queue asks for 4 instances, counting only visible messages for 1.
    #[test]
    fn visible_only_scales_on_the_messages_no_worker_holds() {
        let decide = |visible_only: bool| {
            let mut scaled = app("t", "a", 10);
            scaled.visible_only = visible_only;
            let mut world = World::new(vec![scaled, app("t", "other", 10)], 8);
            let now = Instant::now();
            world.backlog("a", 64, now);
            world.backlog("other", 64, now);
            world
                .in_flight
                .insert(("t".into(), "a".into(), "f".into()), 48);
            // Another function's messages in flight never count for `f`, and an app without
            // visibleOnly ignores what its workers hold.
            world
                .in_flight
                .insert(("t".into(), "other".into(), "f".into()), 1000);
            world
                .in_flight
                .insert(("t".into(), "a".into(), "g".into()), 1000);
            let mut planner = Planner::new(Duration::from_secs(60), 1.25);
            let plan = world.plan(&mut planner, &[], now);
            (to_of(&plan, "a"), to_of(&plan, "other"))
        };
        assert_eq!(decide(false), (4, 4), "the storage service's count");
        assert_eq!(decide(true), (1, 4), "64 - 48 visible messages");
    }

    #[test]
    fn a_cached_reading_is_sampled_once() {
        let mut world = World::new(vec![app("t", "a", 10)], 2);
        let mut planner = Planner::new(Duration::from_secs(60), 1.25);
        let at = Instant::now();
        world.backlog("a", 5, at);
        for tick in 0..3u64 {
            world.plan(&mut planner, &[], at + Duration::from_secs(tick));
        }
        let history = &planner.apps[&world.snapshot.apps[0].key];
        assert_eq!(history.samples["f"].0.len(), 1);
    }

    #[test]
    fn a_stopped_app_wants_no_instances_and_a_deleted_one_is_forgotten() {
        let mut stopped = app("t", "a", 10);
        stopped.running = false;
        let mut world = World::new(vec![stopped], 2);
        let mut planner = Planner::new(Duration::from_secs(60), 1.25);
        planner.seed([(world.snapshot.apps[0].key.clone(), 3)]);
        let plan = world.plan(&mut planner, &[], Instant::now());
        assert_eq!(to_of(&plan, "a"), 0);
        assert!(plan.placement.assignments.is_empty());
        world.snapshot.apps.clear();
        world.plan(&mut planner, &[], Instant::now());
        assert!(planner.apps.is_empty());
    }

    fn service_bus_app(name: &str, limit: u32) -> ScalableApp {
        let mut scaled = app("t", name, limit);
        scaled.functions[0].rule = TargetRule {
            metric: MetricKind::ActiveMessages,
            per_instance: 16,
        };
        scaled
    }

    /// A reading the management API refused: listen-only rights.
    fn listen_only(world: &mut World, app: &str, at: Instant) {
        let key = world
            .snapshot
            .apps
            .iter()
            .find(|a| a.key.app == app)
            .unwrap()
            .key
            .clone();
        world.readings.insert(
            (key, "f".into()),
            Reading {
                result: Err("listen-only rights (401); scaling falls back to incremental".into()),
                at,
                listen_only: true,
            },
        );
    }

    #[test]
    fn active_messages_scale_out_four_per_decision_to_the_limit() {
        let mut world = World::new(vec![service_bus_app("sb", 10)], 12);
        let mut planner = Planner::new(Duration::from_secs(60), 1.25);
        let start = Instant::now();
        let mut current = Vec::new();
        let mut seen = Vec::new();
        for tick in 0..4u64 {
            let now = start + Duration::from_secs(tick);
            world.backlog("sb", 5000, now);
            let plan = world.plan(&mut planner, &current, now);
            seen.push(to_of(&plan, "sb"));
            current = plan.placement.assignments.clone();
        }
        assert_eq!(seen, [4, 8, 10, 10]);
    }

    /// Listen-only rights: saturated listeners add one instance per decision; idle ones for
    /// five samples give one back, never below one; the reason says why.
    #[test]
    fn listen_only_rights_fall_back_to_the_listeners_saturation() {
        let mut world = World::new(vec![service_bus_app("sb", 10)], 12);
        let key = ("t".to_owned(), "sb".to_owned(), "f".to_owned());
        let mut planner = Planner::new(Duration::from_secs(0), 1.25);
        let start = Instant::now();
        let mut current = Vec::new();
        let mut seen = Vec::new();
        let mut reasons = Vec::new();
        for tick in 0..3u64 {
            let now = start + Duration::from_secs(tick);
            let instances = u32::try_from(current.len()).unwrap();
            // Every listener holds its 16 messages.
            world.listeners.insert(key.clone(), instances);
            world
                .in_flight
                .insert(key.clone(), u64::from(instances) * 16);
            listen_only(&mut world, "sb", now);
            let plan = world.plan(&mut planner, &current, now);
            seen.push(to_of(&plan, "sb"));
            reasons.push(plan.decisions[0].1.reason.clone());
            current = plan.placement.assignments.clone();
        }
        assert_eq!(seen, [1, 2, 3], "{reasons:?}");
        assert_eq!(
            reasons[2],
            "scale out: f votes scaleOut (listeners at capacity, metric unreadable: listen-only rights (401); scaling falls back to incremental; listeners hold 32 of 32)"
        );
        // Idle listeners: after five idle samples, instances are given back one at a time.
        for tick in 3..12u64 {
            let now = start + Duration::from_secs(tick);
            world
                .listeners
                .insert(key.clone(), u32::try_from(current.len()).unwrap());
            world.in_flight.insert(key.clone(), 0);
            listen_only(&mut world, "sb", now);
            let plan = world.plan(&mut planner, &current, now);
            seen.push(to_of(&plan, "sb"));
            reasons.push(plan.decisions[0].1.reason.clone());
            current = plan.placement.assignments.clone();
        }
        // The window holds each step down for one decision; the unreadable metric keeps one.
        assert_eq!(seen, [1, 2, 3, 3, 3, 3, 3, 3, 2, 2, 1, 1], "{reasons:#?}");
        assert!(reasons[11].ends_with("kept at 1 while f's metric is unreadable"));
    }
}
