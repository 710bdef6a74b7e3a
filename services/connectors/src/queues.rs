//! Azure Storage Queues over the official SDK: one pipeline per connection (account), one
//! cheap client per queue sharing it, and exactly one HTTP request per operation.

use std::sync::Arc;

use azure_core::credentials::TokenCredential;
use azure_core::http::Url;
use azure_storage_queue::{QueueServiceClient, QueueServiceClientOptions};
use chrono::Utc;
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::connection::{ConnectionSpec, StorageConnectionString, StorageCredential};

use crate::credentials::{SasPolicy, SasSource, SignIn, TokenHealth, token_credential};
use crate::error::Redactor;
use crate::sas::AccountSasSigner;
use crate::{ConnectorOptions, QueueError, STORAGE_API_VERSION, transport};

mod queue;

pub use queue::{PeekedMessage, Queue, QueueMessage, Receipt};

/// An account-level handle built from a resolved connection; cheap to clone.
#[derive(Clone)]
pub struct StorageQueues {
    account: Arc<Account>,
}

struct Account {
    service: QueueServiceClient,
    description: String,
    redactor: Redactor,
    health: TokenHealth,
}

/// The service URL without query, fragment or trailing slash (the SDK appends `/<queue>`).
fn service_url(endpoint: &Url) -> Result<Url, QueueError> {
    let mut url = endpoint.clone();
    url.set_query(None);
    url.set_fragment(None);
    let path = url.path().trim_end_matches('/').to_owned();
    url.set_path(&path);
    if url.cannot_be_a_base() || !matches!(url.scheme(), "http" | "https") {
        return Err(QueueError::InvalidConnection(
            "the queue endpoint must be an http or https URL".into(),
        ));
    }
    Ok(url)
}

/// `scheme://host[:port][/path]`, nothing that could hold a secret.
fn safe_url(url: &Url) -> String {
    let mut out = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        out.push_str(&format!(":{port}"));
    }
    out.push_str(url.path().trim_end_matches('/'));
    out
}

impl StorageQueues {
    /// Builds the account's pipeline from a resolved connection. No request is made; a wrong
    /// key or identity shows on the first operation.
    /// A storage connection string used directly (tools, tests, `shoal dev`), read by the same
    /// rules as the `AzureWebJobsStorage` app setting.
    pub fn from_connection_string(
        connection_string: &str,
        options: &ConnectorOptions,
    ) -> Result<StorageQueues, QueueError> {
        let settings = std::collections::BTreeMap::from([(
            "AzureWebJobsStorage".to_owned(),
            connection_string.to_owned(),
        )]);
        let spec = shoal_domain::connection::resolve(
            shoal_domain::connection::ConnectionKind::StorageQueue,
            None,
            &settings,
        )
        .map_err(|e| QueueError::InvalidConnection(e.to_string()))?;
        Self::connect(&spec, options)
    }

    /// A connection whose settings hold everything it needs: a connection string, or an
    /// identity-based connection with a client secret. Any other identity-based connection
    /// needs [`StorageQueues::connect_as`] with the sign-in decided for its app.
    pub fn connect(
        spec: &ConnectionSpec,
        options: &ConnectorOptions,
    ) -> Result<StorageQueues, QueueError> {
        Self::connect_as(spec, options, &SignIn::AsConfigured)
    }

    /// A connection of an app with `identities`: identity-based connections sign in as
    /// `shoal_domain::connection::outbound` decides (the app's identity through federation, the
    /// host's identity only for an opted-in tenant, or the connection's own client secret).
    pub fn connect_for_app(
        spec: &ConnectionSpec,
        options: &ConnectorOptions,
        identities: &AppIdentities,
    ) -> Result<StorageQueues, QueueError> {
        let sign_in = SignIn::for_connection(spec, identities, options.assertions.as_ref())
            .map_err(QueueError::InvalidConnection)?;
        Self::connect_as(spec, options, &sign_in)
    }

