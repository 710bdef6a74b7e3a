//! Tenant shares when capacity is short: how many slots each tenant may hold, by weight.
//!
//! Shares are handed out one slot at a time, each to the tenant whose holding per unit of
//! weight would be lowest after taking it (the D'Hondt method), never beyond a tenant's demand.
//! The outcome: for a tenant A still wanting more and any tenant B,
//! `share(B) / weight(B) ≤ (share(A) + 1) / weight(A)` — with equal weights, no tenant holds
//! more than one slot beyond another tenant that still waits.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A tenant's weight in fair placement, as the operator set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantWeight {
    pub tenant: String,
    /// The tenant's `limits.maxInstances`; `None` (no limit) weighs as much as the largest
    /// limit any listed tenant has, so an unlimited tenant never weighs less than a limited
    /// one. Tenants absent from the list, or all tenants when none has a limit, weigh alike.
    pub weight: Option<u32>,
}

/// Each listed tenant's weight with `None` resolved (see [`TenantWeight::weight`]); the
/// weight of tenants not listed is the returned default.
pub(super) fn resolve(weights: &[TenantWeight]) -> (Vec<(&str, u32)>, u32) {
    let default = weights.iter().filter_map(|w| w.weight).max().unwrap_or(1);
    let mut resolved: Vec<(&str, u32)> = weights
        .iter()
        .map(|w| (w.tenant.as_str(), w.weight.unwrap_or(default)))
        .collect();
    // A tenant listed twice counts once, with its largest weight.
    resolved.sort_unstable();
    resolved.reverse();
    resolved.dedup_by_key(|w| w.0);
    resolved.reverse();
    (resolved, default)
}

/// The next slot's claim of one tenant: lower claims are served first.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Claim {
    /// Slots held so far.
    held: u64,
    weight: u32,
    tenant: usize,
}

impl Ord for Claim {
    /// By `(held + 1) / weight`, compared by cross-multiplying; a weight of 0 claims last.
    /// Ties go to the tenant that sorts first.
    fn cmp(&self, other: &Self) -> Ordering {
        let by_weight = if self.weight == 0 && other.weight == 0 {
            self.held.cmp(&other.held)
        } else {
            let mine = u128::from(self.held + 1) * u128::from(other.weight);
            let theirs = u128::from(other.held + 1) * u128::from(self.weight);
            mine.cmp(&theirs)
        };
        by_weight.then(self.tenant.cmp(&other.tenant))
    }
}

impl PartialOrd for Claim {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Shares of `slots` for tenants with these `demands` and `weights` (by tenant index): every
/// demand in full when it fits, otherwise `slots` handed out by weight.
pub(super) fn shares(demands: &[u64], weights: &[u32], slots: u64) -> Vec<u64> {
    if demands.iter().sum::<u64>() <= slots {
        return demands.to_vec();
    }
    let mut held = vec![0u64; demands.len()];
    let mut queue: BinaryHeap<Reverse<Claim>> = demands
        .iter()
        .enumerate()
        .filter(|(_, d)| **d > 0)
        .map(|(tenant, _)| {
            Reverse(Claim {
                held: 0,
                weight: weights[tenant],
                tenant,
            })
        })
        .collect();
    let mut left = slots;
    while left > 0 {
        let Some(Reverse(mut claim)) = queue.pop() else {
            break;
        };
        claim.held += 1;
        held[claim.tenant] = claim.held;
        left -= 1;
        if claim.held < demands[claim.tenant] {
            queue.push(Reverse(claim));
        }
    }
    held
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demand_that_fits_is_met_in_full() {
        assert_eq!(shares(&[3, 4], &[1, 1], 7), [3, 4]);
        assert_eq!(shares(&[3, 4], &[1, 1], 100), [3, 4]);
        assert_eq!(shares(&[], &[], 0), Vec::<u64>::new());
    }

    #[test]
    fn short_slots_go_equally_then_to_who_still_wants() {
        // The case: B wants 20, A wants 1, 10 slots.
        assert_eq!(shares(&[1, 20], &[1, 1], 10), [1, 9]);
        assert_eq!(shares(&[20, 20], &[1, 1], 10), [5, 5]);
        // An odd slot goes to the tenant that sorts first.
        assert_eq!(shares(&[20, 20, 20], &[1, 1, 1], 10), [4, 3, 3]);
        assert_eq!(shares(&[20, 2, 20], &[1, 1, 1], 10), [4, 2, 4]);
    }

    #[test]
    fn weights_split_in_proportion() {
        assert_eq!(shares(&[100, 100], &[3, 1], 20), [15, 5]);
        assert_eq!(shares(&[100, 2], &[1, 3], 20), [18, 2]);
        // Weight 0 takes only what nobody else wants.
        assert_eq!(shares(&[5, 100], &[1, 0], 8), [5, 3]);
        assert_eq!(shares(&[5, 100], &[0, 0], 8), [4, 4]);
    }

    #[test]
    fn unlimited_tenants_weigh_as_the_largest_limit() {
        let w = |tenant: &str, weight| TenantWeight {
            tenant: tenant.to_owned(),
            weight,
        };
        let mixed = [w("b", None), w("a", Some(4)), w("c", Some(10))];
        let (resolved, default) = resolve(&mixed);
        assert_eq!(resolved, [("a", 4), ("b", 10), ("c", 10)]);
        assert_eq!(default, 10);
        let twice = [w("a", None), w("a", Some(3))];
        let (resolved, default) = resolve(&twice);
        assert_eq!((resolved, default), (vec![("a", 3)], 3));
        assert_eq!(resolve(&[]).1, 1);
    }
}
