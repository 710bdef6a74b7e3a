//! Resolving a binding's `connection` to something a worker can connect with, from the app's
//! settings, by the rules of the Azure Functions Storage Queue and Service Bus extensions.
//!
//! Lookup, mirroring the WebJobs SDK's `GetWebJobsConnectionStringSection`:
//!
//! 1. The connection name is the binding's `connection`; absent or empty means `Storage` for
//!    storage queues and `ServiceBus` for Service Bus — so the default settings are
//!    `AzureWebJobsStorage` and `AzureWebJobsServiceBus`, as documented.
//! 2. `AzureWebJobs<name>` is tried first, then `<name>` (a name that already starts with
//!    `AzureWebJobs` is tried as is only). The prefix applies to whole *sections*: a prefix group
//!    `AzureWebJobs<name>__…` is found before a plain `<name>` value, exactly as in Azure.
//! 3. Within the section found, a single value (a connection string) beats a group of
//!    `<name>__<property>` settings (an identity-based connection). `<name>:<property>` is
//!    accepted too, as Azure does on Windows; `__` wins if both are present.
//!
//! Setting names are matched case-insensitively like .NET configuration does (an exact-case
//! match is preferred; app settings that differ only in case are rejected on write anyway).
//! Blank values count as absent, so an empty setting cannot shadow a real one further down.
//! No error message ever contains a setting's value, since values may be secrets.

use std::collections::BTreeMap;
use std::fmt;

use url::Url;

mod identity;
pub mod outbound;
mod strings;

/// The Azurite / storage emulator account that `UseDevelopmentStorage=true` stands for.
pub const DEVELOPMENT_ACCOUNT_NAME: &str = "devstoreaccount1";
/// The emulator's well-known, published key (not a secret).
pub const DEVELOPMENT_ACCOUNT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const DEVELOPMENT_QUEUE_PORT: u16 = 10001;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnectionKind {
    StorageQueue,
    ServiceBus,
}

/// A resolved connection. `Debug` never shows keys, signatures or client secrets.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ConnectionSpec {
    StorageConnectionString(StorageConnectionString),
    ServiceBusConnectionString(ServiceBusConnectionString),
    Identity(IdentityConnection),
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct StorageConnectionString {
    /// The app setting the connection string came from.
    pub setting: String,
    pub account_name: String,
    pub queue_endpoint: Url,
    pub credential: StorageCredential,
    /// `UseDevelopmentStorage=true`: Azurite's account, key and endpoint.
    pub development_storage: bool,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub enum StorageCredential {
    /// Base64 account key; the worker signs a SAS with it.
    AccountKey(String),
    /// SAS token without the leading `?`.
    SharedAccessSignature(String),
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ServiceBusConnectionString {
    pub setting: String,
    pub endpoint: Url,
    /// `host[:port]` of the endpoint, e.g. `contoso.servicebus.windows.net`.
    pub fully_qualified_namespace: String,
    pub credential: ServiceBusCredential,
    pub entity_path: Option<String>,
    /// `UseDevelopmentEmulator=true` (the Service Bus emulator, plain AMQP).
    pub development_emulator: bool,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub enum ServiceBusCredential {
    SharedAccessKey { key_name: String, key: String },
    SharedAccessSignature(String),
}

/// An identity-based connection from a `<prefix>__<property>` group of settings.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct IdentityConnection {
    /// The prefix the group was found under, e.g. `AzureWebJobsMyStorage` or `MyStorage`.
    pub setting_prefix: String,
    /// `https://<account>.queue.core.windows.net` or `sb://<namespace>`.
    pub service_uri: Url,
    pub credential: CredentialKind,
    pub client_id: Option<String>,
    pub tenant_id: Option<String>,
    pub client_secret: Option<String>,
    /// `<prefix>__authorityHost`: the Entra ID authority the client secret credential asks for
    /// tokens (Microsoft.Extensions.Azure reads the same setting); the public cloud when absent.
    pub authority_host: Option<Url>,
    /// `<prefix>__shoalIdentity`: the user-assigned Shoal identity (its name or client ID),
    /// attached to the app, that signs in instead of the app's system-assigned identity (see
    /// [`outbound`]).
    pub shoal_identity: Option<String>,
}

/// `<prefix>__credential`, matched case-insensitively.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CredentialKind {
    ManagedIdentity,
    WorkloadIdentity,
    ClientSecret,
    /// No `credential` setting: the environment's default chain (in Shoal, the app's managed
    /// identity, `clientId` selecting a user-assigned one).
    Default,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    #[error("no connection settings found; looked up {} (as a value or as a __ group)", .looked_up.join(", "))]
    NotFound { looked_up: Vec<String> },
    #[error("app setting {setting} is invalid: {message}")]
    Invalid { setting: String, message: String },
    #[error("app setting {setting} is not supported: {message}")]
    Unsupported { setting: String, message: String },
}

/// Resolve `connection` (the binding's property) against the app's `settings`.
pub fn resolve(
    kind: ConnectionKind,
    connection: Option<&str>,
    settings: &BTreeMap<String, String>,
) -> Result<ConnectionSpec, ConnectionError> {
    let name = match connection.map(str::trim).filter(|c| !c.is_empty()) {
        Some(name) => name,
        None => match kind {
            ConnectionKind::StorageQueue => "Storage",
            ConnectionKind::ServiceBus => "ServiceBus",
        },
    };
    let looked_up = if starts_with_ignore_case(name, "AzureWebJobs") {
        vec![name.to_owned()]
    } else {
        vec![format!("AzureWebJobs{name}"), name.to_owned()]
    };
    for candidate in &looked_up {
        if let Some((setting, value)) = find(settings, candidate) {
            return match kind {
                ConnectionKind::StorageQueue => strings::parse_storage(setting, value)
                    .map(ConnectionSpec::StorageConnectionString),
                ConnectionKind::ServiceBus => strings::parse_service_bus(setting, value)
                    .map(ConnectionSpec::ServiceBusConnectionString),
            };
        }
        if has_group(settings, candidate) {
            return identity::identity(kind, candidate, settings).map(ConnectionSpec::Identity);
        }
    }
    Err(ConnectionError::NotFound { looked_up })
}

impl ConnectionSpec {
    /// A one-line description safe to show in diagnostics and logs (no secrets, no query
    /// strings).
    pub fn describe(&self) -> String {
        match self {
            ConnectionSpec::StorageConnectionString(s) => {
                format!("connection string for account {}", s.account_name)
            }
            ConnectionSpec::ServiceBusConnectionString(s) => {
                format!(
                    "connection string for namespace {}",
                    s.fully_qualified_namespace
                )
            }
            ConnectionSpec::Identity(i) => {
                format!(
                    "identity-based ({}) {}",
                    i.credential,
                    safe_url(&i.service_uri)
                )
            }
        }
    }

    /// The app setting (or, for identity-based connections, the prefix) it was resolved from.
    pub fn setting(&self) -> &str {
        match self {
            ConnectionSpec::StorageConnectionString(s) => &s.setting,
            ConnectionSpec::ServiceBusConnectionString(s) => &s.setting,
            ConnectionSpec::Identity(i) => &i.setting_prefix,
        }
    }
}

impl fmt::Display for CredentialKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CredentialKind::ManagedIdentity => "managedidentity",
            CredentialKind::WorkloadIdentity => "workloadidentity",
            CredentialKind::ClientSecret => "clientsecret",
            CredentialKind::Default => "default",
        })
    }
}

