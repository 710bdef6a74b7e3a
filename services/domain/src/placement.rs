//! Which worker runs which app instance: rendezvous hashing with bounded load, stable across
//! ticks.
//!
//! The scheduler calls [`place`] every tick with the live workers, each app's desired instance
//! count and the assignments it made last time. The rules, in the order they are applied:
//!
//! 1. **One instance of an app per worker**, and never more instances on a worker than its
//!    capacity. Instance indices at or beyond the number of workers cannot be placed.
//! 2. **Stable**: an existing assignment is kept while its worker is alive, its index is still
//!    wanted and it breaks no rule — moving an instance restarts its listeners.
//! 3. **Bounded load**: no worker holds more than `min(capacity, ceil(balance × total / workers))`
//!    ([`load_bound`]). A worker above its capacity sheds the instances it ranks lowest; a
//!    worker above the bound sheds them to the least-loaded workers with room (a shed exists
//!    to relieve load, so it goes where load is lowest — after a worker joins, that is the new
//!    worker). A shed that has nowhere to go within the bound stays.
//! 4. **Rendezvous**: new and orphaned instances go to the worker that ranks highest for the
//!    app (highest-random-weight hashing of app and worker) among those under the bound that
//!    do not host the app yet, so an app scaled in and out again lands where it was; only if
//!    none has room is the bound relaxed to capacity. Apps with more instances are placed
//!    first, as they need the most distinct workers.
//!
//! What moves, with enough capacity: when a worker dies, only its instances; when a worker
//! joins, only instances shed by workers above the lowered bound (at most `load − bound` from
//! each), and they go to the new worker unless it already hosts that app or is no longer the
//! least loaded. (An empty old worker looks exactly like a new one here, so "never between two
//! old workers" cannot be promised.) The property tests state these precisely.
//!
//! The result is deterministic: inputs are sorted and deduplicated first, and ranks come from
//! a fixed hash (FNV-1a then splitmix64) rather than `std`'s randomly keyed one, so every
//! scheduler replica and version computes the same placement.

mod board;
/// The rendezvous hash placement ranks workers with (public for references that must hash
/// exactly as placement does, such as the bench's naive placement).
pub mod rank;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

/// A live worker and how many app instances it may run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerSlot {
    pub name: String,
    pub capacity: u32,
}

/// How many instances an app should run (the scale decision's `to`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppDemand {
    /// The `tenant/app` key.
    pub app: String,
    /// Bounded by `scale.limit`; every index that cannot be placed is listed in
    /// [`Placement::unplaced`].
    pub instances: u32,
}

/// Instance `index` of `app` runs on `worker`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Assignment {
    pub app: String,
    pub index: u32,
    pub worker: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Placement {
    /// Sorted by `(app, index)`.
    pub assignments: Vec<Assignment>,
    /// `(app, index)` that found no worker, sorted.
    pub unplaced: Vec<(String, u32)>,
}

/// How far above the average a worker's load may go: 25 % keeps instances spread while
/// leaving rendezvous hashing enough slack to keep most instances where they are.
pub const DEFAULT_BALANCE: f64 = 1.25;

/// The load bound before capacity: `ceil(balance × total / workers)`.
///
/// `total` counts the instances that can be placed (each app's instances up to the number of
/// workers). A `balance` below 1 (or NaN) counts as 1: a bound under the average cannot be
/// met.
pub fn load_bound(total: u64, workers: usize, balance: f64) -> u32 {
    if workers == 0 {
        return 0;
    }
    let balance = if balance >= 1.0 { balance } else { 1.0 };
    // `as` saturates, so an infinite balance means "capacity only".
    (balance * total as f64 / workers as f64).ceil() as u32
}

/// Places instances `0..instances` of every app on `workers` (the live ones), keeping what
/// `current` already places where the rules allow. Duplicate worker names count once (with
/// the largest capacity), as do duplicate apps (with the most instances).
pub fn place(
    demands: &[AppDemand],
    workers: &[WorkerSlot],
    current: &[Assignment],
    balance: f64,
) -> Placement {
    let mut board = board::Board::new(demands, workers, balance);
    board.keep(current);
    board.shed_over_capacity();
    board.shed_over_bound();
    board.place_orphans();
    board.into_placement()
}
