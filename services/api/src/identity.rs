//! Who a token names: a platform operator, an operator-minted tenant token with built-in
//! roles, or a principal registered in a tenant. A leaf: it knows nothing of HTTP, tokens or
//! storage, so every layer (token service, external issuers, access, the binary) can name it.

use shoal_domain::names::TenantName;
use uuid::Uuid;

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
