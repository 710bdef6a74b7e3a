//! (a) The scheduler's pure work for one tick, without I/O: `decide` for every app and one
//! `place` call, on inputs shaped like a large deployment, against the textbook way of placing
//! with rendezvous hashing (score every worker for every app, sort, take the top ones).
//!
//! Each app has one queue-trigger function (16 messages per instance, as `batchSize` 16),
//! five samples of a varied backlog, a limit of 1–20, a minimum of 0–2, a current count of
//! its own and the window of recommendations a 1 s tick keeps for the default 5-minute
//! scale-in window; one app in ten scales incrementally. The inputs come from a fixed seed, so
//! every run times the same work.

use std::hint::black_box;
use std::time::{Duration, Instant};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use shoal_domain::placement::rank::{name_hash, weight};
use shoal_domain::placement::{
    AppDemand, Assignment, DEFAULT_BALANCE, Placement, WorkerSlot, place,
};
use shoal_domain::scale::{
    FunctionScaleInput, MetricKind, MetricSample, ScaleDecision, ScaleInput, ScaleMode, TargetRule,
    decide,
};

use super::median;

/// Recommendations a 1 s tick keeps within the default 300 s scale-in window.
const WINDOW_RECOMMENDATIONS: usize = 300;
/// Any fixed seed: every run builds the same inputs.
const SEED: u64 = 0x5ba1_2026;
/// Messages one instance is meant to take (`batchSize` 16).
const PER_INSTANCE: u32 = 16;

/// The medians over the repetitions.
#[derive(Clone, Copy, Debug)]
pub struct PureFigures {
    pub apps: usize,
    pub workers: usize,
    /// `decide` for every app.
    pub decide: Duration,
    /// `place` with no current placement (a new leader with an empty table).
    pub place_cold: Duration,
    /// `place` with the previous placement as current (every tick after the first).
    pub place_steady: Duration,
    /// The reference: rendezvous placement by sorting every worker's score for every app.
    pub naive: Duration,
    /// Instances placed (all repetitions place the same).
    pub instances: usize,
}

impl PureFigures {
    pub fn cold(&self) -> Duration {
        self.decide + self.place_cold
    }

    pub fn steady(&self) -> Duration {
        self.decide + self.place_steady
    }
}

/// The inputs of one tick.
struct World {
    apps: Vec<(String, ScaleInput)>,
    workers: Vec<WorkerSlot>,
}

fn world(apps: usize, workers: usize) -> World {
    let mut rng = StdRng::seed_from_u64(SEED);
    let apps = (0..apps)
        .map(|i| {
            let key = format!("tenant-{:03}/app-{i:05}", i % 100);
            let limit = rng.random_range(1..=20u32);
            let minimum = rng.random_range(0..=2u32).min(limit);
            let current = rng.random_range(0..=limit);
            // Mostly small backlogs, some deep ones: 0–64 messages for half the apps, up to
            // 4,000 for the others.
            let base: u64 = if rng.random_bool(0.5) {
                rng.random_range(0..=64)
            } else {
                rng.random_range(0..=4_000)
            };
            let samples = (0..5)
                .map(|_| MetricSample {
                    value: base + rng.random_range(0..=32),
                    queue_time_ms: Some(rng.random_range(0..=60_000)),
                    partitions: None,
                })
                .collect();
            let mode = if i % 10 == 0 {
                ScaleMode::Incremental
            } else {
                ScaleMode::Target
            };
            let recent_recommendations = (0..WINDOW_RECOMMENDATIONS)
                .map(|_| rng.random_range(0..=limit))
                .collect();
            let input = ScaleInput {
                mode,
                current,
                minimum,
                limit,
                tenant_allowance: None,
                functions: vec![FunctionScaleInput {
                    function: "work".to_owned(),
                    rule: TargetRule {
                        metric: MetricKind::QueueLength,
                        per_instance: PER_INSTANCE,
                    },
                    samples,
                    latest_unreadable: false,
                    listener_load: None,
                    max_concurrency: None,
                    held_by_workers: None,
                }],
                recent_recommendations,
            };
            (key, input)
        })
        .collect();
    let workers = (0..workers)
        .map(|w| WorkerSlot {
            name: format!("worker-{w:03}"),
            // Ample: placement is bounded by the load bound, never by capacity.
            capacity: 10_000,
        })
        .collect();
    World { apps, workers }
}

