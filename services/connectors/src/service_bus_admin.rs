//! A client for Service Bus's ATOM/XML management REST API, as Azure's scale controller and
//! `ServiceBusAdministrationClient` use it (`Azure.Messaging.ServiceBus/src/Administration/
//! HttpRequestAndResponse.cs`): `GET https://<namespace>/<entity>?api-version=2021-05` for an
//! entity's description and runtime counts (`CountDetails`), and a `PUT` of the whole
//! description with `If-Match: *` to update its settings.
//!
//! Authorization is a Service Bus SAS signed from the connection string's key, the connection
//! string's fixed SAS, or a bearer token for `https://servicebus.azure.net/.default` from the
//! app's identity (identity-based connections). With `UseDevelopmentEmulator=true` the API is
//! plain `http://` on the connection string's host and port.
//!
//! Errors are [`QueueError`]s: 401/403 are [`QueueError::Unauthorized`] (e.g. a listen-only
//! key, which may receive but not read the entity's description), a missing entity is
//! [`QueueError::EntityNotFound`], network trouble, 408, 429 and 5xx are
//! [`QueueError::Unavailable`]. No message contains a key, signature or token.

mod sas;
mod xml;

use std::sync::Arc;
use std::time::Duration;

use azure_core::credentials::TokenCredential;
use chrono::Utc;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::connection::{ConnectionSpec, ServiceBusCredential};
use shoal_domain::service_bus_entity::path::EntityPath;
use shoal_domain::service_bus_entity::settings::LiveEntitySettings;
use url::Url;

pub use xml::{EntityDescription, MessageCounts};

use crate::credentials::{SignIn, TokenHealth, token_credential};
use crate::error::Redactor;
use crate::service_bus::SERVICE_BUS_SCOPE;
use crate::{ConnectorOptions, QueueError, transport};

/// The management API version the .NET SDK's current default speaks
/// (`ServiceBusAdministrationClientOptions.ServiceVersion.V2021_05`).
pub const SERVICE_BUS_MANAGEMENT_API_VERSION: &str = "2021-05";
/// How long a SAS Shoal signs is valid; each request signs a fresh one.
const SAS_VALIDITY: Duration = Duration::from_secs(20 * 60);
/// The most an answer of the management API may weigh: one entity's Atom entry is a few KB; a
/// namespace a tenant points anywhere may answer with anything.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

enum Auth {
    SharedAccessKey {
        key_name: String,
        key: String,
    },
    /// A `SharedAccessSignature sr=…` from the connection string, sent as given.
    Signature(String),
    Bearer(Arc<dyn TokenCredential>),
}

/// The management API of one namespace, reached with one connection's rights.
#[derive(Clone)]
pub struct ServiceBusAdmin {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    /// `https://<namespace>/` (or `http://host:port/` for the development emulator).
    base: Url,
    auth: Auth,
    redactor: Redactor,
    health: TokenHealth,
    description: String,
}

impl std::fmt::Debug for ServiceBusAdmin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.inner.description)
    }
}

impl ServiceBusAdmin {
    /// A connection of an app with `identities`; identity-based connections sign in as
    /// `shoal_domain::connection::outbound` decides (see [`SignIn`]).
    pub fn connect_for_app(
        spec: &ConnectionSpec,
        options: &ConnectorOptions,
        identities: &AppIdentities,
    ) -> Result<ServiceBusAdmin, QueueError> {
        let sign_in = SignIn::for_connection(spec, identities, options.assertions.as_ref())
            .map_err(QueueError::InvalidConnection)?;
        Self::connect_as(spec, options, &sign_in)
    }

    /// Builds the client; no request is made.
    pub fn connect_as(
        spec: &ConnectionSpec,
        options: &ConnectorOptions,
        sign_in: &SignIn,
    ) -> Result<ServiceBusAdmin, QueueError> {
        let http = transport::http_client(options, 443)?;
        let health = TokenHealth::default();
        let (base, auth, redactor, description) = match spec {
            ConnectionSpec::ServiceBusConnectionString(conn) => {
                let scheme = if conn.development_emulator {
                    "http"
                } else {
                    "https"
                };
                let base = Url::parse(&format!("{scheme}://{}/", conn.fully_qualified_namespace))
                    .map_err(|_| {
                    QueueError::InvalidConnection(format!(
                        "{}: the endpoint's namespace is not a host name",
                        conn.setting
                    ))
                })?;
                let (auth, secrets, how) = match &conn.credential {
                    ServiceBusCredential::SharedAccessKey { key_name, key } => (
                        Auth::SharedAccessKey {
                            key_name: key_name.clone(),
                            key: key.clone(),
                        },
                        vec![key.clone()],
                        format!("shared access key {key_name}"),
                    ),
                    ServiceBusCredential::SharedAccessSignature(sas) => (
                        Auth::Signature(sas.clone()),
                        vec![sas.clone()],
                        "shared access signature".to_owned(),
                    ),
                };
                let description = format!("Service Bus management at {base} ({how})");
                (base, auth, Redactor::new(secrets), description)
            }
            ConnectionSpec::Identity(identity) => {
                let redactor = Redactor::new(identity.client_secret.clone());
                let host = identity.service_uri.host_str().ok_or_else(|| {
                    QueueError::InvalidConnection(format!(
                        "{}__fullyQualifiedNamespace names no host",
                        identity.setting_prefix
                    ))
                })?;
                let base = Url::parse(&format!("https://{host}/")).map_err(|_| {
                    QueueError::InvalidConnection(format!(
                        "{}__fullyQualifiedNamespace is not a host name",
                        identity.setting_prefix
                    ))
                })?;
                let credential =
                    token_credential(identity, sign_in, &http, &health, &redactor, options)?;
                let description = format!(
                    "Service Bus management at {base} (identity-based, {})",
                    identity.credential
                );
                (base, Auth::Bearer(credential), redactor, description)
            }
            ConnectionSpec::StorageConnectionString(conn) => {
                return Err(QueueError::InvalidConnection(format!(
                    "{} is a storage connection string, not a Service Bus namespace",
                    conn.setting
                )));
            }
        };
        Ok(ServiceBusAdmin {
            inner: Arc::new(Inner {
                http,
                base,
                auth,
                redactor,
                health,
                description,
            }),
        })
    }

