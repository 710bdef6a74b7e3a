//! A stand-in for Entra ID, which cannot run on a test machine: an HTTPS server that speaks the
//! client-credentials flow (`POST /{tenant}/oauth2/v2.0/token`, what `azure_identity`'s
//! `ClientSecretCredential` calls) and answers with an unsigned JWT that Azurite's
//! `--oauth basic` accepts (it checks lifetime, issuer and audience, not the signature).
//!
//! It also takes client assertions (`ClientAssertionCredential`, workload identity federation)
//! and checks them as Entra ID does against the federated credentials a test configures: see
//! [`federation`].

use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Result;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::json;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

mod federation;

/// The tenant the token endpoint issues tokens for.
pub const TENANT_ID: &str = "11111111-2222-3333-4444-555555555555";
/// The client the token endpoint knows, and its secret; any other secret is refused like Entra
/// ID refuses one (401 `invalid_client`, AADSTS7000215).
pub const CLIENT_ID: &str = "22222222-3333-4444-5555-666666666666";
pub const CLIENT_SECRET: &str = "shoal-test-client-secret";

/// An unsigned JWT for Azure Storage as Azurite's `--oauth basic` checks it: audience
/// `https://storage.azure.com`, issuer `https://sts.windows.net/<tenant>/`, and a lifetime
/// around now (`nbf`/`iat` five minutes back, to tolerate clock differences).
pub fn storage_token(tenant_id: &str, lifetime: Duration) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let header = json!({"alg": "none", "typ": "JWT"});
    let claims = json!({
        "aud": "https://storage.azure.com",
        "iss": format!("https://sts.windows.net/{tenant_id}/"),
        "tid": tenant_id,
        "appid": CLIENT_ID,
        "oid": CLIENT_ID,
        "sub": CLIENT_ID,
        "iat": now - 300,
        "nbf": now - 300,
        "exp": now + lifetime.as_secs(),
        "ver": "1.0",
    });
    format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    )
}

/// A federated credential on an Entra application or user-assigned managed identity: Entra
/// exchanges a client assertion for a token of `client_id` only if the assertion's issuer,
/// subject and audience are exactly these (`az identity federated-credential create`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FederatedCredential {
    pub client_id: String,
    pub issuer: String,
    pub subject: String,
    pub audience: String,
}

/// What the endpoint knows and saw, shared with its connections.
#[derive(Default)]
struct State {
    requests: AtomicUsize,
    federated: Mutex<Vec<FederatedCredential>>,
    /// Every client assertion presented, verified or not, in order.
    assertions: Mutex<Vec<String>>,
    /// Client assertions Entra accepted: (client id, subject).
    exchanged: Mutex<Vec<(String, String)>>,
}

/// The running endpoint; stops when dropped.
pub(crate) struct TokenEndpoint {
    port: u16,
    state: Arc<State>,
    task: JoinHandle<()>,
}

