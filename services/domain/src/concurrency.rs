//! `maxConcurrency`: never more than N calls of one function's handler in flight at once,
//! across every instance on every worker (a Shoal extension of `function.json`; Azure Functions
//! has no fleet-wide cap — azure-functions-host #511 — and AWS Lambda's SQS
//! `MaximumConcurrency` is the shape users know).
//!
//! The cap is split into **slots** that instances lease from Postgres in blocks: an instance
//! may start a call only while it holds a free slot under an unexpired lease, so the common
//! case costs no database round trip per message — one short transaction per instance every
//! few seconds renews the block and moves it towards the instance's fair share. This module is
//! the rule each renewal applies ([`allot`]); the store serialises renewals per function and
//! the worker enforces the result.
//!
//! Why the bound holds: renewals of one function never run at once, and each keeps the sum of
//! held slots at or below the cap — except for slots whose calls are still running when the
//! cap is lowered, which are kept until those calls end rather than recalled. A worker that
//! dies keeps its slots until its lease has expired *and* every call it could have started
//! before that has timed out (`calls_end_by`), so the fleet runs below the cap meanwhile,
//! never above it. A worker cut off from Postgres stops starting calls when its own lease
//! ends (measured on its own clock from before the renewal began, so earlier than Postgres'
//! `lease_until`).

use crate::validation::ValidationError;

/// The largest `maxConcurrency` accepted: more calls than any one handler fleet takes, and a
/// bound on the slots a renewal counts.
pub const MAX_CONCURRENCY: u32 = 10_000;

/// Parses `maxConcurrency` (a whole number from 1 to [`MAX_CONCURRENCY`]).
pub fn parse_max_concurrency(
    value: &serde_json::Value,
    path: &str,
) -> Result<u32, ValidationError> {
    value
        .as_u64()
        .filter(|n| (1..=u64::from(MAX_CONCURRENCY)).contains(n))
        .map(|n| n as u32)
        .ok_or_else(|| {
            ValidationError::single(
                path,
                format!("expected a whole number of concurrent handler calls from 1 to {MAX_CONCURRENCY}"),
            )
        })
}

/// Another holder of the function's slots, as a renewal sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtherHolder {
    pub slots: u32,
    /// Its lease has not expired: it counts when the cap is shared out. An expired holder's
    /// slots stay taken until its calls have ended, but it gets no share.
    pub live: bool,
    /// It sorts before the renewing holder (by worker, then instance): the first `cap % n`
    /// live holders get one slot more than the others.
    pub before: bool,
}

/// The renewing holder's own state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnState {
    /// Slots it holds now (0 the first time).
    pub held: u32,
    /// Its calls in flight now; the slots they use are never given up.
    pub in_use: u32,
}

/// What a renewal gives a holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Allotment {
    /// Slots it holds after the renewal (written to Postgres).
    pub hold: u32,
    /// How many calls it may have in flight until the next renewal: at most `hold`, and no
    /// more than its fair share, so that a holder above its share drains towards it and gives
    /// the rest up at a later renewal.
    pub limit: u32,
    /// Its fair share of the cap among the live holders.
    pub share: u32,
}

