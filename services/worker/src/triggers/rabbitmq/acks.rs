//! Which acknowledgements one channel sends for the deliveries its listener has settled.
//!
//! `basic.ack` with `multiple` set acknowledges every unsettled delivery up to its tag at once
//! (AMQP 0-9-1, `basic.ack`), so a run of finished deliveries costs the broker and the worker
//! one frame rather than one each. It must never reach past a delivery still in hand: that one
//! would be acknowledged before its invocation ended, and lost if the worker then died. So the
//! channel's deliveries are tracked in tag order (the broker numbers them upwards per channel)
//! with what became of each:
//!
//! * the settled prefix — every delivery before the first still in hand — is acknowledged with
//!   one `multiple` ack at its highest acknowledged tag (the deliveries settled otherwise in it,
//!   given back or rejected, are already gone from the broker's view, so the ack passes over
//!   them harmlessly);
//! * an acknowledged delivery behind one still in hand is acknowledged alone, so a message held
//!   for a long retry never holds the prefetch window shut for the ones after it.
//!
//! Nothing waits to make a batch bigger: whatever was settled while the last frame was being
//! written goes in the next (`acker`), so under load the runs grow and idle costs no delay.
//!
//! Here Shoal departs from the Azure Functions RabbitMQ extension, which acknowledges each
//! message alone once its function succeeded (`Trigger/RabbitMQListener.cs`:
//! `BasicAck(ea.DeliveryTag, false)`): the broker sees the same messages acknowledged, none
//! earlier than the extension would, in fewer frames.

use std::collections::VecDeque;

/// What became of one delivery, as the listener and its deliveries report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Report {
    /// Handed to a delivery: not to be acknowledged until that delivery says so.
    Taken(u64),
    /// To be acknowledged.
    Ack(u64),
    /// Settled on the channel otherwise (given back, rejected) before this report was sent.
    Settled(u64),
}

/// The acknowledgements to send now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Acks {
    /// One `basic.ack` with `multiple` at this tag.
    pub multiple: Option<u64>,
    /// `basic.ack`s of one delivery each, in tag order.
    pub single: Vec<u64>,
}

impl Acks {
    pub fn is_empty(&self) -> bool {
        self.multiple.is_none() && self.single.is_empty()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    InHand,
    Ack,
    Settled,
}

/// The channel's deliveries not yet acknowledged or forgotten, in tag order.
#[derive(Debug, Default)]
pub struct Outstanding {
    deliveries: VecDeque<(u64, State)>,
    /// Acknowledgements of deliveries that were never reported taken (none are, today; kept so
    /// such a report is acknowledged rather than dropped).
    untracked: Vec<u64>,
}

impl Outstanding {
    pub fn report(&mut self, report: Report) {
        match report {
            Report::Taken(tag) => {
                // Tags rise on a channel; one out of order is kept in place all the same.
                let at = self.deliveries.partition_point(|(t, _)| *t < tag);
                if self.deliveries.get(at).is_none_or(|(t, _)| *t != tag) {
                    self.deliveries.insert(at, (tag, State::InHand));
                }
            }
            Report::Ack(tag) => match self.find(tag) {
                Some(at) => self.deliveries[at].1 = State::Ack,
                None => self.untracked.push(tag),
            },
            Report::Settled(tag) => {
                if let Some(at) = self.find(tag) {
                    self.deliveries[at].1 = State::Settled;
                }
            }
        }
    }

    /// The acknowledgements the reports so far call for; what they cover is forgotten.
    pub fn take_acks(&mut self) -> Acks {
        let mut acks = Acks::default();
        while let Some(&(tag, state)) = self.deliveries.front() {
            match state {
                State::InHand => break,
                State::Ack => acks.multiple = Some(tag),
                State::Settled => {}
            }
            self.deliveries.pop_front();
        }
        self.deliveries.retain(|&(tag, state)| match state {
            State::InHand => true,
            State::Ack => {
                acks.single.push(tag);
                false
            }
            State::Settled => false,
        });
        acks.single.append(&mut self.untracked);
        acks.single.sort_unstable();
        acks
    }

    /// Deliveries taken and not yet reported settled.
    #[cfg(test)]
    pub fn in_hand(&self) -> usize {
        self.deliveries
            .iter()
            .filter(|(_, s)| *s == State::InHand)
            .count()
    }

    fn find(&self, tag: u64) -> Option<usize> {
        self.deliveries.binary_search_by_key(&tag, |(t, _)| *t).ok()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use proptest::prelude::*;

    use super::*;

    fn after(reports: &[Report]) -> (Outstanding, Acks) {
        let mut outstanding = Outstanding::default();
        for r in reports {
            outstanding.report(*r);
        }
        let acks = outstanding.take_acks();
        (outstanding, acks)
    }

    /// A case: its name, the reports, and the `multiple` and single acks they call for.
    type Case<'a> = (&'a str, &'a [Report], Option<u64>, &'a [u64]);

