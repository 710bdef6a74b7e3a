//! A worker host's own identity, as a platform would give it to the worker process, rigged to
//! show whether it is ever used: `IDENTITY_ENDPOINT`/`IDENTITY_HEADER` point at a local
//! managed-identity endpoint that counts its requests (and answers with a storage token Azurite
//! accepts), and `AZURE_FEDERATED_TOKEN_FILE` holds a marker that the Entra stand-in records if
//! it is ever presented as a client assertion.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::routing::get;
use serde_json::{Value, json};
use shoal_testkit::azurite::{TENANT_ID, storage_token};

/// The content of the host's workload identity token file.
pub const TOKEN_FILE_MARKER: &str = "host-workload-identity-token-must-never-be-presented";
/// The Entra client id the host's environment names.
pub const HOST_CLIENT_ID: &str = "99999999-8888-7777-6666-555555555555";

pub struct HostIdentity {
    endpoint: String,
    requests: Arc<AtomicUsize>,
    token_file: tempfile::NamedTempFile,
    task: tokio::task::JoinHandle<()>,
}

impl HostIdentity {
    /// Starts the endpoint on the current Tokio runtime.
    pub fn start() -> HostIdentity {
        let requests = Arc::new(AtomicUsize::new(0));
        let router = axum::Router::new()
            .route("/msi/token", get(token))
            .with_state(requests.clone());
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let endpoint = format!("http://{}/msi/token", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let token_file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(token_file.path(), TOKEN_FILE_MARKER).unwrap();
        HostIdentity {
            endpoint,
            requests,
            token_file,
            task,
        }
    }

    /// The environment a worker process gets: an App Service managed identity and a workload
    /// identity, both the host's.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("IDENTITY_ENDPOINT", self.endpoint.clone()),
            ("IDENTITY_HEADER", "host-identity-header".into()),
            (
                "AZURE_FEDERATED_TOKEN_FILE",
                self.token_file.path().display().to_string(),
            ),
            ("AZURE_CLIENT_ID", HOST_CLIENT_ID.into()),
            ("AZURE_TENANT_ID", TENANT_ID.into()),
        ]
    }

    /// Token requests the host's managed-identity endpoint has had.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for HostIdentity {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn token(State(requests): State<Arc<AtomicUsize>>) -> Json<Value> {
    requests.fetch_add(1, Ordering::SeqCst);
    let lifetime = Duration::from_secs(3600);
    let expires_on = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + lifetime.as_secs();
    Json(json!({
        "access_token": storage_token(TENANT_ID, lifetime),
        "expires_on": expires_on.to_string(),
        "resource": "https://storage.azure.com",
        "token_type": "Bearer",
        "client_id": HOST_CLIENT_ID,
    }))
}
