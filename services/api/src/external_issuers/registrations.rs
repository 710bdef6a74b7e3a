//! Which registered user a verified external token acts as. Tenants register users themselves,
//! so one (issuer, subject) may be a user of several tenants; a request about tenant T acts as
//! T's registration, whose role assignments reach T only.

use std::sync::Arc;

use shoal_domain::names::TenantName;
use shoal_store::{begin_platform, principals};
use sqlx::PgPool;

use crate::error::ApiError;
use crate::identity::Principal;

/// The users registered with this issuer and subject ([`Principal::Registered`]), one per
/// tenant, by tenant name; empty when no tenant registered it.
pub(super) async fn registrations(
    pool: &PgPool,
    issuer: &str,
    subject: &str,
) -> Result<Arc<[Principal]>, ApiError> {
    let mut tx = begin_platform(pool).await?;
    let users = principals::find_external(&mut tx, issuer, subject).await?;
    shoal_store::commit(tx).await?;
    users
        .into_iter()
        .map(|user| {
            let tenant = TenantName::parse(&user.tenant).map_err(|e| {
                ApiError::Internal(anyhow::anyhow!("stored tenant of user {}: {e}", user.id))
            })?;
            Ok(Principal::Registered {
                id: user.id,
                tenant,
            })
        })
        .collect()
}

/// The registration in `tenant`, if the subject has one there.
pub(super) fn registered_in<'a>(
    registrations: &'a [Principal],
    tenant: &TenantName,
) -> Option<&'a Principal> {
    registrations.iter().find(|p| p.tenant() == Some(tenant))
}

/// Who the user acts as in a request about `tenant`: that tenant's registration. About no
/// tenant, or one they are not registered in, their first registration by tenant name, whose
/// assignments reach only its own tenant, so such a request gets what any other tenant's
/// principal gets (404 or 403). None when the subject is registered nowhere.
pub(super) fn acting_as<'a>(
    registrations: &'a [Principal],
    tenant: Option<&TenantName>,
) -> Option<&'a Principal> {
    tenant
        .and_then(|tenant| registered_in(registrations, tenant))
        .or_else(|| registrations.first())
}

#[cfg(test)]
mod tests {
    use uuid::Uuid;

    use super::*;

    fn name(text: &str) -> TenantName {
        TenantName::parse(text).unwrap()
    }

    fn registered(tenant: &str) -> Principal {
        Principal::Registered {
            id: Uuid::new_v4(),
            tenant: name(tenant),
        }
    }

    #[test]
    fn a_request_acts_as_the_registration_in_its_tenant_else_the_first() {
        let users = [registered("contoso"), registered("fabrikam")];
        let cases = [
            (Some("contoso"), Some(&users[0])),
            (Some("fabrikam"), Some(&users[1])),
            (Some("northwind"), Some(&users[0])),
            (None, Some(&users[0])),
        ];
        for (tenant, expected) in cases {
            let tenant = tenant.map(name);
            assert_eq!(acting_as(&users, tenant.as_ref()), expected, "{tenant:?}");
        }
        assert_eq!(acting_as(&[], Some(&name("contoso"))), None);
        assert_eq!(acting_as(&[], None), None);
        assert_eq!(registered_in(&users, &name("northwind")), None);
    }
}
