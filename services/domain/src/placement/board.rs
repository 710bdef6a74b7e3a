//! The working state of one `place` call: apps and workers by dense index, one slot per
//! placeable instance, and each worker's load.

use std::cmp::Reverse;
use std::collections::{BTreeSet, HashMap};

use super::rank::{name_hash, weight};
use super::share::{TenantWeight, resolve, shares};
use super::{AppDemand, Assignment, Placement, TenantPlacement, WorkerSlot, load_bound};

/// A slot's worker when the instance has none.
const EMPTY: u32 = u32::MAX;

pub(super) struct Board<'a> {
    worker_names: Vec<&'a str>,
    worker_hash: Vec<u64>,
    capacity: Vec<u32>,
    /// `min(capacity, load_bound(..))` per worker.
    bound: Vec<u32>,
    load: Vec<u32>,
    app_names: Vec<&'a str>,
    app_hash: Vec<u64>,
    /// Instances asked for, including those beyond the number of workers.
    demanded: Vec<u32>,
    /// App `a`'s placeable instances are `slots[start[a]..start[a + 1]]`, by index.
    start: Vec<usize>,
    /// The worker of each placeable instance, or [`EMPTY`].
    slots: Vec<u32>,
    /// The app of each slot.
    slot_app: Vec<u32>,
    /// `marks[w] == generation`: worker `w` hosts the app being worked on.
    marks: Vec<u32>,
    generation: u32,
    /// Instances that come first within each app's tenant share.
    minimum: Vec<u32>,
    /// Each app's tenant (index into `tenant_names`).
    app_tenant: Vec<u32>,
    tenant_names: Vec<&'a str>,
    tenant_weight: Vec<u32>,
    /// Instances each tenant asked for, including those that cannot be placed.
    tenant_desired: Vec<u64>,
    /// Placeable instances each tenant asked for, and the slots it may hold.
    tenant_demand: Vec<u64>,
    tenant_share: Vec<u64>,
    /// Slots beyond its tenant's share: left empty this time.
    barred: Vec<bool>,
    /// Per tenant, its barred slots in the order they come next (see [`Board::share`]).
    reserve: Vec<std::collections::VecDeque<usize>>,
    /// The worker a reserved slot was kept on before its tenant's first share barred it (EMPTY
    /// for one that had none): where [`Board::fill_share`] puts it back if the share grows.
    kept_on: Vec<u32>,
    /// The sum of the workers' capacities.
    total_slots: u64,
    /// Workers with a capacity above 0: at most this many instances of an app can run.
    usable_workers: usize,
    balance: f64,
}

impl<'a> Board<'a> {
    pub fn new(
        demands: &'a [AppDemand],
        tenants: &'a [TenantWeight],
        workers: &'a [WorkerSlot],
        balance: f64,
    ) -> Self {
        let mut ws: Vec<(&str, u32)> = workers
            .iter()
            .map(|w| (w.name.as_str(), w.capacity))
            .collect();
        // Sorted by name then capacity: the last of each name has the largest capacity.
        ws.sort_unstable();
        ws.reverse();
        ws.dedup_by_key(|w| w.0);
        ws.reverse();
        let mut apps: Vec<(&str, u32, u32)> = demands
            .iter()
            .map(|d| (d.app.as_str(), d.instances, d.minimum))
            .collect();
        apps.sort_unstable();
        apps.reverse();
        apps.dedup_by_key(|a| a.0);
        apps.reverse();

        let worker_count = ws.len();
        let mut start = Vec::with_capacity(apps.len() + 1);
        let mut slot_app = Vec::new();
        start.push(0);
        for (a, (_, instances, _)) in apps.iter().enumerate() {
            let placeable = (*instances as usize).min(worker_count);
            slot_app.extend(std::iter::repeat_n(a as u32, placeable));
            start.push(slot_app.len());
        }
        let total = slot_app.len() as u64;
        let bound_all = load_bound(total, worker_count, balance);

        let (weights, default_weight) = resolve(tenants);
        let mut tenant_names: Vec<&str> = apps.iter().map(|a| tenant_of(a.0)).collect();
        tenant_names.sort_unstable();
        tenant_names.dedup();
        let app_tenant: Vec<u32> = apps
            .iter()
            .map(|a| position(&tenant_names, tenant_of(a.0)).unwrap_or(0))
            .collect();
        let tenant_weight: Vec<u32> = tenant_names
            .iter()
            .map(|t| {
                weights
                    .binary_search_by(|w| w.0.cmp(t))
                    .map_or(default_weight, |i| weights[i].1)
            })
            .collect();
        let total_slots: u64 = ws.iter().map(|w| u64::from(w.1)).sum();
        let usable_workers = ws.iter().filter(|w| w.1 > 0).count();
        let mut tenant_desired = vec![0u64; tenant_names.len()];
        for (a, app) in apps.iter().enumerate() {
            tenant_desired[app_tenant[a] as usize] += u64::from(app.1);
        }
        Board {
            worker_hash: ws.iter().map(|w| name_hash(w.0)).collect(),
            capacity: ws.iter().map(|w| w.1).collect(),
            bound: ws.iter().map(|w| w.1.min(bound_all)).collect(),
            load: vec![0; worker_count],
            worker_names: ws.into_iter().map(|w| w.0).collect(),
            app_hash: apps.iter().map(|a| name_hash(a.0)).collect(),
            demanded: apps.iter().map(|a| a.1).collect(),
            minimum: apps.iter().map(|a| a.2).collect(),
            app_names: apps.into_iter().map(|a| a.0).collect(),
            start,
            slots: vec![EMPTY; slot_app.len()],
            barred: vec![false; slot_app.len()],
            kept_on: vec![EMPTY; slot_app.len()],
            slot_app,
            marks: vec![0; worker_count],
            generation: 0,
            app_tenant,
            tenant_demand: vec![0; tenant_names.len()],
            tenant_share: vec![0; tenant_names.len()],
            reserve: vec![Default::default(); tenant_names.len()],
            tenant_names,
            tenant_weight,
            tenant_desired,
            total_slots,
            usable_workers,
            balance,
        }
    }

