//! What each trigger scales on, how much one instance is meant to take, and the target
//! instance count that follows (`ceil(metric / per instance)`), as Azure's target scalers do.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::bindings::Binding;
use crate::host_config::HostConfig;

pub use crate::binding_kinds::stream::DEFAULT_KAFKA_LAG_THRESHOLD;

/// What one trigger scales on and how much one instance is meant to take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetRule {
    pub metric: MetricKind,
    /// At least 1.
    pub per_instance: u32,
}

pub use crate::binding_kinds::MetricKind;

/// One reading of a function's metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MetricSample {
    pub value: u64,
    /// Age of the oldest visible message in ms, when the source reports it (storage queues in
    /// incremental mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_time_ms: Option<u64>,
    /// Event Hubs partition count, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<u32>,
}

/// The rule for a trigger binding, with the per-instance figure Azure documents for it.
/// `None` for triggers that do not scale on a backlog (`httpTrigger`; `timerTrigger`, which
/// runs on one instance at a time, as Azure's listener is a singleton), for triggers nothing in
/// Shoal runs ([`Binding::has_runner`]) and for non-trigger bindings.
///
/// Each kind of `crate::binding_kinds` says its own (`BindingKind::metric`,
/// `BindingKind::per_instance`): Service Bus follows Azure's `ServiceBusTargetScaler`, Event
/// Hubs its `EventHubsTargetScaler`, Kafka the extension's `lagThreshold`.
pub fn target_rule(trigger: &Binding, host: &HostConfig) -> Option<TargetRule> {
    // No listener takes a backlog nothing runs, so it asks for no instances: not a target, and
    // not the one instance an unreadable metric keeps to report from. Diagnostics say why.
    if !trigger.has_runner() {
        return None;
    }
    documented_rule(trigger, host)
}

/// Whether a running app needs an instance for this trigger whatever its backlog: a trigger
/// whose listener starts the work itself (`timerTrigger`, whose occurrences come whether or not
/// anything is queued) keeps its app at one instance at least while the app runs.
pub fn needs_an_instance(trigger: &Binding) -> bool {
    trigger.has_runner() && trigger.kind().needs_an_instance()
}

/// The rule Azure documents for a trigger, whether or not Shoal runs it yet.
fn documented_rule(trigger: &Binding, host: &HostConfig) -> Option<TargetRule> {
    let kind = trigger.kind();
    let section = host.extensions.section_of(kind);
    let per_instance = kind.per_instance(trigger, section.as_deref())?;
    let metric = kind.metric();
    // Validation already rejects zeros; a zero here would divide by zero, so it counts as 1.
    Some(TargetRule {
        metric,
        per_instance: per_instance.max(1),
    })
}

/// `ceil(metric / per_instance)`, saturating at `u32::MAX`.
///
/// For [`MetricKind::ConsumerLag`] with a known partition count, the result is capped at the
/// partition count, as Azure's Kafka target scaler does.
///
/// For [`MetricKind::UnprocessedEvents`] with a known partition count, the result is capped at
/// the partition count (an event hub partition is read by one instance at a time) and rounded
/// up to the next count that spreads partitions evenly, as Azure's `EventHubsTargetScaler`
/// does: the valid counts are the distinct values of `ceil(P / c)` for `c` in `1..=P`. With 10
/// partitions they are 1, 2, 3, 4, 5 and 10, so 6 wanted instances become 10 — with 6, four of
/// them would read two partitions and two only one. `Some(0)` partitions is treated as
/// unknown: a real event hub has at least one, and a bad reading must not scale a backlog to 0.
pub fn target_instances(metric: u64, rule: &TargetRule, partitions: Option<u32>) -> u32 {
    let per_instance = u64::from(rule.per_instance.max(1));
    let wanted = u32::try_from(metric.div_ceil(per_instance)).unwrap_or(u32::MAX);
    match (rule.metric, partitions) {
        (MetricKind::UnprocessedEvents, Some(p)) if p > 0 => even_partition_count(wanted, p),
        // A partition is read by one member of the group: more members than partitions idle
        // (Azure/azure-functions-kafka-extension, `Listeners/Scaler/KafkaGenericTargetScaler.cs`,
        // `ValidateWithPartitionCount`).
        (MetricKind::ConsumerLag, Some(p)) if p > 0 => wanted.min(p),
        _ => wanted,
    }
}

