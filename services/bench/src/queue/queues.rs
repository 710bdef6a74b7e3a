//! Azurite's queues through `shoal-connectors` (the official `azure_storage_queue` SDK, as the
//! worker uses it): preloading a fresh queue, the SDK ceiling's tight loop, and waiting until a
//! queue is drained.

use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use shoal_connectors::{ConnectorOptions, Queue, StorageQueues};

use super::handler::Tally;

/// Messages are received invisible for as long as Shoal's worker receives them (10 minutes),
/// so none reappears during a figure.
pub const INVISIBILITY: Duration = Duration::from_secs(600);
/// Enqueues in flight while preloading.
const PRELOAD_CONCURRENCY: usize = 64;
/// How often a drain is checked.
const POLL: Duration = Duration::from_millis(5);

/// The account behind an `AzureWebJobsStorage` connection string, resolved as the worker
/// resolves it.
pub fn connect(connection_string: &str) -> Result<StorageQueues> {
    StorageQueues::from_connection_string(connection_string, &ConnectorOptions::default())
        .context("resolving Azurite's connection string")
}

/// A small order-like JSON document; `messageEncoding` is `none`, so it is stored as is.
pub fn message_text(index: u64) -> String {
    format!(
        r#"{{"order":{index},"customer":"c-{:04}","amount":{}.{:02}}}"#,
        index % 9973,
        index % 500,
        index % 100
    )
}

/// Creates `queue` and enqueues `count` messages, [`PRELOAD_CONCURRENCY`] at a time.
pub async fn preload(queue: &Queue, count: u64) -> Result<()> {
    queue.create_if_missing().await?;
    let mut tasks = tokio::task::JoinSet::new();
    let loaders = PRELOAD_CONCURRENCY as u64;
    for loader in 0..loaders {
        let queue = queue.clone();
        tasks.spawn(async move {
            let mut index = loader;
            while index < count {
                queue.enqueue(&message_text(index)).await?;
                index += loaders;
            }
            anyhow::Ok(())
        });
    }
    while let Some(joined) = tasks.join_next().await {
        joined.context("a preload task panicked")??;
    }
    let length = queue.approximate_length().await?;
    if length != count {
        bail!(
            "queue {} holds {length} messages after preloading {count}",
            queue.name()
        );
    }
    Ok(())
}

/// A measured drain: from the first batch in hand until the queue was seen empty.
#[derive(Clone, Copy, Debug)]
pub struct Drain {
    pub messages: u64,
    pub elapsed: Duration,
}

/// The SDK ceiling: one task receives 32 messages, deletes them all concurrently (as a tight
/// consumer would, rather than one round trip after another), and receives again, until
/// `count` messages are deleted. No handler, no pipelining of receives with deletes.
pub async fn ceiling(queue: &Queue, count: u64, timeout: Duration) -> Result<Drain> {
    let deadline = Instant::now() + timeout;
    let mut started = None;
    let mut deleted = 0;
    while deleted < count {
        if Instant::now() >= deadline {
            let left = queue.approximate_length().await.ok();
            bail!(stalled(deleted, count, timeout, left));
        }
        let batch = queue.receive(32, INVISIBILITY).await?;
        if batch.is_empty() {
            tokio::time::sleep(POLL).await;
            continue;
        }
        started.get_or_insert_with(Instant::now);
        let deletes = batch
            .iter()
            .map(|message| queue.delete(&message.message_id, &message.pop_receipt));
        for result in futures::future::join_all(deletes).await {
            result?;
            deleted += 1;
        }
    }
    // Ends as the other figures end: when the queue is seen empty.
    wait_until_empty(queue, deadline).await?;
    let started = started.unwrap_or_else(Instant::now);
    Ok(Drain {
        messages: count,
        elapsed: started.elapsed(),
    })
}

/// Waits until the handler has seen its first request, or fails after `timeout`; `alive`
/// says why a consumer that went away will never call it.
pub async fn wait_for_first_call(
    tally: &Tally,
    timeout: Duration,
    mut alive: impl FnMut() -> Result<()>,
) -> Result<Instant> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(first) = tally.first() {
            return Ok(first);
        }
        alive()?;
        if Instant::now() >= deadline {
            bail!("the handler was not called within {timeout:?}");
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Waits until the handler has answered `count` requests and the queue is empty (the last
/// deletes done), and returns the drain measured from the handler's first request.
pub async fn wait_until_drained(
    tally: &Tally,
    queue: &Queue,
    count: u64,
    timeout: Duration,
    mut alive: impl FnMut() -> Result<()>,
) -> Result<Drain> {
    let deadline = Instant::now() + timeout;
    while tally.requests() < count {
        alive()?;
        if Instant::now() >= deadline {
            let left = queue.approximate_length().await.ok();
            bail!(stalled(tally.requests(), count, timeout, left));
        }
        tokio::time::sleep(POLL).await;
    }
    wait_until_empty(queue, deadline).await?;
    let first = tally.first().unwrap_or_else(Instant::now);
    Ok(Drain {
        messages: count,
        elapsed: first.elapsed(),
    })
}

/// How a drain that did not finish in time is reported, in its figure's line too:
/// `384/1000 messages in 120 s (616 left on the queue)`.
fn stalled(done: u64, count: u64, timeout: Duration, left: Option<u64>) -> String {
    let left = left.map_or_else(|| "unknown".to_owned(), |n| n.to_string());
    format!(
        "{done}/{count} messages in {} s ({left} left on the queue)",
        timeout.as_secs()
    )
}

async fn wait_until_empty(queue: &Queue, deadline: Instant) -> Result<()> {
    loop {
        let length = queue.approximate_length().await?;
        if length == 0 {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "all messages handled, but queue {} still holds {length}",
                queue.name()
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_small_json_documents() {
        let text = message_text(12_345);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["order"], 12_345);
        assert!(text.len() < 80, "{text}");
    }

    #[test]
    fn a_stalled_drain_says_how_far_it_got() {
        let timeout = Duration::from_secs(120);
        assert_eq!(
            stalled(384, 1000, timeout, Some(616)),
            "384/1000 messages in 120 s (616 left on the queue)"
        );
        assert_eq!(
            stalled(0, 1000, timeout, None),
            "0/1000 messages in 120 s (unknown left on the queue)"
        );
    }
}
