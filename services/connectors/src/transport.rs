//! The HTTP client and pipeline options every connection uses, built once per connection: the
//! queue operations and the identity credential's token requests share one reqwest client, so
//! an extra trusted CA applies to both and connections are pooled.

use std::sync::Arc;
use std::time::Duration;

use azure_core::http::policies::Policy;
use azure_core::http::{ClientOptions, ExponentialRetryOptions, RetryOptions, Transport};
use azure_core::time::Duration as SdkDuration;

use crate::{ConnectorOptions, QueueError};

/// A queue call never legitimately takes long; a stuck connection is better retried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// `port`: what the connection's endpoint dials (443 for storage and Entra ID over HTTPS), for
/// the egress policy's port-specific entries (see `shoal_egress::Egress::client_builder`).
pub(crate) fn http_client(
    options: &ConnectorOptions,
    port: u16,
) -> Result<reqwest::Client, QueueError> {
    let builder = match &options.egress {
        Some(egress) => egress.client_builder(port),
        None => reqwest::Client::builder(),
    };
    let mut builder = builder
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(READ_TIMEOUT)
        // Storage never redirects; the SDK's own client does not follow redirects either.
        .redirect(reqwest::redirect::Policy::none())
        .tcp_nodelay(true);
    if let Some(pem) = &options.extra_root_ca_pem {
        let certs = reqwest::Certificate::from_pem_bundle(pem)
            .map_err(|e| QueueError::InvalidConnection(format!("extra root CA is not PEM: {e}")))?;
        if certs.is_empty() {
            return Err(QueueError::InvalidConnection(
                "extra root CA holds no certificate".into(),
            ));
        }
        // In addition to the platform's roots, not instead of them.
        builder = builder.tls_certs_merge(certs);
    }
    builder
        .build()
        .map_err(|e| QueueError::InvalidConnection(format!("cannot build the HTTP client: {e}")))
}

/// A few quick retries of transport failures, throttling and 5xx inside one call; longer
/// outages surface as [`QueueError::Unavailable`] and are the caller's to back off from (the
/// SDK's default, 8 retries over up to a minute, would stall a listener's poll loop).
fn retry() -> RetryOptions {
    RetryOptions::exponential(ExponentialRetryOptions {
        initial_delay: SdkDuration::milliseconds(200),
        max_retries: 3,
        max_total_elapsed: SdkDuration::seconds(10),
        max_delay: SdkDuration::seconds(2),
    })
}

pub(crate) fn client_options(
    http: &reqwest::Client,
    per_call_policies: Vec<Arc<dyn Policy>>,
) -> ClientOptions {
    ClientOptions {
        per_call_policies,
        retry: retry(),
        transport: Some(Transport::new(Arc::new(http.clone()))),
        ..Default::default()
    }
}
