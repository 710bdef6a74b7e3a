//! How requests are authorized: an account SAS appended to every request (connection strings),
//! or an Entra ID token from `azure_identity` (identity-based connections) — signed in as the
//! app's own identity through workload identity federation, with a client secret, or, for
//! tenants a platform admin opted in, as the worker host's identity ([`SignIn`]).

use std::fmt;
use std::sync::{Arc, Mutex};

use azure_core::cloud::CustomConfiguration;
use azure_core::credentials::{AccessToken, Secret, TokenCredential, TokenRequestOptions};
use azure_core::error::ErrorKind;
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{ClientMethodOptions, Context, Request};
use azure_identity::{
    ClientAssertion, ClientAssertionCredential, ClientAssertionCredentialOptions,
    ClientSecretCredential, ClientSecretCredentialOptions, ManagedIdentityCredential,
    ManagedIdentityCredentialOptions, UserAssignedId, WorkloadIdentityCredential,
    WorkloadIdentityCredentialOptions,
};
use chrono::Utc;
use shoal_domain::connection::outbound::{AppIdentities, Federation, Outbound, outbound};
use shoal_domain::connection::{ConnectionSpec, CredentialKind, IdentityConnection};

use crate::error::Redactor;
use crate::sas::AccountSasSigner;
use crate::{QueueError, transport};

pub(crate) enum SasSource {
    /// Signed by Shoal from the account key and re-signed before it expires.
    AccountKey(AccountSasSigner),
    /// A SAS from the connection string, appended as given.
    Fixed(Arc<str>),
}

/// Appends the SAS to the query of every request, once per call (before the retry policy),
/// so neither clients nor pipelines are rebuilt when the signature is renewed.
pub(crate) struct SasPolicy {
    pub(crate) source: SasSource,
}

impl fmt::Debug for SasPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SasPolicy")
    }
}

#[async_trait::async_trait]
impl Policy for SasPolicy {
    async fn send(
        &self,
        ctx: &Context,
        request: &mut Request,
        next: &[Arc<dyn Policy>],
    ) -> PolicyResult {
        let sas = match &self.source {
            SasSource::AccountKey(signer) => signer.query(Utc::now()),
            SasSource::Fixed(sas) => sas.clone(),
        };
        let url = request.url_mut();
        let query = match url.query() {
            Some(query) if !query.is_empty() => format!("{query}&{sas}"),
            _ => sas.to_string(),
        };
        url.set_query(Some(&query));
        next[0].send(ctx, request, &next[1..]).await
    }
}

/// How an identity-based connection signs in, as `shoal_domain::connection::outbound` decided
/// it for the app. Only [`SignIn::HostIdentity`] ever reads the worker host's identity from the
/// environment, and only that decision (a tenant a platform admin opted in) produces it.
#[derive(Clone, Debug)]
pub enum SignIn {
    /// Connection strings and client secrets: the settings hold everything.
    AsConfigured,
    /// The worker host's managed or workload identity.
    HostIdentity,
    /// The app's identity: Shoal's client assertion for it, exchanged at Entra ID.
    Federated {
        federation: Federation,
        assertions: Arc<dyn AssertionSource>,
    },
}

impl SignIn {
    /// The sign-in for `spec` of an app with `identities`; `assertions` is what this process
    /// signs client assertions with (`None` when it has no public URL to be an issuer at).
    /// The error says what to configure, never a secret.
    pub fn for_connection(
        spec: &ConnectionSpec,
        identities: &AppIdentities,
        assertions: Option<&Arc<dyn AssertionSource>>,
    ) -> Result<SignIn, String> {
        let ConnectionSpec::Identity(identity) = spec else {
            return Ok(SignIn::AsConfigured);
        };
        Ok(
            match outbound(identity, identities).map_err(|e| e.to_string())? {
                Outbound::ClientSecret => SignIn::AsConfigured,
                Outbound::HostIdentity => SignIn::HostIdentity,
                Outbound::Federated(federation) => {
                    let assertions = assertions.cloned().ok_or_else(|| {
                    "this Shoal process cannot sign in as the app's identity: it was started without --public-url (SHOAL_PUBLIC_URL), the issuer Entra ID trusts".to_owned()
                })?;
                    SignIn::Federated {
                        federation,
                        assertions,
                    }
                }
            },
        )
    }
}

/// Signs client assertions for app identities (Shoal's federation issuer). Errors are safe to
/// show: they never contain key material.
#[async_trait::async_trait]
pub trait AssertionSource: Send + Sync + fmt::Debug {
    /// A client assertion whose subject is `subject` (an app identity's principal id).
    async fn assertion(&self, subject: &str) -> Result<String, String>;
}

/// The assertion `ClientAssertionCredential` presents: a fresh one for every token request
/// (the credential caches the access token, not the assertion).
#[derive(Debug)]
struct FederatedAssertion {
    source: Arc<dyn AssertionSource>,
    subject: String,
}

