//! A local OTLP/gRPC trace receiver for the tracing figures: the `TraceService` server generated
//! from OpenTelemetry's official protobuf definitions (`opentelemetry-proto`), served over
//! HTTP/2 by hyper on a free loopback port. It decodes every export, counts its spans and
//! answers success at once, so the collector is never the bottleneck of what is measured.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// The spans received so far.
#[derive(Clone, Default)]
struct Received(Arc<AtomicU64>);

#[tonic::async_trait]
impl TraceService for Received {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let spans: usize = request
            .get_ref()
            .resource_spans
            .iter()
            .flat_map(|resource| &resource.scope_spans)
            .map(|scope| scope.spans.len())
            .sum();
        self.0.fetch_add(spans as u64, Ordering::AcqRel);
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

/// A running sink; it stops when dropped.
pub struct OtlpSink {
    addr: SocketAddr,
    received: Received,
    accept: JoinHandle<()>,
}

impl OtlpSink {
    pub async fn start() -> Result<OtlpSink> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .context("cannot bind the OTLP sink")?;
        let addr = listener.local_addr()?;
        let received = Received::default();
        let service = TraceServiceServer::new(received.clone());
        let accept = tokio::spawn(async move {
            // The exporter keeps one connection open; a failed accept (too many open files)
            // is retried with the next one rather than ending the sink.
            while let Ok((stream, _)) = listener.accept().await {
                let service = TowerToHyperService::new(service.clone());
                tokio::spawn(async move {
                    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(OtlpSink {
            addr,
            received,
            accept,
        })
    }

    /// What `OTEL_EXPORTER_OTLP_ENDPOINT` is set to.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Spans received since the sink started.
    pub fn spans(&self) -> u64 {
        self.received.0.load(Ordering::Acquire)
    }
}

impl Drop for OtlpSink {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::collector::trace::v1::trace_service_client::TraceServiceClient;
    use opentelemetry_proto::tonic::trace::v1::{ResourceSpans, ScopeSpans, Span};

    use super::*;

    #[tokio::test]
    async fn the_sink_counts_the_spans_of_every_export() -> Result<()> {
        let sink = OtlpSink::start().await?;
        let mut client = TraceServiceClient::connect(sink.endpoint()).await?;
        let scope = |spans: usize| ScopeSpans {
            spans: vec![Span::default(); spans],
            ..ScopeSpans::default()
        };
        let request = ExportTraceServiceRequest {
            resource_spans: vec![ResourceSpans {
                scope_spans: vec![scope(2), scope(3)],
                ..ResourceSpans::default()
            }],
        };
        client.export(request.clone()).await?;
        client.export(request).await?;
        assert_eq!(sink.spans(), 10);
        Ok(())
    }
}
