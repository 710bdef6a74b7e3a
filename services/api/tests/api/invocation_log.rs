//! `GET …/functions/{function}/invocationLog`: invocations with their attempts grouped,
//! filtered and paged newest first, the retention policy stated, each attempt with its trace;
//! per tenant, readable by a Reader, every bad filter a 422 naming its field.

use chrono::{TimeDelta, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use shoal_store::invocation_log::{self, AttemptRecord, KEPT_INVOCATIONS, Status, TraceIds};
use uuid::Uuid;

use crate::helpers::TestApp;

const PATH: &str = "/v1/tenants/contoso/apps/orders/functions/ship/invocationLog";

async fn with_function(app: &TestApp) {
    app.with_function("contoso", "orders", "ship").await;
}

fn attempt(key: &str, seconds_ago: i64, status: Status) -> AttemptRecord {
    AttemptRecord {
        tenant: "contoso".into(),
        app: "orders".into(),
        function: "ship".into(),
        delivery_key: key.into(),
        message_id: Some(format!("msg-{key}")),
        invocation_id: Uuid::now_v7(),
        at: Utc::now() - TimeDelta::seconds(seconds_ago),
        retry_count: 0,
        delivery_count: Some(1),
        worker: "w1".into(),
        duration_ms: 212,
        status,
        error: (status == Status::Failed).then(|| "handler answered 500".to_owned()),
        logs: vec!["charging order 42".into()],
        trace: None,
        payload_preview: Some(r#"{"order":42}"#.into()),
        payload_truncated: false,
    }
}

impl TestApp {
    async fn record_attempts(&self, attempts: &[AttemptRecord]) {
        let (pool, mut tx) = self.platform_tx().await;
        invocation_log::record(&mut tx, attempts).await.unwrap();
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
    }
}

fn keys(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["deliveryKey"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_reader_finds_invocations_with_their_attempts_grouped_and_the_policy_stated() {
    let app = TestApp::spawn().await;
    with_function(&app).await;
    let failed = attempt("a", 30, Status::Failed);
    let mut retried = attempt("a", 20, Status::Succeeded);
    retried.retry_count = 1;
    retried.logs = vec!["charged".into()];
    app.record_attempts(&[
        failed.clone(),
        retried.clone(),
        attempt("b", 10, Status::Failed),
    ])
    .await;

    let reader = app.token_for("contoso", Role::Reader);
    let response = app
        .request(Method::GET, PATH, Some(&reader))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(keys(&body), ["b", "a"], "{body}");
    assert!(body.get("continuationToken").is_none());
    assert_eq!(body["retention"]["keptInvocations"], KEPT_INVOCATIONS);
    let a = &body["items"][1];
    assert_eq!(a["messageId"], "msg-a");
    assert_eq!(a["status"], "succeeded");
    assert_eq!(a["attemptCount"], 2);
    // A Reader may not list the app's settings, so the payload is hidden, as a poison
    // message's body is; the administrator below sees it.
    assert!(a.get("payload").is_none(), "{a}");
    assert_eq!(a["payloadHidden"], true);
    let attempts = a["attempts"].as_array().unwrap();
    assert_eq!(attempts[0]["invocationId"], json!(failed.invocation_id));
    assert_eq!(attempts[0]["status"], "failed");
    assert_eq!(attempts[0]["error"], "handler answered 500");
    assert_eq!(attempts[0]["deliveryCount"], 1);
    assert_eq!(attempts[0]["logs"], json!(["charging order 42"]));
    assert_eq!(attempts[1]["retryCount"], 1);
    assert_eq!(attempts[1]["logs"], json!(["charged"]));
    assert!(attempts[1].get("error").is_none());

    // Filters: status, message id, an attempt's invocation id, a time window.
    let failed_only: Value = app
        .get(&format!("{PATH}?status=failed"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(keys(&failed_only), ["b"]);
    let by_message: Value = app
        .get(&format!("{PATH}?messageId=msg-a"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(keys(&by_message), ["a"]);
    assert_eq!(by_message["items"][0]["payload"], r#"{"order":42}"#);
    assert!(by_message["items"][0].get("payloadHidden").is_none());
    let by_attempt: Value = app
        .get(&format!("{PATH}?invocationId={}", retried.invocation_id))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(keys(&by_attempt), ["a"]);
    let since =
        (Utc::now() - TimeDelta::seconds(15)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let recent: Value = app
        .get(&format!("{PATH}?from={since}"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(keys(&recent), ["b"]);
}

#[tokio::test]
async fn pages_follow_one_another_newest_first() {
    let app = TestApp::spawn().await;
    with_function(&app).await;
    let rows: Vec<AttemptRecord> = (0..5)
        .map(|n| attempt(&format!("k{n}"), 50 - n, Status::Succeeded))
        .collect();
    app.record_attempts(&rows).await;
    let mut seen = Vec::new();
    let mut next = format!("{PATH}?limit=2");
    loop {
        let body: Value = app.get(&next).await.json().await.unwrap();
        seen.extend(keys(&body));
        match body["continuationToken"].as_str() {
            Some(token) => next = format!("{PATH}?limit=2&continuationToken={token}"),
            None => break,
        }
    }
    assert_eq!(seen, ["k4", "k3", "k2", "k1", "k0"]);
}

#[tokio::test]
async fn the_log_is_per_tenant_and_every_bad_filter_names_its_field() {
    let app = TestApp::spawn().await;
    with_function(&app).await;
    app.record_attempts(&[attempt("a", 1, Status::Succeeded)])
        .await;
    app.assert_hidden_from_other_tenants(
        PATH,
        "/v1/tenants/contoso/apps/orders/functions/nope/invocationLog",
    )
    .await;
    app.assert_queries_refused(
        PATH,
        &[
            ("status=running", "status"),
            ("messageId=", "messageId"),
            ("invocationId=42", "invocationId"),
            ("traceId=4BF92F3577B34DA6A3CE929D0E0E4736", "traceId"),
            ("traceId=00000000000000000000000000000000", "traceId"),
            ("traceId=4bf92f3577b34da6", "traceId"),
            ("traceId=", "traceId"),
            ("from=yesterday", "from"),
            ("to=2026-11-24", "to"),
            ("from=2026-11-24T10:00:00Z&to=2026-11-24T09:00:00Z", "to"),
            ("limit=0", "limit"),
            ("limit=1001", "limit"),
            ("continuationToken=forged", "continuationToken"),
        ],
    )
    .await;
}

fn traced(mut a: AttemptRecord, trace_id: &str, span_id: &str) -> AttemptRecord {
    a.trace = Some(TraceIds {
        trace_id: trace_id.into(),
        span_id: span_id.into(),
    });
    a
}

#[tokio::test]
async fn attempts_show_their_trace_and_a_trace_id_finds_its_invocation_in_its_tenant_only() {
    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const THEIRS: &str = "0af7651916cd43dd8448eb211c80319c";
    let app = TestApp::spawn().await;
    with_function(&app).await;
    app.with_function("fabrikam", "orders", "ship").await;
    let mut theirs = traced(
        attempt("x", 5, Status::Succeeded),
        THEIRS,
        "b7ad6b7169203331",
    );
    theirs.tenant = "fabrikam".into();
    app.record_attempts(&[
        traced(attempt("a", 30, Status::Failed), TRACE, "00f067aa0ba902b7"),
        traced(
            attempt("a", 20, Status::Succeeded),
            TRACE,
            "53995c3f42cd8ad8",
        ),
        traced(
            attempt("b", 10, Status::Succeeded),
            "00f067aa0ba902b700f067aa0ba902b7",
            "1111111111111111",
        ),
        // Recorded before attempts kept their trace.
        attempt("c", 5, Status::Succeeded),
        theirs,
    ])
    .await;

    let reader = app.token_for("contoso", Role::Reader);
    let response = app
        .request(
            Method::GET,
            &format!("{PATH}?traceId={TRACE}"),
            Some(&reader),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body: Value = response.json().await.unwrap();
    assert_eq!(keys(&body), ["a"], "{body}");
    let attempts = body["items"][0]["attempts"].as_array().unwrap();
    let ids: Vec<(&str, &str)> = attempts
        .iter()
        .map(|a| {
            (
                a["traceId"].as_str().unwrap(),
                a["spanId"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [(TRACE, "00f067aa0ba902b7"), (TRACE, "53995c3f42cd8ad8")]
    );
    // An attempt without a trace has neither field.
    let all: Value = app.get(PATH).await.json().await.unwrap();
    let untraced = &all["items"][0];
    assert_eq!(untraced["deliveryKey"], "c");
    assert!(
        untraced["attempts"][0].get("traceId").is_none(),
        "{untraced}"
    );
    assert!(
        untraced["attempts"][0].get("spanId").is_none(),
        "{untraced}"
    );
    // Another tenant's trace id finds nothing here, even for a platform administrator asking
    // under this tenant; under its own tenant it is found.
    let foreign: Value = app
        .get(&format!("{PATH}?traceId={THEIRS}"))
        .await
        .json()
        .await
        .unwrap();
    assert!(keys(&foreign).is_empty(), "{foreign}");
    let own: Value = app
        .get(&format!(
            "/v1/tenants/fabrikam/apps/orders/functions/ship/invocationLog?traceId={THEIRS}"
        ))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(keys(&own), ["x"]);
}
