use std::time::Duration;

use serde_json::json;

use super::*;

fn settings(value: serde_json::Value) -> EntitySettings {
    serde_json::from_value(value).expect("valid entity settings")
}

fn fields(settings: &EntitySettings, context: EntityContext) -> Vec<&'static str> {
    check(settings, context)
        .into_iter()
        .map(|(f, _)| f)
        .collect()
}

#[test]
fn checks_each_setting_against_the_service_ranges() {
    let queue = EntityContext::default();
    let cases: Vec<(serde_json::Value, Vec<&str>)> = vec![
        (json!({}), vec![]),
        (json!({"autoDeleteOnIdle": "00:05:00"}), vec![]),
        (json!({"autoDeleteOnIdle": "PT5M"}), vec![]),
        (
            json!({"autoDeleteOnIdle": "00:04:59"}),
            vec!["autoDeleteOnIdle"],
        ),
        (
            json!({"autoDeleteOnIdle": "PT1M"}),
            vec!["autoDeleteOnIdle"],
        ),
        (json!({"lockDuration": "00:00:05"}), vec![]),
        (json!({"lockDuration": "00:05:00"}), vec![]),
        (json!({"lockDuration": "00:00:04"}), vec!["lockDuration"]),
        (json!({"lockDuration": "00:05:01"}), vec!["lockDuration"]),
        (json!({"maxDeliveryCount": 1}), vec![]),
        (json!({"maxDeliveryCount": 0}), vec!["maxDeliveryCount"]),
        (json!({"maxDeliveryCount": -3}), vec!["maxDeliveryCount"]),
        (
            json!({"maxDeliveryCount": 3_000_000_000_i64}),
            vec!["maxDeliveryCount"],
        ),
        (json!({"defaultMessageTimeToLive": "00:00:01"}), vec![]),
        (
            json!({"defaultMessageTimeToLive": "00:00:00"}),
            vec!["defaultMessageTimeToLive"],
        ),
        (json!({"defaultMessageTimeToLive": "365.00:00:00"}), vec![]),
        (
            json!({"tier": "basic", "defaultMessageTimeToLive": "14.00:00:00"}),
            vec![],
        ),
        (
            json!({"tier": "Basic", "defaultMessageTimeToLive": "P14D"}),
            vec![],
        ),
        (
            json!({"tier": "basic", "defaultMessageTimeToLive": "14.00:00:01"}),
            vec!["defaultMessageTimeToLive"],
        ),
        (
            json!({"tier": "basic", "defaultMessageTimeToLive": "P15D"}),
            vec!["defaultMessageTimeToLive"],
        ),
        (
            json!({"tier": "standard", "defaultMessageTimeToLive": "P15D"}),
            vec![],
        ),
        (
            json!({"tier": "premium", "defaultMessageTimeToLive": "P365D"}),
            vec![],
        ),
        (
            json!({"autoDeleteOnIdle": "00:01:00", "lockDuration": "00:10:00", "maxDeliveryCount": 0}),
            vec!["autoDeleteOnIdle", "lockDuration", "maxDeliveryCount"],
        ),
    ];
    for (value, want) in cases {
        assert_eq!(fields(&settings(value.clone()), queue), want, "{value}");
    }
}

#[test]
fn basic_tier_has_no_topics_and_no_sessions() {
    let basic = settings(json!({"tier": "basic"}));
    let standard = settings(json!({"tier": "standard"}));
    let topic = EntityContext {
        topic: true,
        sessions: false,
    };
    let sessions = EntityContext {
        topic: false,
        sessions: true,
    };
    assert_eq!(fields(&basic, topic), vec!["tier"]);
    assert_eq!(fields(&basic, sessions), vec!["tier"]);
    assert!(fields(&standard, topic).is_empty());
    assert!(fields(&standard, sessions).is_empty());
    assert!(fields(&EntitySettings::default(), topic).is_empty());
}

#[test]
fn unknown_properties_and_bad_durations_are_refused() {
    for value in [
        json!({"lockDurations": "00:01:00"}),
        json!({"lockDuration": "1 minute"}),
        json!({"lockDuration": 60}),
        json!({"tier": "gold"}),
        json!({"requiresSession": true}),
    ] {
        assert!(
            serde_json::from_value::<EntitySettings>(value.clone()).is_err(),
            "{value}"
        );
    }
}

#[test]
fn reads_back_what_was_written() {
    let written = json!({
        "tier": "basic",
        "defaultMessageTimeToLive": "P7D",
        "deadLetteringOnMessageExpiration": true,
        "autoDeleteOnIdle": "01:00:00",
        "maxDeliveryCount": 5,
        "lockDuration": "PT30S"
    });
    let parsed = settings(written.clone());
    assert_eq!(serde_json::to_value(&parsed).unwrap(), written);
    assert!(parsed.declares_entity());
    assert!(!settings(json!({"tier": "basic"})).declares_entity());
}

fn live() -> LiveEntitySettings {
    LiveEntitySettings {
        default_message_time_to_live: TIMESPAN_MAX,
        dead_lettering_on_message_expiration: false,
        auto_delete_on_idle: TIMESPAN_MAX,
        max_delivery_count: 10,
        lock_duration: Duration::from_secs(60),
    }
}

#[test]
fn drift_lists_each_declared_setting_the_entity_lacks() {
    // (declared, [(setting, declared, live)])
    type Case = (
        serde_json::Value,
        Vec<(&'static str, &'static str, &'static str)>,
    );
    let cases: Vec<Case> = vec![
        (json!({}), vec![]),
        (json!({"tier": "standard"}), vec![]),
        (
            json!({"lockDuration": "PT1M", "maxDeliveryCount": 10}),
            vec![],
        ),
        (
            json!({"lockDuration": "00:00:30"}),
            vec![("lockDuration", "00:00:30", "00:01:00")],
        ),
        (
            json!({"defaultMessageTimeToLive": "P14D", "deadLetteringOnMessageExpiration": true}),
            vec![
                ("defaultMessageTimeToLive", "P14D", "unlimited"),
                ("deadLetteringOnMessageExpiration", "true", "false"),
            ],
        ),
        (
            json!({"autoDeleteOnIdle": "01:00:00", "maxDeliveryCount": 3}),
            vec![
                ("autoDeleteOnIdle", "01:00:00", "unlimited"),
                ("maxDeliveryCount", "3", "10"),
            ],
        ),
    ];
    for (declared, want) in cases {
        let got = drift(&settings(declared.clone()), &live());
        let got: Vec<(&str, &str, &str)> = got
            .iter()
            .map(|d| (d.setting.as_str(), d.declared.as_str(), d.live.as_str()))
            .collect();
        assert_eq!(got, want, "{declared}");
    }
}

#[test]
fn reconciling_puts_in_what_is_declared_and_is_idempotent() {
    let declared = settings(json!({
        "defaultMessageTimeToLive": "P14D",
        "deadLetteringOnMessageExpiration": true,
        "maxDeliveryCount": 3,
    }));
    let once = reconciled(&declared, &live());
    assert_eq!(
        once.default_message_time_to_live,
        Duration::from_secs(14 * 86_400)
    );
    assert!(once.dead_lettering_on_message_expiration);
    assert_eq!(once.max_delivery_count, 3);
    assert_eq!(once.lock_duration, live().lock_duration, "undeclared: kept");
    assert_eq!(once.auto_delete_on_idle, TIMESPAN_MAX, "undeclared: kept");
    assert!(drift(&declared, &once).is_empty());
    assert_eq!(reconciled(&declared, &once), once);
    assert_eq!(reconciled(&EntitySettings::default(), &live()), live());
}
