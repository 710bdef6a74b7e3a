//! Every management API route the clients call — the `shoal` client commands and the Terraform
//! provider's resources: method, path template, the query parameters they send and whether they
//! send preconditions. A test (`tests` below) holds this table against `openapi/openapi.json`,
//! so a renamed route or parameter fails the build's tests rather than a user's command or a
//! `terraform apply`.

use crate::transport::encoded_path;

/// One operation of the management API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub method: &'static str,
    /// `{name}` marks a path parameter, filled in order by [`Route::path`].
    pub template: &'static str,
    /// Query parameters the client may send.
    pub query: &'static [&'static str],
    /// Whether the client sends `If-Match` / `If-None-Match` on it.
    pub conditional: bool,
}

const fn route(method: &'static str, template: &'static str) -> Route {
    Route {
        method,
        template,
        query: &[],
        conditional: false,
    }
}

const fn conditional(method: &'static str, template: &'static str) -> Route {
    Route {
        conditional: true,
        ..route(method, template)
    }
}

const APPS: &str = "/v1/tenants/{tenant}/apps";
const APP: &str = "/v1/tenants/{tenant}/apps/{app}";
const FUNCTIONS: &str = "/v1/tenants/{tenant}/apps/{app}/functions";
const FUNCTION: &str = "/v1/tenants/{tenant}/apps/{app}/functions/{function}";

const TENANT: &str = "/v1/tenants/{tenant}";
const IDENTITY: &str = "/v1/tenants/{tenant}/identities/{name}";
const SERVICE_PRINCIPAL: &str = "/v1/tenants/{tenant}/servicePrincipals/{name}";
const ROLE_ASSIGNMENT: &str = "/v1/tenants/{tenant}/roleAssignments/{id}";
const ROLE_DEFINITION: &str = "/v1/tenants/{tenant}/roleDefinitions/{role}";

pub const ME: Route = route("GET", "/v1/me");
pub const GET_TENANT: Route = route("GET", TENANT);
pub const PUT_TENANT: Route = conditional("PUT", TENANT);
pub const DELETE_TENANT: Route = route("DELETE", TENANT);
pub const LIST_APPS: Route = Route {
    query: &["limit", "continuationToken"],
    ..route("GET", APPS)
};
pub const GET_APP: Route = route("GET", APP);
pub const PUT_APP: Route = conditional("PUT", APP);
pub const PATCH_APP: Route = conditional("PATCH", APP);
pub const DELETE_APP: Route = conditional("DELETE", APP);
pub const LIST_SETTINGS: Route = route("POST", "/v1/tenants/{tenant}/apps/{app}/settings/list");
pub const LIST_FUNCTIONS: Route = Route {
    query: &["limit", "continuationToken"],
    ..route("GET", FUNCTIONS)
};
pub const GET_FUNCTION: Route = route("GET", FUNCTION);
pub const PUT_FUNCTION: Route = conditional("PUT", FUNCTION);
pub const DELETE_FUNCTION: Route = conditional("DELETE", FUNCTION);
pub const SCALE: Route = Route {
    query: &["decisions"],
    ..route("GET", "/v1/tenants/{tenant}/apps/{app}/scale")
};
pub const INVOCATIONS: Route = Route {
    query: &["minutes", "failures"],
    ..route(
        "GET",
        "/v1/tenants/{tenant}/apps/{app}/functions/{function}/invocations",
    )
};
pub const POISON: Route = Route {
    query: &["top"],
    ..route(
        "GET",
        "/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison",
    )
};
pub const REPLAY_POISON: Route = route(
    "POST",
    "/v1/tenants/{tenant}/apps/{app}/functions/{function}/poison/replay",
);
pub const PAUSE: Route = route(
    "POST",
    "/v1/tenants/{tenant}/apps/{app}/functions/{function}/pause",
);
pub const RESUME: Route = route(
    "POST",
    "/v1/tenants/{tenant}/apps/{app}/functions/{function}/resume",
);
pub const SEND: Route = route(
    "POST",
    "/v1/tenants/{tenant}/apps/{app}/functions/{function}/send",
);
pub const DIAGNOSTICS: Route = route("GET", "/v1/tenants/{tenant}/apps/{app}/diagnostics");
// Identities, service principals, role assignments and role definitions take no
// preconditions: the provider reads before it creates one.
pub const GET_IDENTITY: Route = route("GET", IDENTITY);
pub const PUT_IDENTITY: Route = route("PUT", IDENTITY);
pub const DELETE_IDENTITY: Route = route("DELETE", IDENTITY);
pub const GET_SERVICE_PRINCIPAL: Route = route("GET", SERVICE_PRINCIPAL);
pub const PUT_SERVICE_PRINCIPAL: Route = route("PUT", SERVICE_PRINCIPAL);
pub const DELETE_SERVICE_PRINCIPAL: Route = route("DELETE", SERVICE_PRINCIPAL);
pub const GET_ROLE_ASSIGNMENT: Route = route("GET", ROLE_ASSIGNMENT);
pub const PUT_ROLE_ASSIGNMENT: Route = route("PUT", ROLE_ASSIGNMENT);
pub const DELETE_ROLE_ASSIGNMENT: Route = route("DELETE", ROLE_ASSIGNMENT);
pub const GET_ROLE_DEFINITION: Route = route("GET", ROLE_DEFINITION);
pub const PUT_ROLE_DEFINITION: Route = route("PUT", ROLE_DEFINITION);
pub const DELETE_ROLE_DEFINITION: Route = route("DELETE", ROLE_DEFINITION);

