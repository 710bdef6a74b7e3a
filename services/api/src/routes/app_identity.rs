//! An app's managed identities: its system-assigned identity is created when the app's
//! `identity.type` includes `SystemAssigned` and deleted (with its role assignments) when it
//! no longer does or the app goes; the user-assigned identities it names must exist.

use shoal_domain::apps::{Identity, IdentityType};
use shoal_domain::validation::FieldError;
use shoal_store::principals::{self, NewPrincipal, PrincipalKind, PrincipalRecord};
use shoal_store::{TenantId, Tx};

use crate::error::ApiError;

pub fn has_system_identity(identity: &Identity) -> bool {
    matches!(
        identity.kind,
        IdentityType::SystemAssigned | IdentityType::SystemAssignedUserAssigned
    )
}

/// Brings the app's principals in line with its written `identity` (inside the app's write
/// transaction) and returns the system-assigned identity, if it has one.
pub async fn sync(
    tx: &mut Tx,
    tenant: &TenantId,
    app: &str,
    identity: &Identity,
) -> Result<Option<PrincipalRecord>, ApiError> {
    let mut missing = Vec::new();
    for (i, name) in identity.user_assigned_identities.iter().enumerate() {
        if principals::get(tx, tenant, PrincipalKind::UserAssignedIdentity, name)
            .await?
            .is_none()
        {
            missing.push(FieldError {
                path: format!("identity.userAssignedIdentities[{i}]"),
                message: format!("the tenant has no user-assigned identity named {name}"),
            });
        }
    }
    if !missing.is_empty() {
        return Err(ApiError::Validation(missing));
    }
    if has_system_identity(identity) {
        let (record, _) = principals::ensure(
            tx,
            tenant,
            &NewPrincipal {
                kind: PrincipalKind::SystemAssignedIdentity,
                name: app,
                app_name: Some(app),
                issuer: None,
                subject: None,
            },
        )
        .await?;
        Ok(Some(record))
    } else {
        principals::delete(tx, tenant, PrincipalKind::SystemAssignedIdentity, app).await?;
        Ok(None)
    }
}

/// Fills the identity's read-only ids from the app's system-assigned principal.
pub fn with_ids(mut identity: Identity, principal: Option<&PrincipalRecord>) -> Identity {
    identity.principal_id = principal.map(|p| p.id.to_string());
    identity.client_id = principal.map(|p| p.client_id.to_string());
    identity
}
