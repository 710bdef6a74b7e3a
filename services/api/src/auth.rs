//! Who is calling and what they may do.
//!
//! Interim authorisation until RBAC lands: a tenant principal reaches only its own tenant
//! (Reader: read; Contributor: everything but role assignments; Owner: all), a platform admin
//! reaches everything. Another tenant's resources answer 404, never 403, so a caller cannot
//! probe which tenants or apps exist.

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use shoal_domain::names::TenantName;

use crate::error::ApiError;
use crate::state::AppState;
use crate::tokens::TokenError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Role {
    Reader,
    Contributor,
    Owner,
}

impl Role {
    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "Reader" => Some(Role::Reader),
            "Contributor" => Some(Role::Contributor),
            "Owner" => Some(Role::Owner),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Reader => "Reader",
            Role::Contributor => "Contributor",
            Role::Owner => "Owner",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    PlatformAdmin {
        subject: String,
    },
    Tenant {
        subject: String,
        tenant: TenantName,
        role: Role,
    },
}

/// What a request wants to do inside a tenant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
    /// `settings/list`: raw setting values.
    ListSecrets,
    /// An app's webhook signing secret: read or regenerate.
    ManageSigningSecret,
    ManageRoleAssignments,
}

impl Access {
    fn least_role(self) -> Role {
        match self {
            Access::Read => Role::Reader,
            Access::Write | Access::ListSecrets => Role::Contributor,
            Access::ManageSigningSecret | Access::ManageRoleAssignments => Role::Owner,
        }
    }
}

impl Principal {
    pub fn subject(&self) -> &str {
        match self {
            Principal::PlatformAdmin { subject } | Principal::Tenant { subject, .. } => subject,
        }
    }

    /// Allows, forbids (403, own tenant but too weak a role) or hides (404, other tenant).
    pub fn authorize(&self, tenant: &TenantName, access: Access) -> Result<(), ApiError> {
        match self {
            Principal::PlatformAdmin { .. } => Ok(()),
            Principal::Tenant { tenant: own, .. } if own != tenant => Err(ApiError::NotFound),
            Principal::Tenant { role, .. } if *role >= access.least_role() => Ok(()),
            Principal::Tenant { role, .. } => Err(ApiError::Forbidden(format!(
                "the {} role does not allow this; it needs {} or higher",
                role.as_str(),
                access.least_role().as_str()
            ))),
        }
    }

    /// Platform-scoped operations (managing tenants, listing workers).
    pub fn authorize_platform(&self) -> Result<(), ApiError> {
        match self {
            Principal::PlatformAdmin { .. } => Ok(()),
            Principal::Tenant { .. } => Err(ApiError::Forbidden(
                "this needs a platform administrator".into(),
            )),
        }
    }
}

/// The authenticated caller of a request.
pub struct Caller(pub Principal);

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let value = parts.headers.get(header::AUTHORIZATION).ok_or_else(|| {
            ApiError::Unauthorized("an Authorization: Bearer token is required".into())
        })?;
        let token = value
            .to_str()
            .ok()
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| {
                ApiError::Unauthorized("the Authorization header must be `Bearer <token>`".into())
            })?;
        if !state.tokens.has_keys() {
            // Keys not loaded yet because Postgres is unreachable: an outage, not a bad token.
            state.refresh_keys().await;
            if !state.tokens.has_keys() {
                return Err(ApiError::Unavailable);
            }
        }
        match state.tokens.verify(token) {
            Ok(principal) => Ok(Caller(principal)),
            Err(TokenError::UnknownKey) => {
                // Another process may have created a key since we loaded ours.
                state.refresh_keys().await;
                state
                    .tokens
                    .verify(token)
                    .map(Caller)
                    .map_err(|e| ApiError::Unauthorized(e.to_string()))
            }
            Err(e) => Err(ApiError::Unauthorized(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(name: &str) -> TenantName {
        TenantName::parse(name).unwrap()
    }

    #[test]
    fn interim_role_table() {
        let cases = [
            (Role::Reader, Access::Read, true),
            (Role::Reader, Access::Write, false),
            (Role::Reader, Access::ListSecrets, false),
            (Role::Contributor, Access::Write, true),
            (Role::Contributor, Access::ListSecrets, true),
            (Role::Contributor, Access::ManageRoleAssignments, false),
            (Role::Owner, Access::ManageRoleAssignments, true),
        ];
        for (role, access, allowed) in cases {
            let p = Principal::Tenant {
                subject: "s".into(),
                tenant: tenant("contoso"),
                role,
            };
            assert_eq!(
                p.authorize(&tenant("contoso"), access).is_ok(),
                allowed,
                "{role:?} {access:?}"
            );
        }
    }

    #[test]
    fn other_tenants_are_hidden_not_forbidden() {
        let owner = Principal::Tenant {
            subject: "s".into(),
            tenant: tenant("contoso"),
            role: Role::Owner,
        };
        assert!(matches!(
            owner.authorize(&tenant("fabrikam"), Access::Read),
            Err(ApiError::NotFound)
        ));
        assert!(matches!(
            owner.authorize_platform(),
            Err(ApiError::Forbidden(_))
        ));
        let admin = Principal::PlatformAdmin {
            subject: "ops".into(),
        };
        assert!(
            admin
                .authorize(&tenant("fabrikam"), Access::ManageRoleAssignments)
                .is_ok()
        );
    }
}
