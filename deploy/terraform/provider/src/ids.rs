//! Resource ids as Terraform stores and imports them. They are the resources' API paths
//! without `/v1` (`/tenants/{tenant}/apps/{app}`), the form `mi_res_id` already uses for
//! identities, so an id read from state also names the resource in the API.
//!
//! Parsing checks each name by the API's rule (an imported id with `nightly#2` is refused
//! there), and every path segment is percent-encoded on its way into a URL all the same; the
//! paths come from the route table the CLI shares (`shoal_client::routes`), which a test holds
//! against `openapi/openapi.json`.

use std::fmt;

use shoal_client::routes::{self, Route};

use crate::names::NameKind;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TenantId {
    pub tenant: String,
}

impl TenantId {
    pub fn parse(id: &str) -> Result<TenantId, String> {
        match segments(id)?.as_slice() {
            ["tenants", tenant] => Ok(TenantId {
                tenant: named(id, NameKind::Tenant, tenant)?,
            }),
            _ => Err(format!(
                "`{id}` is not a tenant id: expected /tenants/{{tenant}}"
            )),
        }
    }

    pub fn api_path(&self) -> String {
        routes::GET_TENANT.path(&[&self.tenant])
    }
}

impl fmt::Display for TenantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/tenants/{}", self.tenant)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AppId {
    pub tenant: String,
    pub app: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionId {
    pub app: AppId,
    pub function: String,
}

impl AppId {
    pub fn parse(id: &str) -> Result<AppId, String> {
        match segments(id)?.as_slice() {
            ["tenants", tenant, "apps", app] => Ok(AppId {
                tenant: named(id, NameKind::Tenant, tenant)?,
                app: named(id, NameKind::App, app)?,
            }),
            _ => Err(format!(
                "`{id}` is not a function app id: expected /tenants/{{tenant}}/apps/{{app}}"
            )),
        }
    }

    /// The API path (under the endpoint) of the app.
    pub fn api_path(&self) -> String {
        routes::GET_APP.path(&[&self.tenant, &self.app])
    }
}

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "/tenants/{}/apps/{}", self.tenant, self.app)
    }
}

impl FunctionId {
    pub fn parse(id: &str) -> Result<FunctionId, String> {
        match segments(id)?.as_slice() {
            ["tenants", tenant, "apps", app, "functions", function] => Ok(FunctionId {
                app: AppId {
                    tenant: named(id, NameKind::Tenant, tenant)?,
                    app: named(id, NameKind::App, app)?,
                },
                function: named(id, NameKind::Function, function)?,
            }),
            _ => Err(format!(
                "`{id}` is not a function id: expected \
                 /tenants/{{tenant}}/apps/{{app}}/functions/{{function}}"
            )),
        }
    }

    pub fn api_path(&self) -> String {
        routes::GET_FUNCTION.path(&[&self.app.tenant, &self.app.app, &self.function])
    }
}

impl fmt::Display for FunctionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/functions/{}", self.app, self.function)
    }
}

/// The tenant-scoped collections whose resources the provider manages by [`ChildId`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collection {
    Identities,
    ServicePrincipals,
    RoleAssignments,
    RoleDefinitions,
}

impl Collection {
    /// Its path segment, in ids and in the API.
    pub fn name(self) -> &'static str {
        match self {
            Collection::Identities => "identities",
            Collection::ServicePrincipals => "servicePrincipals",
            Collection::RoleAssignments => "roleAssignments",
            Collection::RoleDefinitions => "roleDefinitions",
        }
    }

    /// The route that reads one of its resources; PUT and DELETE share its path.
    fn route(self) -> Route {
        match self {
            Collection::Identities => routes::GET_IDENTITY,
            Collection::ServicePrincipals => routes::GET_SERVICE_PRINCIPAL,
            Collection::RoleAssignments => routes::GET_ROLE_ASSIGNMENT,
            Collection::RoleDefinitions => routes::GET_ROLE_DEFINITION,
        }
    }
}

impl fmt::Display for Collection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A tenant-scoped child resource: `/tenants/{tenant}/{collection}/{name}` (identities,
/// service principals, role assignments, role definitions).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChildId {
    pub tenant: String,
    pub collection: Collection,
    pub name: String,
}

impl ChildId {
    pub fn parse(id: &str, collection: Collection) -> Result<ChildId, String> {
        match segments(id)?.as_slice() {
            ["tenants", tenant, c, name] if *c == collection.name() => Ok(ChildId {
                tenant: named(id, NameKind::Tenant, tenant)?,
                collection,
                name: (*name).to_owned(),
            }),
            _ => Err(format!(
                "`{id}` is not the id this resource takes: expected /tenants/{{tenant}}/{collection}/{{name}}"
            )),
        }
    }

    pub fn api_path(&self) -> String {
        self.collection.route().path(&[&self.tenant, &self.name])
    }
}