impl TokenEndpoint {
    pub(crate) async fn start(tls: Arc<rustls::ServerConfig>) -> Result<TokenEndpoint> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let state = Arc::new(State::default());
        let acceptor = TlsAcceptor::from(tls);
        let shared = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let (acceptor, counter) = (acceptor.clone(), shared.clone());
                tokio::spawn(async move {
                    // A client that does not trust the CA hangs up here; nothing to report.
                    let Ok(stream) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = service_fn(move |request| {
                        let counter = counter.clone();
                        async move { Ok::<_, Infallible>(answer(request, &counter).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(TokenEndpoint { port, state, task })
    }

    pub(crate) fn authority_host(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    pub(crate) fn token_requests(&self) -> usize {
        self.state.requests.load(Ordering::SeqCst)
    }

    pub(crate) fn trust(&self, credential: FederatedCredential) {
        lock(&self.state.federated).push(credential);
    }

    pub(crate) fn assertions(&self) -> Vec<String> {
        lock(&self.state.assertions).clone()
    }

    pub(crate) fn exchanged(&self) -> Vec<(String, String)> {
        lock(&self.state.exchanged).clone()
    }
}

impl Drop for TokenEndpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn json_response(status: StatusCode, body: serde_json::Value) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}

fn entra_error(
    status: StatusCode,
    error: &str,
    description: &str,
    code: u32,
) -> Response<Full<Bytes>> {
    json_response(
        status,
        json!({
            "error": error,
            "error_description": description,
            "error_codes": [code],
        }),
    )
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

async fn answer(request: Request<Incoming>, state: &State) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_owned();
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match (request.method(), segments.as_slice()) {
        (&Method::POST, [tenant, "oauth2", "v2.0", "token"]) => {
            let tenant = (*tenant).to_owned();
            state.requests.fetch_add(1, Ordering::SeqCst);
            let body = match request.into_body().collect().await {
                Ok(body) => body.to_bytes(),
                Err(_) => {
                    return entra_error(
                        StatusCode::BAD_REQUEST,
                        "invalid_request",
                        "unreadable body",
                        900144,
                    );
                }
            };
            token(&tenant, &body, state).await
        }
        // OpenID discovery, for clients that look before asking for a token.
        (&Method::GET, [tenant, "v2.0", ".well-known", "openid-configuration"]) => {
            let base = format!(
                "https://{}",
                request
                    .headers()
                    .get(hyper::header::HOST)
                    .and_then(|h| h.to_str().ok())
                    .unwrap_or("127.0.0.1")
            );
            json_response(
                StatusCode::OK,
                json!({
                    "issuer": format!("{base}/{tenant}/v2.0"),
                    "token_endpoint": format!("{base}/{tenant}/oauth2/v2.0/token"),
                    "authorization_endpoint": format!("{base}/{tenant}/oauth2/v2.0/authorize"),
                    "jwks_uri": format!("{base}/{tenant}/discovery/v2.0/keys"),
                    "tenant_region_scope": "WW",
                }),
            )
        }
        _ => entra_error(
            StatusCode::NOT_FOUND,
            "invalid_request",
            "no such endpoint",
            900000,
        ),
    }
}

/// The client-credentials grant: the known client and secret, or a client assertion a
/// federated credential trusts, get a storage token.
async fn token(tenant: &str, body: &[u8], state: &State) -> Response<Full<Bytes>> {
    let form: Vec<(String, String)> = url::form_urlencoded::parse(body).into_owned().collect();
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if field("grant_type") != Some("client_credentials") {
        return entra_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "AADSTS70003: only client_credentials is supported here",
            70003,
        );
    }
    if let Some(assertion) = field("client_assertion") {
        lock(&state.assertions).push(assertion.to_owned());
        if field("client_assertion_type") != Some(federation::ASSERTION_TYPE) {
            return entra_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "AADSTS7000201: the client_assertion_type is not supported",
                7000201,
            );
        }
        let client_id = field("client_id").unwrap_or_default().to_owned();
        let trusted: Vec<FederatedCredential> = lock(&state.federated)
            .iter()
            .filter(|c| c.client_id == client_id)
            .cloned()
            .collect();
        return match federation::verify(assertion, &trusted).await {
            Ok(subject) => {
                lock(&state.exchanged).push((client_id, subject));
                storage_token_response(tenant)
            }
            Err(refusal) => entra_error(
                refusal.status,
                refusal.error,
                &refusal.description,
                refusal.code,
            ),
        };
    }
    if field("client_id") != Some(CLIENT_ID) {
        return entra_error(
            StatusCode::BAD_REQUEST,
            "unauthorized_client",
            "AADSTS700016: application not found in the directory",
            700016,
        );
    }
    if field("client_secret") != Some(CLIENT_SECRET) {
        return entra_error(
            StatusCode::UNAUTHORIZED,
            "invalid_client",
            "AADSTS7000215: Invalid client secret provided.",
            7000215,
        );
    }
    storage_token_response(tenant)
}

fn storage_token_response(tenant: &str) -> Response<Full<Bytes>> {
    let lifetime = Duration::from_secs(3600);
    json_response(
        StatusCode::OK,
        json!({
            "token_type": "Bearer",
            "expires_in": lifetime.as_secs(),
            "ext_expires_in": lifetime.as_secs(),
            "access_token": storage_token(tenant, lifetime),
        }),
    )
}
