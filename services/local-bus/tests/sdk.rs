//! The local Service Bus stand-in driven by Microsoft's `azure-servicebus` Python SDK
//! (`tests/sdk/scenarios.py`): the fidelity check nobody here wrote the client for. Each test
//! starts its own `LocalBus` on a free port.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use shoal_local_bus::{LocalBus, LocalBusConfig};

const CONFIG: &str = r#"{
  "UserConfig": {
    "Namespaces": [{
      "Name": "localbus",
      "Queues": [
        { "Name": "orders" },
        { "Name": "counted" },
        { "Name": "fragile", "Properties": { "MaxDeliveryCount": 2 } },
        { "Name": "short-lock", "Properties": { "LockDuration": "PT5S" } },
        { "Name": "expiring-dlq", "Properties": { "DeadLetteringOnMessageExpiration": true } },
        { "Name": "sessions", "Properties": { "RequiresSession": true } }
      ],
      "Topics": [{
        "Name": "events",
        "Subscriptions": [ { "Name": "audit" }, { "Name": "billing" } ]
      }]
    }]
  }
}"#;

struct Harness {
    bus: LocalBus,
    ca_file: PathBuf,
}

impl Harness {
    async fn start() -> Harness {
        let config = LocalBusConfig::from_json(CONFIG).expect("the test configuration is valid");
        let bus = LocalBus::start(config).await.expect("the stand-in starts");
        let ca_file = std::env::temp_dir().join(format!("shoal-local-bus-{}-ca.pem", bus.port()));
        std::fs::write(&ca_file, bus.tls_ca_pem()).expect("the CA file is written");
        Harness { bus, ca_file }
    }

