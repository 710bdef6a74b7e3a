use super::*;

const EMULATOR_SAMPLE: &str = r#"{
  "UserConfig": {
    "Namespaces": [{
      "Name": "sbemulatorns",
      "Queues": [{
        "Name": "queue.1",
        "Properties": {
          "DeadLetteringOnMessageExpiration": false,
          "DefaultMessageTimeToLive": "PT1H",
          "DuplicateDetectionHistoryTimeWindow": "PT20S",
          "ForwardDeadLetteredMessagesTo": "",
          "ForwardTo": "",
          "LockDuration": "PT1M",
          "MaxDeliveryCount": 3,
          "RequiresDuplicateDetection": false,
          "RequiresSession": false
        }
      }],
      "Topics": [{
        "Name": "topic.1",
        "Properties": {
          "DefaultMessageTimeToLive": "PT30M",
          "DuplicateDetectionHistoryTimeWindow": "PT20S",
          "RequiresDuplicateDetection": false
        },
        "Subscriptions": [{
          "Name": "subscription.1",
          "Properties": {
            "DeadLetteringOnMessageExpiration": true,
            "DefaultMessageTimeToLive": "PT1H",
            "LockDuration": "PT30S",
            "MaxDeliveryCount": 10,
            "ForwardDeadLetteredMessagesTo": "",
            "ForwardTo": "",
            "RequiresSession": true
          }
        }]
      }]
    }],
    "Logging": { "Type": "File" }
  }
}"#;

#[test]
fn parses_the_emulator_sample() {
    let config = LocalBusConfig::from_json(EMULATOR_SAMPLE).expect("valid");
    assert_eq!(config.namespace, "sbemulatorns");
    let queue = &config.queues[0];
    assert_eq!(queue.name, "queue.1");
    assert_eq!(queue.settings.max_delivery_count, 3);
    assert_eq!(queue.settings.default_ttl, Some(Duration::from_secs(3600)));
    let sub = &config.topics[0].subscriptions[0];
    assert!(sub.settings.requires_session);
    assert!(sub.settings.dead_lettering_on_expiration);
    assert_eq!(sub.settings.lock_duration, Duration::from_secs(30));
    // The topic's 30 min caps the subscription's hour.
    assert_eq!(sub.settings.default_ttl, Some(Duration::from_secs(1800)));
    // Default policies: a Manage one and a Listen-only one.
    assert!(config.manage_policy().is_some());
    assert!(config.listen_only_policy().is_some());
}

#[test]
fn defaults_are_azures() {
    let config = LocalBusConfig::from_json(
        r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q"}]}]}}"#,
    )
    .expect("valid");
    let settings = &config.queues[0].settings;
    assert_eq!(settings.lock_duration, Duration::from_secs(60));
    assert_eq!(settings.max_delivery_count, 10);
    assert_eq!(settings.default_ttl, None);
    assert!(!settings.dead_lettering_on_expiration);
}

#[test]
fn basic_tier_caps_ttl_and_refuses_topics_and_sessions() {
    let ok = LocalBusConfig::from_json(
        r#"{"UserConfig":{"Tier":"Basic","Namespaces":[{"Name":"ns","Queues":[{"Name":"q"}]}]}}"#,
    )
    .expect("valid");
    assert_eq!(
        ok.queues[0].settings.default_ttl,
        Some(Duration::from_secs(14 * 86_400))
    );
    assert!(ok.basic_tier);
}

#[test]
fn errors_name_the_json_path() {
    let cases = [
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Colour":1}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0]",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Properties":{"LockDuration":"1m"}}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Properties.LockDuration",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Properties":{"LockDuration":"PT10M"}}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Properties.LockDuration",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Properties":{"MaxDeliveryCount":0}}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Properties.MaxDeliveryCount",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Properties":{"AutoDeleteOnIdle":"PT1M"}}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Properties.AutoDeleteOnIdle",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Properties":{"ForwardTo":"other"}}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Properties.ForwardTo",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Properties":{"RequiresDuplicateDetection":true}}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Properties.RequiresDuplicateDetection",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"q"},{"Name":"Q"}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[1].Name",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Queues":[{"Name":"a/b"}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Name",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[]}}"#,
            "UserConfig.Namespaces",
        ),
        (
            r#"{"UserConfig":{"Tier":"Gold","Namespaces":[{"Name":"ns"}]}}"#,
            "UserConfig.Tier",
        ),
        (
            r#"{"UserConfig":{"Tier":"Basic","Namespaces":[{"Name":"ns","Topics":[{"Name":"t"}]}]}}"#,
            "UserConfig.Namespaces[0].Topics[0]",
        ),
        (
            r#"{"UserConfig":{"Tier":"Basic","Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Properties":{"DefaultMessageTimeToLive":"P15D"}}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Properties.DefaultMessageTimeToLive",
        ),
        (
            r#"{"UserConfig":{"Tier":"Basic","Namespaces":[{"Name":"ns","Queues":[{"Name":"q","Properties":{"RequiresSession":true}}]}]}}"#,
            "UserConfig.Namespaces[0].Queues[0].Properties.RequiresSession",
        ),
        (
            r#"{"UserConfig":{"Namespaces":[{"Name":"ns","Topics":[{"Name":"t","Subscriptions":[{"Name":"s","Rules":[{}]}]}]}]}}"#,
            "UserConfig.Namespaces[0].Topics[0].Subscriptions[0].Rules",
        ),
        (
            r#"{"UserConfig":{"SharedAccessPolicies":[{"Name":"p","Key":"0123456789","Rights":["Manage"]}],"Namespaces":[{"Name":"ns"}]}}"#,
            "UserConfig.SharedAccessPolicies[0].Rights",
        ),
        (
            r#"{"UserConfig":{"SharedAccessPolicies":[{"Name":"p","Key":"0123456789","Rights":["Read"]}],"Namespaces":[{"Name":"ns"}]}}"#,
            "UserConfig.SharedAccessPolicies[0].Rights[0]",
        ),
    ];
    for (json, path) in cases {
        match LocalBusConfig::from_json(json) {
            Err(LocalBusError::Config { path: got, message }) => {
                assert!(
                    got.starts_with(path),
                    "{json}: error at {got} ({message}), expected {path}"
                )
            }
            other => panic!("{json}: expected a config error at {path}, got {other:?}"),
        }
    }
}

#[test]
fn configured_policies_are_kept_and_defaults_fill_gaps() {
    let config = LocalBusConfig::from_json(
        r#"{"UserConfig":{"SharedAccessPolicies":[{"Name":"sender","Key":"0123456789","Rights":["Send"]}],"Namespaces":[{"Name":"ns"}]}}"#,
    )
    .expect("valid");
    let names: Vec<_> = config.policies.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["sender", DEFAULT_MANAGE_POLICY, DEFAULT_LISTEN_POLICY]
    );
    assert_eq!(config.policies[0].rights, Rights::SEND);
}
