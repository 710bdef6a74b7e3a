//! Whose identity an identity-based connection acts as when it reaches Azure.
//!
//! In Azure, `credential: managedidentity` (or no `credential`) means *the app's* managed
//! identity. A Shoal worker is shared by many tenants, so the identity of the worker's host
//! (its own managed identity, or a workload identity token file) must never stand in for an app:
//! any tenant could otherwise point a connection at an account the platform can read. Instead
//! the app's Shoal identity signs in through **workload identity federation**, the way AKS pods
//! and GitHub Actions reach Entra ID without secrets:
//!
//! 1. Shoal signs a short-lived client assertion for the app's identity: `iss` = Shoal's
//!    federation issuer ([`federation_issuer`]), `sub` = the identity's principal (object) id,
//!    `aud` = [`FEDERATION_AUDIENCE`].
//! 2. `azure_identity`'s `ClientAssertionCredential` presents it to Entra ID for the Entra
//!    application or user-assigned managed identity named by `<prefix>__clientId` in the Entra
//!    tenant `<prefix>__tenantId`. Entra accepts it only if that Entra identity has a federated
//!    credential trusting exactly this issuer, subject and audience ([`FederatedCredential`]).
//!
//! Which Shoal identity signs in: the app's system-assigned identity by default, or the
//! user-assigned identity attached to the app (`identity.userAssignedIdentities`) that
//! `<prefix>__shoalIdentity` names by name or client ID — Azure picks a user-assigned identity by
//! its client ID too. An identity that is not attached to the app, or belongs to another tenant,
//! is never found: only the app's own identities are candidates.
//!
//! The host's identity serves a tenant's connections only where a platform administrator set the
//! tenant's `allowHostIdentity` (single-tenant installs), and then for `managedidentity`,
//! `workloadidentity` and default connections alike, as on Azure where the host *is* the app's.
//! `clientsecret` connections carry their own credential and are unaffected.

use std::fmt;

use uuid::Uuid;

use super::{CredentialKind, IdentityConnection};

/// The audience Entra ID expects in federated client assertions (public cloud; Microsoft's
/// workload identity federation documentation names it as the recommended value).
pub const FEDERATION_AUDIENCE: &str = "api://AzureADTokenExchange";

/// The path under Shoal's public URL that is the federation issuer. Shoal's own access tokens
/// keep their configured `iss` (`--issuer`, `urn:shoal` unless set), described by the discovery
/// document at the root; OpenID discovery ties one issuer to `{issuer}/.well-known/…`, so the
/// issuer Entra trusts gets a URL of its own, with its own discovery document and the same JWK
/// set.
pub const FEDERATION_PATH: &str = "/federation";

/// How long a client assertion is valid: Entra exchanges it at once; a short life limits what a
/// leaked assertion is worth.
pub const ASSERTION_LIFETIME_SECS: u64 = 600;

/// `https://shoal.example.com` → `https://shoal.example.com/federation`.
pub fn federation_issuer(public_url: &str) -> String {
    format!("{}{FEDERATION_PATH}", public_url.trim_end_matches('/'))
}

/// One of the app's own identities.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AppIdentity {
    /// `None` for the system-assigned identity, else the user-assigned identity's name.
    pub user_assigned: Option<String>,
    /// The principal (object) id: the federated assertion's subject.
    pub principal_id: Uuid,
    pub client_id: Uuid,
}

impl AppIdentity {
    /// What Entra's federated credential must say to trust this identity.
    pub fn federated_credential(&self, issuer: &str) -> FederatedCredential {
        FederatedCredential {
            issuer: issuer.to_owned(),
            subject: self.principal_id.to_string(),
            audience: FEDERATION_AUDIENCE.to_owned(),
        }
    }
}

impl fmt::Display for AppIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.user_assigned {
            None => write!(f, "system-assigned identity {}", self.principal_id),
            Some(name) => write!(f, "user-assigned identity {name} ({})", self.principal_id),
        }
    }
}

