//! Per-instance targets that are what one listener holds at once, as the workers hold them.
//!
//! A RabbitMQ trigger's target is `prefetchCount`: one instance is meant to take what it holds
//! unacknowledged at once. A worker's listener holds no more than the worker's own limit allows
//! (its held-bytes limit over its message-size limit, which every worker reports with its
//! heartbeat), so an app asking for 250 on workers that hold 32 would be scaled as if each
//! instance took nearly eight times what it does. The scheduler therefore counts one instance
//! as taking what a listener holds on the live worker with the smallest limit — an instance may
//! be placed on any of them, and counting on more than it holds would under-scale the app —
//! through the same function the worker's listener chooses its `basic.qos` with
//! (`BindingKind::held_per_instance`).

use super::targets::TargetRule;
use crate::bindings::Binding;

/// Why a function's per-instance target is lower than its trigger's setting: the setting
/// (`prefetchCount`) asks one instance to take `asked`, but the workers' listeners hold fewer
/// at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldByWorkers {
    pub setting: &'static str,
    pub asked: u32,
}

/// The rule `trigger` scales by when the live workers' listeners hold at most `hold_limit`
/// messages at once (the smallest limit any live worker reports): its per-instance target
/// lowered to what an instance holds, with what the setting asked, for a kind whose target is
/// what a listener holds; `rule` unchanged otherwise, or when the limit is not lower.
pub fn held_rule(
    trigger: &Binding,
    rule: TargetRule,
    hold_limit: Option<u16>,
) -> (TargetRule, Option<HeldByWorkers>) {
    // No live worker reports a limit (none is live, or every one runs a version from before
    // the report): nothing says what an instance will hold, so the target is used as written.
    // Once a worker that reports one is live, the next decision counts on what it holds.
    let Some(limit) = hold_limit else {
        return (rule, None);
    };
    match trigger.kind().held_per_instance(rule.per_instance, limit) {
        Some((setting, held)) if held < rule.per_instance => (
            TargetRule {
                per_instance: held.max(1),
                ..rule
            },
            Some(HeldByWorkers {
                setting,
                asked: rule.per_instance,
            }),
        ),
        _ => (rule, None),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::scale::target_rule;
    use crate::scale::tests::{binding, host};

    #[test]
    fn only_a_target_a_listener_holds_is_lowered_to_the_workers_limit() {
        let rabbit = binding(
            json!({"type": "rabbitMQTrigger", "direction": "in", "name": "m",
                                    "queueName": "orders",
                                    "connectionStringSetting": "Rabbit"}),
        );
        let queue = binding(
            json!({"type": "queueTrigger", "direction": "in", "name": "m",
                                   "queueName": "orders"}),
        );
        let service_bus = binding(json!({"type": "serviceBusTrigger", "direction": "in",
                                         "name": "m", "queueName": "orders"}));
        let prefetch = |n: u32| host(json!({"extensions": {"rabbitMQ": {"prefetchCount": n}}}));
        let tuned = host(json!({"extensions": {"queues": {"batchSize": 32},
                                               "serviceBus": {"maxConcurrentCalls": 100}}}));
        let held = |asked| {
            Some(HeldByWorkers {
                setting: "prefetchCount",
                asked,
            })
        };
        // (case, trigger, host.json, the workers' smallest limit, per instance, why lowered)
        let cases = [
            (
                "prefetch 250, held 32",
                &rabbit,
                prefetch(250),
                Some(32),
                32,
                held(250),
            ),
            (
                "default prefetch under the limit",
                &rabbit,
                prefetch(30),
                Some(32),
                30,
                None,
            ),
            (
                "prefetch at the limit",
                &rabbit,
                prefetch(32),
                Some(32),
                32,
                None,
            ),
            (
                "a worker holding more",
                &rabbit,
                prefetch(250),
                Some(512),
                250,
                None,
            ),
            (
                "a limit of one",
                &rabbit,
                prefetch(250),
                Some(1),
                1,
                held(250),
            ),
            (
                "no worker reports a limit",
                &rabbit,
                prefetch(250),
                None,
                250,
                None,
            ),
            (
                "batchSize is not lowered",
                &queue,
                tuned.clone(),
                Some(8),
                32,
                None,
            ),
            (
                "maxConcurrentCalls is not lowered",
                &service_bus,
                tuned,
                Some(32),
                100,
                None,
            ),
        ];
        for (name, trigger, h, limit, want, why) in cases {
            let rule = target_rule(trigger, &h).expect("the trigger scales");
            let (lowered, held_by) = held_rule(trigger, rule, limit);
            assert_eq!(lowered.per_instance, want, "{name}");
            assert_eq!(lowered.metric, rule.metric, "{name}");
            assert_eq!(held_by, why, "{name}");
        }
    }
}
