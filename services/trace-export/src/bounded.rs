//! The span processor between span ends and the exporter: a bounded queue and one task that
//! sends batches. Ending a span only tries to put it in the queue, so a slow or stopped
//! collector never holds back the delivery that made the span; when the queue is full the span
//! is dropped, and so are a batch's spans when its export fails or times out. Every drop is
//! counted ([`SpanCounts`], in `/metrics`). The SDK's own batch processor keeps its drop count
//! to itself (it only logs it at shutdown), which is why Shoal has this one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter, SpanProcessor};
use prometheus_client::metrics::counter::Counter;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use crate::settings::QueueSettings;

/// Spans exported and dropped since the process started.
#[derive(Debug, Clone, Default)]
pub struct SpanCounts {
    pub exported: Counter,
    pub dropped: Counter,
}

enum Message {
    Span(Box<SpanData>),
    /// Export what is queued now, then answer.
    Flush(oneshot::Sender<()>),
}

/// Cheap to clone: the provider holds one, [`crate::TraceExport`] another to flush and shut
/// down.
#[derive(Debug, Clone)]
pub struct BoundedProcessor(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    queue: mpsc::Sender<Message>,
    counts: SpanCounts,
    task: std::sync::Mutex<Option<JoinHandle<()>>>,
    shut: AtomicBool,
}

impl BoundedProcessor {
    /// Starts the export task on the current Tokio runtime.
    pub fn start<E>(exporter: E, settings: QueueSettings, counts: SpanCounts) -> BoundedProcessor
    where
        E: SpanExporter + 'static,
    {
        let (queue, receiver) = mpsc::channel(settings.max_queue_size);
        let task = tokio::spawn(export_loop(exporter, receiver, settings, counts.clone()));
        BoundedProcessor(Arc::new(Inner {
            queue,
            counts,
            task: std::sync::Mutex::new(Some(task)),
            shut: AtomicBool::new(false),
        }))
    }

    /// Exports what is queued now; done when the collector has answered (or the export gave
    /// up). For shutdown and tests: spans are sent on their own within the schedule delay.
    pub async fn flush(&self) {
        let (done, answered) = oneshot::channel();
        if self.0.queue.send(Message::Flush(done)).await.is_ok() {
            let _ = answered.await;
        }
    }

    /// Stops taking spans, exports what is queued within `deadline`, and counts what is left
    /// as dropped.
    pub async fn shut_down(&self, deadline: Duration) {
        self.0.shut.store(true, Ordering::Release);
        let _ = tokio::time::timeout(deadline, self.flush()).await;
        let task = self.0.task.lock().ok().and_then(|mut task| task.take());
        if let Some(task) = task {
            task.abort();
        }
    }
}

impl SpanProcessor for BoundedProcessor {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        if self.0.shut.load(Ordering::Acquire)
            || self
                .0
                .queue
                .try_send(Message::Span(Box::new(span)))
                .is_err()
        {
            self.0.counts.dropped.inc();
        }
    }

    /// The SDK's synchronous flush cannot wait for an export on the runtime that runs it, so
    /// it only asks for one; [`BoundedProcessor::flush`] waits.
    fn force_flush(&self) -> OTelSdkResult {
        let (done, _answered) = oneshot::channel();
        self.0
            .queue
            .try_send(Message::Flush(done))
            .map_err(|e| OTelSdkError::InternalFailure(format!("cannot ask for a flush: {e}")))
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        self.0.shut.store(true, Ordering::Release);
        Ok(())
    }
}

