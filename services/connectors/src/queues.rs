//! Azure Storage Queues over the official SDK: one pipeline per connection (account), one
//! cheap client per queue sharing it, and exactly one HTTP request per operation.

use std::sync::Arc;
use std::time::Duration;

use azure_core::credentials::TokenCredential;
use azure_core::http::{StatusCode, Url};
use azure_core::time::OffsetDateTime;
use azure_storage_queue::models::{
    QueueClientGetPropertiesResultHeaders, QueueClientPeekMessagesOptions,
    QueueClientReceiveMessagesOptions, QueueMessage as Body, ReceivedMessage,
};
use azure_storage_queue::{QueueClient, QueueServiceClient, QueueServiceClientOptions};
use chrono::{DateTime, Utc};
use shoal_domain::connection::outbound::AppIdentities;
use shoal_domain::connection::{ConnectionSpec, StorageConnectionString, StorageCredential};

use crate::credentials::{SasPolicy, SasSource, SignIn, TokenHealth, token_credential};
use crate::error::{Op, Redactor, from_azure};
use crate::sas::AccountSasSigner;
use crate::{ConnectorOptions, QueueError, STORAGE_API_VERSION, transport};

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

/// One queue of a [`StorageQueues`] account; cheap to clone.
#[derive(Clone)]
pub struct Queue {
    inner: Arc<QueueInner>,
}

struct QueueInner {
    name: String,
    client: QueueClient,
    account: Arc<Account>,
}

/// A received message and its metadata, as the queue trigger hands them to the handler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueMessage {
    pub message_id: String,
    pub pop_receipt: String,
    pub dequeue_count: u32,
    pub insertion_time: DateTime<Utc>,
    pub expiration_time: DateTime<Utc>,
    pub next_visible_time: DateTime<Utc>,
    /// The message text as stored (base64 or not, as the sender wrote it).
    pub text: String,
}

/// What a visibility update returns: the receipt to use from now on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub pop_receipt: String,
    pub next_visible_time: DateTime<Utc>,
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
        let http = transport::http_client(options)?;
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
                let credential = token_credential(identity, sign_in, &http, &health, &redactor)
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
        Ok(Queue {
            inner: Arc::new(QueueInner {
                name: name.to_owned(),
                client,
                account: self.account.clone(),
            }),
        })
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

/// Whole seconds, rounded up, within what the service accepts.
fn seconds(duration: Duration, min: i32) -> i32 {
    let secs = duration.as_secs() + u64::from(duration.subsec_nanos() > 0);
    i32::try_from(secs).unwrap_or(i32::MAX).max(min)
}

fn to_chrono(t: OffsetDateTime) -> DateTime<Utc> {
    DateTime::from_timestamp(t.unix_timestamp(), t.nanosecond()).unwrap_or_default()
}

fn message(m: ReceivedMessage) -> Result<QueueMessage, QueueError> {
    let missing = |field: &str| QueueError::Other(format!("received message without {field}"));
    Ok(QueueMessage {
        message_id: m.message_id.ok_or_else(|| missing("MessageId"))?,
        pop_receipt: m.pop_receipt.ok_or_else(|| missing("PopReceipt"))?,
        dequeue_count: m
            .dequeue_count
            .and_then(|c| u32::try_from(c).ok())
            .ok_or_else(|| missing("DequeueCount"))?,
        insertion_time: to_chrono(m.insertion_time.ok_or_else(|| missing("InsertionTime"))?),
        expiration_time: to_chrono(m.expiration_time.ok_or_else(|| missing("ExpirationTime"))?),
        next_visible_time: to_chrono(
            m.time_next_visible
                .ok_or_else(|| missing("TimeNextVisible"))?,
        ),
        text: m.message_text.unwrap_or_default(),
    })
}

impl Queue {
    /// Why the account's last token request failed, if it did.
    pub fn last_token_error(&self) -> Option<String> {
        self.inner.account.health.last_error()
    }

    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The queue's URL without its query (so never a SAS): the same for every connection to
    /// this queue, whichever credential it uses.
    pub fn address(&self) -> String {
        let mut url = self.inner.client.url().clone();
        url.set_query(None);
        url.to_string()
    }

    fn error(&self, err: &azure_core::Error, op: Op<'_>) -> QueueError {
        from_azure(err, op, &self.inner.name, &self.inner.account.redactor)
    }

    /// Creates the queue; one request, and an existing queue is fine (204, or 409 when its
    /// metadata differs).
    pub async fn create_if_missing(&self) -> Result<(), QueueError> {
        match self.inner.client.create(None).await {
            Ok(_) => Ok(()),
            Err(e) if e.http_status() == Some(StatusCode::Conflict) => Ok(()),
            Err(e) => Err(self.error(&e, Op::Create)),
        }
    }

