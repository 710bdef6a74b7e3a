//! Which worker runs which app instance: fair shares between tenants when capacity is short,
//! rendezvous hashing with bounded load, stable across ticks.
//!
//! The scheduler calls [`place`] every tick with the live workers, each app's desired instance
//! count, each tenant's weight and the assignments it made last time. The rules, in the order
//! they are applied:
//!
//! 1. **One instance of an app per worker**, and never more instances on a worker than its
//!    capacity. Instance indices at or beyond the number of workers cannot be placed.
//! 2. **Stable**: an existing assignment is kept while its worker is alive, its index is still
//!    wanted and it breaks no rule — moving an instance restarts its listeners.
//! 3. **Fair shares when capacity is short**: when the tenants together want more instances
//!    than the workers have slots (the sum of their capacities), each tenant (the part of the
//!    `tenant/app` key before '/') gets a share of the slots in proportion to its weight —
//!    its `limits.maxInstances`; a tenant without a limit weighs as much as the largest limit
//!    set, and when no tenant has one all weigh alike. Shares are handed out one slot at a time
//!    to the tenant with the fewest slots per unit of weight ([`share`]), never beyond what a
//!    tenant wants, so no tenant gets more before every other tenant has its share. Within its
//!    share a tenant keeps the instances placed now, then come apps' minimum instances
//!    (`scale.minimumInstances`), then the others by index (so the tenant's apps take turns).
//!    Instances beyond the share are left unplaced, and shed if placed: the only case in
//!    which a kept instance gives way, and only ever to another tenant below its share. A
//!    tenant's minimums do not buy it more than its share — apps' settings are the tenant's
//!    to choose.
//!    When an instance within the share finds no worker (every worker with room already hosts
//!    its app), the tenant's next instance takes the turn, and a share a tenant cannot use
//!    goes to the others.
//! 4. **Bounded load**: no worker holds more than `min(capacity, ceil(balance × total / workers))`
//!    ([`load_bound`]). A worker above its capacity sheds the instances it ranks lowest; a
//!    worker above the bound sheds them to the least-loaded workers with room (a shed exists
//!    to relieve load, so it goes where load is lowest — after a worker joins, that is the new
//!    worker). A shed that has nowhere to go within the bound stays.
//! 5. **Rendezvous**: new and orphaned instances go to the worker that ranks highest for the
//!    app (highest-random-weight hashing of app and worker) among those under the bound that
//!    do not host the app yet, so an app scaled in and out again lands where it was; only if
//!    none has room is the bound relaxed to capacity. Apps with more instances are placed
//!    first, as they need the most distinct workers.
//!
//! What moves, with enough capacity: when a worker dies, only its instances; when a worker
//! joins, only instances shed by workers above the lowered bound (at most `load − bound` from
//! each), and they go to the new worker unless it already hosts that app or is no longer the
//! least loaded. (An empty old worker looks exactly like a new one here, so "never between two
//! old workers" cannot be promised.) With short capacity, additionally, instances of tenants
//! above their share. The property tests state these precisely.
//!
//! The result is deterministic: inputs are sorted and deduplicated first, and ranks come from
//! a fixed hash (FNV-1a then splitmix64) rather than `std`'s randomly keyed one, so every
//! scheduler replica and version computes the same placement.

mod board;
/// Tenant shares of short capacity.
pub mod share;

pub use share::TenantWeight;
/// The rendezvous hash placement ranks workers with (public for references that must hash
/// exactly as placement does, such as the bench's naive placement).
pub mod rank;

#[cfg(test)]
mod fair_tests;
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
    /// Instances `0..minimum` come before the app's other instances within its tenant's share
    /// (`scale.minimumInstances`).
    pub minimum: u32,
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
    /// Every tenant with an app that wants instances, by name.
    pub tenants: Vec<TenantPlacement>,
    /// The slots of the live workers (the sum of their capacities).
    pub slots: u64,
    /// Live workers with a capacity above 0: the most instances one app can run.
    pub usable_workers: u32,
}

/// One tenant's instances: what its apps want, its share and what it got.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantPlacement {
    pub tenant: String,
    /// The weight its share was computed with (see [`share::TenantWeight`]).
    pub weight: u32,
    /// Instances its apps want (the sum of their demands).
    pub desired: u64,
    /// Of those, instances that could run on the live workers (one per worker per app).
    pub placeable: u64,
    /// Slots it may hold: `placeable` when capacity suffices, its fair share otherwise.
    pub share: u64,
    /// Instances placed.
    pub placed: u64,
}

impl Placement {
    /// Why `app` (a `tenant/app` key) runs fewer instances than it wants, or `None` when every
    /// instance is placed. What a starved app shows in its scale status.
    pub fn waiting(&self, app: &str) -> Option<String> {
        let first = self.unplaced.partition_point(|(a, _)| a.as_str() < app);
        let unplaced: Vec<u32> = self.unplaced[first..]
            .iter()
            .take_while(|(a, _)| a == app)
            .map(|(_, index)| *index)
            .collect();
        if unplaced.is_empty() {
            return None;
        }
        let tenant = board::tenant_of(app);
        let t = self.tenants.iter().find(|t| t.tenant == tenant)?;
        let short = t.share < t.placeable;
        if short && t.placed >= t.share {
            return Some(format!(
                "waiting for capacity: tenant share used (tenant {tenant} holds {} of its share of {} of {} slots; its apps want {})",
                t.placed, t.share, self.slots, t.desired
            ));
        }
        if unplaced.iter().all(|i| *i >= self.usable_workers) {
            return Some(format!(
                "waiting for workers: one instance per worker, {} workers can run one",
                self.usable_workers
            ));
        }
        Some(format!(
            "waiting for capacity: no worker with room for another instance of the app ({} slots)",
            self.slots
        ))
    }
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

/// Places instances `0..instances` of every app on `workers` (the live ones), sharing short
/// capacity between tenants by `tenants`' weights and keeping what `current` already places
/// where the rules allow. Duplicate worker names count once (with the largest capacity), as
/// do duplicate apps (with the most instances).
pub fn place(
    demands: &[AppDemand],
    tenants: &[share::TenantWeight],
    workers: &[WorkerSlot],
    current: &[Assignment],
    balance: f64,
) -> Placement {
    let mut board = board::Board::new(demands, tenants, workers, balance);
    board.keep(current);
    board.share();
    board.shed_over_capacity();
    board.shed_over_bound();
    board.place_orphans();
    board.fill_share();
    board.into_placement()
}