/// Times `repetitions` ticks' pure work on the same inputs and returns the medians.
pub fn run(apps: usize, workers: usize, repetitions: usize) -> PureFigures {
    let world = world(apps, workers);
    let mut decide_times = Vec::with_capacity(repetitions);
    let mut cold_times = Vec::with_capacity(repetitions);
    let mut steady_times = Vec::with_capacity(repetitions);
    let mut naive_times = Vec::with_capacity(repetitions);
    let mut instances = 0;
    // One unmeasured round first: allocator and caches warm, as in a running scheduler.
    for round in 0..=repetitions {
        let started = Instant::now();
        let decisions: Vec<ScaleDecision> = world
            .apps
            .iter()
            .map(|(_, input)| decide(black_box(input)))
            .collect();
        let demands = demands(&world, &decisions);
        let decided = started.elapsed();

        let started = Instant::now();
        let cold = place(&demands, &[], &world.workers, &[], DEFAULT_BALANCE);
        let placed_cold = started.elapsed();

        let started = Instant::now();
        let steady = place(
            &demands,
            &[],
            &world.workers,
            &cold.assignments,
            DEFAULT_BALANCE,
        );
        let placed_steady = started.elapsed();

        let started = Instant::now();
        let naive = naive_place(&demands, &world.workers);
        let placed_naive = started.elapsed();

        instances = steady.assignments.len();
        black_box((&cold, &steady, &naive));
        if round > 0 {
            decide_times.push(decided);
            cold_times.push(placed_cold);
            steady_times.push(placed_steady);
            naive_times.push(placed_naive);
        }
        debug_assert!(stable(&cold, &steady), "a steady tick moved instances");
    }
    PureFigures {
        apps,
        workers,
        decide: median(&mut decide_times),
        place_cold: median(&mut cold_times),
        place_steady: median(&mut steady_times),
        naive: median(&mut naive_times),
        instances,
    }
}

/// What the planner hands placement: every app that wants instances.
fn demands(world: &World, decisions: &[ScaleDecision]) -> Vec<AppDemand> {
    world
        .apps
        .iter()
        .zip(decisions)
        .filter(|(_, d)| d.to > 0)
        .map(|((key, input), d)| AppDemand {
            app: key.clone(),
            instances: d.to,
            minimum: input.minimum.min(d.to),
        })
        .collect()
}

fn stable(before: &Placement, after: &Placement) -> bool {
    before.assignments == after.assignments
}

/// The reference: plain rendezvous hashing as a textbook writes it. For every app, score every
/// worker with the same cheap hash the domain uses, sort all the scores, and put instance `i`
/// on the `i`-th best worker. No load bound, no stability, no capacity: the least a placement
/// by rendezvous hashing has to do, done the obvious O(apps · workers · log workers) way.
fn naive_place(demands: &[AppDemand], workers: &[WorkerSlot]) -> Vec<Assignment> {
    let worker_hashes: Vec<u64> = workers.iter().map(|w| name_hash(&w.name)).collect();
    let mut assignments = Vec::new();
    for demand in demands {
        let app = name_hash(&demand.app);
        let mut scores: Vec<(u64, usize)> = worker_hashes
            .iter()
            .enumerate()
            .map(|(w, hash)| (weight(app, *hash), w))
            .collect();
        scores.sort_unstable_by(|a, b| b.cmp(a));
        for (index, (_, w)) in scores.iter().take(demand.instances as usize).enumerate() {
            assignments.push(Assignment {
                app: demand.app.clone(),
                index: index as u32,
                worker: workers[*w].name.clone(),
            });
        }
    }
    assignments
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_varied_and_fixed() {
        let a = world(500, 10);
        let b = world(500, 10);
        assert_eq!(a.apps, b.apps);
        let limits: std::collections::BTreeSet<u32> = a.apps.iter().map(|(_, i)| i.limit).collect();
        assert_eq!(limits.len(), 20, "{limits:?}");
        assert!(
            a.apps
                .iter()
                .all(|(_, i)| i.minimum <= i.limit && i.current <= i.limit)
        );
        assert!(a.apps.iter().any(|(_, i)| i.mode == ScaleMode::Incremental));
    }

    #[test]
    fn the_reference_places_every_wanted_instance_on_distinct_workers() {
        let workers: Vec<WorkerSlot> = (0..5)
            .map(|w| WorkerSlot {
                name: format!("w{w}"),
                capacity: 100,
            })
            .collect();
        let demands = [
            AppDemand {
                app: "t/a".into(),
                instances: 3,
                minimum: 0,
            },
            AppDemand {
                app: "t/b".into(),
                instances: 1,
                minimum: 0,
            },
        ];
        let placed = naive_place(&demands, &workers);
        assert_eq!(placed.len(), 4);
        let a: std::collections::BTreeSet<&str> = placed
            .iter()
            .filter(|p| p.app == "t/a")
            .map(|p| p.worker.as_str())
            .collect();
        assert_eq!(a.len(), 3);
    }

    #[test]
    fn a_small_run_reports_every_figure() {
        let figures = run(200, 10, 2);
        assert!(figures.instances > 0);
        assert!(figures.cold() >= figures.decide);
        assert!(figures.naive > Duration::ZERO);
    }
}