    /// Which namespace and how it is authorized, without secrets.
    pub fn describe(&self) -> String {
        self.inner.description.clone()
    }

    /// Why the last token request failed, if it did (identity-based connections only).
    pub fn last_token_error(&self) -> Option<String> {
        self.inner.health.last_error()
    }

    /// The entity's description: runtime counts and settings (needs Manage rights, or a role
    /// that can read entities; a listen-only key gets [`QueueError::Unauthorized`]).
    pub async fn entity(&self, entity: &EntityPath) -> Result<EntityDescription, QueueError> {
        let url = self.url(entity)?;
        let response = self.send(reqwest::Method::GET, &url, None, entity).await?;
        let body = self.body(response, entity).await?;
        match xml::parse_entry(&body) {
            Ok(Some(description)) => Ok(description),
            Ok(None) => Err(QueueError::EntityNotFound {
                entity: entity.to_string(),
            }),
            Err(e) => Err(QueueError::Other(format!("reading {entity}: {e}"))),
        }
    }

    /// Gives the entity `settings`, keeping everything else of its description. Reads it
    /// first; writes only when something differs, so repeating it is harmless. Returns whether
    /// it wrote.
    pub async fn update_settings(
        &self,
        entity: &EntityPath,
        settings: &LiveEntitySettings,
    ) -> Result<bool, QueueError> {
        let current = self.entity(entity).await?;
        if &current.settings == settings {
            return Ok(false);
        }
        let url = self.url(entity)?;
        let body = xml::updated_entry(&current, settings);
        let response = self
            .send(reqwest::Method::PUT, &url, Some(body), entity)
            .await?;
        self.body(response, entity).await?;
        Ok(true)
    }

    fn url(&self, entity: &EntityPath) -> Result<Url, QueueError> {
        let mut url = self
            .inner
            .base
            .join(&entity.management_path())
            .map_err(|_| QueueError::InvalidConnection(format!("{entity} is not a valid path")))?;
        url.query_pairs_mut()
            .append_pair("api-version", SERVICE_BUS_MANAGEMENT_API_VERSION);
        Ok(url)
    }

    async fn authorization(&self, url: &Url) -> Result<String, QueueError> {
        match &self.inner.auth {
            Auth::SharedAccessKey { key_name, key } => {
                let mut resource = url.clone();
                resource.set_query(None);
                let expiry = Utc::now().timestamp() + SAS_VALIDITY.as_secs() as i64;
                Ok(sas::token(resource.as_str(), key_name, key, expiry))
            }
            Auth::Signature(sas) => Ok(sas.clone()),
            Auth::Bearer(credential) => credential
                .get_token(&[SERVICE_BUS_SCOPE], None)
                .await
                .map(|token| format!("Bearer {}", token.token.secret()))
                .map_err(|e| {
                    QueueError::Unauthorized(format!(
                        "no token for Service Bus: {}",
                        self.inner.redactor.redact(&e.to_string())
                    ))
                }),
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        url: &Url,
        body: Option<String>,
        entity: &EntityPath,
    ) -> Result<reqwest::Response, QueueError> {
        let authorization = self.authorization(url).await?;
        let mut request = self
            .inner
            .http
            .request(method.clone(), url.clone())
            .header(reqwest::header::AUTHORIZATION, authorization);
        if let Some(body) = body {
            request = request
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/atom+xml;type=entry;charset=utf-8",
                )
                .header(reqwest::header::IF_MATCH, "*")
                .body(body);
        }
        request.send().await.map_err(|e| {
            let what = if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "cannot connect"
            } else {
                "request failed"
            };
            QueueError::Unavailable(format!("{method} {entity} at {}: {what}", self.inner.base))
        })
    }

    /// The body of a successful answer, or the error its status means.
    async fn body(
        &self,
        response: reqwest::Response,
        entity: &EntityPath,
    ) -> Result<String, QueueError> {
        let status = response.status();
        let body = match shoal_egress::read_capped(response, MAX_ANSWER_BYTES).await {
            Ok(body) => String::from_utf8_lossy(&body).into_owned(),
            Err(shoal_egress::ReadError::TooLarge) => {
                return Err(QueueError::Unavailable(format!(
                    "the answer about {entity} is larger than {MAX_ANSWER_BYTES} bytes"
                )));
            }
            Err(shoal_egress::ReadError::Failed(_)) => {
                return Err(QueueError::Unavailable(format!(
                    "reading the answer about {entity} failed"
                )));
            }
        };
        if status.is_success() {
            return Ok(body);
        }
        let detail = xml::error_detail(&body)
            .map(|d| format!(": {}", self.inner.redactor.redact(&d)))
            .unwrap_or_default();
        let code = status.as_u16();
        Err(match code {
            401 | 403 => QueueError::Unauthorized(format!(
                "{code} from the Service Bus management API for {entity} (the connection needs Manage rights to read or update entities){detail}"
            )),
            404 => QueueError::EntityNotFound {
                entity: entity.to_string(),
            },
            408 | 429 | 500..=599 => QueueError::Unavailable(format!(
                "{code} from the Service Bus management API for {entity}{detail}"
            )),
            _ => QueueError::Other(format!(
                "{code} from the Service Bus management API for {entity}{detail}"
            )),
        })
    }
}
