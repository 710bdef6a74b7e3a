//! `shoal_function_app`'s schema.

use tf_provider::schema::{
    AttributeConstraint::{Computed, OptionalComputed, Required},
    AttributeType as T, Block, Description, Schema,
};

use super::health;
use crate::resources::{attribute, attributes};

/// Every attribute inside an Optional+Computed object is computed too: Terraform reads an
/// object whose prior value holds a non-computed attribute as written by the user, and so plans
/// it away when the configuration leaves the object out.
pub fn schema() -> Schema {
    let handler = attributes([
        (
            "url",
            attribute(
                T::String,
                Required,
                "Base URL of the app's handler; functions are invoked at `{url}/{function}` (http or https).",
            ),
        ),
        (
            "timeout_seconds",
            attribute(
                T::Number,
                OptionalComputed,
                "Seconds to wait for one invocation's response (1–3600; server default 30).",
            ),
        ),
        ("health", health::schema_attribute()),
    ]);
    let scale = attributes([
        (
            "limit",
            attribute(
                T::Number,
                OptionalComputed,
                "Most instances (1–1000; server default 100); the tenant's `maxInstances` caps it further.",
            ),
        ),
        (
            "minimum_instances",
            attribute(
                T::Number,
                OptionalComputed,
                "Instances kept even without work (0 to `limit`; default 0).",
            ),
        ),
        (
            "visible_only",
            attribute(
                T::Bool,
                OptionalComputed,
                "Scale on the messages no worker is processing instead of the storage service's count (default false).",
            ),
        ),
        (
            "mode",
            attribute(
                T::String,
                Computed,
                "`target` or `incremental`, from the app setting `TARGET_BASED_SCALING_ENABLED` (`\"0\"` → `incremental`).",
            ),
        ),
    ]);
    let identity = attributes([
        (
            "type",
            attribute(
                T::String,
                OptionalComputed,
                "`None` (server default), `SystemAssigned`, `UserAssigned` or `SystemAssigned, UserAssigned`.",
            ),
        ),
        (
            "user_assigned_identities",
            attribute(
                T::List(Box::new(T::String)),
                OptionalComputed,
                "Names of the tenant's user-assigned identities attached to the app.",
            ),
        ),
        (
            "principal_id",
            attribute(
                T::String,
                Computed,
                "The system-assigned identity's principal id.",
            ),
        ),
        (
            "client_id",
            attribute(
                T::String,
                Computed,
                "The system-assigned identity's client id.",
            ),
        ),
    ]);
    let webhooks = attributes([
        (
            "max_request_body_bytes",
            attribute(
                T::Number,
                OptionalComputed,
                "Largest webhook request body in bytes (default 4194304).",
            ),
        ),
        (
            "requests_per_second",
            attribute(
                T::Number,
                OptionalComputed,
                "Sustained webhook requests per second (default 100).",
            ),
        ),
        (
            "burst",
            attribute(
                T::Number,
                OptionalComputed,
                "Webhook requests accepted at once above the rate (default twice `requests_per_second`).",
            ),
        ),
    ]);
    let mut app_settings = attribute(
        T::Map(Box::new(T::String)),
        OptionalComputed,
        "App settings (environment of the functions' bindings). Sensitive: secret values are write-only in the API, so a change made outside Terraform to a secret setting's value is not detected.",
    );
    app_settings.sensitive = true;
    Schema {
        version: 1,
        block: Block {
            version: 1,
            description: Description::markdown(
                "A Shoal function app: the handler Shoal invokes, its settings, `host.json`, scale limits and managed identity.",
            ),
            attributes: attributes([
                (
                    "id",
                    attribute(
                        T::String,
                        Computed,
                        "`/tenants/{tenant}/apps/{name}`; the id `terraform import` takes.",
                    ),
                ),
                (
                    "tenant",
                    attribute(
                        T::String,
                        Required,
                        "The tenant the app belongs to. Changing it replaces the app.",
                    ),
                ),
                (
                    "name",
                    attribute(
                        T::String,
                        Required,
                        "The app's name. Changing it replaces the app.",
                    ),
                ),
                (
                    "handler",
                    attribute(
                        T::AttributeSingle(handler),
                        Required,
                        "Where Shoal delivers invocations.",
                    ),
                ),
                ("app_settings", app_settings),
                (
                    "host_config",
                    attribute(
                        T::String,
                        OptionalComputed,
                        "The app's `host.json` as a JSON object (use `jsonencode`). Defaults the server adds are not shown as changes.",
                    ),
                ),
                (
                    "scale",
                    attribute(T::AttributeSingle(scale), OptionalComputed, "Scale limits."),
                ),
                (
                    "identity",
                    attribute(
                        T::AttributeSingle(identity),
                        OptionalComputed,
                        "The app's managed identities.",
                    ),
                ),
                (
                    "state",
                    attribute(
                        T::String,
                        OptionalComputed,
                        "`Running` or `Stopped` (server default `Running`).",
                    ),
                ),
                (
                    "webhooks",
                    attribute(
                        T::AttributeSingle(webhooks),
                        OptionalComputed,
                        "Limits of the webhook ingress for the app's HTTP-triggered functions.",
                    ),
                ),
            ]),
            ..Default::default()
        },
    }
}