    pub fn connect_as(
        spec: &ConnectionSpec,
        options: &ConnectorOptions,
        sign_in: &SignIn,
    ) -> Result<StorageQueues, QueueError> {
        let port = match spec {
            ConnectionSpec::StorageConnectionString(conn) => {
                conn.queue_endpoint.port_or_known_default()
            }
            ConnectionSpec::Identity(identity) => identity.service_uri.port_or_known_default(),
            ConnectionSpec::ServiceBusConnectionString(_) => None,
        };
        let http = transport::http_client(options, port.unwrap_or(443))?;
        let health = TokenHealth::default();
        let (url, credential, per_call, description, redactor) = match spec {
            ConnectionSpec::StorageConnectionString(conn) => connection_string(conn)?,
            ConnectionSpec::Identity(identity) => {
                let redactor = Redactor::new(identity.client_secret.clone());
                let url = service_url(&identity.service_uri)?;
                if url.scheme() != "https" {
                    return Err(QueueError::InvalidConnection(
                        "identity-based connections need an https queue service URI".into(),
                    ));
                }
                let credential =
                    token_credential(identity, sign_in, &http, &health, &redactor, options)
                        .map_err(|e| match e {
                            QueueError::InvalidConnection(m) => {
                                QueueError::InvalidConnection(redactor.redact(&m))
                            }
                            other => other,
                        })?;
                let description = format!(
                    "queues at {} (identity-based, {})",
                    safe_url(&url),
                    match sign_in {
                        SignIn::Federated { federation, .. } =>
                            format!("as the app's {}", federation.identity),
                        SignIn::HostIdentity => "as the worker host's identity".to_owned(),
                        SignIn::AsConfigured => identity.credential.to_string(),
                    }
                );
                (url, Some(credential), Vec::new(), description, redactor)
            }
            ConnectionSpec::ServiceBusConnectionString(_) => {
                return Err(QueueError::InvalidConnection(format!(
                    "{} is a Service Bus connection string, not a storage account",
                    spec.setting()
                )));
            }
        };
        let options = QueueServiceClientOptions {
            client_options: transport::client_options(&http, per_call),
            version: STORAGE_API_VERSION.to_owned(),
        };
        let service = QueueServiceClient::new(url, credential, Some(options))
            .map_err(|e| QueueError::InvalidConnection(redactor.redact(&e.to_string())))?;
        Ok(StorageQueues {
            account: Arc::new(Account {
                service,
                description,
                redactor,
                health,
            }),
        })
    }

    /// A handle on queue `name` (no request is made; the queue need not exist yet).
    pub fn queue(&self, name: &str) -> Result<Queue, QueueError> {
        let client = self.account.service.queue_client(name).map_err(|e| {
            QueueError::InvalidConnection(self.account.redactor.redact(&e.to_string()))
        })?;
        Ok(Queue::new(name, client, self.account.clone()))
    }

    /// Which account and how it is authorized, without secrets.
    pub fn describe(&self) -> String {
        self.account.description.clone()
    }

    /// Why the last token request failed, if it did (identity-based connections only).
    pub fn last_token_error(&self) -> Option<String> {
        self.account.health.last_error()
    }
}

type Parts = (
    Url,
    Option<Arc<dyn TokenCredential>>,
    Vec<Arc<dyn azure_core::http::policies::Policy>>,
    String,
    Redactor,
);

fn connection_string(conn: &StorageConnectionString) -> Result<Parts, QueueError> {
    let url = service_url(&conn.queue_endpoint)?;
    let (source, how, redactor) = match &conn.credential {
        StorageCredential::AccountKey(key) => {
            let redactor = Redactor::new([key.clone()]);
            let signer = AccountSasSigner::new(
                &conn.account_name,
                key,
                STORAGE_API_VERSION,
                url.scheme() == "https",
                Utc::now(),
            )
            .map_err(|_| {
                QueueError::InvalidConnection(format!(
                    "{}: the account key is not valid base64",
                    conn.setting
                ))
            })?;
            (SasSource::AccountKey(signer), "account key", redactor)
        }
        StorageCredential::SharedAccessSignature(sas) => {
            let sas = sas.trim_start_matches('?');
            (
                SasSource::Fixed(sas.into()),
                "shared access signature",
                Redactor::new([sas.to_owned()]),
            )
        }
    };
    let description = format!(
        "queues of account {} at {} ({how})",
        conn.account_name,
        safe_url(&url)
    );
    let policy: Arc<dyn azure_core::http::policies::Policy> = Arc::new(SasPolicy { source });
    Ok((url, None, vec![policy], description, redactor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_url_has_no_trailing_slash_query_or_fragment() {
        let cases = [
            (
                "https://acct.queue.core.windows.net",
                "https://acct.queue.core.windows.net",
            ),
            (
                "https://acct.queue.core.windows.net/",
                "https://acct.queue.core.windows.net",
            ),
            (
                "http://127.0.0.1:10001/devstoreaccount1/",
                "http://127.0.0.1:10001/devstoreaccount1",
            ),
            (
                "https://acct.queue.core.windows.net/?sv=1&sig=x#f",
                "https://acct.queue.core.windows.net",
            ),
        ];
        for (endpoint, want) in cases {
            let url = service_url(&Url::parse(endpoint).unwrap()).unwrap();
            assert_eq!(url.as_str().trim_end_matches('/'), want);
            assert!(url.query().is_none() && url.fragment().is_none());
            // The SDK pushes the queue name as a path segment.
            let service = QueueServiceClient::new(url, None, None).unwrap();
            let queue = service.queue_client("orders").unwrap();
            assert_eq!(queue.url().as_str(), format!("{want}/orders"));
        }
    }
}