    /// Works out each tenant's share of the slots and bars every instance beyond it (shedding
    /// it if placed). Within a tenant, instances come in this order: those placed now (an
    /// instance gives way only to another tenant's), then minimum instances, then by index,
    /// then by app — so a tenant's apps take turns. Call after [`Board::keep`].
    pub fn share(&mut self) {
        let usable = self.usable_workers;
        for a in 0..self.app_names.len() {
            let placeable = self.range(a).len().min(usable) as u64;
            self.tenant_demand[self.app_tenant[a] as usize] += placeable;
        }
        self.tenant_share = shares(&self.tenant_demand, &self.tenant_weight, self.total_slots);
        let mut candidates: Vec<Vec<(bool, bool, u32, usize)>> =
            vec![Vec::new(); self.tenant_names.len()];
        for a in 0..self.app_names.len() {
            let t = self.app_tenant[a] as usize;
            if self.tenant_share[t] == self.tenant_demand[t] {
                continue;
            }
            for (index, slot) in self.range(a).enumerate() {
                if index >= usable {
                    // More instances than workers that can run one: never placed.
                    self.unassign(slot);
                    self.barred[slot] = true;
                    continue;
                }
                let index = index as u32;
                let scale_out = index >= self.minimum[a];
                candidates[t].push((self.slots[slot] == EMPTY, scale_out, index, slot));
            }
        }
        for (t, mut list) in candidates.into_iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            list.sort_unstable();
            let share = self.tenant_share[t] as usize;
            for (_, _, _, slot) in list.drain(..).skip(share) {
                self.barred[slot] = true;
                self.kept_on[slot] = self.slots[slot];
                self.unassign(slot);
                self.reserve[t].push_back(slot);
            }
        }
        // The bound counts what may be placed.
        let allowed = self.slots.len() - self.barred.iter().filter(|b| **b).count();
        let bound_all = load_bound(allowed as u64, self.load.len(), self.balance);
        for (bound, capacity) in self.bound.iter_mut().zip(&self.capacity) {
            *bound = (*capacity).min(bound_all);
        }
    }

    /// A tenant below its share whose instances found no worker (every worker with room
    /// already hosts that app) gives the turn to its next instances, until it holds its share
    /// or has none left to try; then the slots it cannot use are shared again among the
    /// others, so no slot stays empty while a tenant could use it. Call after
    /// [`Board::place_orphans`].
    pub fn fill_share(&mut self) {
        let mut ranking = Ranking::default();
        let mut unplaceable = Vec::new();
        let mut wants = self.tenant_demand.clone();
        loop {
            let held = self.held();
            let mut next = Vec::new();
            for (t, reserve) in self.reserve.iter_mut().enumerate() {
                let missing = self.tenant_share[t].saturating_sub(held[t]) as usize;
                next.extend(reserve.drain(..missing.min(reserve.len())));
            }
            if next.is_empty() {
                // Tenants that tried all they want and hold less than their share want no
                // more than they hold: the rest of their share goes to the others.
                let mut changed = false;
                for t in 0..self.tenant_names.len() {
                    if held[t] < self.tenant_share[t] && wants[t] != held[t] {
                        wants[t] = held[t];
                        changed = true;
                    }
                }
                if !changed {
                    return;
                }
                self.tenant_share = shares(&wants, &self.tenant_weight, self.total_slots);
                continue;
            }
            next.sort_unstable();
            let mut i = 0;
            while i < next.len() {
                let a = self.slot_app[next[i]];
                let n = next[i..]
                    .iter()
                    .take_while(|s| self.slot_app[**s] == a)
                    .count();
                let group: Vec<usize> = next[i..i + n]
                    .iter()
                    .copied()
                    .filter(|slot| {
                        self.barred[*slot] = false;
                        !self.back_where_kept(a as usize, *slot)
                    })
                    .collect();
                self.place_app(a as usize, &group, false, &mut ranking, &mut unplaceable);
                i += n;
            }
        }
    }

    /// Puts a slot the first share barred back on the worker it was kept on, if that worker
    /// still has room and runs no other instance of the app. Without this, a tick with nothing
    /// changed could move an instance that the share had only set aside while it was still
    /// being worked out (the placement's property `nothing_moves_when_nothing_changes`).
    fn back_where_kept(&mut self, a: usize, slot: usize) -> bool {
        let w = self.kept_on[slot];
        if w == EMPTY || self.load[w as usize] >= self.capacity[w as usize] {
            return false;
        }
        if self.range(a).any(|s| self.slots[s] == w) {
            return false;
        }
        self.assign(slot, w);
        true
    }

    /// Keeps every current assignment that is still valid. Conflicts (two workers for one
    /// instance, two instances of an app on one worker) keep the first in sorted order.
    pub fn keep(&mut self, current: &[Assignment]) {
        // App names are tenant-chosen, so they are looked up by binary search rather than in a
        // hash map a tenant could flood with colliding names; a sorted `current` (as `place`
        // returns it) repeats each app, so the last one is remembered. Worker names come from
        // the operator's pool.
        let workers: HashMap<&str, u32> = self
            .worker_names
            .iter()
            .enumerate()
            .map(|(w, name)| (*name, w as u32))
            .collect();
        let mut last: Option<(&str, u32)> = None;
        let mut kept: Vec<(u32, u32, u32)> = Vec::with_capacity(current.len());
        for c in current {
            let a = match last {
                Some((name, a)) if name == c.app => Some(a),
                _ => position(&self.app_names, &c.app),
            };
            let Some(a) = a else { continue };
            last = Some((c.app.as_str(), a));
            if let Some(w) = workers.get(c.worker.as_str()) {
                kept.push((a, c.index, *w));
            }
        }
        kept.sort_unstable();
        let mut app = u32::MAX;
        for (a, index, w) in kept {
            if a != app {
                app = a;
                self.next_generation();
            }
            let range = self.range(a as usize);
            if (index as usize) >= range.len() {
                continue;
            }
            let slot = range.start + index as usize;
            if self.slots[slot] == EMPTY && self.marks[w as usize] != self.generation {
                self.assign(slot, w);
                self.marks[w as usize] = self.generation;
            }
        }
    }

    /// Capacity is a hard rule: a worker above it drops the instances it ranks lowest, to be
    /// placed again like orphans.
    pub fn shed_over_capacity(&mut self) {
        let over: Vec<usize> = (0..self.load.len())
            .filter(|w| self.load[*w] > self.capacity[*w])
            .collect();
        for w in over {
            let excess = (self.load[w] - self.capacity[w]) as usize;
            for (_, slot) in self.instances_on(w).into_iter().take(excess) {
                self.slots[slot] = EMPTY;
                self.load[w] -= 1;
            }
        }
    }

    /// Workers above the bound move their lowest-ranked instances, one at a time and most
    /// loaded worker first, to the least-loaded workers with room (see [`Board::shed_one`]).
    pub fn shed_over_bound(&mut self) {
        let mut over: BTreeSet<(Reverse<u32>, usize)> = (0..self.load.len())
            .filter(|w| self.load[*w] > self.bound[*w])
            .map(|w| (Reverse(self.load[w] - self.bound[w]), w))
            .collect();
        if over.is_empty() {
            return;
        }
        let mut candidates: Vec<Vec<(u64, usize)>> = vec![Vec::new(); self.load.len()];
        for (_, w) in &over {
            candidates[*w] = self.instances_on(*w);
        }
        let mut room: BTreeSet<(u32, usize)> = (0..self.load.len())
            .filter(|w| self.load[*w] < self.bound[*w])
            .map(|w| (self.load[w], w))
            .collect();
        while let Some((_, w)) = over.pop_first() {
            let list = &mut candidates[w];
            let Some((pick, to)) = self.shed_one(list, &room) else {
                continue; // nowhere to go within the bound: the worker stays above it
            };
            let (_, slot) = list.remove(pick);
            room.remove(&(self.load[to], to));
            self.slots[slot] = EMPTY;
            self.load[w] -= 1;
            self.assign(slot, to as u32);
            if self.load[to] < self.bound[to] {
                room.insert((self.load[to], to));
            }
            if self.load[w] > self.bound[w] {
                over.insert((Reverse(self.load[w] - self.bound[w]), w));
            }
        }
    }

    /// The candidate (lowest rank first) and destination for one shed: the least-loaded
    /// workers with room come first; among them, the one ranking highest for the app.
    fn shed_one(
        &self,
        candidates: &[(u64, usize)],
        room: &BTreeSet<(u32, usize)>,
    ) -> Option<(usize, usize)> {
        let ordered: Vec<(u32, usize)> = room.iter().copied().collect();
        for level in ordered.chunk_by(|a, b| a.0 == b.0) {
            for (pick, (_, slot)) in candidates.iter().enumerate() {
                let a = self.slot_app[*slot] as usize;
                let hosts = &self.slots[self.range(a)];
                let best = level
                    .iter()
                    .map(|(_, d)| *d)
                    .filter(|d| !hosts.contains(&(*d as u32)))
                    .max_by_key(|d| (weight(self.app_hash[a], self.worker_hash[*d]), Reverse(*d)));
                if let Some(to) = best {
                    return Some((pick, to));
                }
            }
        }
        None
    }

    /// New and orphaned instances, by rendezvous rank: first within the bound, then (only for
    /// those left over) within capacity.
    pub fn place_orphans(&mut self) {
        let mut order: Vec<usize> = (0..self.app_names.len()).collect();
        order.sort_by_key(|a| (Reverse(self.range(*a).len()), *a));
        let mut ranking = Ranking::default();
        let mut left_over = Vec::new();
        let mut empty = Vec::new();
        for a in order {
            empty.clear();
            empty.extend(
                self.range(a)
                    .filter(|s| self.slots[*s] == EMPTY && !self.barred[*s]),
            );
            if !empty.is_empty() {
                self.place_app(a, &empty, true, &mut ranking, &mut left_over);
            }
        }
        // `left_over` holds each app's slots together. Those that find no room within capacity
        // either stay empty and are reported unplaced.
        let mut unplaceable = Vec::new();
        let mut i = 0;
        while i < left_over.len() {
            let a = self.slot_app[left_over[i]];
            let n = left_over[i..]
                .iter()
                .take_while(|s| self.slot_app[**s] == a)
                .count();
            let group = &left_over[i..i + n];
            self.place_app(a as usize, group, false, &mut ranking, &mut unplaceable);
            i += n;
        }
    }

    /// Puts each of app `a`'s `empty` slots on the highest-weight worker with room that does
    /// not host the app yet — room below the bound when `bounded`, below capacity otherwise —
    /// and pushes those that find none to `left_over`.
    fn place_app(
        &mut self,
        a: usize,
        empty: &[usize],
        bounded: bool,
        ranking: &mut Ranking,
        left_over: &mut Vec<usize>,
    ) {
        self.next_generation();
        for slot in self.range(a) {
            if self.slots[slot] != EMPTY {
                self.marks[self.slots[slot] as usize] = self.generation;
            }
        }
        ranking.start(self.app_hash[a], &self.worker_hash, empty.len());
        for &slot in empty {
            let limit = if bounded { &self.bound } else { &self.capacity };
            let found =
                ranking.first(|w| self.load[w] < limit[w] && self.marks[w] != self.generation);
            match found {
                Some(w) => {
                    self.assign(slot, w as u32);
                    self.marks[w] = self.generation;
                }
                None => left_over.push(slot),
            }
        }
    }

    /// Instances placed per tenant.
    fn held(&self) -> Vec<u64> {
        let mut held = vec![0u64; self.tenant_names.len()];
        for (slot, w) in self.slots.iter().enumerate() {
            if *w != EMPTY {
                held[self.app_tenant[self.slot_app[slot] as usize] as usize] += 1;
            }
        }
        held
    }

    pub fn into_placement(self) -> Placement {
        let mut placement = Placement {
            assignments: Vec::with_capacity(self.slots.len()),
            unplaced: Vec::new(),
            tenants: Vec::with_capacity(self.tenant_names.len()),
            slots: self.total_slots,
            usable_workers: self.usable_workers as u32,
        };
        let placed = self.held();
        for (t, name) in self.tenant_names.iter().enumerate() {
            placement.tenants.push(TenantPlacement {
                tenant: (*name).to_owned(),
                weight: self.tenant_weight[t],
                desired: self.tenant_desired[t],
                placeable: self.tenant_demand[t],
                share: self.tenant_share[t],
                placed: placed[t],
            });
        }
        for (a, name) in self.app_names.iter().enumerate() {
            let range = self.range(a);
            for index in 0..self.demanded[a] {
                let worker = range
                    .clone()
                    .nth(index as usize)
                    .map(|slot| self.slots[slot])
                    .filter(|w| *w != EMPTY);
                match worker {
                    Some(w) => placement.assignments.push(Assignment {
                        app: (*name).to_owned(),
                        index,
                        worker: self.worker_names[w as usize].to_owned(),
                    }),
                    None => placement.unplaced.push(((*name).to_owned(), index)),
                }
            }
        }
        placement
    }

    /// Worker `w`'s instances, lowest weight first (ties by slot, i.e. app name then index).
    fn instances_on(&self, w: usize) -> Vec<(u64, usize)> {
        let mut on: Vec<(u64, usize)> = (0..self.slots.len())
            .filter(|s| self.slots[*s] == w as u32)
            .map(|s| {
                let a = self.slot_app[s] as usize;
                (weight(self.app_hash[a], self.worker_hash[w]), s)
            })
            .collect();
        on.sort_unstable();
        on
    }

    fn assign(&mut self, slot: usize, w: u32) {
        self.slots[slot] = w;
        self.load[w as usize] += 1;
    }

    fn unassign(&mut self, slot: usize) {
        if self.slots[slot] != EMPTY {
            self.load[self.slots[slot] as usize] -= 1;
            self.slots[slot] = EMPTY;
        }
    }

    fn range(&self, a: usize) -> std::ops::Range<usize> {
        self.start[a]..self.start[a + 1]
    }

    fn next_generation(&mut self) {
        self.generation += 1;
    }
}

