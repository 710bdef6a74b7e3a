//! The session slots of one listener: what each is doing, the listener's status line that
//! follows from them, and how long an idle slot waits before it asks the broker for a session
//! again. Pure (no I/O), tested below.
//!
//! One line stands for every slot, so it shows the worst of them: a slot the broker stopped
//! answering (`stuck: …`) before one whose last attempt failed (`error: …`) before an open
//! circuit breaker (`paused: …`); `listening` only when every slot is. A slot's state changes
//! only with the outcome of its own next attempt, so one slot accepting sessions does not hide
//! another that is stuck.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::stats::ListenerStats;

/// What a slot did last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SlotState {
    /// Its last attempt was answered (a session, or none free), or it holds a session.
    Listening,
    /// The function's circuit breaker holds it back.
    Paused,
    /// Its last attempt failed (`step: error`); it retries after a growing pause.
    Failing(String),
    /// The broker did not answer its last attempt at all (`step: error`); it gave the
    /// connection up and tries again on a new one.
    Stuck(String),
}

/// The status line of a listener whose slots are in `states`.
pub fn status(states: &[SlotState]) -> String {
    let total = states.len();
    let stuck: Vec<&String> = states
        .iter()
        .filter_map(|s| match s {
            SlotState::Stuck(why) => Some(why),
            _ => None,
        })
        .collect();
    if let Some(why) = stuck.first() {
        return format!(
            "stuck: {} of {total} session slots got no answer from the broker ({why}); \
             they retry on new connections",
            stuck.len()
        );
    }
    if let Some(why) = states.iter().find_map(|s| match s {
        SlotState::Failing(why) => Some(why),
        _ => None,
    }) {
        return format!("error: {why}");
    }
    if states.contains(&SlotState::Paused) {
        return "paused: the function's circuit breaker is open".into();
    }
    "listening".into()
}

/// The slots' states, kept in the listener's statistics line.
pub struct SlotBoard {
    states: Mutex<Vec<SlotState>>,
    stats: Arc<ListenerStats>,
}

impl SlotBoard {
    pub fn new(slots: usize, stats: Arc<ListenerStats>) -> SlotBoard {
        SlotBoard {
            states: Mutex::new(vec![SlotState::Listening; slots]),
            stats,
        }
    }

    /// Records what slot `slot` did and sets the listener's status accordingly.
    pub fn set(&self, slot: usize, state: SlotState) {
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(current) = states.get_mut(slot) {
            *current = state;
        }
        self.stats.set_status(status(&states));
    }
}

/// The first pause of an idle slot after the broker said no session is free.
const FIRST_IDLE_PAUSE: Duration = Duration::from_millis(500);
/// The longest: a session that arrives while every slot idles waits at most this long against
/// a broker that refuses at once (the local stand-in); eight idle slots then ask about 1.6
/// times a second, where they asked as fast as the broker answered. Against Service Bus itself
/// the pause is nothing: the broker holds an accept until a session is free or its wait ends
/// (Azure's SDKs ask it to wait their `TryTimeout`, 60 s), and the time it held counts.
const LONGEST_IDLE_PAUSE: Duration = Duration::from_secs(5);

/// How long an idle slot waits before it asks for a session again: the pause grows (×2 up to
/// [`LONGEST_IDLE_PAUSE`]) while the broker has none, less the time the broker held the
/// attempt; it starts small again once a session is accepted. Azure's session processor does
/// not pause after "no session" because its broker waits instead (azure-sdk-for-net
/// `SessionReceiverManager.ReceiveAndProcessMessagesAsync` returns on `ServiceTimeout` and is
/// called again); Shoal cannot rely on that wait, as `azservicebus` does not ask for one.
pub struct IdlePace(Duration);

impl Default for IdlePace {
    fn default() -> IdlePace {
        IdlePace(FIRST_IDLE_PAUSE)
    }
}

impl IdlePace {
    /// The pause after an attempt that took `attempt` and found no free session.
    pub fn after_none(&mut self, attempt: Duration) -> Duration {
        let pause = self.0.saturating_sub(attempt);
        self.0 = (self.0 * 2).min(LONGEST_IDLE_PAUSE);
        pause
    }

    /// A session was accepted: the next pause starts small again.
    pub fn reset(&mut self) {
        self.0 = FIRST_IDLE_PAUSE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stuck() -> SlotState {
        SlotState::Stuck("accept next session: no answer within 7s".into())
    }

    fn failing() -> SlotState {
        SlotState::Failing("accepting a session: not authorized".into())
    }

    #[test]
    fn the_line_shows_the_worst_slot() {
        use SlotState::{Listening, Paused};
        let cases: Vec<(Vec<SlotState>, &str)> = vec![
            (vec![Listening, Listening], "listening"),
            (
                vec![Listening, Paused],
                "paused: the function's circuit breaker is open",
            ),
            (
                vec![Paused, failing(), Listening],
                "error: accepting a session: not authorized",
            ),
            (
                vec![Listening, stuck(), failing(), Paused],
                "stuck: 1 of 4 session slots got no answer from the broker (accept next \
                 session: no answer within 7s); they retry on new connections",
            ),
            (
                vec![stuck(), stuck()],
                "stuck: 2 of 2 session slots got no answer from the broker (accept next \
                 session: no answer within 7s); they retry on new connections",
            ),
        ];
        for (states, expected) in cases {
            assert_eq!(status(&states), expected, "{states:?}");
        }
    }

    #[test]
    fn a_slot_that_is_answered_again_no_longer_counts_as_stuck() {
        let mut states = vec![SlotState::Listening, stuck()];
        assert!(status(&states).starts_with("stuck: 1 of 2"));
        states[0] = SlotState::Listening;
        assert!(
            status(&states).starts_with("stuck: 1 of 2"),
            "another slot's success does not hide it"
        );
        states[1] = SlotState::Listening;
        assert_eq!(status(&states), "listening");
    }

    #[test]
    fn idle_pauses_grow_to_a_cap_less_the_time_the_broker_held_the_attempt() {
        let mut pace = IdlePace::default();
        let refused_at_once: Vec<Duration> =
            (0..6).map(|_| pace.after_none(Duration::ZERO)).collect();
        let ms = |v: &[u64]| {
            v.iter()
                .map(|m| Duration::from_millis(*m))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            refused_at_once,
            ms(&[500, 1_000, 2_000, 4_000, 5_000, 5_000])
        );

        // A broker that held the attempt for its wait leaves nothing to pause.
        assert_eq!(pace.after_none(Duration::from_secs(60)), Duration::ZERO);
        assert_eq!(
            pace.after_none(Duration::from_secs(2)),
            Duration::from_secs(3)
        );

        pace.reset();
        assert_eq!(pace.after_none(Duration::ZERO), Duration::from_millis(500));
    }
}
