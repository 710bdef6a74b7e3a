use super::*;

/// A queue entry as Service Bus answers `GET /orders?api-version=2021-05` (abridged: the
/// namespace attributes and the title/author/link elements of a real answer are kept).
const QUEUE_ENTRY: &str = r#"<entry xml:base="https://contoso.servicebus.windows.net/orders?api-version=2021-05" xmlns="http://www.w3.org/2005/Atom"><id>https://contoso.servicebus.windows.net/orders?api-version=2021-05</id><title type="text">orders</title><published>2026-11-01T10:00:00Z</published><updated>2026-11-01T10:00:00Z</updated><author><name>contoso</name></author><link rel="self" href="https://contoso.servicebus.windows.net/orders?api-version=2021-05"/><content type="application/xml"><QueueDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><LockDuration>PT1M</LockDuration><MaxSizeInMegabytes>1024</MaxSizeInMegabytes><RequiresDuplicateDetection>false</RequiresDuplicateDetection><RequiresSession>false</RequiresSession><DefaultMessageTimeToLive>P10675199DT2H48M5.4775807S</DefaultMessageTimeToLive><DeadLetteringOnMessageExpiration>false</DeadLetteringOnMessageExpiration><DuplicateDetectionHistoryTimeWindow>PT10M</DuplicateDetectionHistoryTimeWindow><MaxDeliveryCount>10</MaxDeliveryCount><EnableBatchedOperations>true</EnableBatchedOperations><SizeInBytes>2048</SizeInBytes><MessageCount>42</MessageCount><IsAnonymousAccessible>false</IsAnonymousAccessible><AuthorizationRules/><Status>Active</Status><CreatedAt>2026-11-01T10:00:00Z</CreatedAt><UpdatedAt>2026-11-01T10:00:00Z</UpdatedAt><AccessedAt>0001-01-01T00:00:00Z</AccessedAt><SupportOrdering>true</SupportOrdering><CountDetails xmlns:d2p1="http://schemas.microsoft.com/netservices/2011/06/servicebus"><d2p1:ActiveMessageCount>37</d2p1:ActiveMessageCount><d2p1:DeadLetterMessageCount>3</d2p1:DeadLetterMessageCount><d2p1:ScheduledMessageCount>2</d2p1:ScheduledMessageCount><d2p1:TransferMessageCount>0</d2p1:TransferMessageCount><d2p1:TransferDeadLetterMessageCount>0</d2p1:TransferDeadLetterMessageCount></CountDetails><AutoDeleteOnIdle>P10675199DT2H48M5.4775807S</AutoDeleteOnIdle><EnablePartitioning>false</EnablePartitioning><EntityAvailabilityStatus>Available</EntityAvailabilityStatus><EnableExpress>false</EnableExpress><MaxMessageSizeInKilobytes>256</MaxMessageSizeInKilobytes></QueueDescription></content></entry>"#;

const EMPTY_FEED: &str = r#"<feed xmlns="http://www.w3.org/2005/Atom"><title type="text">Publicly Listed Services</title><subtitle type="text">This is the list of publicly-listed services currently available.</subtitle><id>uuid:0</id><updated>2026-11-01T10:00:00Z</updated><generator>Service Bus 1.1</generator></feed>"#;

#[test]
fn reads_counts_and_settings_from_a_queue_entry() {
    let d = parse_entry(QUEUE_ENTRY).unwrap().unwrap();
    assert_eq!(
        d.counts,
        MessageCounts {
            active: 37,
            dead_letter: 3,
            scheduled: 2,
            transfer: 0,
            transfer_dead_letter: 0,
        }
    );
    assert_eq!(d.message_count, 42);
    assert_eq!(d.kind, DescriptionKind::Queue);
    assert_eq!(d.status, "Active");
    assert!(!d.requires_session);
    assert_eq!(
        d.settings,
        LiveEntitySettings {
            default_message_time_to_live: TIMESPAN_MAX,
            dead_lettering_on_message_expiration: false,
            auto_delete_on_idle: TIMESPAN_MAX,
            max_delivery_count: 10,
            lock_duration: Duration::from_secs(60),
        }
    );
}

#[test]
fn an_empty_feed_or_another_entry_is_no_entity() {
    assert_eq!(parse_entry(EMPTY_FEED), Ok(None));
    let topic = r#"<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><TopicDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"/></content></entry>"#;
    assert_eq!(parse_entry(topic), Ok(None));
    assert!(parse_entry("<entry><content>").is_err());
    assert!(parse_entry("<entry></content>").is_err());
}

