//! Who is calling: the bearer token verified into a [`Principal`] together with the role
//! assignments it holds ([`Caller`]). What the caller may do is decided in `access`.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::header;
use axum::http::request::Parts;
use shoal_domain::names::TenantName;
use uuid::Uuid;

use crate::access::Grants;
use crate::error::ApiError;
use crate::state::AppState;
use crate::tokens::TokenError;

/// The built-in roles an operator can put in a token (`shoal token --role`). Their
/// permissions are the built-in role definitions, evaluated like any other assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Reader,
    Contributor,
    Owner,
    FunctionInvoker,
}

impl Role {
    pub const ALL: [Role; 4] = [
        Role::Owner,
        Role::Contributor,
        Role::Reader,
        Role::FunctionInvoker,
    ];

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == text)
    }

    /// The built-in role definition's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Reader => "Reader",
            Role::Contributor => "Contributor",
            Role::Owner => "Owner",
            Role::FunctionInvoker => "Function Invoker",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Principal {
    /// A platform operator: Owner at `/`.
    PlatformAdmin { subject: String },
    /// A token an operator minted with `shoal token --tenant … --role …`: its role claims are
    /// its role assignments, at the tenant's scope (like app-role claims in an Entra token).
    Operator {
        subject: String,
        tenant: TenantName,
        roles: Vec<Role>,
    },
    /// A principal registered in a tenant (service principal, managed identity, user): its
    /// access is its stored role assignments, and its token dies with it.
    Registered { id: Uuid, tenant: TenantName },
}

impl Principal {
    pub fn operator(subject: &str, tenant: &TenantName, role: Role) -> Principal {
        Principal::Operator {
            subject: subject.to_string(),
            tenant: tenant.clone(),
            roles: vec![role],
        }
    }

    /// Who, for the audit log: the subject, or the registered principal's id.
    pub fn subject(&self) -> String {
        match self {
            Principal::PlatformAdmin { subject } | Principal::Operator { subject, .. } => {
                subject.clone()
            }
            Principal::Registered { id, .. } => id.to_string(),
        }
    }

    /// The tenant the principal belongs to (none for a platform operator).
    pub fn tenant(&self) -> Option<&TenantName> {
        match self {
            Principal::PlatformAdmin { .. } => None,
            Principal::Operator { tenant, .. } | Principal::Registered { tenant, .. } => {
                Some(tenant)
            }
        }
    }
}

/// The authenticated caller of a request and the role assignments it holds.
#[derive(Clone)]
pub struct Caller {
    pub principal: Principal,
    pub grants: Arc<Grants>,
    /// The request's `X-Request-Id`, for the audit log.
    pub request_id: Option<String>,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("principal", &self.principal)
            .finish()
    }
}

/// The token of an `Authorization: Bearer …` header.
pub fn bearer_token(parts: &Parts) -> Result<&str, ApiError> {
    let value = parts.headers.get(header::AUTHORIZATION).ok_or_else(|| {
        ApiError::Unauthorized("an Authorization: Bearer token is required".into())
    })?;
    value
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
        })
}

/// Verifies a Shoal-issued token, reloading the keys once if it names one this process has
/// not seen (another process may have created or rotated it).
pub async fn verify_shoal_token(state: &AppState, token: &str) -> Result<Principal, ApiError> {
    if !state.tokens.has_keys() {
        // Keys not loaded yet because Postgres is unreachable: an outage, not a bad token.
        state.refresh_keys().await;
        if !state.tokens.has_keys() {
            return Err(ApiError::Unavailable);
        }
    }
    match state.tokens.verify(token) {
        Ok(principal) => Ok(principal),
        Err(TokenError::UnknownKey) => {
            state.refresh_keys().await;
            state
                .tokens
                .verify(token)
                .map_err(|e| ApiError::Unauthorized(e.to_string()))
        }
        Err(e) => Err(ApiError::Unauthorized(e.to_string())),
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let token = bearer_token(parts)?;
        let principal = match state
            .external_issuers
            .authenticate(&state.pool, token)
            .await?
        {
            Some(principal) => principal,
            None => verify_shoal_token(state, token).await?,
        };
        let grants = state.access.grants_of(state, &principal).await?;
        let request_id = parts
            .headers
            .get(crate::problem::REQUEST_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        Ok(Caller {
            principal,
            grants,
            request_id,
        })
    }
}
