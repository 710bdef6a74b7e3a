//! What Shoal's tokens claim: built from a principal when one is issued, read back into the
//! principal when one is verified. Pure; signing and verifying are the token service's.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use shoal_domain::names::TenantName;

use super::TokenError;
use crate::identity::{Principal, Role};

/// The `roles` claim of a platform operator's token.
const PLATFORM_ADMIN: &str = "PlatformAdmin";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Claims {
    pub iss: String,
    pub aud: String,
    pub sub: String,
    pub iat: u64,
    pub nbf: u64,
    pub exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tid: Option<String>,
    /// The registered principal's object id (absent in operator-minted tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oid: Option<String>,
    #[serde(default)]
    pub roles: Vec<String>,
}

impl Claims {
    /// The claims of a token for `principal`, valid from `now` (Unix seconds) for `ttl`.
    pub fn of(
        principal: &Principal,
        issuer: &str,
        audience: &str,
        now: u64,
        ttl: Duration,
    ) -> Claims {
        let (sub, tid, oid, roles) = match principal {
            Principal::PlatformAdmin { subject } => (
                subject.clone(),
                None,
                None,
                vec![PLATFORM_ADMIN.to_string()],
            ),
            Principal::Operator {
                subject,
                tenant,
                roles,
            } => (
                subject.clone(),
                Some(tenant.to_string()),
                None,
                roles.iter().map(|r| r.as_str().to_string()).collect(),
            ),
            Principal::Registered { id, tenant } => (
                id.to_string(),
                Some(tenant.to_string()),
                Some(id.to_string()),
                Vec::new(),
            ),
        };
        Claims {
            iss: issuer.to_string(),
            aud: audience.to_string(),
            sub,
            iat: now,
            nbf: now,
            exp: now + ttl.as_secs(),
            tid,
            oid,
            roles,
        }
    }

    /// The principal the claims name; an error when they name none Shoal knows.
    pub fn principal(self) -> Result<Principal, TokenError> {
        let claims = self;
        if claims.sub.is_empty() {
            return Err(TokenError::Invalid("empty subject".into()));
        }
        match claims.tid {
            None if claims.roles.iter().any(|r| r == PLATFORM_ADMIN) => {
                Ok(Principal::PlatformAdmin {
                    subject: claims.sub,
                })
            }
            None => Err(TokenError::Invalid(
                "the token names neither a tenant nor the platform".into(),
            )),
            Some(tid) => {
                let tenant = TenantName::parse(&tid)
                    .map_err(|e| TokenError::Invalid(format!("tenant claim {e}")))?;
                if let Some(oid) = claims.oid {
                    let id = uuid::Uuid::parse_str(&oid).map_err(|_| {
                        TokenError::Invalid("the oid claim is not a principal id".into())
                    })?;
                    return Ok(Principal::Registered { id, tenant });
                }
                let roles: Vec<Role> = claims.roles.iter().filter_map(|r| Role::parse(r)).collect();
                if roles.is_empty() {
                    return Err(TokenError::Invalid(
                        "the token carries no known role".into(),
                    ));
                }
                Ok(Principal::Operator {
                    subject: claims.sub,
                    tenant,
                    roles,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_principal_survives_its_claims() {
        let tenant = TenantName::parse("contoso").unwrap();
        let principals = [
            Principal::PlatformAdmin {
                subject: "ops".into(),
            },
            Principal::operator("alice", &tenant, Role::Reader),
            Principal::Operator {
                subject: "bob".into(),
                tenant: tenant.clone(),
                roles: vec![Role::Owner, Role::FunctionInvoker],
            },
            Principal::Registered {
                id: uuid::Uuid::new_v4(),
                tenant: tenant.clone(),
            },
        ];
        for principal in principals {
            let claims = Claims::of(
                &principal,
                "urn:shoal",
                "api://shoal",
                100,
                Duration::from_secs(60),
            );
            assert_eq!(claims.exp, 160);
            assert_eq!(claims.principal().unwrap(), principal);
        }
    }

    #[test]
    fn claims_naming_no_known_principal_are_refused() {
        let base = Claims::of(
            &Principal::PlatformAdmin {
                subject: "ops".into(),
            },
            "urn:shoal",
            "api://shoal",
            0,
            Duration::from_secs(60),
        );
        type Change = fn(&mut Claims);
        let cases: [(&str, Change); 5] = [
            ("empty subject", |c| c.sub.clear()),
            ("no tenant, not the platform", |c| c.roles.clear()),
            ("a tenant that is not a name", |c| {
                c.tid = Some("Not A Name".into())
            }),
            ("no known role", |c| {
                c.tid = Some("contoso".into());
                c.roles = vec!["Janitor".into()];
            }),
            ("an oid that is not an id", |c| {
                c.tid = Some("contoso".into());
                c.oid = Some("x".into());
            }),
        ];
        for (name, change) in cases {
            let mut claims = base.clone();
            change(&mut claims);
            assert!(claims.principal().is_err(), "{name}");
        }
    }
}
