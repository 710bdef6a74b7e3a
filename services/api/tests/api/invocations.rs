//! `GET …/functions/{function}/invocations`: workers' per-minute counts added up with their
//! duration percentiles, and the latest failures with the handler's logs; per tenant.

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_domain::invocation_stats::{BUCKETS, bucket_of};
use shoal_store::invocation_telemetry::{self, FailureRecord, MinuteRecord};
use uuid::Uuid;

use crate::helpers::TestApp;

const PATH: &str = "/v1/tenants/contoso/apps/orders/functions/ship/invocations";

async fn with_function(app: &TestApp) {
    app.with_function("contoso", "orders", "ship").await;
}

fn minute(
    worker: &str,
    at: DateTime<Utc>,
    durations: &[(u64, i64)],
    failures: i64,
) -> MinuteRecord {
    let mut buckets = vec![0; BUCKETS];
    for (ms, n) in durations {
        buckets[bucket_of(*ms)] += n;
    }
    MinuteRecord {
        tenant: "contoso".into(),
        app: "orders".into(),
        function: "ship".into(),
        minute: at,
        worker: worker.into(),
        invocations: durations.iter().map(|(_, n)| n).sum(),
        failures,
        duration_buckets: buckets,
    }
}

fn failure(error: &str, logs: &[&str]) -> FailureRecord {
    failure_at(Utc::now(), error, logs)
}

fn failure_at(at: DateTime<Utc>, error: &str, logs: &[&str]) -> FailureRecord {
    FailureRecord {
        tenant: "contoso".into(),
        app: "orders".into(),
        function: "ship".into(),
        at,
        invocation_id: Uuid::now_v7(),
        worker: "w1".into(),
        duration_ms: 212,
        error: error.into(),
        logs: logs.iter().map(|l| (*l).to_owned()).collect(),
    }
}

impl TestApp {
    async fn record_telemetry(&self, minutes: &[MinuteRecord], failures: &[FailureRecord]) {
        let (pool, mut tx) = self.platform_tx().await;
        invocation_telemetry::record(&mut tx, minutes, failures)
            .await
            .unwrap();
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
    }
}

