//! The OpenAPI document: its description, the bearer security scheme, and the error responses
//! every operation can give, documented once here rather than on each handler.

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{Ref, RefOr, Response};
use utoipa::{Modify, OpenApi};

use shoal_domain::names::{AppName, FunctionName, TenantName};

use crate::error::{PROBLEM_JSON, Problem};
use crate::routes;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Shoal",
        description = "Management API of Shoal, a self-hostable control plane for event-driven function apps.\n\n\
            Resources are tenant-scoped; `PUT` creates or replaces (201/200), `PATCH` takes a JSON merge patch, \
            every resource carries an `ETag` honoured through `If-Match` and `If-None-Match` (RFC 9110 §13), lists are paginated with continuation \
            tokens, and errors are `application/problem+json` with `errors[].path` for invalid fields."
    ),
    modifiers(&BearerAuth),
    tags(
        (name = routes::TAG_TENANTS, description = "Tenants and their quotas (platform scope)"),
        (name = routes::TAG_APPS, description = "Function apps, their settings and diagnostics"),
        (name = routes::TAG_FUNCTIONS, description = "Functions and their bindings"),
        (name = crate::routes::webhooks::TAG_WEBHOOKS, description = "The webhook ingress: invoking HTTP-triggered functions with a bearer token"),
    ),
    components(schemas(Problem, TenantName, AppName, FunctionName))
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                Http::builder()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .build(),
            ),
        );
        openapi.security = Some(vec![SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// Errors any operation may answer, and those only operations with a body may.
const COMMON_ERRORS: &[(&str, &str)] = &[
    (
        "400",
        "Malformed request: a query string, header or body that cannot be read",
    ),
    ("401", "Missing, invalid or expired bearer token"),
    ("403", "The caller's role does not allow this"),
    (
        "404",
        "No such resource, or one the caller may not know exists",
    ),
    (
        "422",
        "Invalid fields or path parameters; `errors[].path` names each",
    ),
    (
        "503",
        "Postgres is unavailable; retry after `Retry-After` seconds",
    ),
];
const BODY_ERRORS: &[(&str, &str)] = &[
    ("413", "The request body is larger than the server accepts"),
    (
        "415",
        "The body is not JSON (`application/json` or `application/merge-patch+json`)",
    ),
];

/// Documents every error response as `application/problem+json` and adds the common ones to
/// each operation, so the document matches what the server answers. Applied to the finished
/// document (after the routers' paths are merged in), not as an `#[openapi]` modifier.
pub struct ProblemResponses;

impl Modify for ProblemResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [
                &mut item.get,
                &mut item.put,
                &mut item.post,
                &mut item.delete,
                &mut item.patch,
            ];
            for operation in operations.into_iter().flatten() {
                let extra = if operation.request_body.is_some() {
                    BODY_ERRORS
                } else {
                    &[]
                };
                let responses = &mut operation.responses.responses;
                for (status, response) in responses.iter_mut() {
                    if (status.starts_with('4') || status.starts_with('5'))
                        && let RefOr::T(response) = response
                        && let Some(content) = response.content.shift_remove("application/json")
                    {
                        response.content.insert(PROBLEM_JSON.to_string(), content);
                    }
                }
                for (status, description) in COMMON_ERRORS.iter().chain(extra) {
                    responses
                        .entry((*status).to_string())
                        .or_insert_with(|| problem(description));
                }
            }
        }
    }
}

fn problem(description: &str) -> RefOr<Response> {
    let content = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("Problem")))
        .build();
    RefOr::T(
        ResponseBuilder::new()
            .description(description)
            .content(PROBLEM_JSON, content)
            .build(),
    )
}

/// `host.json` sections in which every setting has a documented default. Reads return them
/// complete (so their schemas require every field), but a write may omit any field: the write
/// schema gets a `…Write` copy of each with nothing required.
const DEFAULTED_SECTIONS: &[&str] = &[
    "HostConfig",
    "Extensions",
    "QueuesOptions",
    "ServiceBusOptions",
    "ServiceBusRetryOptions",
    "EventHubsOptions",
    "EventHubsRetryOptions",
];

/// Adds the `…Write` copies of [`DEFAULTED_SECTIONS`] and points `AppWrite.hostConfig` at them.
pub fn add_write_schemas(openapi: &mut utoipa::openapi::OpenApi) {
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for name in DEFAULTED_SECTIONS {
        let Some(schema) = components.schemas.get(*name) else {
            continue;
        };
        let Ok(mut value) = serde_json::to_value(schema) else {
            continue;
        };
        if let Some(object) = value.as_object_mut() {
            object.remove("required");
        }
        point_at_write_copies(&mut value);
        if let Ok(copy) = serde_json::from_value(value) {
            components.schemas.insert(format!("{name}Write"), copy);
        }
    }
    if let Some(app_write) = components.schemas.get_mut("AppWrite")
        && let Ok(mut value) = serde_json::to_value(&*app_write)
    {
        point_at_write_copies(&mut value);
        if let Ok(rewritten) = serde_json::from_value(value) {
            *app_write = rewritten;
        }
    }
}

/// Rewrites references to defaulted sections into references to their write copies.
fn point_at_write_copies(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::String(reference)) = map.get_mut("$ref")
                && let Some(name) = reference.strip_prefix("#/components/schemas/")
                && DEFAULTED_SECTIONS.contains(&name)
            {
                *reference = format!("{reference}Write");
            }
            map.values_mut().for_each(point_at_write_copies);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(point_at_write_copies),
        _ => {}
    }
}
