//! Which offsets a finished batch commits. A partition's checkpoint is the offset to read next:
//! the highest offset the batch held of that partition, plus one (Kafka's convention, and the
//! extension's `Offset + 1` in `Trigger/MultipleItemFunctionExecutor.cs`).
//!
//! Event Hubs' `batchCheckpointFrequency` commits after every N-th batch only; the batches in
//! between are done but not yet checkpointed, so a crash reads them again (at-least-once, as
//! Azure documents for the setting). A clean stop commits them before leaving the group.

use std::collections::BTreeMap;

/// `(partition, next offset)` for every partition `offsets` (partition, offset) mention, in
/// partition order.
pub fn next_offsets(offsets: impl IntoIterator<Item = (i32, i64)>) -> Vec<(i32, i64)> {
    let mut next: BTreeMap<i32, i64> = BTreeMap::new();
    for (partition, offset) in offsets {
        let candidate = offset.saturating_add(1);
        next.entry(partition)
            .and_modify(|n| *n = (*n).max(candidate))
            .or_insert(candidate);
    }
    next.into_iter().collect()
}

/// The finished batches of one consumer since its last commit.
#[derive(Debug)]
pub struct Checkpoints {
    every: u32,
    batches: u32,
    pending: BTreeMap<i32, i64>,
    /// What this consumer committed last, per partition: a commit never goes backwards.
    committed: BTreeMap<i32, i64>,
}

impl Checkpoints {
    /// Commits after every `every`-th batch (at least 1).
    pub fn new(every: u32) -> Checkpoints {
        Checkpoints {
            every: every.max(1),
            batches: 0,
            pending: BTreeMap::new(),
            committed: BTreeMap::new(),
        }
    }

    /// Records a finished batch's next offsets; returns what to commit now (empty while the
    /// batch count has not reached `every`). Call [`Checkpoints::committed`] once the commit
    /// succeeded; until then the offsets stay pending and are offered again.
    pub fn finished(&mut self, next: &[(i32, i64)]) -> Vec<(i32, i64)> {
        for &(partition, offset) in next {
            if self.committed.get(&partition).is_some_and(|c| *c >= offset) {
                continue;
            }
            self.pending
                .entry(partition)
                .and_modify(|n| *n = (*n).max(offset))
                .or_insert(offset);
        }
        self.batches += 1;
        if self.batches >= self.every {
            self.pending()
        } else {
            Vec::new()
        }
    }

    /// Everything finished and not yet committed.
    pub fn pending(&self) -> Vec<(i32, i64)> {
        self.pending.iter().map(|(p, o)| (*p, *o)).collect()
    }

    /// `offsets` were committed: they leave the pending set and the batch count starts again.
    pub fn committed(&mut self, offsets: &[(i32, i64)]) {
        for &(partition, offset) in offsets {
            if self.pending.get(&partition).is_some_and(|p| *p <= offset) {
                self.pending.remove(&partition);
            }
            let last = self.committed.entry(partition).or_insert(offset);
            *last = (*last).max(offset);
        }
        self.batches = 0;
    }

    /// Forgets partitions this consumer no longer owns: after a rebalance their new owner
    /// reads from the last commit, and a commit for them from here would be refused.
    pub fn retain(&mut self, assigned: &[i32]) {
        self.pending.retain(|p, _| assigned.contains(p));
        self.committed.retain(|p, _| assigned.contains(p));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn next_offsets_are_the_highest_offset_plus_one_per_partition() {
        type Offsets = &'static [(i32, i64)];
        let cases: [(Offsets, Offsets); 4] = [
            (&[], &[]),
            (&[(0, 5)], &[(0, 6)]),
            (&[(1, 3), (0, 7), (1, 4), (0, 8)], &[(0, 9), (1, 5)]),
            // Out of order within a partition (a retried event read again): still the highest.
            (&[(2, 10), (2, 9)], &[(2, 11)]),
        ];
        for (offsets, expected) in cases {
            assert_eq!(
                next_offsets(offsets.iter().copied()),
                expected,
                "{offsets:?}"
            );
        }
    }

    #[test]
    fn every_batch_commits_at_frequency_one() {
        let mut c = Checkpoints::new(1);
        assert_eq!(c.finished(&[(0, 3)]), [(0, 3)]);
        c.committed(&[(0, 3)]);
        assert_eq!(c.finished(&[(1, 9)]), [(1, 9)]);
        c.committed(&[(1, 9)]);
        assert!(c.pending().is_empty());
    }

    #[test]
    fn batch_checkpoint_frequency_holds_commits_until_the_nth_batch() {
        let mut c = Checkpoints::new(3);
        assert!(c.finished(&[(0, 3)]).is_empty());
        assert!(c.finished(&[(0, 5), (1, 2)]).is_empty());
        assert_eq!(c.finished(&[(1, 4)]), [(0, 5), (1, 4)]);
        c.committed(&[(0, 5), (1, 4)]);
        assert!(c.finished(&[(0, 6)]).is_empty());
        // A clean stop commits what is done.
        assert_eq!(c.pending(), [(0, 6)]);
    }

    #[test]
    fn a_failed_commit_is_offered_again_and_an_old_offset_never_is() {
        let mut c = Checkpoints::new(1);
        assert_eq!(c.finished(&[(0, 3)]), [(0, 3)]);
        // The commit failed: nothing confirmed, the next batch offers both.
        assert_eq!(c.finished(&[(0, 5)]), [(0, 5)]);
        c.committed(&[(0, 5)]);
        // A batch read again after a failed commit elsewhere never moves the pointer back.
        assert!(c.finished(&[(0, 4)]).is_empty());
    }

    #[test]
    fn a_revoked_partition_is_not_committed() {
        let mut c = Checkpoints::new(2);
        assert!(c.finished(&[(0, 3), (1, 3)]).is_empty());
        c.retain(&[1]);
        assert_eq!(c.finished(&[(1, 5)]), [(1, 5)]);
    }

    proptest! {
        #[test]
        fn a_commit_never_goes_backwards(batches in proptest::collection::vec(
            proptest::collection::vec((0i32..4, 0i64..1000), 1..10), 1..20), every in 1u32..5) {
            let mut c = Checkpoints::new(every);
            let mut committed: BTreeMap<i32, i64> = BTreeMap::new();
            let mut highest: BTreeMap<i32, i64> = BTreeMap::new();
            for batch in batches {
                for &(p, o) in &batch {
                    let h = highest.entry(p).or_insert(o + 1);
                    *h = (*h).max(o + 1);
                }
                let next = next_offsets(batch);
                let due = c.finished(&next);
                for &(p, o) in &due {
                    let before = committed.insert(p, o);
                    prop_assert!(before.is_none_or(|b| b < o), "{p}: {before:?} then {o}");
                }
                c.committed(&due);
            }
            let rest = c.pending();
            for &(p, o) in &rest {
                let before = committed.insert(p, o);
                prop_assert!(before.is_none_or(|b| b < o));
            }
            // Everything done is committed in the end, at the highest offset + 1.
            prop_assert_eq!(committed, highest);
        }
    }
}
