//! Invocation retry policies (`retry` in `host.json` and in a function), as Azure Functions
//! defines them: a fixed delay or an exponential back-off between attempts of a failed
//! invocation, before the trigger's own failure handling (poison queue, dead-letter) applies.

mod schedule;

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::Section;
use crate::timespan::TimeSpan;
use crate::validation::{Problems, ValidationError};

#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetryPolicy {
    pub strategy: RetryStrategy,
    /// Retries per invocation after the first attempt; `-1` retries indefinitely, as in Azure.
    pub max_retry_count: i32,
    /// Wait between attempts; required by and only used with `fixedDelay`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_interval: Option<TimeSpan>,
    /// First back-off; required by and only used with `exponentialBackoff`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum_interval: Option<TimeSpan>,
    /// Longest back-off; required by and only used with `exponentialBackoff`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maximum_interval: Option<TimeSpan>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum RetryStrategy {
    FixedDelay,
    ExponentialBackoff,
}

impl RetryPolicy {
    /// Parses a `retry` object. `strategy` and `maxRetryCount` are required (Azure has no
    /// defaults for them), as are the intervals of the chosen strategy; an interval belonging
    /// to the other strategy is rejected rather than silently ignored, because it usually
    /// means the strategy was not the one intended.
    pub fn parse(value: &Value, prefix: &str) -> Result<RetryPolicy, ValidationError> {
        let mut problems = Problems::new();
        let s = Section::open(
            &mut problems,
            Some(value),
            prefix.to_owned(),
            &[
                "strategy",
                "maxRetryCount",
                "delayInterval",
                "minimumInterval",
                "maximumInterval",
            ],
        );
        if value.is_null() {
            problems.push(prefix, "expected an object");
        }
        let strategy = s.opt_choice(
            &mut problems,
            "strategy",
            &[
                ("fixedDelay", RetryStrategy::FixedDelay),
                ("exponentialBackoff", RetryStrategy::ExponentialBackoff),
            ],
        );
        let max_retry_count = s.opt_int(&mut problems, "maxRetryCount", -1, i64::from(i32::MAX));
        for required in ["strategy", "maxRetryCount"] {
            if value.is_object() && s.raw(required).is_none() {
                problems.push(s.path(required), "is required");
            }
        }
        let delay_interval = s.opt_duration(&mut problems, "delayInterval", TimeSpan::ZERO, None);
        let minimum_interval =
            s.opt_duration(&mut problems, "minimumInterval", TimeSpan::ZERO, None);
        let maximum_interval =
            s.opt_duration(&mut problems, "maximumInterval", TimeSpan::ZERO, None);
        let (needed, unused): (&[&str], &[&str]) = match strategy {
            Some(RetryStrategy::FixedDelay) => {
                (&["delayInterval"], &["minimumInterval", "maximumInterval"])
            }
            Some(RetryStrategy::ExponentialBackoff) => {
                (&["minimumInterval", "maximumInterval"], &["delayInterval"])
            }
            None => (&[], &[]),
        };
        let strategy_name = match strategy {
            Some(RetryStrategy::FixedDelay) => "fixedDelay",
            _ => "exponentialBackoff",
        };
        for field in needed {
            if s.raw(field).is_none() {
                problems.push(
                    s.path(field),
                    format!("is required with strategy {strategy_name}"),
                );
            }
        }
        for field in unused {
            if s.raw(field).is_some() {
                problems.push(
                    s.path(field),
                    format!("is not used with strategy {strategy_name}"),
                );
            }
        }
        if let (Some(min), Some(max)) = (minimum_interval, maximum_interval)
            && min > max
        {
            problems.push(
                s.path("minimumInterval"),
                format!("must not exceed maximumInterval ({max})"),
            );
        }
        problems.finish()?;
        match (
            strategy,
            max_retry_count.and_then(|n| i32::try_from(n).ok()),
        ) {
            (Some(strategy), Some(max_retry_count)) => Ok(RetryPolicy {
                strategy,
                max_retry_count,
                delay_interval,
                minimum_interval,
                maximum_interval,
            }),
            // Unreachable after `finish`, but an error is better than a panic.
            _ => Err(ValidationError::single(
                prefix,
                "is not a valid retry policy",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(value: Value) -> Vec<(String, String)> {
        RetryPolicy::parse(&value, "retry")
            .unwrap_err()
            .errors
            .into_iter()
            .map(|e| (e.path, e.message))
            .collect()
    }

    fn e(path: &str, message: &str) -> (String, String) {
        (path.to_owned(), message.to_owned())
    }

    #[test]
    fn fixed_delay_parses_and_serializes_back() {
        let written =
            json!({"strategy": "fixedDelay", "maxRetryCount": 2, "delayInterval": "00:00:03"});
        let policy = RetryPolicy::parse(&written, "retry").unwrap();
        assert_eq!(policy.strategy, RetryStrategy::FixedDelay);
        assert_eq!(policy.delay_interval, Some(TimeSpan::from_secs(3)));
        assert_eq!(serde_json::to_value(&policy).unwrap(), written);
    }

    #[test]
    fn exponential_backoff_parses_and_serializes_back() {
        let written = json!({
            "strategy": "exponentialBackoff", "maxRetryCount": -1,
            "minimumInterval": "00:00:10", "maximumInterval": "00:15:00"
        });
        let policy = RetryPolicy::parse(&written, "retry").unwrap();
        assert_eq!(policy.max_retry_count, -1);
        assert_eq!(serde_json::to_value(&policy).unwrap(), written);
    }

    #[test]
    fn invalid_policies_report_every_problem() {
        let cases = [
            (
                json!({}),
                vec![
                    e("retry.strategy", "is required"),
                    e("retry.maxRetryCount", "is required"),
                ],
            ),
            (
                json!({"strategy": "fixedDelay", "maxRetryCount": 1}),
                vec![e(
                    "retry.delayInterval",
                    "is required with strategy fixedDelay",
                )],
            ),
            (
                json!({"strategy": "exponentialBackoff", "maxRetryCount": 1, "delayInterval": "00:00:01"}),
                vec![
                    e(
                        "retry.minimumInterval",
                        "is required with strategy exponentialBackoff",
                    ),
                    e(
                        "retry.maximumInterval",
                        "is required with strategy exponentialBackoff",
                    ),
                    e(
                        "retry.delayInterval",
                        "is not used with strategy exponentialBackoff",
                    ),
                ],
            ),
            (
                json!({"strategy": "exponentialBackoff", "maxRetryCount": 1, "minimumInterval": "00:01:00", "maximumInterval": "00:00:10"}),
                vec![e(
                    "retry.minimumInterval",
                    "must not exceed maximumInterval (00:00:10)",
                )],
            ),
            (
                json!({"strategy": "fixedDelay", "maxRetryCount": -2, "delayInterval": "00:00:01"}),
                vec![e("retry.maxRetryCount", "must be at least -1")],
            ),
            (
                json!({"strategy": "linear", "maxRetryCount": 1}),
                vec![e(
                    "retry.strategy",
                    "must be one of \"fixedDelay\", \"exponentialBackoff\"",
                )],
            ),
            (
                json!({"strategy": "fixedDelay", "maxRetryCount": 1, "delayInterval": "soon", "extra": 1}),
                vec![
                    e("retry.extra", "unknown field \"extra\""),
                    e(
                        "retry.delayInterval",
                        "expected a duration like \"00:01:00\" ([d.]hh:mm[:ss[.fff]])",
                    ),
                ],
            ),
            (json!("fixedDelay"), vec![e("retry", "expected an object")]),
            (Value::Null, vec![e("retry", "expected an object")]),
        ];
        for (value, want) in cases {
            assert_eq!(errors(value.clone()), want, "{value}");
        }
    }

    #[test]
    fn equal_minimum_and_maximum_intervals_are_allowed() {
        let written = json!({
            "strategy": "exponentialBackoff", "maxRetryCount": 0,
            "minimumInterval": "00:00:10", "maximumInterval": "00:00:10"
        });
        assert!(RetryPolicy::parse(&written, "retry").is_ok());
    }
}
