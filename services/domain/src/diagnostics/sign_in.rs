//! How each identity-based connection of an app signs in, for `diagnostics`: which Shoal
//! identity, which Entra client and tenant, the exact federated credential Entra needs, and the
//! last token error a listener reported — or why the connection cannot sign in at all. Stream
//! bindings say their protocol, SASL mechanism, user and brokers instead ([`stream`]).

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::{Check, CheckStatus};
use crate::binding_kinds::stream::is_stream;
use crate::bindings::Binding;
use crate::connection::outbound::{AppIdentities, FederatedCredential, Outbound, outbound};
use crate::connection::{ConnectionSpec, resolve};
use crate::functions::FunctionSpec;

mod stream;

use stream::stream_sign_in;

/// One identity-based connection of a binding, or a stream binding's client.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionSignIn {
    pub function: String,
    pub binding: String,
    /// The setting prefix the connection was found under, e.g. `AzureWebJobsStorage`; for an
    /// event hub the setting holding its connection string, for a Kafka binding its
    /// `brokerList` as written.
    pub connection: String,
    /// `appIdentity` (workload identity federation), `hostIdentity` (the tenant is opted in),
    /// `clientSecret`, or `none` when it cannot sign in (see `error`). Stream bindings:
    /// `password` (SASL with a user name and password), `connectionString` (an event hub, user
    /// `$ConnectionString`), `clientCertificate` (`SSL` with a client certificate) or
    /// `anonymous` (no sign-in).
    pub signs_in_as: SignInKind,
    /// A stream binding's security protocol: `PLAINTEXT`, `SSL`, `SASL_PLAINTEXT`, `SASL_SSL`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// A stream binding's SASL mechanism (`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`); absent
    /// when the protocol is not SASL. `GSSAPI` (with `error` set) for a SASL protocol without
    /// `authenticationMode`: librdkafka's fallback, Kerberos, which Shoal is built without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<String>,
    /// The SASL user name (`$ConnectionString` for an event hub). Never the password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// The brokers a stream binding reaches (`bootstrap.servers`), as `host:port`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub brokers: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shoal_identity: Option<ShoalIdentity>,
    /// The Entra application or user-assigned managed identity the app's identity is exchanged
    /// for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entra_client_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entra_tenant_id: Option<String>,
    /// What the Entra identity's federated credential must say. Absent when this API has no
    /// public URL to be an issuer at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub federated_credential: Option<FederatedCredential>,
    /// The identity platform's answer to the last token request that failed, as a listener on
    /// a live worker reported it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_token_error: Option<String>,
    /// Why the connection cannot sign in, and what to configure instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum SignInKind {
    AppIdentity,
    HostIdentity,
    ClientSecret,
    None,
    /// A stream binding that signs in with a SASL user name and password.
    Password,
    /// An event hub read or written with its connection string (user `$ConnectionString`).
    ConnectionString,
    /// A stream binding over `SSL` that presents a client certificate.
    ClientCertificate,
    /// A stream binding that does not sign in (`PLAINTEXT`, or `SSL` without a certificate).
    Anonymous,
}

impl ConnectionSignIn {
    fn new(function: &str, binding: &Binding, connection: String, signs_in_as: SignInKind) -> Self {
        ConnectionSignIn {
            function: function.to_owned(),
            binding: binding.name().to_string(),
            connection,
            signs_in_as,
            protocol: None,
            mechanism: None,
            username: None,
            brokers: None,
            shoal_identity: None,
            entra_client_id: None,
            entra_tenant_id: None,
            federated_credential: None,
            last_token_error: None,
            error: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ShoalIdentity {
    /// `systemAssigned` or `userAssigned`.
    pub kind: String,
    /// The user-assigned identity's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub principal_id: String,
    pub client_id: String,
}

/// What the diagnostics endpoint knows besides the function itself.
pub struct SignInContext<'a> {
    pub settings: &'a BTreeMap<String, String>,
    pub identities: &'a AppIdentities,
    /// Shoal's federation issuer, when the API knows its public URL.
    pub issuer: Option<&'a str>,
    /// `(function, last token error)` from live listeners of this app.
    pub token_errors: &'a [(String, String)],
}

/// The sign-in of every identity-based connection and stream binding of `spec`, and a check per
/// connection that cannot sign in or whose last token request failed.
pub fn sign_ins(
    function: &str,
    spec: &FunctionSpec,
    context: &SignInContext<'_>,
) -> (Vec<ConnectionSignIn>, Vec<Check>) {
    let mut sign_ins = Vec::new();
    let mut checks = Vec::new();
    for binding in &spec.bindings {
        if is_stream(binding) {
            if let Some((entry, check)) = stream_sign_in(function, binding, context.settings) {
                sign_ins.push(entry);
                checks.extend(check);
            }
            continue;
        }
        let Some(kind) = binding.kind().azure_connection() else {
            continue;
        };
        let Ok(ConnectionSpec::Identity(connection)) =
            resolve(kind, binding.connection(), context.settings)
        else {
            continue;
        };
        let mut entry = ConnectionSignIn::new(
            function,
            binding,
            connection.setting_prefix.clone(),
            SignInKind::None,
        );
        let check = |status, detail| Check {
            function: Some(function.to_owned()),
            binding: Some(binding.name().to_string()),
            key: None,
            subject: "identity".to_owned(),
            status,
            detail,
        };
        match outbound(&connection, context.identities) {
            Ok(Outbound::ClientSecret) => entry.signs_in_as = SignInKind::ClientSecret,
            Ok(Outbound::HostIdentity) => entry.signs_in_as = SignInKind::HostIdentity,
            Ok(Outbound::Federated(federation)) => {
                let identity = &federation.identity;
                entry.signs_in_as = SignInKind::AppIdentity;
                entry.shoal_identity = Some(ShoalIdentity {
                    kind: match identity.user_assigned {
                        None => "systemAssigned",
                        Some(_) => "userAssigned",
                    }
                    .to_owned(),
                    name: identity.user_assigned.clone(),
                    principal_id: identity.principal_id.to_string(),
                    client_id: identity.client_id.to_string(),
                });
                entry.federated_credential = context
                    .issuer
                    .map(|issuer| identity.federated_credential(issuer));
                entry.entra_client_id = Some(federation.entra_client_id);
                entry.entra_tenant_id = Some(federation.entra_tenant_id);
            }
            Err(e) => {
                entry.error = Some(e.to_string());
                checks.push(check(CheckStatus::Error, e.to_string()));
            }
        }
        // Listeners report the token errors of their trigger's connection.
        if binding.is_trigger()
            && let Some((_, error)) = context.token_errors.iter().find(|(f, _)| f == function)
        {
            entry.last_token_error = Some(error.clone());
            checks.push(check(
                CheckStatus::Error,
                format!("the last token request failed: {error}"),
            ));
        }
        sign_ins.push(entry);
    }
    (sign_ins, checks)
}

#[cfg(test)]
mod tests;