/// Every route above, for the test against the document (a route added above belongs here).
#[cfg(test)]
pub const ALL: &[Route] = &[
    ME,
    GET_TENANT,
    PUT_TENANT,
    DELETE_TENANT,
    LIST_APPS,
    GET_APP,
    PUT_APP,
    PATCH_APP,
    DELETE_APP,
    LIST_SETTINGS,
    LIST_FUNCTIONS,
    GET_FUNCTION,
    PUT_FUNCTION,
    DELETE_FUNCTION,
    SCALE,
    INVOCATIONS,
    POISON,
    REPLAY_POISON,
    PAUSE,
    RESUME,
    SEND,
    DIAGNOSTICS,
    GET_IDENTITY,
    PUT_IDENTITY,
    DELETE_IDENTITY,
    GET_SERVICE_PRINCIPAL,
    PUT_SERVICE_PRINCIPAL,
    DELETE_SERVICE_PRINCIPAL,
    GET_ROLE_ASSIGNMENT,
    PUT_ROLE_ASSIGNMENT,
    DELETE_ROLE_ASSIGNMENT,
    GET_ROLE_DEFINITION,
    PUT_ROLE_DEFINITION,
    DELETE_ROLE_DEFINITION,
];

impl Route {
    /// The names of the template's path parameters, in order.
    pub fn parameters(&self) -> Vec<&'static str> {
        self.template
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .collect()
    }

    /// The path with `values` in place of the parameters, in order, each percent-encoded as
    /// one segment (`/v1/tenants/contoso/apps/a%2Fb`).
    pub fn path(&self, values: &[impl AsRef<str>]) -> String {
        encoded_path(&self.segments(values))
    }

    /// The path segments with `values` in place of the parameters, in order (each is one
    /// segment, percent-encoded when the URL is built).
    pub fn segments(&self, values: &[impl AsRef<str>]) -> Vec<String> {
        assert_eq!(
            values.len(),
            self.parameters().len(),
            "{} takes {} path parameters",
            self.template,
            self.parameters().len()
        );
        let mut values = values.iter();
        self.template
            .split('/')
            .skip(1)
            .map(|segment| {
                if segment.starts_with('{') {
                    values
                        .next()
                        .map(|v| v.as_ref().to_owned())
                        .unwrap_or_default()
                } else {
                    segment.to_owned()
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn document() -> Value {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../openapi/openapi.json"
        ))
        .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Every route the client calls exists in the committed document with that method, the
    /// same path parameters, the query parameters the client sends, and (when the client
    /// sends them) the precondition headers.
    #[test]
    fn every_route_the_client_calls_is_in_the_openapi_document() {
        let doc = document();
        for route in ALL {
            let operation = &doc["paths"][route.template][route.method.to_lowercase()];
            assert!(
                operation.is_object(),
                "{} {} is not in openapi/openapi.json",
                route.method,
                route.template
            );
            let documented = |place: &str| -> Vec<String> {
                operation["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == place)
                    .map(|p| p["name"].as_str().unwrap_or_default().to_owned())
                    .collect()
            };
            assert_eq!(
                documented("path"),
                route.parameters(),
                "{} {}",
                route.method,
                route.template
            );
            for name in route.query {
                assert!(
                    documented("query").iter().any(|q| q == name),
                    "{} {} has no query parameter {name}",
                    route.method,
                    route.template
                );
            }
            if route.conditional {
                let headers = documented("header");
                assert!(
                    headers.iter().any(|h| h == "If-Match")
                        && headers.iter().any(|h| h == "If-None-Match"),
                    "{} {} takes no preconditions",
                    route.method,
                    route.template
                );
            }
        }
    }

    #[test]
    fn the_table_lists_every_route_once() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert!(
                    (a.method, a.template) != (b.method, b.template),
                    "{a:?} twice"
                );
            }
        }
    }

    #[test]
    fn segments_fill_the_parameters_in_order() {
        let segments = GET_FUNCTION.segments(&["contoso", "orders", "a/b"]);
        assert_eq!(
            segments,
            [
                "v1",
                "tenants",
                "contoso",
                "apps",
                "orders",
                "functions",
                "a/b"
            ]
        );
    }
}