#[async_trait::async_trait]
impl ClientAssertion for FederatedAssertion {
    async fn secret(&self, _: Option<ClientMethodOptions<'_>>) -> azure_core::Result<String> {
        self.source
            .assertion(&self.subject)
            .await
            .map_err(|e| azure_core::Error::with_message(ErrorKind::Credential, e))
    }
}

/// The last token failure of a connection, for diagnostics; cleared by the next success.
#[derive(Clone, Debug, Default)]
pub struct TokenHealth(Arc<Mutex<Option<String>>>);

impl TokenHealth {
    pub fn last_error(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn record(&self, outcome: Option<String>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = outcome;
    }
}

/// Wraps a credential to remember its last failure (the SDK's own error, which names Entra's
/// error code and description but never the assertion or a secret).
#[derive(Debug)]
struct Recording {
    inner: Arc<dyn TokenCredential>,
    health: TokenHealth,
    redactor: Redactor,
}

#[async_trait::async_trait]
impl TokenCredential for Recording {
    async fn get_token(
        &self,
        scopes: &[&str],
        options: Option<TokenRequestOptions<'_>>,
    ) -> azure_core::Result<AccessToken> {
        let result = self.inner.get_token(scopes, options).await;
        self.health.record(
            result
                .as_ref()
                .err()
                .map(|e| self.redactor.redact(&e.to_string())),
        );
        result
    }
}

/// The `azure_identity` credential an identity-based connection signs in with. Its token
/// requests go through `http` (so an extra trusted CA applies to them too).
pub(crate) fn token_credential(
    identity: &IdentityConnection,
    sign_in: &SignIn,
    http: &reqwest::Client,
    health: &TokenHealth,
    redactor: &Redactor,
    options: &crate::ConnectorOptions,
) -> Result<Arc<dyn TokenCredential>, QueueError> {
    let mut client_options = transport::client_options(http, Vec::new());
    // The token request carries the client secret or the app's assertion: only to Entra ID or
    // where the operator allowed, whatever the stored setting says (it may predate the rule).
    if let (Some(host), Some(egress)) = (&identity.authority_host, &options.egress) {
        egress.policy().check_authority(host).map_err(|why| {
            QueueError::InvalidConnection(format!(
                "{}__authorityHost: {why}",
                identity.setting_prefix
            ))
        })?;
    }
    if let Some(host) = &identity.authority_host {
        let mut cloud = CustomConfiguration::default();
        cloud.authority_host = host.as_str().trim_end_matches('/').to_owned();
        client_options.cloud = Some(Arc::new(cloud.into()));
    }
    let invalid = |e: azure_core::Error| {
        QueueError::InvalidConnection(format!(
            "{} credential for {}: {e}",
            identity.credential, identity.setting_prefix
        ))
    };
    let credential: Arc<dyn TokenCredential> = match (sign_in, identity.credential) {
        (_, CredentialKind::ClientSecret) => {
            let (Some(tenant_id), Some(client_id), Some(secret)) = (
                &identity.tenant_id,
                &identity.client_id,
                &identity.client_secret,
            ) else {
                return Err(QueueError::InvalidConnection(format!(
                    "clientsecret credential for {} needs tenantId, clientId and clientSecret",
                    identity.setting_prefix
                )));
            };
            ClientSecretCredential::new(
                tenant_id,
                client_id.clone(),
                Secret::new(secret.clone()),
                Some(ClientSecretCredentialOptions { client_options }),
            )
            .map_err(invalid)?
        }
        (
            SignIn::Federated {
                federation,
                assertions,
            },
            _,
        ) => ClientAssertionCredential::new(
            federation.entra_tenant_id.clone(),
            federation.entra_client_id.clone(),
            FederatedAssertion {
                source: assertions.clone(),
                subject: federation.identity.principal_id.to_string(),
            },
            Some(ClientAssertionCredentialOptions { client_options }),
        )
        .map_err(invalid)?,
        // The host's identity, read from the worker's environment: only for opted-in tenants.
        (SignIn::HostIdentity, CredentialKind::WorkloadIdentity) => {
            WorkloadIdentityCredential::new(Some(WorkloadIdentityCredentialOptions {
                credential_options: ClientAssertionCredentialOptions { client_options },
                client_id: identity.client_id.clone(),
                tenant_id: identity.tenant_id.clone(),
                ..Default::default()
            }))
            .map_err(invalid)?
        }
        (SignIn::HostIdentity, _) => {
            ManagedIdentityCredential::new(Some(ManagedIdentityCredentialOptions {
                user_assigned_id: identity.client_id.clone().map(UserAssignedId::ClientId),
                client_options,
            }))
            .map_err(invalid)?
        }
        (SignIn::AsConfigured, _) => {
            return Err(QueueError::InvalidConnection(format!(
                "{} credential for {}: no identity to sign in with was decided for this connection",
                identity.credential, identity.setting_prefix
            )));
        }
    };
    Ok(Arc::new(Recording {
        inner: credential,
        health: health.clone(),
        redactor: redactor.clone(),
    }))
}