/// Everything about an app that decides how its connections sign in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct AppIdentities {
    /// The system-assigned identity, when `identity.type` has one.
    pub system_assigned: Option<AppIdentity>,
    /// The user-assigned identities the app lists that exist in its tenant.
    pub user_assigned: Vec<AppIdentity>,
    /// The tenant's `allowHostIdentity`, set only by a platform administrator.
    pub host_identity_allowed: bool,
}

/// The federated credential an Entra identity needs (`az identity federated-credential create
/// --issuer … --subject … --audiences …`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FederatedCredential {
    pub issuer: String,
    pub subject: String,
    pub audience: String,
}

/// How one identity-based connection signs in.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outbound {
    /// The app's identity, through workload identity federation.
    Federated(Federation),
    /// The worker host's own identity: only for tenants a platform admin opted in.
    HostIdentity,
    /// The connection's own client secret.
    ClientSecret,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Federation {
    pub identity: AppIdentity,
    /// The Entra application (client) ID or user-assigned managed identity client ID.
    pub entra_client_id: String,
    pub entra_tenant_id: String,
}

/// Why a connection has no identity to sign in with; each says what to configure instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OutboundError {
    #[error(
        "{prefix}__shoalIdentity names no user-assigned identity attached to this app; list it in identity.userAssignedIdentities (identities of other tenants can never be used)"
    )]
    IdentityNotAttached { prefix: String },
    #[error(
        "the app has no system-assigned identity to sign in with: set identity.type to SystemAssigned, or name one of its user-assigned identities in {prefix}__shoalIdentity (the worker's own identity is never used for a tenant's connection)"
    )]
    NoAppIdentity { prefix: String },
    #[error(
        "{prefix}__{missing} is required: Shoal signs in to Entra ID through workload identity federation as the app's identity, so name the Entra tenant ({prefix}__tenantId) and the Entra application or user-assigned managed identity ({prefix}__clientId) that has a federated credential trusting Shoal (see the app's diagnostics for its issuer, subject and audience)"
    )]
    EntraClientMissing {
        prefix: String,
        missing: &'static str,
    },
}

/// Decides how `connection` signs in for an app with `identities` (pure; the worker, the
/// scheduler's metric reads and the API's diagnostics all ask this one function).
pub fn outbound(
    connection: &IdentityConnection,
    identities: &AppIdentities,
) -> Result<Outbound, OutboundError> {
    let prefix = || connection.setting_prefix.clone();
    if connection.credential == CredentialKind::ClientSecret {
        return Ok(Outbound::ClientSecret);
    }
    if identities.host_identity_allowed {
        return Ok(Outbound::HostIdentity);
    }
    let identity = match &connection.shoal_identity {
        None => identities
            .system_assigned
            .clone()
            .ok_or_else(|| OutboundError::NoAppIdentity { prefix: prefix() })?,
        Some(wanted) => identities
            .user_assigned
            .iter()
            .find(|i| names_identity(i, wanted))
            .cloned()
            .ok_or_else(|| OutboundError::IdentityNotAttached { prefix: prefix() })?,
    };
    let missing = |missing| OutboundError::EntraClientMissing {
        prefix: prefix(),
        missing,
    };
    let entra_tenant_id = connection
        .tenant_id
        .clone()
        .ok_or_else(|| missing("tenantId"))?;
    let entra_client_id = connection
        .client_id
        .clone()
        .ok_or_else(|| missing("clientId"))?;
    Ok(Outbound::Federated(Federation {
        identity,
        entra_client_id,
        entra_tenant_id,
    }))
}

/// A user-assigned identity by name (case-insensitively, as Shoal's names compare) or by its
/// client ID.
fn names_identity(identity: &AppIdentity, wanted: &str) -> bool {
    let wanted = wanted.trim();
    identity
        .user_assigned
        .as_deref()
        .is_some_and(|name| name.eq_ignore_ascii_case(wanted))
        || Uuid::parse_str(wanted).is_ok_and(|id| id == identity.client_id)
}

#[cfg(test)]
mod tests;
