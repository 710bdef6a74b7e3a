use serde_json::json;

use super::*;

const ONE: [&str; 1] = ["aaaa"];
const TWO: [&str; 2] = ["aaaa", "bbbb"];

fn props(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[test]
fn a_single_message_may_ask_any_action() {
    let cases = [
        (json!({"action": "complete"}), Settlement::Complete),
        (json!({"action": "abandon"}), Settlement::abandon()),
        (
            json!({"action": "abandon", "propertiesToModify": {"n": 1}}),
            Settlement::Abandon {
                properties_to_modify: props(json!({"n": 1})),
            },
        ),
        (
            json!({"action": "deadLetter", "reason": "Bad", "description": "why", "lockToken": "AAAA"}),
            Settlement::DeadLetter {
                reason: Some("Bad".into()),
                description: Some("why".into()),
                properties_to_modify: Map::new(),
            },
        ),
        (
            json!({"action": "deadLetter"}),
            Settlement::DeadLetter {
                reason: None,
                description: None,
                properties_to_modify: Map::new(),
            },
        ),
        (
            json!({"action": "defer", "propertiesToModify": {"stage": "later", "ok": true}}),
            Settlement::Defer {
                properties_to_modify: props(json!({"stage": "later", "ok": true})),
            },
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(
            requested_settlements(Some(&value), &ONE),
            Ok(vec![Some(expected)]),
            "{value}"
        );
        assert_eq!(
            requested_settlements(Some(&json!([value])), &ONE).map(|v| v.len()),
            Ok(1),
            "the array form works for one message too"
        );
    }
}

#[test]
fn nothing_asked_settles_nothing() {
    assert_eq!(requested_settlements(None, &TWO), Ok(vec![None, None]));
    assert_eq!(
        requested_settlements(Some(&Value::Null), &ONE),
        Ok(vec![None])
    );
    assert_eq!(
        requested_settlements(Some(&json!([])), &TWO),
        Ok(vec![None, None])
    );
}

#[test]
fn a_batch_settles_per_message_by_lock_token() {
    let value = json!([{"lockToken": "bbbb", "action": "deadLetter", "reason": "r"}]);
    let settled = requested_settlements(Some(&value), &TWO).expect("valid");
    assert_eq!(settled[0], None, "unnamed: settled automatically");
    assert!(matches!(settled[1], Some(Settlement::DeadLetter { .. })));
}

#[test]
fn bad_settlements_say_why() {
    let cases = [
        (
            json!("complete"),
            &ONE[..],
            "Settlement must be an object, or for a batch an array of objects",
        ),
        (
            json!({}),
            &ONE[..],
            "Settlement: action is required: complete, abandon, deadLetter or defer",
        ),
        (
            json!({"action": "retry"}),
            &ONE[..],
            "Settlement: unknown action \"retry\"; one of complete, abandon, deadLetter, defer",
        ),
        (
            json!({"action": "complete", "later": 1}),
            &ONE[..],
            "Settlement: unknown key \"later\"; known keys: action, lockToken, reason, description, propertiesToModify",
        ),
        (
            json!({"action": "abandon", "reason": "x"}),
            &ONE[..],
            "Settlement: reason and description apply to deadLetter only",
        ),
        (
            json!({"action": "defer", "propertiesToModify": {"x": [1]}}),
            &ONE[..],
            "Settlement: propertiesToModify.x must be a string, number or boolean",
        ),
        (
            json!({"action": "defer", "propertiesToModify": 3}),
            &ONE[..],
            "Settlement: propertiesToModify must be an object",
        ),
        (
            json!({"action": "complete", "propertiesToModify": {"a": 1}}),
            &ONE[..],
            "Settlement: complete takes no propertiesToModify",
        ),
        (
            json!({"action": 1}),
            &ONE[..],
            "Settlement: action must be a string",
        ),
        (
            json!({"action": "complete", "lockToken": "zzzz"}),
            &ONE[..],
            "Settlement: lockToken names no message of this invocation",
        ),
        (
            json!([{"action": "complete"}]),
            &TWO[..],
            "Settlement[0]: lockToken is required when the invocation has several messages",
        ),
        (
            json!([{"action": "complete", "lockToken": "aaaa"}, {"action": "abandon", "lockToken": "aaaa"}]),
            &TWO[..],
            "Settlement[1]: settles a message already settled by an earlier entry",
        ),
        (json!([1]), &TWO[..], "Settlement[0]: must be an object"),
    ];
    for (value, tokens, expected) in cases {
        let error = requested_settlements(Some(&value), tokens).expect_err(&value.to_string());
        assert_eq!(error.to_string(), expected, "{value}");
    }
}

#[test]
fn after_an_invocation_azure_rules_apply() {
    use AfterInvocation::*;
    let dead = Settlement::DeadLetter {
        reason: None,
        description: None,
        properties_to_modify: Map::new(),
    };
    let cases = [
        (true, None, true, Settle(Settlement::Complete)),
        (true, None, false, LeaveLocked),
        (true, Some(dead.clone()), true, Settle(dead.clone())),
        (true, Some(dead.clone()), false, Settle(dead.clone())),
        (false, None, true, Settle(Settlement::abandon())),
        (false, None, false, Settle(Settlement::abandon())),
        (false, Some(dead), true, Settle(Settlement::abandon())),
    ];
    for (succeeded, requested, auto, expected) in cases {
        assert_eq!(
            after_invocation(succeeded, requested.clone(), auto),
            expected,
            "{succeeded} {requested:?} {auto}"
        );
    }
}

#[test]
fn locks_are_renewed_before_they_end() {
    let s = Duration::from_secs;
    let cases = [
        (s(60), s(50)),
        (s(30), s(20)),
        (s(10), s(5)),
        (Duration::from_millis(399), Duration::ZERO),
        (Duration::ZERO, Duration::ZERO),
    ];
    for (remaining, expected) in cases {
        assert_eq!(lock_renewal_delay(remaining), expected, "{remaining:?}");
    }
}