    async fn run(&self, scenario: &str, args: &[&str]) -> Value {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sdk/scenarios.py");
        let bad = self
            .bus
            .connection_string()
            .replace("SharedAccessKey=", "SharedAccessKey=wrong");
        let env: HashMap<String, String> = [
            ("SB_CONNECTION", self.bus.connection_string()),
            (
                "SB_LISTEN_CONNECTION",
                self.bus.listen_only_connection_string(),
            ),
            ("SB_BAD_CONNECTION", bad),
            ("REQUESTS_CA_BUNDLE", self.ca_file.display().to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect();
        let mut all = vec![scenario];
        all.extend_from_slice(args);
        shoal_testkit::python::run_json(&script, &all, &env, Duration::from_secs(120))
            .await
            .unwrap_or_else(|e| panic!("scenario {scenario}: {e:#}"))
    }

    async fn stop(self) {
        let _ = std::fs::remove_file(&self.ca_file);
        self.bus.shutdown().await;
    }
}

#[tokio::test]
async fn send_receive_and_complete_keep_the_message_intact() {
    let h = Harness::start().await;
    let out = h.run("send_receive_complete", &[]).await;
    let received = out["received"].as_array().expect("a list");
    assert_eq!(received.len(), 3, "{out}");
    let first = &received[0];
    assert_eq!(first["body"], "hello");
    assert_eq!(first["message_id"], "m-1");
    assert_eq!(first["subject"], "greeting");
    assert_eq!(first["content_type"], "text/plain");
    assert_eq!(first["correlation_id"], "c-1");
    assert_eq!(first["application_properties"]["tenant"], "t-1");
    assert_eq!(first["application_properties"]["attempt"], 3);
    assert_eq!(first["delivery_count"], 0);
    assert_eq!(first["time_to_live"], 300.0);
    assert!(
        first["enqueued_time"].is_string() && first["locked_until"].is_string(),
        "{first}"
    );
    assert!(first["lock_token"].is_string(), "{first}");
    let bodies: Vec<_> = received
        .iter()
        .map(|m| m["body"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(bodies, ["hello", "batched-1", "batched-2"]);
    let sequence: Vec<_> = received
        .iter()
        .map(|m| m["sequence_number"].as_i64().unwrap_or_default())
        .collect();
    assert!(sequence.windows(2).all(|w| w[0] < w[1]), "{sequence:?}");
    assert_eq!(out["after_complete"], 0);
    h.stop().await;
}

#[tokio::test]
async fn abandon_raises_the_delivery_count() {
    let h = Harness::start().await;
    let out = h.run("abandon", &[]).await;
    assert_eq!(out["delivery_counts"], serde_json::json!([0, 1]));
    h.stop().await;
}

#[tokio::test]
async fn dead_letter_keeps_reason_and_description() {
    let h = Harness::start().await;
    let out = h.run("dead_letter", &[]).await;
    let dead = &out["dead_lettered"];
    assert_eq!(dead["body"], "poison");
    assert_eq!(dead["dead_letter_reason"], "BadOrder");
    assert_eq!(dead["dead_letter_error_description"], "total is negative");
    assert_eq!(dead["application_properties"]["k"], "v");
    assert_eq!(out["remaining"], 0);
    h.stop().await;
}

#[tokio::test]
async fn max_delivery_count_moves_the_message_to_the_dead_letter_queue() {
    let h = Harness::start().await;
    let out = h.run("max_delivery", &[]).await;
    assert_eq!(out["deliveries"], serde_json::json!([0, 1]), "{out}");
    let dead = &out["dead_lettered"];
    assert_eq!(dead["body"], "fragile body");
    assert_eq!(dead["application_properties"]["order"], "o-9");
    assert_eq!(dead["dead_letter_reason"], "MaxDeliveryCountExceeded");
    assert_eq!(dead["dead_letter_source"], "fragile");
    h.stop().await;
}

#[tokio::test]
async fn deferred_messages_come_back_by_sequence_number_only() {
    let h = Harness::start().await;
    let out = h.run("defer", &[]).await;
    assert_eq!(out["visible_after_defer"], 0);
    assert_eq!(out["deferred_bodies"], serde_json::json!(["later"]));
    h.stop().await;
}

#[tokio::test]
async fn renew_lock_extends_it() {
    let h = Harness::start().await;
    let out = h.run("renew_lock", &[]).await;
    assert_eq!(out["extended"], true, "{out}");
    h.stop().await;
}

#[tokio::test]
async fn an_expired_lock_redelivers_with_a_higher_delivery_count() {
    let h = Harness::start().await;
    let out = h.run("lock_expiry", &[]).await;
    assert_eq!(out["first"], 0);
    assert_eq!(out["again"], serde_json::json!([1]), "{out}");
    assert!(
        out["waited"].as_f64().unwrap_or_default() >= 3.0,
        "redelivered before the 5 s lock ended: {out}"
    );
    assert!(
        out["complete_expired_lock"].is_string(),
        "completing with a lost lock must fail: {out}"
    );
    h.stop().await;
}

#[tokio::test]
async fn scheduled_messages_arrive_at_their_time_and_can_be_cancelled() {
    let h = Harness::start().await;
    let out = h.run("schedule", &[]).await;
    assert!(out["sequence_number"].as_i64().unwrap_or_default() > 0);
    assert_eq!(out["peeked"], serde_json::json!(["scheduled"]), "{out}");
    assert_eq!(out["early"], 0);
    assert_eq!(out["received"], serde_json::json!(["scheduled"]));
    assert_eq!(out["later"], serde_json::json!([]));
    assert_eq!(out["enqueued_not_before_schedule"], true);
    h.stop().await;
}

#[tokio::test]
async fn receive_and_delete_removes_the_message() {
    let h = Harness::start().await;
    let out = h.run("receive_and_delete", &[]).await;
    assert_eq!(out["received"], serde_json::json!(["gone"]));
    assert_eq!(out["after"], 0);
    h.stop().await;
}

#[tokio::test]
async fn expired_messages_are_never_delivered_and_dead_lettered_only_when_configured() {
    let h = Harness::start().await;
    let dropped = h.run("expiry", &["orders"]).await;
    assert_eq!(dropped["live"], serde_json::json!([]));
    assert_eq!(dropped["dead_lettered"], serde_json::json!([]));
    let kept = h.run("expiry", &["expiring-dlq"]).await;
    assert_eq!(kept["live"], serde_json::json!([]));
    let dead = kept["dead_lettered"].as_array().expect("a list");
    assert_eq!(dead.len(), 1, "{kept}");
    assert_eq!(dead[0]["body"], "short-lived");
    assert_eq!(dead[0]["dead_letter_reason"], "TTLExpiredException");
    h.stop().await;
}

#[tokio::test]
async fn a_locked_message_does_not_expire_until_its_lock_ends() {
    let h = Harness::start().await;
    let out = h.run("locked_not_expired", &[]).await;
    assert_eq!(out["completed_after_ttl"], true, "{out}");
    h.stop().await;
}

#[tokio::test]
async fn a_scheduled_message_expires_counting_from_its_enqueue_time() {
    let h = Harness::start().await;
    let out = h.run("scheduled_expiry", &[]).await;
    assert_eq!(
        out["received"],
        serde_json::json!(["scheduled-ttl"]),
        "{out}"
    );
    h.stop().await;
}

#[tokio::test]
async fn admin_runtime_properties_count_active_dead_lettered_and_scheduled() {
    let h = Harness::start().await;
    let out = h.run("admin_counts", &[]).await;
    assert_eq!(out["active"], 2, "{out}");
    assert_eq!(out["dead_letter"], 1);
    assert_eq!(out["scheduled"], 1);
    assert_eq!(out["total"], 4);
    assert_eq!(out["max_delivery_count"], 10);
    assert_eq!(out["lock_duration"], 60.0);
    h.stop().await;
}

#[tokio::test]
async fn a_listen_only_key_is_refused_for_management() {
    let h = Harness::start().await;
    let out = h.run("admin_listen_only", &[]).await;
    assert_eq!(out["refused"], true, "{out}");
    assert_eq!(out["status"], 401, "{out}");
    h.stop().await;
}

#[tokio::test]
async fn a_bad_key_and_a_listen_only_sender_are_refused() {
    let h = Harness::start().await;
    let out = h.run("bad_key", &[]).await;
    assert_ne!(out["send"], "sent", "{out}");
    assert_ne!(out["listen_only_send"], "sent", "{out}");
    h.stop().await;
}

#[tokio::test]
async fn sessions_are_fifo_and_exclusive() {
    let h = Harness::start().await;
    let out = h.run("sessions", &[]).await;
    assert_eq!(
        out["a"],
        serde_json::json!([["a0", "A"], ["a1", "A"], ["a2", "A"]]),
        "{out}"
    );
    assert_ne!(out["exclusive"], "second receiver got the session", "{out}");
    assert_eq!(out["renewed"], true);
    assert_eq!(out["state"], "checkpoint");
    assert_eq!(out["next_available"], "B");
    assert_eq!(out["rest"], serde_json::json!([["b0", "B"]]));
    h.stop().await;
}

#[tokio::test]
async fn topics_fan_out_to_every_subscription() {
    let h = Harness::start().await;
    let out = h.run("topics", &[]).await;
    assert_eq!(out["audit"], serde_json::json!(["fan-out"]), "{out}");
    assert_eq!(out["billing"], serde_json::json!(["fan-out"]));
    assert_eq!(
        out["billing_dlq"],
        serde_json::json!([["fan-out", "billing-failed"]])
    );
    assert_eq!(out["subscription_count"], 2);
    assert_eq!(out["audit_active"], 0);
    h.stop().await;
}

#[tokio::test]
async fn admin_client_creates_and_updates_entities() {
    let h = Harness::start().await;
    let out = h.run("admin_create_update", &[]).await;
    assert_eq!(out["created_max_delivery_count"], 4, "{out}");
    assert_eq!(out["created_lock_duration"], 30.0);
    assert_eq!(out["updated_max_delivery_count"], 7);
    assert_eq!(out["updated_auto_delete_on_idle"], 600.0);
    assert_eq!(
        out["refused_status"], 400,
        "autoDeleteOnIdle under 5 minutes must be refused"
    );
    assert_eq!(
        out["subscription_ttl"], 600.0,
        "the topic's TTL caps the subscription's"
    );
    assert_eq!(
        out["received"],
        serde_json::json!(["to a created subscription"])
    );
    h.stop().await;
}