/// The tenant of a `tenant/app` key: the part before the first '/' (the whole key without one).
pub(super) fn tenant_of(app: &str) -> &str {
    app.split_once('/').map_or(app, |(tenant, _)| tenant)
}

fn position(sorted: &[&str], name: &str) -> Option<u32> {
    sorted.binary_search(&name).ok().map(|i| i as u32)
}

/// Workers beyond the instances still to place that are ranked up front: enough to step over
/// the few that are full or already host the app without sorting them all.
const RANKED_AHEAD: usize = 8;

/// One app's workers by descending weight (ties: lower index), sorted lazily: only the head a
/// placement usually needs is selected and sorted, the tail only if the head runs out.
#[derive(Default)]
struct Ranking {
    order: Vec<(Reverse<u64>, u32)>,
    sorted: usize,
}

impl Ranking {
    fn start(&mut self, app_hash: u64, worker_hash: &[u64], needed: usize) {
        self.order.clear();
        self.order.extend(
            worker_hash
                .iter()
                .enumerate()
                .map(|(w, h)| (Reverse(weight(app_hash, *h)), w as u32)),
        );
        let head = (needed + RANKED_AHEAD).min(self.order.len());
        if head < self.order.len() {
            self.order.select_nth_unstable(head);
        }
        self.order[..head].sort_unstable();
        self.sorted = head;
    }

    /// The highest-ranked worker for which `eligible` holds.
    fn first(&mut self, eligible: impl Fn(usize) -> bool) -> Option<usize> {
        let mut from = 0;
        loop {
            let found = self.order[from..self.sorted]
                .iter()
                .find(|(_, w)| eligible(*w as usize));
            if let Some((_, w)) = found {
                return Some(*w as usize);
            }
            if self.sorted == self.order.len() {
                return None;
            }
            self.order[self.sorted..].sort_unstable();
            from = self.sorted;
            self.sorted = self.order.len();
        }
    }
}
