//! The invocation log against a real Postgres: attempts group into invocations by delivery
//! key across flushes, searches filter and page newest first, attempts keep their trace and
//! are found by it, the per-function cap holds, and tenants never see each other's invocations.

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::json;
use shoal_domain::names::TenantName;
use shoal_store::invocation_log::{
    self, AttemptRecord, KEPT_ATTEMPTS, KEPT_INVOCATIONS, Search, SearchPage, Status, TraceIds,
};
use shoal_store::pool::PoolConfig;
use shoal_store::{Precondition, TenantId, begin_platform, begin_tenant, commit, functions};
use shoal_testkit::ScratchDatabase;
use uuid::Uuid;

mod support;

struct Fixture {
    pool: sqlx::PgPool,
    _db: ScratchDatabase,
}

/// Each tenant gets app `orders` with function `ship`.
async fn fixture(tenant_names: &[&str]) -> anyhow::Result<Fixture> {
    let (db, pool, cipher) = support::scratch(&PoolConfig::default()).await?;
    for name in tenant_names {
        let id = support::tenant_with_app(&pool, &cipher, name).await?;
        let mut tx = begin_tenant(&pool, &id).await?;
        let function = json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "q"}]});
        functions::put(
            &mut tx,
            &id,
            "orders",
            "ship",
            &function,
            Precondition::None,
        )
        .await?;
        commit(tx).await?;
    }
    Ok(Fixture { pool, _db: db })
}

fn tenant(name: &str) -> TenantId {
    TenantId::new(TenantName::parse(name).unwrap())
}

fn base() -> DateTime<Utc> {
    "2026-11-24T10:00:00Z".parse().unwrap()
}

fn attempt(tenant: &str, key: &str, second: i64, status: Status) -> AttemptRecord {
    AttemptRecord {
        tenant: tenant.into(),
        app: "orders".into(),
        function: "ship".into(),
        delivery_key: key.into(),
        message_id: Some(format!("msg-{key}")),
        invocation_id: Uuid::now_v7(),
        at: base() + TimeDelta::seconds(second),
        retry_count: 0,
        delivery_count: Some(1),
        worker: "w1".into(),
        duration_ms: 12,
        status,
        error: (status == Status::Failed).then(|| "handler answered 500".to_owned()),
        logs: vec![format!("line of {key}")],
        trace: None,
        payload_preview: Some(format!("{{\"order\":\"{key}\"}}")),
        payload_truncated: false,
    }
}

async fn write(f: &Fixture, attempts: &[AttemptRecord]) -> anyhow::Result<()> {
    let mut tx = begin_platform(&f.pool).await?;
    invocation_log::record(&mut tx, attempts).await?;
    commit(tx).await?;
    Ok(())
}

async fn find(f: &Fixture, tenant_name: &str, search: &Search) -> anyhow::Result<SearchPage> {
    let t = tenant(tenant_name);
    let mut tx = begin_tenant(&f.pool, &t).await?;
    let page = invocation_log::search(&mut tx, &t, "orders", "ship", search).await?;
    commit(tx).await?;
    Ok(page)
}

fn all() -> Search {
    Search {
        limit: 100,
        ..Search::default()
    }
}

#[tokio::test]
async fn attempts_of_one_delivery_are_grouped_across_flushes() -> anyhow::Result<()> {
    let f = fixture(&["contoso"]).await?;
    let first = attempt("contoso", "a", 0, Status::Failed);
    let mut retry = attempt("contoso", "a", 2, Status::Failed);
    retry.retry_count = 1;
    // A redelivery from the source: the first flush's payload stays, the status follows.
    let mut redelivered = attempt("contoso", "a", 5, Status::Succeeded);
    redelivered.delivery_count = Some(2);
    redelivered.payload_preview = Some("other".into());
    write(&f, &[first.clone(), retry.clone()]).await?;
    write(&f, &[redelivered.clone()]).await?;

    let page = find(&f, "contoso", &all()).await?;
    assert_eq!(page.items.len(), 1);
    let inv = &page.items[0];
    assert_eq!(inv.delivery_key, "a");
    assert_eq!(inv.message_id.as_deref(), Some("msg-a"));
    assert_eq!(inv.status, Status::Succeeded);
    assert_eq!(inv.attempt_count, 3);
    assert_eq!((inv.started_at, inv.last_at), (first.at, redelivered.at));
    assert_eq!(inv.payload_preview.as_deref(), Some("{\"order\":\"a\"}"));
    let ids: Vec<Uuid> = inv.attempts.iter().map(|a| a.invocation_id).collect();
    assert_eq!(
        ids,
        [
            first.invocation_id,
            retry.invocation_id,
            redelivered.invocation_id
        ]
    );
    assert_eq!(inv.attempts[1].retry_count, 1);
    assert_eq!(inv.attempts[2].delivery_count, Some(2));
    assert_eq!(
        inv.attempts[0].error.as_deref(),
        Some("handler answered 500")
    );
    assert_eq!(inv.attempts[2].error, None);
    assert_eq!(inv.attempts[0].logs, ["line of a"]);
    assert!(page.next.is_none());
    Ok(())
}