#[test]
fn a_subscription_entry_with_defaults_left_out() {
    let xml = r#"<?xml version="1.0" encoding="utf-8"?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><SubscriptionDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"><LockDuration>PT30S</LockDuration><RequiresSession>true</RequiresSession><DeadLetteringOnMessageExpiration>true</DeadLetteringOnMessageExpiration><MaxDeliveryCount>3</MaxDeliveryCount><MessageCount>5</MessageCount><CountDetails xmlns:d2p1="http://schemas.microsoft.com/netservices/2011/06/servicebus"><d2p1:ActiveMessageCount>5</d2p1:ActiveMessageCount></CountDetails><!-- a comment --><Status>Active</Status></SubscriptionDescription></content></entry>"#;
    let d = parse_entry(xml).unwrap().unwrap();
    assert_eq!(d.kind, DescriptionKind::Subscription);
    assert_eq!(d.counts.active, 5);
    assert!(d.requires_session);
    assert_eq!(d.settings.lock_duration, Duration::from_secs(30));
    assert_eq!(d.settings.default_message_time_to_live, TIMESPAN_MAX);
    assert_eq!(d.settings.max_delivery_count, 3);
    assert!(d.settings.dead_lettering_on_message_expiration);
}

#[test]
fn an_update_keeps_the_description_and_writes_the_settings_in_order() {
    let d = parse_entry(QUEUE_ENTRY).unwrap().unwrap();
    let settings = LiveEntitySettings {
        default_message_time_to_live: Duration::from_secs(14 * 86_400),
        dead_lettering_on_message_expiration: true,
        auto_delete_on_idle: Duration::from_secs(3_600),
        max_delivery_count: 5,
        lock_duration: Duration::from_secs(30),
    };
    let body = updated_entry(&d, &settings);
    let names: Vec<String> = {
        let top = children(&body).unwrap();
        let entry = child(&top, "entry").unwrap();
        let content = child(&children(entry.inner).unwrap(), "content").unwrap();
        let desc = child(&children(content.inner).unwrap(), "QueueDescription").unwrap();
        children(desc.inner)
            .unwrap()
            .iter()
            .map(|e| e.name.to_owned())
            .collect()
    };
    assert_eq!(
        names,
        [
            "LockDuration",
            "MaxSizeInMegabytes",
            "RequiresDuplicateDetection",
            "RequiresSession",
            "DefaultMessageTimeToLive",
            "DeadLetteringOnMessageExpiration",
            "DuplicateDetectionHistoryTimeWindow",
            "MaxDeliveryCount",
            "EnableBatchedOperations",
            "IsAnonymousAccessible",
            "AuthorizationRules",
            "Status",
            "SupportOrdering",
            "AutoDeleteOnIdle",
            "EnablePartitioning",
            "EnableExpress",
            "MaxMessageSizeInKilobytes",
        ]
    );
    // Read back, the entry has the new settings.
    let reread = parse_entry(&body).unwrap().unwrap();
    assert_eq!(reread.settings, settings);
}

#[test]
fn an_update_inserts_settings_the_service_left_out() {
    let xml = r#"<entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><SubscriptionDescription xmlns="http://schemas.microsoft.com/netservices/2010/10/servicebus/connect"><LockDuration>PT1M</LockDuration><RequiresSession>false</RequiresSession><DeadLetteringOnMessageExpiration>false</DeadLetteringOnMessageExpiration><MaxDeliveryCount>10</MaxDeliveryCount><Status>Active</Status><UnknownFutureThing>x</UnknownFutureThing></SubscriptionDescription></content></entry>"#;
    let d = parse_entry(xml).unwrap().unwrap();
    let mut settings = d.settings.clone();
    settings.default_message_time_to_live = Duration::from_secs(600);
    settings.auto_delete_on_idle = Duration::from_secs(300);
    let body = updated_entry(&d, &settings);
    let at = |needle: &str| body.find(needle).unwrap();
    assert!(at("<RequiresSession>") < at("<DefaultMessageTimeToLive>PT10M<"));
    assert!(at("<DefaultMessageTimeToLive>") < at("<DeadLetteringOnMessageExpiration>"));
    assert!(at("<Status>") < at("<AutoDeleteOnIdle>PT5M<"));
    assert!(
        at("<AutoDeleteOnIdle>") < at("<UnknownFutureThing>"),
        "unknown elements stay last"
    );
    assert_eq!(parse_entry(&body).unwrap().unwrap().settings, settings);
}

#[test]
fn reads_the_services_error_detail() {
    let xml = r#"<Error><Code>401</Code><Detail>Manage,EntityRead claims required for this operation. TrackingId:abc, SystemTracker:contoso.servicebus.windows.net:orders</Detail></Error>"#;
    assert_eq!(
        error_detail(xml).as_deref(),
        Some(
            "Manage,EntityRead claims required for this operation. TrackingId:abc, SystemTracker:contoso.servicebus.windows.net:orders"
        )
    );
    assert_eq!(error_detail("not xml <"), None);
}
