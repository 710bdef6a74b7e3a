//! `shoal worker` as a process: killed with SIGKILL mid-invocation nothing is lost (the message
//! reappears after the invisibility and another worker processes it); stopped with SIGTERM it
//! finishes its in-flight work first. Hosting assigned instances, SIGTERM gives their claims
//! back so they move at once, and a killed worker's instances move once its lease lapses.

#[path = "support/host_identity.rs"]
mod host_identity;
#[path = "../../worker/tests/worker/support.rs"]
#[allow(dead_code)]
mod support;
#[path = "support/worker_processes.rs"]
mod worker_processes;

use std::time::Duration;

use host_identity::TOKEN_FILE_MARKER;
use serde_json::json;
use shoal_testkit::handler::Behaviour;
use support::{APP, Harness, base64, queue_trigger, wait_listening};
use worker_processes::{signal, spawn_worker, spawn_worker_with, wait_exit};

#[tokio::test]
async fn sigkill_mid_invocation_loses_nothing() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    // The first delivery never returns: the worker is killed while it waits.
    h.handler.script(vec![Behaviour::Hang]);
    h.put_app(json!({}), json!({})).await?;
    h.put_function("crashy", queue_trigger("crashy")).await?;
    h.enqueue("crashy", &base64("survives")).await?;

    let first = spawn_worker(&h, "w-killed");
    h.handler.wait_for(1, Duration::from_secs(30)).await?;
    signal(first.child(), "-KILL");
    wait_exit(first.take(), Duration::from_secs(10)).await;

    let second = spawn_worker(&h, "w-survivor");
    let requests = h.handler.wait_for(2, Duration::from_secs(30)).await?;
    let (a, b) = (&requests[0], &requests[1]);
    assert_eq!(
        a.header("webhook-id"),
        b.header("webhook-id"),
        "the same message"
    );
    assert_eq!(b.body["Metadata"]["DequeueCount"], 2);
    assert_eq!(b.body["Data"]["msg"], "survives");
    assert!(
        b.at - a.at >= Duration::from_millis(2500),
        "it reappeared only after the invisibility"
    );
    h.wait_until_empty("crashy", Duration::from_secs(20))
        .await?;
    signal(second.child(), "-TERM");
    assert!(
        wait_exit(second.take(), Duration::from_secs(20))
            .await
            .success()
    );
    Ok(())
}

#[tokio::test]
async fn sigterm_finishes_in_flight_invocations() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Delay(Duration::from_secs(2), json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("slow", queue_trigger("slow")).await?;
    for i in 0..3 {
        h.enqueue("slow", &base64(&format!("m{i}"))).await?;
    }
    let worker = spawn_worker(&h, "w-drained");
    h.handler.wait_for(3, Duration::from_secs(30)).await?;
    signal(worker.child(), "-TERM");
    let status = wait_exit(worker.take(), Duration::from_secs(30)).await;
    assert!(status.success(), "{status}");
    // Everything in flight completed and was deleted before the process exited.
    assert_eq!(h.queue("slow").approximate_length().await?, 0);
    assert_eq!(h.handler.count(), 3);
    let state: String = sqlx::query_scalar("select state from workers where name = 'w-drained'")
        .fetch_one(&h.pool)
        .await?;
    assert_eq!(state, "stopped");
    Ok(())
}

/// Waits until `worker` holds the claim on instance 0 of the app.
async fn wait_for_claim(h: &Harness, worker: &str) -> anyhow::Result<()> {
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while h.claim_holder(APP, 0).await?.as_deref() != Some(worker) {
        anyhow::ensure!(std::time::Instant::now() < until, "{worker} never claimed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

#[tokio::test]
async fn sigterm_gives_claims_back_so_the_instance_moves_at_once() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("work", queue_trigger("work")).await?;
    let leader = ("leader", h.lead("leader", None).await?);
    // A lease far longer than the test: only the released claim lets the instance move.
    let first = spawn_worker_with(&h, "w-leaving", &["--lease-ttl", "5m"]);
    h.assign(leader, &[(APP, 0, "w-leaving")], &[]).await?;
    wait_for_claim(&h, "w-leaving").await?;

    signal(first.child(), "-TERM");
    assert!(
        wait_exit(first.take(), Duration::from_secs(20))
            .await
            .success()
    );
    assert_eq!(
        h.claim_holder(APP, 0).await?,
        None,
        "given back before exiting"
    );

    let next = h.start_worker(h.assigned_worker_config("w-next"))?;
    h.assign(leader, &[(APP, 0, "w-next")], &[]).await?;
    wait_listening(&next, APP, 0, Duration::from_secs(2)).await?;
    next.shut_down().await?;
    Ok(())
}

#[tokio::test]
async fn killed_worker_s_instance_moves_once_its_lease_lapses() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Respond(json!({}))).await?;
    h.put_app(json!({}), json!({})).await?;
    h.put_function("work", queue_trigger("work")).await?;
    let leader = ("leader", h.lead("leader", None).await?);
    let first = spawn_worker_with(&h, "w-killed", &["--lease-ttl", "2s"]);
    h.assign(leader, &[(APP, 0, "w-killed")], &[]).await?;
    wait_for_claim(&h, "w-killed").await?;

    signal(first.child(), "-KILL");
    wait_exit(first.take(), Duration::from_secs(10)).await;
    let next = h.start_worker(h.assigned_worker_config("w-next"))?;
    h.assign(leader, &[(APP, 0, "w-next")], &[]).await?;
    wait_listening(&next, APP, 0, Duration::from_secs(10)).await?;
    let lapsed: bool = sqlx::query_scalar(
        "select heartbeat_at + make_interval(secs => lease_ttl_ms / 1000.0) <= now()
         from workers where name = 'w-killed'",
    )
    .fetch_one(&h.pool)
    .await?;
    assert!(
        lapsed,
        "taken over only after the killed worker's lease lapsed"
    );
    assert_eq!(h.claim_holder(APP, 0).await?.as_deref(), Some("w-next"));
    next.shut_down().await?;
    Ok(())
}