/// The smallest `v >= wanted` with `v = ceil(p / c)` for some `c` in `1..=p`, capped at `p`.
///
/// `ceil(p / c)` falls as `c` grows, so the smallest such value at or above `wanted` comes from
/// the largest `c` with `ceil(p / c) >= wanted`, i.e. `p > (wanted - 1) * c`, i.e.
/// `c = (p - 1) / (wanted - 1)`. This is Azure's sorted list plus binary search in O(1).
fn even_partition_count(wanted: u32, p: u32) -> u32 {
    match wanted {
        0 => 0,
        1 => 1,
        w if w >= p => p,
        w => p.div_ceil((p - 1) / (w - 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    use crate::scale::tests::{binding, host};

    fn rule(metric: MetricKind, per_instance: u32) -> Option<TargetRule> {
        Some(TargetRule {
            metric,
            per_instance,
        })
    }

    #[test]
    fn each_trigger_scales_on_its_documented_setting() {
        use MetricKind::*;
        let q =
            json!({"type": "queueTrigger", "name": "m", "direction": "in", "queueName": "orders"});
        let sb = |extra: serde_json::Value| {
            let mut b = json!({"type": "serviceBusTrigger", "name": "m", "direction": "in",
                               "queueName": "orders"});
            b.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            b
        };
        let eh = json!({"type": "eventHubTrigger", "name": "e", "direction": "in",
                        "eventHubName": "hub"});
        let kafka = |extra: serde_json::Value| {
            let mut b = json!({"type": "kafkaTrigger", "name": "k", "direction": "in",
                               "brokerList": "b:9092", "topic": "t"});
            b.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            b
        };
        let cosmos = |extra: serde_json::Value| {
            let mut b = json!({"type": "cosmosDBTrigger", "name": "d", "direction": "in",
                               "databaseName": "db", "containerName": "c", "connection": "Cosmos"});
            b.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            b
        };
        let http = json!({"type": "httpTrigger", "name": "req", "direction": "in"});
        let queue_out =
            json!({"type": "queue", "name": "out", "direction": "out", "queueName": "outbox"});
        let tuned = json!({"extensions": {
            "queues": {"batchSize": 8},
            "serviceBus": {"maxConcurrentCalls": 32, "maxConcurrentSessions": 4,
                           "maxMessageBatchSize": 250},
            "eventHubs": {"maxEventBatchSize": 50, "targetUnprocessedEventThreshold": 153},
        }});
        let cases = [
            (
                "queue default batchSize",
                q.clone(),
                json!({}),
                rule(QueueLength, 16),
            ),
            ("queue batchSize", q, tuned.clone(), rule(QueueLength, 8)),
            (
                "sb single dispatch",
                sb(json!({})),
                json!({}),
                rule(ActiveMessages, 16),
            ),
            (
                "sb maxConcurrentCalls",
                sb(json!({})),
                tuned.clone(),
                rule(ActiveMessages, 32),
            ),
            (
                "sb sessions",
                sb(json!({"isSessionsEnabled": true})),
                json!({}),
                rule(ActiveMessages, 8),
            ),
            (
                "sb batched",
                sb(json!({"isBatched": true})),
                json!({}),
                rule(ActiveMessages, 1000),
            ),
            (
                "sb cardinality many is batched",
                sb(json!({"cardinality": "many"})),
                tuned.clone(),
                rule(ActiveMessages, 250),
            ),
            (
                "sb batched beats sessions",
                sb(json!({"isBatched": true, "isSessionsEnabled": true})),
                tuned.clone(),
                rule(ActiveMessages, 250),
            ),
            (
                "eh maxEventBatchSize",
                eh.clone(),
                json!({}),
                rule(UnprocessedEvents, 100),
            ),
            (
                "eh threshold overrides",
                eh,
                tuned.clone(),
                rule(UnprocessedEvents, 153),
            ),
            (
                "kafka default",
                kafka(json!({})),
                json!({}),
                rule(ConsumerLag, 1000),
            ),
            (
                "kafka lagThreshold",
                kafka(json!({"lagThreshold": 100})),
                json!({}),
                rule(ConsumerLag, 100),
            ),
            (
                "cosmos default",
                cosmos(json!({})),
                json!({}),
                rule(PendingChanges, 100),
            ),
            (
                "cosmos maxItemsPerInvocation",
                cosmos(json!({"maxItemsPerInvocation": 5})),
                json!({}),
                rule(PendingChanges, 5),
            ),
            (
                "http does not scale on a backlog",
                http,
                tuned.clone(),
                None,
            ),
            ("output bindings have no rule", queue_out, tuned, None),
        ];
        for (name, b, h, want) in cases {
            assert_eq!(documented_rule(&binding(b), &host(h)), want, "{name}");
        }
    }

    #[test]
    fn a_trigger_nothing_runs_has_no_rule() {
        let cosmos = binding(
            json!({"type": "cosmosDBTrigger", "name": "d", "direction": "in",
                                    "databaseName": "db", "containerName": "c",
                                    "connection": "Cosmos"}),
        );
        let queue = binding(
            json!({"type": "queueTrigger", "name": "m", "direction": "in",
                                   "queueName": "orders"}),
        );
        let h = HostConfig::default();
        assert_eq!(target_rule(&cosmos, &h), None, "cosmosDBTrigger");
        assert_eq!(
            target_rule(&queue, &h),
            rule(MetricKind::QueueLength, 16),
            "queueTrigger"
        );
    }

    #[test]
    fn event_hubs_zero_threshold_falls_back_to_batch_size() {
        let mut h = HostConfig::default();
        h.extensions.event_hubs.target_unprocessed_event_threshold = Some(0);
        h.extensions.event_hubs.max_event_batch_size = 40;
        let b = binding(json!({"type": "eventHubTrigger", "name": "e", "direction": "in"}));
        assert_eq!(target_rule(&b, &h), rule(MetricKind::UnprocessedEvents, 40));
    }

    #[test]
    fn target_is_the_ceiling_of_metric_over_per_instance() {
        let queue = |per| TargetRule {
            metric: MetricKind::QueueLength,
            per_instance: per,
        };
        let cases = [
            (0, 16, 0),
            (1, 16, 1),
            (16, 16, 1),
            (17, 16, 2),
            (1000, 16, 63),
            (5, 0, 5),
            (u64::MAX, 1, u32::MAX),
        ];
        for (metric, per, want) in cases {
            assert_eq!(
                target_instances(metric, &queue(per), Some(2)),
                want,
                "{metric}/{per}"
            );
        }
    }

    #[test]
    fn event_hub_targets_round_up_to_an_even_spread_and_cap_at_partitions() {
        let eh = TargetRule {
            metric: MetricKind::UnprocessedEvents,
            per_instance: 100,
        };
        // 10 partitions: valid counts 0, 1, 2, 3, 4, 5, 10.
        let cases = [
            (0, Some(10), 0),
            (50, Some(10), 1),
            (150, Some(10), 2),
            (450, Some(10), 5),
            (550, Some(10), 10),
            (5_000, Some(10), 10),
            (5_000, Some(32), 32),
            (1_700, Some(32), 32),
            (1_500, Some(32), 16),
            (1_200, Some(32), 16),
            (1_100, Some(32), 11),
            (5_000, None, 50),
            (5_000, Some(0), 50),
        ];
        for (metric, partitions, want) in cases {
            assert_eq!(
                target_instances(metric, &eh, partitions),
                want,
                "{metric} events, {partitions:?} partitions"
            );
        }
    }

    #[test]
    fn kafka_targets_cap_at_the_partition_count() {
        let kafka = TargetRule {
            metric: MetricKind::ConsumerLag,
            per_instance: 1000,
        };
        let cases = [
            (0, Some(4), 0),
            (1, Some(4), 1),
            (2_500, Some(4), 3),
            (9_000, Some(4), 4),
            (9_000, None, 9),
            (9_000, Some(0), 9),
        ];
        for (lag, partitions, want) in cases {
            assert_eq!(
                target_instances(lag, &kafka, partitions),
                want,
                "lag {lag}, {partitions:?} partitions"
            );
        }
    }

    /// Azure's `GetSortedValidWorkerCountsForPartitionCount` + `GetValidWorkerCount`.
    fn azure_valid_worker_count(wanted: u32, p: u32) -> u32 {
        let mut valid: Vec<u32> = (1..=p).map(|c| p.div_ceil(c)).collect();
        valid.push(0);
        valid.sort_unstable();
        valid.dedup();
        match valid.binary_search(&wanted) {
            Ok(i) => valid[i],
            Err(i) if i < valid.len() => valid[i],
            Err(i) => valid[i - 1],
        }
    }

    proptest! {
        #[test]
        fn even_partition_count_matches_azures_list(wanted in 0u32..300, p in 1u32..260) {
            prop_assert_eq!(even_partition_count(wanted, p), azure_valid_worker_count(wanted, p));
        }
    }
}