/// One renewal of a holder's slots under `cap`.
pub fn allot(cap: u32, own: OwnState, others: &[OtherHolder]) -> Allotment {
    let taken: u64 = others.iter().map(|o| u64::from(o.slots)).sum();
    let free = u64::from(cap).saturating_sub(taken) as u32;
    let live = others.iter().filter(|o| o.live).count() as u64 + 1;
    let rank = others.iter().filter(|o| o.live && o.before).count() as u64;
    let cap64 = u64::from(cap);
    let share = (cap64 / live + u64::from(rank < cap64 % live)) as u32;
    let wanted = share.min(free);
    // Slots in use stay held until their calls end, even above the share or the cap.
    let hold = wanted.max(own.held.min(own.in_use));
    Allotment {
        hold,
        limit: wanted,
        share,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn live(slots: u32, before: bool) -> OtherHolder {
        OtherHolder {
            slots,
            live: true,
            before,
        }
    }

    #[test]
    fn renewals_share_the_cap() {
        struct Case {
            name: &'static str,
            cap: u32,
            own: (u32, u32),
            others: Vec<OtherHolder>,
            want: (u32, u32, u32),
        }
        let cases = [
            Case {
                name: "alone: the whole cap",
                cap: 5,
                own: (0, 0),
                others: vec![],
                want: (5, 5, 5),
            },
            Case {
                name: "a newcomer gets nothing while another holds everything",
                cap: 5,
                own: (0, 0),
                others: vec![live(5, true)],
                want: (0, 0, 2),
            },
            Case {
                name: "the first holder by name gets the odd slot",
                cap: 5,
                own: (0, 0),
                others: vec![live(0, false)],
                want: (3, 3, 3),
            },
            Case {
                name: "above its share with calls in flight: keeps them, starts no more",
                cap: 5,
                own: (5, 5),
                others: vec![live(0, true)],
                want: (5, 2, 2),
            },
            Case {
                name: "above its share with fewer calls: gives the idle slots up",
                cap: 5,
                own: (5, 1),
                others: vec![live(0, true)],
                want: (2, 2, 2),
            },
            Case {
                name: "an expired holder's slots stay taken but it gets no share",
                cap: 4,
                own: (0, 0),
                others: vec![OtherHolder {
                    slots: 3,
                    live: false,
                    before: true,
                }],
                want: (1, 1, 4),
            },
            Case {
                name: "more holders than slots: the last ones get none",
                cap: 2,
                own: (0, 0),
                others: vec![live(1, true), live(1, true)],
                want: (0, 0, 0),
            },
            Case {
                name: "a lowered cap: slots in use are kept, nothing new starts",
                cap: 2,
                own: (4, 3),
                others: vec![],
                want: (3, 2, 2),
            },
        ];
        for c in cases {
            let got = allot(
                c.cap,
                OwnState {
                    held: c.own.0,
                    in_use: c.own.1,
                },
                &c.others,
            );
            assert_eq!((got.hold, got.limit, got.share), c.want, "{}", c.name);
        }
    }

    #[test]
    fn max_concurrency_is_a_whole_number_in_range() {
        for ok in [1, 5, MAX_CONCURRENCY] {
            assert_eq!(
                parse_max_concurrency(&serde_json::json!(ok), "m").unwrap(),
                ok
            );
        }
        for bad in [
            serde_json::json!(0),
            serde_json::json!(MAX_CONCURRENCY + 1),
            serde_json::json!(-1),
            serde_json::json!(2.5),
            serde_json::json!("5"),
        ] {
            let err = parse_max_concurrency(&bad, "maxConcurrency").unwrap_err();
            assert_eq!(err.errors[0].path, "maxConcurrency", "{bad}");
        }
    }

    /// Holders renewing one after another in any order, each running any number of calls up
    /// to its limit, never hold more than the cap between them, never run more calls than the
    /// cap, and once they go idle and each has renewed twice every one holds its fair share.
    #[derive(Clone, Debug)]
    struct Step {
        holder: usize,
        in_use: u32,
    }

    proptest! {
        #[test]
        fn slots_never_exceed_the_cap_and_settle_on_fair_shares(
            cap in 1u32..40,
            holders in 1usize..8,
            steps in proptest::collection::vec((0usize..8, 0u32..50), 0..60),
        ) {
            let mut held = vec![0u32; holders];
            let mut limit = vec![0u32; holders];
            let mut in_use = vec![0u32; holders];
            let renew = |i: usize, held: &mut Vec<u32>, limit: &mut Vec<u32>, in_use: &[u32]| {
                let others: Vec<OtherHolder> = (0..held.len())
                    .filter(|j| *j != i)
                    .map(|j| OtherHolder { slots: held[j], live: true, before: j < i })
                    .collect();
                let a = allot(cap, OwnState { held: held[i], in_use: in_use[i] }, &others);
                held[i] = a.hold;
                limit[i] = a.limit;
                a
            };
            for (h, calls) in steps.into_iter().map(|(h, c)| (h % holders, c)) {
                let step = Step { holder: h, in_use: calls };
                renew(step.holder, &mut held, &mut limit, &in_use);
                // Calls end at any time; new ones start only below the limit.
                let running = in_use[step.holder];
                in_use[step.holder] = if step.in_use <= running {
                    step.in_use
                } else {
                    step.in_use.min(limit[step.holder].max(running))
                };
                prop_assert!(held.iter().sum::<u32>() <= cap, "held {held:?} over cap {cap}");
                prop_assert!(in_use.iter().sum::<u32>() <= cap, "in use {in_use:?} over cap {cap}");
                for i in 0..holders {
                    prop_assert!(in_use[i] <= held[i], "holder {i} runs calls on slots it does not hold");
                }
            }
            in_use.iter_mut().for_each(|n| *n = 0);
            for _ in 0..2 {
                for i in 0..holders {
                    renew(i, &mut held, &mut limit, &in_use);
                }
            }
            let n = holders as u32;
            for (i, h) in held.iter().enumerate() {
                let fair = cap / n + u32::from((i as u32) < cap % n);
                prop_assert_eq!(*h, fair, "holder {} of {:?}", i, held);
            }
        }
    }
}