    #[test]
    fn acknowledgements_for_each_shape_of_settlement() {
        use Report::{Ack, Settled, Taken};
        let cases: &[Case] = &[
            ("nothing settled", &[Taken(1), Taken(2)], None, &[]),
            (
                "a settled run",
                &[Taken(1), Taken(2), Ack(2), Ack(1)],
                Some(2),
                &[],
            ),
            (
                "the run stops at one in hand",
                &[Taken(1), Taken(2), Taken(3), Ack(1), Ack(2)],
                Some(2),
                &[],
            ),
            (
                "behind one in hand, one at a time",
                &[Taken(1), Taken(2), Taken(3), Ack(2), Ack(3)],
                None,
                &[2, 3],
            ),
            (
                "a given-back one is passed over",
                &[Taken(1), Taken(2), Taken(3), Ack(1), Settled(2), Ack(3)],
                Some(3),
                &[],
            ),
            (
                "a run that ends given back acks up to its last ack",
                &[Taken(1), Taken(2), Ack(1), Settled(2)],
                Some(1),
                &[],
            ),
            (
                "only given back: nothing to send",
                &[Taken(1), Settled(1)],
                None,
                &[],
            ),
            ("an ack never taken is sent alone", &[Ack(7)], None, &[7]),
            (
                "both at once",
                &[
                    Taken(1),
                    Taken(2),
                    Taken(3),
                    Taken(4),
                    Ack(1),
                    Ack(3),
                    Ack(4),
                ],
                Some(1),
                &[3, 4],
            ),
        ];
        for (name, reports, multiple, single) in cases {
            let (_, acks) = after(reports);
            assert_eq!(acks.multiple, *multiple, "{name}");
            assert_eq!(acks.single, *single, "{name}");
        }
    }

    #[test]
    fn what_was_acknowledged_is_forgotten_and_what_is_in_hand_kept() {
        use Report::{Ack, Taken};
        let (mut outstanding, _) = after(&[Taken(1), Taken(2), Taken(3), Ack(1), Ack(3)]);
        assert_eq!(outstanding.in_hand(), 1);
        assert!(outstanding.take_acks().is_empty());
        outstanding.report(Ack(2));
        assert_eq!(
            outstanding.take_acks(),
            Acks {
                multiple: Some(2),
                single: vec![]
            }
        );
        assert_eq!(outstanding.in_hand(), 0);
    }

    /// The broker's side: the deliveries unsettled on the channel, and the ones acknowledged.
    #[derive(Default)]
    struct Broker {
        unsettled: BTreeSet<u64>,
        acked: Vec<u64>,
    }

    impl Broker {
        fn apply(&mut self, acks: &Acks, wanted: &BTreeSet<u64>) -> Result<(), TestCaseError> {
            if let Some(up_to) = acks.multiple {
                prop_assert!(self.unsettled.contains(&up_to), "multiple at a settled tag");
                let covered: Vec<u64> = self.unsettled.range(..=up_to).copied().collect();
                for tag in covered {
                    prop_assert!(wanted.contains(&tag), "acknowledged {tag} before asked");
                    self.unsettled.remove(&tag);
                    self.acked.push(tag);
                }
            }
            for tag in &acks.single {
                prop_assert!(wanted.contains(tag), "acknowledged {tag} before asked");
                prop_assert!(self.unsettled.remove(tag), "acknowledged {tag} twice");
                self.acked.push(*tag);
            }
            Ok(())
        }
    }

    proptest! {
        /// Whatever order deliveries finish in and however the reports are batched, exactly the
        /// deliveries asked to be acknowledged are, each once, and never one before it was asked.
        #[test]
        fn exactly_the_asked_deliveries_are_acknowledged_once(
            outcomes in prop::collection::vec((any::<bool>(), 0usize..1000, 1usize..4), 1..40),
        ) {
            let mut outstanding = Outstanding::default();
            let mut broker = Broker::default();
            let mut wanted = BTreeSet::new();
            // Every delivery is taken in tag order, then they finish in a shuffled order.
            let n = outcomes.len() as u64;
            for tag in 1..=n {
                outstanding.report(Report::Taken(tag));
                broker.unsettled.insert(tag);
            }
            let mut order: Vec<(usize, u64)> =
                outcomes.iter().enumerate().map(|(i, (_, key, _))| (*key, i as u64 + 1)).collect();
            order.sort();
            for (step, (_, tag)) in order.iter().enumerate() {
                let (acked, _, batch) = outcomes[*tag as usize - 1];
                if acked {
                    wanted.insert(*tag);
                    outstanding.report(Report::Ack(*tag));
                } else {
                    // Given back: the broker forgets it before the report arrives.
                    broker.unsettled.remove(tag);
                    outstanding.report(Report::Settled(*tag));
                }
                if step % batch == 0 {
                    let acks = outstanding.take_acks();
                    broker.apply(&acks, &wanted)?;
                }
            }
            let acks = outstanding.take_acks();
            broker.apply(&acks, &wanted)?;
            prop_assert!(broker.unsettled.is_empty());
            let mut acked = broker.acked.clone();
            acked.sort_unstable();
            prop_assert_eq!(acked, wanted.into_iter().collect::<Vec<_>>());
            prop_assert_eq!(outstanding.in_hand(), 0);
        }
    }
}