/// The listener reports of live workers, once each of `functions` reports a status starting
/// with `status`.
async fn wait_for_statuses(h: &Harness, functions: &[&str], status: &str) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut tx = shoal_store::begin_platform(&h.pool).await.unwrap();
        let reports = shoal_store::workers::live_listeners(&mut tx).await.unwrap();
        shoal_store::commit(tx).await.unwrap();
        let statuses: Vec<String> = functions
            .iter()
            .filter_map(|f| {
                reports
                    .iter()
                    .find(|r| r.function == *f && r.status.starts_with(status))
                    .map(|r| r.status.clone())
            })
            .collect();
        if statuses.len() == functions.len() {
            return statuses;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not every listener is {status}: {reports:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The worker runs with its host's identity in its environment (an App Service managed
/// identity endpoint and a workload identity token file). A tenant's `managedidentity` and
/// `workloadidentity` connections never use them — they sign in as the app's identity, which
/// this app does not have, so they do not start and say why — until a platform admin opts the
/// tenant in; then both are used.
#[tokio::test]
async fn the_host_identity_serves_only_a_tenant_opted_in_to_it() -> anyhow::Result<()> {
    let azurite = shoal_testkit::azurite::Azurite::start_oauth().await?;
    let h = Harness::start_with(azurite, Behaviour::Respond(json!({}))).await?;
    let entra_client = "0f8fad5b-d9cb-469f-a165-70867728950e";
    let mut settings = serde_json::Map::new();
    for (prefix, credential) in [
        ("AzureWebJobsStorage", "managedidentity"),
        ("Work", "workloadidentity"),
    ] {
        for (property, value) in [
            ("queueServiceUri", h.azurite.https_queue_endpoint()),
            ("credential", credential.to_owned()),
            ("tenantId", shoal_testkit::azurite::TENANT_ID.to_owned()),
            ("clientId", entra_client.to_owned()),
            ("authorityHost", h.azurite.authority_host()),
        ] {
            settings.insert(format!("{prefix}__{property}"), json!(value));
        }
    }
    h.put_app(json!({}), json!({"appSettings": settings}))
        .await?;
    h.put_function("ship", queue_trigger("orders")).await?;
    h.put_function(
        "work",
        json!([{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "jobs", "connection": "Work"}]),
    )
    .await?;
    h.enqueue("orders", &base64("for the host")).await?;
    h.enqueue("jobs", &base64("job")).await?;

    let ca = h.azurite.ca_file().display().to_string();
    let mut worker = spawn_worker_with(&h, "w-host", &["--all-apps", "--extra-ca-file", &ca]);
    let statuses = wait_for_statuses(&h, &["ship", "work"], "stopped").await;
    for status in &statuses {
        assert!(status.contains("identity.type"), "{status}");
    }
    assert_eq!(
        worker.host.requests(),
        0,
        "the host's managed identity was not asked"
    );
    assert!(
        !h.azurite
            .client_assertions()
            .iter()
            .any(|a| a == TOKEN_FILE_MARKER),
        "the host's token file was not presented"
    );
    assert_eq!(h.handler.count(), 0);

    // A platform admin opts the tenant in (a single-tenant install).
    worker.host_identity_allowed = true;
    let mut tx = shoal_store::begin_platform(&h.pool).await?;
    shoal_store::tenants::put(
        &mut tx,
        support::TENANT,
        &shoal_store::tenants::TenantWrite {
            display_name: "Contoso".into(),
            limits: Default::default(),
            allow_host_identity: true,
            egress_allow: Vec::new(),
        },
        shoal_store::Precondition::None,
    )
    .await?;
    shoal_store::commit(tx).await?;
    let requests = h.handler.wait_for(1, Duration::from_secs(30)).await?;
    assert_eq!(requests[0].body["Data"]["msg"], "for the host");
    assert!(
        worker.host.requests() >= 1,
        "the host's managed identity signed in"
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !h
        .azurite
        .client_assertions()
        .iter()
        .any(|a| a == TOKEN_FILE_MARKER)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the workloadidentity connection never presented the host's token file"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}