async fn export_loop<E: SpanExporter>(
    exporter: E,
    mut queue: mpsc::Receiver<Message>,
    settings: QueueSettings,
    counts: SpanCounts,
) {
    let mut batch: Vec<SpanData> = Vec::with_capacity(settings.max_export_batch_size);
    // Logged once when exports start failing and once when they work again, not per batch.
    let mut failing = false;
    loop {
        let mut flushed = None;
        // Wait for a first span, then for the batch to fill or the schedule delay to pass.
        let first = match queue.recv().await {
            Some(message) => message,
            None => return,
        };
        let deadline = tokio::time::Instant::now() + settings.schedule_delay;
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Span(span) => batch.push(*span),
                Message::Flush(done) => {
                    flushed = Some(done);
                    break;
                }
            }
            if batch.len() >= settings.max_export_batch_size {
                break;
            }
            // None when the delay passed (or every sender is gone): the batch goes as it is.
            next = tokio::time::timeout_at(deadline, queue.recv())
                .await
                .unwrap_or_default();
        }
        if !batch.is_empty() {
            let spans = batch.len() as u64;
            let sent = std::mem::replace(
                &mut batch,
                Vec::with_capacity(settings.max_export_batch_size),
            );
            match tokio::time::timeout(settings.export_timeout, exporter.export(sent)).await {
                Ok(Ok(())) => {
                    counts.exported.inc_by(spans);
                    if failing {
                        tracing::info!("trace export works again");
                        failing = false;
                    }
                }
                Ok(Err(e)) => {
                    counts.dropped.inc_by(spans);
                    if !failing {
                        tracing::warn!(error = %e, spans, "trace export failed; spans are dropped (counted in shoal_trace_spans_dropped_total) until the collector answers");
                        failing = true;
                    }
                }
                Err(_) => {
                    counts.dropped.inc_by(spans);
                    if !failing {
                        tracing::warn!(timeout = ?settings.export_timeout, spans, "trace export timed out; spans are dropped (counted in shoal_trace_spans_dropped_total) until the collector answers");
                        failing = true;
                    }
                }
            }
        }
        if let Some(done) = flushed {
            let _ = done.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use opentelemetry::trace::{Tracer as _, TracerProvider as _};
    use opentelemetry_sdk::trace::SdkTracerProvider;
    use tokio::sync::Semaphore;

    use super::*;

    /// Records what it is given; with `gate`, every export waits for a permit of it; with
    /// `failing`, every export fails.
    #[derive(Debug, Clone, Default)]
    struct Collector {
        received: Arc<Mutex<Vec<String>>>,
        gate: Option<Arc<Semaphore>>,
        failing: bool,
    }

    impl SpanExporter for Collector {
        async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
            if let Some(gate) = &self.gate {
                let _permit = gate.acquire().await;
            }
            if self.failing {
                return Err(OTelSdkError::InternalFailure("unavailable".into()));
            }
            let mut received = self.received.lock().unwrap();
            received.extend(batch.into_iter().map(|s| s.name.into_owned()));
            Ok(())
        }
    }

    /// A provider over `processor`, kept for the whole test: dropping it shuts the processor.
    fn provider(processor: &BoundedProcessor) -> SdkTracerProvider {
        SdkTracerProvider::builder()
            .with_span_processor(processor.clone())
            .build()
    }

    fn end_spans(provider: &SdkTracerProvider, names: &[&'static str]) {
        let tracer = provider.tracer("test");
        for name in names {
            drop(tracer.start(*name));
        }
    }

    fn settings(queue: usize, batch: usize) -> QueueSettings {
        QueueSettings {
            max_queue_size: queue,
            max_export_batch_size: batch,
            schedule_delay: Duration::from_millis(20),
            export_timeout: Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn spans_are_exported_in_batches_and_counted() {
        let collector = Collector::default();
        let counts = SpanCounts::default();
        let processor = BoundedProcessor::start(collector.clone(), settings(10, 2), counts.clone());
        let provider = provider(&processor);
        end_spans(&provider, &["a", "b", "c"]);
        processor.flush().await;
        assert_eq!(*collector.received.lock().unwrap(), ["a", "b", "c"]);
        assert_eq!((counts.exported.get(), counts.dropped.get()), (3, 0));
    }

    #[tokio::test]
    async fn a_full_queue_drops_and_counts_without_waiting() {
        let gate = Arc::new(Semaphore::new(0));
        let collector = Collector {
            gate: Some(gate.clone()),
            ..Collector::default()
        };
        let counts = SpanCounts::default();
        let processor = BoundedProcessor::start(collector.clone(), settings(2, 1), counts.clone());
        let provider = provider(&processor);
        // The first span is taken into an export that waits at the gate; two more fill the
        // queue, the three after them find it full.
        end_spans(&provider, &["first"]);
        tokio::time::timeout(Duration::from_secs(5), async {
            while processor.0.queue.capacity() < 2 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .unwrap();
        let started = std::time::Instant::now();
        end_spans(&provider, &["q1", "q2", "d1", "d2", "d3"]);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "ending a span never waits"
        );
        assert_eq!(counts.dropped.get(), 3);
        gate.add_permits(10);
        processor.flush().await;
        assert_eq!(*collector.received.lock().unwrap(), ["first", "q1", "q2"]);
        assert_eq!(counts.exported.get(), 3);
    }

    #[tokio::test]
    async fn a_failed_export_counts_its_spans_as_dropped() {
        let collector = Collector {
            failing: true,
            ..Collector::default()
        };
        let counts = SpanCounts::default();
        let processor = BoundedProcessor::start(collector, settings(10, 10), counts.clone());
        let provider = provider(&processor);
        end_spans(&provider, &["a", "b"]);
        processor.flush().await;
        assert_eq!((counts.exported.get(), counts.dropped.get()), (0, 2));
    }

    #[tokio::test]
    async fn spans_ended_after_shutdown_are_dropped() {
        let counts = SpanCounts::default();
        let processor =
            BoundedProcessor::start(Collector::default(), settings(10, 10), counts.clone());
        let provider = provider(&processor);
        processor.shut_down(Duration::from_secs(1)).await;
        end_spans(&provider, &["late"]);
        assert_eq!(counts.dropped.get(), 1);
    }
}