#[tokio::test]
async fn searches_filter_by_status_ids_and_time_and_page_newest_first() -> anyhow::Result<()> {
    let f = fixture(&["contoso"]).await?;
    let rows: Vec<AttemptRecord> = (0..7)
        .map(|n| {
            let status = if n % 3 == 0 {
                Status::Failed
            } else {
                Status::Succeeded
            };
            attempt("contoso", &format!("k{n}"), n * 10, status)
        })
        .collect();
    write(&f, &rows).await?;

    let keys = |p: &SearchPage| {
        p.items
            .iter()
            .map(|i| i.delivery_key.clone())
            .collect::<Vec<_>>()
    };
    // Pages of three, newest first, each continuing where the last ended.
    let mut search = Search { limit: 3, ..all() };
    let mut seen = Vec::new();
    loop {
        let page = find(&f, "contoso", &search).await?;
        seen.extend(keys(&page));
        match page.next {
            Some(next) => search.after = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, ["k6", "k5", "k4", "k3", "k2", "k1", "k0"]);

    let failed = find(
        &f,
        "contoso",
        &Search {
            status: Some(Status::Failed),
            ..all()
        },
    )
    .await?;
    assert_eq!(keys(&failed), ["k6", "k3", "k0"]);
    let by_message = Search {
        message_id: Some("msg-k4".into()),
        ..all()
    };
    assert_eq!(keys(&find(&f, "contoso", &by_message).await?), ["k4"]);
    let by_key = Search {
        message_id: Some("k2".into()),
        ..all()
    };
    assert_eq!(keys(&find(&f, "contoso", &by_key).await?), ["k2"]);
    let by_invocation = Search {
        invocation_id: Some(rows[5].invocation_id),
        ..all()
    };
    assert_eq!(keys(&find(&f, "contoso", &by_invocation).await?), ["k5"]);
    // From is inclusive, to exclusive.
    let window = Search {
        from: Some(base() + TimeDelta::seconds(20)),
        to: Some(base() + TimeDelta::seconds(50)),
        ..all()
    };
    assert_eq!(
        keys(&find(&f, "contoso", &window).await?),
        ["k4", "k3", "k2"]
    );
    let nothing = Search {
        message_id: Some("no-such".into()),
        ..all()
    };
    assert!(find(&f, "contoso", &nothing).await?.items.is_empty());
    Ok(())
}

#[tokio::test]
async fn a_function_keeps_its_newest_invocations_and_an_invocation_its_newest_attempts()
-> anyhow::Result<()> {
    let f = fixture(&["contoso"]).await?;
    let over = 5;
    let kept = usize::try_from(KEPT_INVOCATIONS)?;
    let rows: Vec<AttemptRecord> = (0..kept + over)
        .map(|n| {
            attempt(
                "contoso",
                &format!("k{n}"),
                i64::try_from(n).unwrap(),
                Status::Succeeded,
            )
        })
        .collect();
    write(&f, &rows[..kept]).await?;
    write(&f, &rows[kept..]).await?;
    // One invocation retried past its own cap.
    let retries: Vec<AttemptRecord> = (0..KEPT_ATTEMPTS + 3)
        .map(|n| {
            let mut a = attempt("contoso", "k1004", 2000 + n, Status::Failed);
            a.retry_count = i32::try_from(n).unwrap();
            a
        })
        .collect();
    write(&f, &retries).await?;

    let mut search = Search {
        limit: 1000,
        ..all()
    };
    let mut total = Vec::new();
    loop {
        let page = find(&f, "contoso", &search).await?;
        total.extend(page.items);
        match page.next {
            Some(next) => search.after = Some(next),
            None => break,
        }
    }
    assert_eq!(total.len(), kept);
    assert_eq!(
        total.first().unwrap().delivery_key,
        format!("k{}", kept + over - 1)
    );
    assert_eq!(total.last().unwrap().delivery_key, format!("k{over}"));
    let retried = total.iter().find(|i| i.delivery_key == "k1004").unwrap();
    assert_eq!(retried.attempt_count, 1 + i32::try_from(KEPT_ATTEMPTS + 3)?);
    assert_eq!(retried.attempts.len(), usize::try_from(KEPT_ATTEMPTS)?);
    assert_eq!(
        retried.attempts.last().unwrap().retry_count,
        i32::try_from(KEPT_ATTEMPTS + 2)?
    );
    assert_eq!(retried.status, Status::Failed);
    Ok(())
}

#[tokio::test]
async fn tenants_never_see_each_others_invocations() -> anyhow::Result<()> {
    let f = fixture(&["contoso", "fabrikam"]).await?;
    let theirs = attempt("fabrikam", "secret-order", 0, Status::Succeeded);
    write(
        &f,
        &[
            attempt("contoso", "ours", 0, Status::Succeeded),
            theirs.clone(),
        ],
    )
    .await?;

    let ours = find(&f, "contoso", &all()).await?;
    assert_eq!(ours.items.len(), 1);
    assert_eq!(ours.items[0].delivery_key, "ours");
    // Asking by the other tenant's ids finds nothing either.
    let by_id = Search {
        invocation_id: Some(theirs.invocation_id),
        ..all()
    };
    assert!(find(&f, "contoso", &by_id).await?.items.is_empty());
    // Row-level security holds even when a query forgets its tenant.
    let t = tenant("contoso");
    let mut tx = begin_tenant(&f.pool, &t).await?;
    let visible: i64 = sqlx::query_scalar("select count(*) from invocations")
        .fetch_one(&mut *tx)
        .await?;
    let attempts: i64 = sqlx::query_scalar("select count(*) from invocation_attempts")
        .fetch_one(&mut *tx)
        .await?;
    commit(tx).await?;
    assert_eq!((visible, attempts), (1, 1));
    // A function that does not exist (deleted meanwhile) is skipped, not an error.
    let mut gone = attempt("contoso", "gone", 0, Status::Succeeded);
    gone.function = "deleted".into();
    write(&f, &[gone]).await?;
    assert_eq!(find(&f, "contoso", &all()).await?.items.len(), 1);
    Ok(())
}

fn traced(mut a: AttemptRecord, trace_id: &str, span_id: &str) -> AttemptRecord {
    a.trace = Some(TraceIds {
        trace_id: trace_id.into(),
        span_id: span_id.into(),
    });
    a
}

#[tokio::test]
async fn attempts_keep_their_trace_and_invocations_are_found_by_trace_id() -> anyhow::Result<()> {
    let f = fixture(&["contoso", "fabrikam"]).await?;
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let other = "00f067aa0ba902b700f067aa0ba902b7";
    let theirs = "0af7651916cd43dd8448eb211c80319c";
    // A retried message: one trace, a span per attempt.
    let first = traced(
        attempt("contoso", "a", 0, Status::Failed),
        trace,
        "00f067aa0ba902b7",
    );
    let retry = traced(
        attempt("contoso", "a", 2, Status::Succeeded),
        trace,
        "b7ad6b7169203331",
    );
    write(
        &f,
        &[
            first,
            retry,
            traced(
                attempt("contoso", "b", 4, Status::Succeeded),
                other,
                "53995c3f42cd8ad8",
            ),
            // Recorded before trace ids were.
            attempt("contoso", "c", 6, Status::Succeeded),
            traced(
                attempt("fabrikam", "x", 0, Status::Succeeded),
                theirs,
                "1111111111111111",
            ),
        ],
    )
    .await?;

    let by_trace = |trace_id: &str| Search {
        trace_id: Some(trace_id.into()),
        ..all()
    };
    let found = find(&f, "contoso", &by_trace(trace)).await?;
    assert_eq!(found.items.len(), 1);
    let spans: Vec<Option<TraceIds>> = found.items[0]
        .attempts
        .iter()
        .map(|a| a.trace.clone())
        .collect();
    assert_eq!(
        spans,
        [
            Some(TraceIds {
                trace_id: trace.into(),
                span_id: "00f067aa0ba902b7".into()
            }),
            Some(TraceIds {
                trace_id: trace.into(),
                span_id: "b7ad6b7169203331".into()
            }),
        ]
    );
    let found = find(&f, "contoso", &by_trace(other)).await?;
    assert_eq!(
        found
            .items
            .iter()
            .map(|i| i.delivery_key.as_str())
            .collect::<Vec<_>>(),
        ["b"]
    );
    let all_rows = find(&f, "contoso", &all()).await?;
    let untraced = all_rows
        .items
        .iter()
        .find(|i| i.delivery_key == "c")
        .unwrap();
    assert_eq!(untraced.attempts[0].trace, None);
    // Another tenant's trace finds nothing.
    assert!(
        find(&f, "contoso", &by_trace(theirs))
            .await?
            .items
            .is_empty()
    );
    assert_eq!(
        find(&f, "fabrikam", &by_trace(theirs)).await?.items.len(),
        1
    );
    Ok(())
}

#[tokio::test]
async fn ids_that_are_not_lowercase_w3c_hex_are_refused_by_the_database() -> anyhow::Result<()> {
    let f = fixture(&["contoso"]).await?;
    for (trace_id, span_id) in [
        ("4BF92F3577B34DA6A3CE929D0E0E4736", "00f067aa0ba902b7"),
        ("00000000000000000000000000000000", "00f067aa0ba902b7"),
        ("4bf92f3577b34da6", "00f067aa0ba902b7"),
        ("4bf92f3577b34da6a3ce929d0e0e4736", "0000000000000000"),
        ("4bf92f3577b34da6a3ce929d0e0e4736", "zzf067aa0ba902b7"),
    ] {
        let bad = traced(
            attempt("contoso", "a", 0, Status::Succeeded),
            trace_id,
            span_id,
        );
        assert!(write(&f, &[bad]).await.is_err(), "{trace_id} {span_id}");
    }
    Ok(())
}
