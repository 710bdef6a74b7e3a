//! `Metadata.RetryContext`: which attempt of an invocation this request is, under the
//! function's retry policy. Azure hands the same facts to its workers as `RetryContext`
//! (`RetryCount`, `MaxRetryCount`, `Exception`; `azure-functions-dotnet-worker`
//! `src/DotNetWorker.Core/Context/RetryContext.cs`); a custom handler has no object model, so they travel in the
//! request's metadata. Every attempt carries the same `webhook-id`, the idempotency key.

use serde_json::{Value, json};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryContext {
    /// Retries before this attempt: 0 on the first.
    pub retry_count: u32,
    /// The policy's `maxRetryCount` (−1: until success).
    pub max_retry_count: i32,
    /// Why the previous attempt failed; none on the first.
    pub previous_failure: Option<String>,
}

impl RetryContext {
    /// The context of the next attempt of a message whose retries stand at `state`, under a
    /// policy of `max_retry_count`.
    pub fn of(state: &crate::durable_retry::RetryState, max_retry_count: i32) -> RetryContext {
        RetryContext {
            retry_count: state.retries,
            max_retry_count,
            previous_failure: state.previous_failure.clone(),
        }
    }

    /// Puts the context into `payload`'s `Metadata` (a payload without one is left alone).
    pub fn insert_into(&self, payload: &mut Value) {
        let Some(metadata) = payload.get_mut("Metadata").and_then(Value::as_object_mut) else {
            return;
        };
        let mut context = json!({
            "RetryCount": self.retry_count,
            "MaxRetryCount": self.max_retry_count,
        });
        if let Some(failure) = &self.previous_failure {
            context["Exception"] = json!({ "Message": failure });
        }
        metadata.insert("RetryContext".into(), context);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_carries_its_count_the_maximum_and_the_previous_failure() {
        let mut payload = json!({"Data": {"msg": "x"}, "Metadata": {"DequeueCount": 1}});
        RetryContext {
            retry_count: 2,
            max_retry_count: 3,
            previous_failure: Some("handler answered 500".into()),
        }
        .insert_into(&mut payload);
        assert_eq!(
            payload["Metadata"]["RetryContext"],
            json!({"RetryCount": 2, "MaxRetryCount": 3, "Exception": {"Message": "handler answered 500"}})
        );
        assert_eq!(payload["Metadata"]["DequeueCount"], 1);
    }

    #[test]
    fn the_first_attempt_has_no_exception() {
        let mut payload = json!({"Data": {}, "Metadata": {}});
        RetryContext {
            retry_count: 0,
            max_retry_count: -1,
            previous_failure: None,
        }
        .insert_into(&mut payload);
        assert_eq!(
            payload["Metadata"]["RetryContext"],
            json!({"RetryCount": 0, "MaxRetryCount": -1})
        );
    }
}
