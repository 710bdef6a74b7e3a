//! `batchItemFailures`: a stream handler's per-event outcome for a batch, in the shape AWS
//! Lambda's `ReportBatchItemFailures` made familiar — the response body has
//! `"batchItemFailures": [{"itemIdentifier": "<id>"}, …]` naming the events that failed; the
//! others succeeded. Only the named events are retried (as a smaller batch) and, when the retry
//! policy is exhausted, dead-lettered. Azure's extensions have no such contract: a failed batch
//! fails every event in it.
//!
//! An event's identifier is `<partition>-<offset>` ([`item_identifier`], defined with the
//! payload); the handler gets it
//! in `Metadata.ItemIdentifier` (`ItemIdentifierArray` for a batch). As Lambda does, an answer
//! Shoal cannot read with certainty fails the whole batch: a field that is not an array, an
//! element without a non-empty string `itemIdentifier`, or an identifier that is not one of
//! the invocation's events. Absent, `null` or `[]` means every event succeeded (a handler that
//! does not know the field keeps today's behaviour).

use serde_json::Value;

use crate::stream_trigger::payload::StreamEvent;
pub use crate::stream_trigger::payload::item_identifier;

/// Which of `events` (by index, in order) the handler's `batchItemFailures` names as failed;
/// empty when all succeeded. `Err` says why the answer fails the whole batch.
pub fn failed_items(field: Option<&Value>, events: &[&StreamEvent]) -> Result<Vec<usize>, String> {
    let items = match field {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(
                "batchItemFailures must be an array of {\"itemIdentifier\": \"<partition>-<offset>\"}; the whole batch counts as failed".into(),
            );
        }
    };
    let mut failed = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let id = match item.get("itemIdentifier") {
            Some(Value::String(id)) if !id.trim().is_empty() => id.trim(),
            _ => {
                return Err(format!(
                    "batchItemFailures[{i}] needs itemIdentifier, a non-empty string (Metadata.ItemIdentifierArray has each event's); the whole batch counts as failed"
                ));
            }
        };
        let Some(index) = events.iter().position(|e| item_identifier(e) == id) else {
            return Err(format!(
                "batchItemFailures[{i}].itemIdentifier {id:?} is no event of this invocation; the whole batch counts as failed"
            ));
        };
        if !failed.contains(&index) {
            failed.push(index);
        }
    }
    failed.sort_unstable();
    Ok(failed)
}

/// The reason recorded for events the handler reported failed (their dead-letter record, the
/// retry's `PreviousFailure`).
pub fn reported_failure(failed: usize, of: usize) -> String {
    format!("the handler reported {failed} of the batch's {of} events failed (batchItemFailures)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(partition: i32, offset: i64) -> StreamEvent {
        StreamEvent::at("orders", partition, offset)
    }

    #[test]
    fn the_named_events_fail_and_the_rest_succeed() {
        let events = [event(0, 4), event(0, 5), event(1, 4)];
        let refs: Vec<&StreamEvent> = events.iter().collect();
        let cases: [(Option<Value>, Vec<usize>); 6] = [
            (None, vec![]),
            (Some(Value::Null), vec![]),
            (Some(json!([])), vec![]),
            (Some(json!([{"itemIdentifier": "1-4"}])), vec![2]),
            // Order and duplicates do not matter; extra fields are ignored.
            (
                Some(
                    json!([{"itemIdentifier": "1-4"}, {"itemIdentifier": "0-4", "why": "x"}, {"itemIdentifier": " 1-4 "}]),
                ),
                vec![0, 2],
            ),
            (
                Some(
                    json!([{"itemIdentifier": "0-4"}, {"itemIdentifier": "0-5"}, {"itemIdentifier": "1-4"}]),
                ),
                vec![0, 1, 2],
            ),
        ];
        for (field, want) in cases {
            assert_eq!(
                failed_items(field.as_ref(), &refs).as_deref(),
                Ok(want.as_slice()),
                "{field:?}"
            );
        }
    }

    #[test]
    fn an_answer_that_cannot_be_read_fails_the_whole_batch() {
        let events = [event(0, 4), event(1, 4)];
        let refs: Vec<&StreamEvent> = events.iter().collect();
        let cases = [
            (json!({"itemIdentifier": "0-4"}), "must be an array"),
            (json!("0-4"), "must be an array"),
            (
                json!([{"itemIdentifier": ""}]),
                "batchItemFailures[0] needs",
            ),
            (json!([{"itemIdentifier": 4}]), "batchItemFailures[0] needs"),
            (
                json!([{"itemidentifier": "0-4"}]),
                "batchItemFailures[0] needs",
            ),
            (
                json!([{"itemIdentifier": "0-4"}, "1-4"]),
                "batchItemFailures[1] needs",
            ),
            (json!([{"itemIdentifier": "2-4"}]), "\"2-4\" is no event"),
            (json!([{"itemIdentifier": "4"}]), "\"4\" is no event"),
        ];
        for (field, reason) in cases {
            let err = failed_items(Some(&field), &refs).unwrap_err();
            assert!(err.contains(reason), "{field}: {err}");
            assert!(err.contains("whole batch"), "{field}: {err}");
        }
    }

    #[test]
    fn an_event_is_identified_by_partition_and_offset() {
        assert_eq!(item_identifier(&event(3, 17)), "3-17");
    }
}
