//! The samples the leader records for the dashboard's scale chart: per app, the sum of its
//! trigger functions' latest readings, its desired and its placed instances, at most once per
//! [`SAMPLE_INTERVAL`]. Pure: the tick writes what [`samples`] returns.

use std::collections::HashMap;
use std::time::Instant;

use shoal_store::assignments::AssignmentRecord;
use shoal_store::scale_samples::{SAMPLE_INTERVAL, SampleRecord};

use crate::catalog::AppKey;
use crate::trigger_metrics::Reading;

/// Whether a sample is due, given when the last one was taken.
pub fn due(last: Option<Instant>, now: Instant) -> bool {
    last.is_none_or(|last| now.duration_since(last) >= SAMPLE_INTERVAL)
}

/// One sample per decided app. A function whose metric could not be read adds nothing; an app
/// none of whose functions could be read has no metric.
pub fn samples<'a>(
    decided: impl Iterator<Item = (&'a AppKey, u32)>,
    readings: &HashMap<(AppKey, String), Reading>,
    placed: &[AssignmentRecord],
) -> Vec<SampleRecord> {
    let mut metric: HashMap<&AppKey, i64> = HashMap::new();
    for ((key, _function), reading) in readings {
        if let Ok(r) = &reading.result {
            *metric.entry(key).or_default() += i64::try_from(r.length).unwrap_or(i64::MAX);
        }
    }
    let mut instances: HashMap<(&str, &str), u32> = HashMap::new();
    for a in placed {
        *instances.entry((&a.tenant, &a.app)).or_default() += 1;
    }
    decided
        .map(|(key, desired)| SampleRecord {
            tenant: key.tenant.clone(),
            app: key.app.clone(),
            at: chrono::Utc::now(),
            metric: metric.get(key).copied(),
            desired,
            placed: instances
                .get(&(key.tenant.as_str(), key.app.as_str()))
                .copied()
                .unwrap_or(0),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::trigger_metrics::QueueReading;

    fn key(app: &str) -> AppKey {
        AppKey {
            tenant: "contoso".into(),
            app: app.into(),
        }
    }

    fn reading(result: Result<u64, &str>) -> Reading {
        Reading {
            result: result
                .map(|length| QueueReading {
                    length,
                    queue_time_ms: None,
                    partitions: None,
                })
                .map_err(str::to_owned),
            at: Instant::now(),
            listen_only: false,
        }
    }

    fn placed(app: &str, instance: u32) -> AssignmentRecord {
        AssignmentRecord {
            tenant: "contoso".into(),
            app: app.into(),
            instance,
            worker: format!("w{instance}"),
            epoch: 1,
        }
    }

    #[test]
    fn a_sample_is_due_first_and_then_once_per_interval() {
        let now = Instant::now();
        assert!(due(None, now));
        assert!(!due(
            Some(now),
            now + SAMPLE_INTERVAL - Duration::from_millis(1)
        ));
        assert!(due(Some(now), now + SAMPLE_INTERVAL));
    }

    #[test]
    fn samples_sum_the_readable_metrics_and_count_placed_instances() {
        let (orders, billing, idle) = (key("orders"), key("billing"), key("idle"));
        let readings = HashMap::from([
            ((orders.clone(), "ship".into()), reading(Ok(40))),
            ((orders.clone(), "bill".into()), reading(Ok(2))),
            ((orders.clone(), "broken".into()), reading(Err("403"))),
            (
                (billing.clone(), "charge".into()),
                reading(Err("unreachable")),
            ),
        ]);
        let assignments = [
            placed("orders", 0),
            placed("orders", 1),
            placed("billing", 0),
        ];
        let decided = [(&orders, 3), (&billing, 1), (&idle, 0)];
        let mut got = samples(decided.into_iter(), &readings, &assignments);
        got.sort_by(|a, b| a.app.cmp(&b.app));
        let summary: Vec<(&str, Option<i64>, u32, u32)> = got
            .iter()
            .map(|s| (s.app.as_str(), s.metric, s.desired, s.placed))
            .collect();
        assert_eq!(
            summary,
            [
                ("billing", None, 1, 1),
                ("idle", None, 0, 0),
                ("orders", Some(42), 3, 2)
            ]
        );
    }
}
