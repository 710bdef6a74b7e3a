//! The access decision for one operation at one scope.
//!
//! Azure's semantics: an assignment applies when its scope covers the target; access is the
//! union of what the applicable assignments' roles allow; each role's `notActions` only trim
//! that role's own `actions`. On top of Azure's allow/deny, Shoal tells apart a caller who has
//! no foothold in the target's tenant (answered 404, so tenant and app names cannot be probed)
//! from one who does (403).

use super::actions::Operation;
use super::definition::RoleDefinition;
use super::scope::Scope;

/// One role assignment of the caller: `role` at `scope`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grant<'a> {
    pub role: &'a RoleDefinition,
    pub scope: &'a Scope,
}

impl Grant<'_> {
    /// Whether this one assignment allows `operation` at `at`: its scope covers the target
    /// and its role's permissions allow the operation. Access is the union of this over a
    /// principal's grants ([`evaluate`]); asked of each grant alone, it says which
    /// assignments grant what ("Check access").
    pub fn allows(&self, operation: Operation<'_>, at: &Scope) -> bool {
        self.scope.covers(at) && self.role.permissions.allows(operation)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed by this role (name) assigned at this scope.
    Allowed { role: String, scope: Scope },
    /// The principal has some access inside this tenant (or at `/`) but none of it allows the
    /// operation → 403.
    Denied,
    /// The principal has no assignment at `/` or anywhere inside the target's tenant → answer
    /// 404 so the tenant's existence is not revealed.
    Hidden,
}

impl Decision {
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allowed { .. })
    }
}

/// Decides `operation` at `at` from the caller's grants.
///
/// When several grants allow it, the first in `grants` order is named, so a caller that sorts
/// its grants gets a stable answer for audit logs. For a target at `/` there is no tenant to
/// hide, so any grant at all makes a refusal `Denied`; with no grants it is always `Hidden`.
pub fn evaluate(grants: &[Grant<'_>], operation: Operation<'_>, at: &Scope) -> Decision {
    let allowing = grants.iter().find(|g| g.allows(operation, at));
    if let Some(grant) = allowing {
        return Decision::Allowed {
            role: grant.role.name.clone(),
            scope: grant.scope.clone(),
        };
    }
    let knows_tenant = grants
        .iter()
        .any(|g| match (g.scope.tenant_name(), at.tenant_name()) {
            (None, _) | (Some(_), None) => true,
            (Some(granted), Some(target)) => granted == target,
        });
    if knows_tenant {
        Decision::Denied
    } else {
        Decision::Hidden
    }
}