#[tokio::test]
async fn workers_minutes_add_up_with_percentiles_and_failures_keep_their_logs() {
    let app = TestApp::spawn().await;
    with_function(&app).await;
    let now = Utc::now().duration_trunc(TimeDelta::minutes(1)).unwrap();
    let earlier = now - TimeDelta::minutes(2);
    // Two workers in the same minute, one of them flushing twice; another minute before.
    app.record_telemetry(
        &[
            minute("w1", now, &[(10, 40)], 0),
            minute("w2", now, &[(10, 50), (250, 9)], 2),
            minute("w1", earlier, &[(5, 3)], 1),
        ],
        &[failure(
            "handler answered 500",
            &["charging order 42", "card declined"],
        )],
    )
    .await;
    app.record_telemetry(
        &[minute("w1", now, &[(6_000, 1)], 1)],
        &[failure("timed out after 30 s", &[])],
    )
    .await;

    let reader = app.token_for("contoso", Role::Reader);
    let body: Value = app
        .request(Method::GET, PATH, Some(&reader))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let busy: Vec<&Value> = body["minutes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["invocations"] != 0)
        .collect();
    assert_eq!(busy.len(), 2, "{body}");
    assert_eq!(busy[0]["minute"], json!(earlier));
    assert_eq!(busy[0]["invocations"], 3);
    assert_eq!(busy[0]["failures"], 1);
    assert_eq!(busy[0]["p50Ms"], 5);
    assert_eq!(busy[1]["minute"], json!(now));
    assert_eq!(busy[1]["invocations"], 100);
    assert_eq!(busy[1]["failures"], 3);
    assert_eq!(busy[1]["p50Ms"], 10);
    assert_eq!(busy[1]["p95Ms"], 250);
    assert_eq!(busy[1]["p99Ms"], 250);
    let failures = body["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 2);
    assert_eq!(failures[0]["error"], "timed out after 30 s");
    assert_eq!(failures[1]["error"], "handler answered 500");
    assert_eq!(
        failures[1]["logs"],
        json!(["charging order 42", "card declined"])
    );

    let last_minute: Value = app
        .get(&format!("{PATH}?minutes=1&failures=0"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(last_minute["minutes"].as_array().unwrap().len(), 1);
    assert_eq!(last_minute["failures"], json!([]));
}

#[tokio::test]
async fn failures_beyond_the_bound_are_pruned_and_a_deleted_apps_rows_are_skipped() {
    let app = TestApp::spawn().await;
    with_function(&app).await;
    let many: Vec<FailureRecord> = (0..55)
        .map(|i| failure(&format!("failure {i}"), &[]))
        .collect();
    app.record_telemetry(&[], &many).await;
    let (pool, mut tx) = app.platform_tx().await;
    assert_eq!(invocation_telemetry::prune(&mut tx).await.unwrap(), 5);
    // Rows of an app that no longer exists are skipped, not an error.
    let mut gone = failure("x", &[]);
    gone.app = "deleted".into();
    invocation_telemetry::record(&mut tx, &[], &[gone])
        .await
        .unwrap();
    shoal_store::commit(tx).await.unwrap();
    pool.close().await;
    let body: Value = app
        .get(&format!("{PATH}?failures=50"))
        .await
        .json()
        .await
        .unwrap();
    let failures = body["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 50);
    assert_eq!(failures[0]["error"], "failure 54");
    assert_eq!(failures[49]["error"], "failure 5");
}

#[tokio::test]
async fn failures_are_newest_first_by_when_they_failed_not_when_they_were_written() {
    let app = TestApp::spawn().await;
    with_function(&app).await;
    let t0 = Utc::now() - TimeDelta::seconds(30);
    let at = |s: i64| t0 + TimeDelta::seconds(s);
    // Worker a gathers failures at 0 s and 8 s, worker b at 3 s and 6 s; b flushes first.
    app.record_telemetry(
        &[],
        &[
            failure_at(at(3), "b at 3", &[]),
            failure_at(at(6), "b at 6", &[]),
        ],
    )
    .await;
    app.record_telemetry(
        &[],
        &[
            failure_at(at(0), "a at 0", &[]),
            failure_at(at(8), "a at 8", &[]),
        ],
    )
    .await;
    let errors = |body: &Value| -> Vec<String> {
        body["failures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["error"].as_str().unwrap().to_owned())
            .collect()
    };
    let body: Value = app.get(PATH).await.json().await.unwrap();
    assert_eq!(errors(&body), ["a at 8", "b at 6", "b at 3", "a at 0"]);
    let latest: Value = app
        .get(&format!("{PATH}?failures=1"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(errors(&latest), ["a at 8"]);

    // Pruning keeps the newest by time too: 50 older failures written last (a worker that
    // was cut off and flushed late) make 54; the four oldest of them go.
    let older: Vec<FailureRecord> = (0..50)
        .map(|i| failure_at(at(-100 + i), &format!("older {i}"), &[]))
        .collect();
    app.record_telemetry(&[], &older).await;
    let (pool, mut tx) = app.platform_tx().await;
    assert_eq!(invocation_telemetry::prune(&mut tx).await.unwrap(), 4);
    shoal_store::commit(tx).await.unwrap();
    pool.close().await;
    let kept: Value = app
        .get(&format!("{PATH}?failures=50"))
        .await
        .json()
        .await
        .unwrap();
    let kept = errors(&kept);
    assert_eq!(kept.len(), 50);
    assert_eq!(
        kept[..5],
        ["a at 8", "b at 6", "b at 3", "a at 0", "older 49"]
    );
    assert_eq!(kept[49], "older 4");
}

#[tokio::test]
async fn every_minute_of_the_window_is_in_the_series_idle_ones_as_zero() {
    let app = TestApp::spawn().await;
    with_function(&app).await;
    let now = Utc::now().duration_trunc(TimeDelta::minutes(1)).unwrap();
    // Busy three minutes ago and now; idle between.
    app.record_telemetry(
        &[
            minute("w1", now - TimeDelta::minutes(3), &[(10, 39)], 0),
            minute("w1", now, &[(10, 500)], 2),
        ],
        &[],
    )
    .await;
    let body: Value = app
        .get(&format!("{PATH}?minutes=5&failures=0"))
        .await
        .json()
        .await
        .unwrap();
    let minutes = body["minutes"].as_array().unwrap();
    // The API's current minute may have turned since `now`: the series ends at its own.
    assert_eq!(minutes.len(), 5, "{body}");
    let starts: Vec<DateTime<Utc>> = minutes
        .iter()
        .map(|m| serde_json::from_value(m["minute"].clone()).unwrap())
        .collect();
    for pair in starts.windows(2) {
        assert_eq!(pair[1] - pair[0], TimeDelta::minutes(1), "{body}");
    }
    assert!(
        starts[4] >= now && starts[4] - now <= TimeDelta::minutes(1),
        "{body}"
    );
    for (start, m) in starts.iter().zip(minutes) {
        let expected = if *start == now - TimeDelta::minutes(3) {
            39
        } else if *start == now {
            500
        } else {
            0
        };
        assert_eq!(m["invocations"], expected, "{start}: {body}");
        if expected == 0 {
            assert_eq!(m["failures"], 0);
            for p in ["p50Ms", "p95Ms", "p99Ms"] {
                assert!(m.get(p).is_none_or(Value::is_null), "{start} {p}: {body}");
            }
        }
    }

    // A function nothing ran: a flat line of zeros, not an empty series.
    let put = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/orders/functions/idle")
        .json(&json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "idle"}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::CREATED);
    let quiet: Value = app
        .get("/v1/tenants/contoso/apps/orders/functions/idle/invocations?minutes=3")
        .await
        .json()
        .await
        .unwrap();
    let quiet = quiet["minutes"].as_array().unwrap();
    assert_eq!(quiet.len(), 3);
    assert!(quiet.iter().all(|m| m["invocations"] == 0), "{quiet:?}");
}

#[tokio::test]
async fn invocations_are_per_tenant_and_check_their_query() {
    let app = TestApp::spawn().await;
    with_function(&app).await;
    app.assert_hidden_from_other_tenants(
        PATH,
        "/v1/tenants/contoso/apps/orders/functions/nope/invocations",
    )
    .await;
    app.assert_queries_refused(
        PATH,
        &[
            ("minutes=0", "minutes"),
            ("minutes=1441", "minutes"),
            ("failures=51", "failures"),
        ],
    )
    .await;
}
