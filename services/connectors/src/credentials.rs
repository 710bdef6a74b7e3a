//! How requests are authorized: an account SAS appended to every request (connection strings),
//! or an Entra ID token from `azure_identity` (identity-based connections).

use std::fmt;
use std::sync::Arc;

use azure_core::cloud::CustomConfiguration;
use azure_core::credentials::{Secret, TokenCredential};
use azure_core::http::policies::{Policy, PolicyResult};
use azure_core::http::{Context, Request};
use azure_identity::{
    ClientAssertionCredentialOptions, ClientSecretCredential, ClientSecretCredentialOptions,
    ManagedIdentityCredential, ManagedIdentityCredentialOptions, UserAssignedId,
    WorkloadIdentityCredential, WorkloadIdentityCredentialOptions,
};
use chrono::Utc;
use shoal_domain::connection::{CredentialKind, IdentityConnection};

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

/// The `azure_identity` credential an identity-based connection names. Its token requests go
/// through `http` (so an extra trusted CA applies to them too).
pub(crate) fn token_credential(
    identity: &IdentityConnection,
    http: &reqwest::Client,
) -> Result<Arc<dyn TokenCredential>, QueueError> {
    let mut client_options = transport::client_options(http, Vec::new());
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
    let credential: Arc<dyn TokenCredential> = match identity.credential {
        // Shoal's default chain is the app's managed identity, as in Azure.
        CredentialKind::ManagedIdentity | CredentialKind::Default => {
            ManagedIdentityCredential::new(Some(ManagedIdentityCredentialOptions {
                user_assigned_id: identity.client_id.clone().map(UserAssignedId::ClientId),
                client_options,
            }))
            .map_err(invalid)?
        }
        CredentialKind::WorkloadIdentity => {
            WorkloadIdentityCredential::new(Some(WorkloadIdentityCredentialOptions {
                credential_options: ClientAssertionCredentialOptions { client_options },
                client_id: identity.client_id.clone(),
                tenant_id: identity.tenant_id.clone(),
                ..Default::default()
            }))
            .map_err(invalid)?
        }
        CredentialKind::ClientSecret => {
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
    };
    Ok(credential)
}
