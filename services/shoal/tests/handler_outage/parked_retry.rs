//! The issue's own case for durable retries: a retry ten minutes off (a tenth of a minute here:
//! the worker divides every retry's wait by 60, `SHOAL_TEST_RETRY_DELAY_DIVISOR`) survives a
//! SIGKILL of the worker that parked it, and is delivered once, after the wait, with the right
//! `RetryCount` and its dequeue count unraised — by another worker process.

use std::time::{Duration, Instant};

use serde_json::json;
use shoal_testkit::handler::Behaviour;

use crate::support::{Harness, base64};
use crate::worker_processes::{signal, spawn_worker_env, wait_exit};
use crate::{FUNCTION, poisoned};

const DIVIDED: [(&str, &str); 1] = [("SHOAL_TEST_RETRY_DELAY_DIVISOR", "60")];
/// Ten minutes divided by 60.
const WAIT: Duration = Duration::from_secs(10);

#[tokio::test]
async fn a_parked_retry_survives_a_killed_worker() -> anyhow::Result<()> {
    let h = Harness::start(Behaviour::Status(500)).await?;
    h.put_jobs_function(
        json!({"maxDequeueCount": 2}),
        FUNCTION,
        json!({"retry": {"strategy": "fixedDelay", "maxRetryCount": 3, "delayInterval": "00:10:00"}}),
    )
    .await?;
    h.enqueue("jobs", &base64("later")).await?;
    let first = spawn_worker_env(&h, "w-parks", &["--all-apps"], &DIVIDED);
    h.handler.wait_for(1, Duration::from_secs(60)).await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while h.parked_retries().await? == 0 {
        anyhow::ensure!(Instant::now() < deadline, "the retry was never parked");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // SIGKILL: nothing of the worker's memory survives, nor any chance to release the message.
    let child = first.take();
    signal(&child, "-KILL");
    wait_exit(child, Duration::from_secs(10)).await;
    h.handler.set_behaviour(Behaviour::Respond(json!({})));
    let _second = spawn_worker_env(&h, "w-resumes", &["--all-apps"], &DIVIDED);

    h.handler.wait_for(2, Duration::from_secs(60)).await?;
    h.wait_until_empty("jobs", Duration::from_secs(20)).await?;
    // Nothing comes back later: a message left on the queue would be visible again within the
    // test workers' 3 s invisibility, so a third request must not come within 4 s.
    let again = h.handler.wait_for(3, Duration::from_secs(4)).await;
    assert!(
        again.is_err(),
        "delivered again: {:?}",
        again.map(|r| r.len())
    );
    let requests = h.handler.requests();
    assert_eq!(requests.len(), 2, "the failure, then one retry");
    let gap = requests[1].at - requests[0].at;
    assert!(
        gap >= WAIT - Duration::from_millis(1500),
        "retried after {gap:?}, before its wait of {WAIT:?} (clocks aside)"
    );
    let retry = &requests[1].body["Metadata"];
    assert_eq!(retry["RetryContext"]["RetryCount"], 1);
    assert_eq!(retry["RetryContext"]["MaxRetryCount"], 3);
    assert!(
        retry["RetryContext"]["Exception"]["Message"]
            .as_str()
            .is_some_and(|m| m.contains("500")),
        "the failure before the kill: {retry}"
    );
    assert_eq!(retry["DequeueCount"], 1, "the park was no attempt");
    assert_eq!(
        requests[1].header("webhook-id"),
        requests[0].header("webhook-id"),
        "the same message, not a copy"
    );
    assert_eq!(poisoned(&h, "jobs").await?, 0);
    assert_eq!(h.parked_retries().await?, 0, "nothing stays parked");
    Ok(())
}