const REDACTED: &str = "<redacted>";

impl fmt::Debug for StorageConnectionString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StorageConnectionString")
            .field("setting", &self.setting)
            .field("account_name", &self.account_name)
            .field("queue_endpoint", &safe_url(&self.queue_endpoint))
            .field("credential", &self.credential)
            .field("development_storage", &self.development_storage)
            .finish()
    }
}

impl fmt::Debug for StorageCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageCredential::AccountKey(_) => write!(f, "AccountKey({REDACTED})"),
            StorageCredential::SharedAccessSignature(_) => {
                write!(f, "SharedAccessSignature({REDACTED})")
            }
        }
    }
}

impl fmt::Debug for ServiceBusConnectionString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceBusConnectionString")
            .field("setting", &self.setting)
            .field("endpoint", &safe_url(&self.endpoint))
            .field("fully_qualified_namespace", &self.fully_qualified_namespace)
            .field("credential", &self.credential)
            .field("entity_path", &self.entity_path)
            .field("development_emulator", &self.development_emulator)
            .finish()
    }
}

impl fmt::Debug for ServiceBusCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceBusCredential::SharedAccessKey { key_name, .. } => f
                .debug_struct("SharedAccessKey")
                .field("key_name", key_name)
                .field("key", &REDACTED)
                .finish(),
            ServiceBusCredential::SharedAccessSignature(_) => {
                write!(f, "SharedAccessSignature({REDACTED})")
            }
        }
    }
}

impl fmt::Debug for IdentityConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IdentityConnection")
            .field("setting_prefix", &self.setting_prefix)
            .field("service_uri", &safe_url(&self.service_uri))
            .field("credential", &self.credential)
            .field("client_id", &self.client_id)
            .field("tenant_id", &self.tenant_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| REDACTED),
            )
            .field(
                "authority_host",
                &self.authority_host.as_ref().map(safe_url),
            )
            .field("shoal_identity", &self.shoal_identity)
            .finish()
    }
}

/// `scheme://host[:port][/path]` without user info, query or fragment, where a SAS could hide.
fn safe_url(url: &Url) -> String {
    let mut out = format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default());
    if let Some(port) = url.port() {
        out.push_str(&format!(":{port}"));
    }
    if url.path() != "/" {
        out.push_str(url.path());
    }
    out
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// The non-blank setting called `name`, exact case first.
fn find<'a>(settings: &'a BTreeMap<String, String>, name: &str) -> Option<(&'a str, &'a str)> {
    let non_blank = |(k, v): (&'a String, &'a String)| {
        (!v.trim().is_empty()).then_some((k.as_str(), v.as_str()))
    };
    settings
        .get_key_value(name)
        .and_then(non_blank)
        .or_else(|| {
            settings
                .iter()
                .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                .find_map(non_blank)
        })
}

fn has_group(settings: &BTreeMap<String, String>, prefix: &str) -> bool {
    settings.keys().any(|key| {
        [format!("{prefix}__"), format!("{prefix}:")]
            .iter()
            .any(|p| starts_with_ignore_case(key, p) && key.len() > p.len())
    })
}

/// `<prefix>__<property>` (or `<prefix>:<property>`): the setting's name and trimmed value.
fn child<'a>(
    settings: &'a BTreeMap<String, String>,
    prefix: &str,
    property: &str,
) -> Option<(&'a str, &'a str)> {
    find(settings, &format!("{prefix}__{property}"))
        .or_else(|| find(settings, &format!("{prefix}:{property}")))
        .map(|(k, v)| (k, v.trim()))
}

fn invalid(setting: &str, message: impl Into<String>) -> ConnectionError {
    ConnectionError::Invalid {
        setting: setting.to_owned(),
        message: message.into(),
    }
}

#[cfg(test)]
mod tests;