    /// Up to `max_messages` (1..=32) messages, invisible to others for `visibility_timeout`
    /// (at least one second).
    pub async fn receive(
        &self,
        max_messages: u8,
        visibility_timeout: Duration,
    ) -> Result<Vec<QueueMessage>, QueueError> {
        if !(1..=32).contains(&max_messages) {
            return Err(QueueError::Other(format!(
                "max_messages must be between 1 and 32, not {max_messages}"
            )));
        }
        let options = QueueClientReceiveMessagesOptions {
            number_of_messages: Some(i32::from(max_messages)),
            visibility_timeout: Some(seconds(visibility_timeout, 1)),
            ..Default::default()
        };
        let received = self
            .inner
            .client
            .receive_messages(Some(options))
            .await
            .and_then(|r| r.into_model())
            .map_err(|e| self.error(&e, Op::Receive))?;
        received
            .items
            .unwrap_or_default()
            .into_iter()
            .map(message)
            .collect()
    }

    pub async fn delete(&self, message_id: &str, pop_receipt: &str) -> Result<(), QueueError> {
        self.inner
            .client
            .delete_message(message_id, pop_receipt, None)
            .await
            .map(|_| ())
            .map_err(|e| self.error(&e, Op::Delete { message_id }))
    }

    /// Changes visibility only (no new text); returns the new receipt. A zero timeout makes
    /// the message visible again at once.
    pub async fn update_visibility(
        &self,
        message_id: &str,
        pop_receipt: &str,
        visibility_timeout: Duration,
    ) -> Result<Receipt, QueueError> {
        let op = Op::UpdateVisibility { message_id };
        let response = self
            .inner
            .client
            .update_message(
                message_id,
                pop_receipt,
                seconds(visibility_timeout, 0),
                None,
            )
            .await
            .map_err(|e| self.error(&e, op))?;
        // The SDK models no response headers for this operation; the new receipt and time are
        // only in `x-ms-popreceipt` and `x-ms-time-next-visible`.
        let headers = response.headers();
        let header = |name: &'static str| {
            headers
                .get_optional_str(&azure_core::http::headers::HeaderName::from_static(name))
                .map(str::to_owned)
                .ok_or_else(|| QueueError::Other(format!("update message answered without {name}")))
        };
        let pop_receipt = header("x-ms-popreceipt")?;
        let next_visible = header("x-ms-time-next-visible")?;
        let next_visible_time = DateTime::parse_from_rfc2822(&next_visible)
            .map_err(|_| {
                QueueError::Other(format!(
                    "update message answered an invalid x-ms-time-next-visible: {next_visible}"
                ))
            })?
            .to_utc();
        Ok(Receipt {
            pop_receipt,
            next_visible_time,
        })
    }

    /// Enqueues `text` exactly as given (the caller base64-encodes when the app's
    /// messageEncoding is base64). The SDK escapes it for the XML body.
    pub async fn enqueue(&self, text: &str) -> Result<(), QueueError> {
        let body = Body {
            message_text: Some(text.to_owned()),
        };
        let content = body
            .try_into()
            .map_err(|e: azure_core::Error| self.error(&e, Op::Enqueue))?;
        self.inner
            .client
            .send_message(content, None)
            .await
            .map(|_| ())
            .map_err(|e| self.error(&e, Op::Enqueue))
    }

    /// The service's approximate message count (never lower than the actual count).
    pub async fn approximate_length(&self) -> Result<u64, QueueError> {
        let response = self
            .inner
            .client
            .get_properties(None)
            .await
            .map_err(|e| self.error(&e, Op::Properties))?;
        let count = response
            .approximate_messages_count()
            .map_err(|e| self.error(&e, Op::Properties))?
            .ok_or_else(|| {
                QueueError::Other("queue properties without x-ms-approximate-messages-count".into())
            })?;
        Ok(u64::try_from(count).unwrap_or(0))
    }

    /// When the oldest visible message was inserted (None when none is visible): the scaler's
    /// "queue time", as Azure's queue scale monitor reads it. Peeking changes nothing.
    pub async fn oldest_visible_inserted_at(&self) -> Result<Option<DateTime<Utc>>, QueueError> {
        let options = QueueClientPeekMessagesOptions {
            number_of_messages: Some(1),
            ..Default::default()
        };
        let peeked = self
            .inner
            .client
            .peek_messages(Some(options))
            .await
            .and_then(|r| r.into_model())
            .map_err(|e| self.error(&e, Op::Peek))?;
        Ok(peeked
            .items
            .unwrap_or_default()
            .into_iter()
            .next()
            .and_then(|m| m.insertion_time)
            .map(to_chrono))
    }
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

    #[test]
    fn durations_round_up_to_whole_seconds() {
        let cases = [
            (Duration::ZERO, 0, 0),
            (Duration::ZERO, 1, 1),
            (Duration::from_millis(1), 0, 1),
            (Duration::from_millis(1500), 0, 2),
            (Duration::from_secs(600), 1, 600),
            (Duration::from_secs(u64::MAX), 0, i32::MAX),
        ];
        for (duration, min, want) in cases {
            assert_eq!(seconds(duration, min), want, "{duration:?}");
        }
    }
}