impl fmt::Display for ChildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "/tenants/{}/{}/{}",
            self.tenant, self.collection, self.name
        )
    }
}

/// `segment` of `id` when it is a valid name of `kind`.
fn named(id: &str, kind: NameKind, segment: &str) -> Result<String, String> {
    kind.check(segment)
        .map(|()| segment.to_owned())
        .map_err(|reason| format!("`{id}`: `{segment}` is not a valid name: {reason}"))
}

/// The non-empty segments of an absolute id; names in Shoal never contain `/`, so a
/// segment that is empty (`//`, a trailing `/`) means a malformed id.
fn segments(id: &str) -> Result<Vec<&str>, String> {
    let Some(rest) = id.strip_prefix('/') else {
        return Err(format!(
            "`{id}` is not a Shoal id: ids start with /tenants/"
        ));
    };
    let segments: Vec<&str> = rest.split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Err(format!("`{id}` has an empty segment"));
    }
    Ok(segments)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_ids_round_trip_and_malformed_ones_are_refused() {
        let id = TenantId::parse("/tenants/contoso").unwrap();
        assert_eq!(id.api_path(), "/v1/tenants/contoso");
        for bad in [
            "/tenants",
            "/tenants/contoso/apps/a",
            "tenants/contoso",
            "/tenant/contoso",
        ] {
            assert!(TenantId::parse(bad).is_err(), "{bad} is refused");
        }
    }

    #[test]
    fn names_follow_the_apis_rules_and_segments_are_encoded() {
        for bad in [
            "/tenants/contoso/apps/nightly#2",
            "/tenants/Contoso/apps/orders",
            "/tenants/contoso/apps/orders/functions/pro?cess",
            "/tenants/contoso/apps/a",
        ] {
            let refused = AppId::parse(bad)
                .map(drop)
                .and_then(|()| FunctionId::parse(bad).map(drop));
            assert!(refused.is_err(), "{bad} is refused");
        }
        assert!(
            FunctionId::parse("/tenants/contoso/apps/orders/functions/pro?cess")
                .unwrap_err()
                .contains("`pro?cess` is not a valid name")
        );
        // A custom role's name may hold a space; it reaches the API as one segment.
        let role = ChildId::parse(
            "/tenants/contoso/roleDefinitions/Function Invoker",
            Collection::RoleDefinitions,
        )
        .unwrap();
        assert_eq!(
            role.api_path(),
            "/v1/tenants/contoso/roleDefinitions/Function%20Invoker"
        );
        let odd = ChildId {
            tenant: "contoso".into(),
            collection: Collection::Identities,
            name: "a#b?c/d+e".into(),
        };
        assert_eq!(
            odd.api_path(),
            "/v1/tenants/contoso/identities/a%23b%3Fc%2Fd%2Be"
        );
    }

    #[test]
    fn child_ids_name_their_collection() {
        let id = ChildId::parse(
            "/tenants/contoso/identities/uploader",
            Collection::Identities,
        )
        .unwrap();
        assert_eq!(id.api_path(), "/v1/tenants/contoso/identities/uploader");
        assert!(
            ChildId::parse(
                "/tenants/contoso/identities/uploader",
                Collection::ServicePrincipals
            )
            .is_err()
        );
        assert!(ChildId::parse("/tenants/contoso/identities", Collection::Identities).is_err());
    }

    #[test]
    fn app_ids_round_trip_and_malformed_ones_are_refused() {
        let id = AppId::parse("/tenants/contoso/apps/orders").unwrap();
        assert_eq!(id.tenant, "contoso");
        assert_eq!(id.app, "orders");
        assert_eq!(id.to_string(), "/tenants/contoso/apps/orders");
        assert_eq!(id.api_path(), "/v1/tenants/contoso/apps/orders");
        for bad in [
            "tenants/contoso/apps/orders",
            "/tenants/contoso/apps/orders/",
            "/tenants/contoso/apps",
            "/tenants//apps/orders",
            "/tenants/contoso/identities/orders",
            "/tenants/contoso/apps/orders/functions/f",
            "",
        ] {
            assert!(AppId::parse(bad).is_err(), "{bad} is refused");
        }
    }

    #[test]
    fn function_ids_round_trip_and_malformed_ones_are_refused() {
        let id = FunctionId::parse("/tenants/contoso/apps/orders/functions/Process").unwrap();
        assert_eq!(id.app.to_string(), "/tenants/contoso/apps/orders");
        assert_eq!(id.function, "Process");
        assert_eq!(
            id.api_path(),
            "/v1/tenants/contoso/apps/orders/functions/Process"
        );
        for bad in [
            "/tenants/contoso/apps/orders",
            "/tenants/contoso/apps/orders/functions/",
            "/tenants/contoso/apps/orders/function/Process",
        ] {
            assert!(FunctionId::parse(bad).is_err(), "{bad} is refused");
        }
    }
}
