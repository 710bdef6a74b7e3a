//! The app resource: what a tenant writes, validated, with documented defaults filled in.
//!
//! An app body is parsed from the JSON the tenant sent so that every error carries its field
//! path. Read-only fields a client may echo back from a GET (`name`, `etag`, timestamps,
//! `scale.mode`, identity ids) are accepted and ignored; anything else unknown is rejected.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

pub mod health_check;

use crate::host_config::HostConfig;
use crate::scale::ScaleMode;
use crate::settings::validate_app_settings;
use crate::validation::{Problems, ValidationError, from_json, join_path, named_body};
use crate::webhook_limits::WebhookLimits;
use health_check::HealthCheck;

/// Default per-request timeout for the handler when `handler.timeoutSeconds` is absent.
pub const DEFAULT_HANDLER_TIMEOUT_SECONDS: u32 = 30;
/// Upper bound for `handler.timeoutSeconds`; `hostConfig.functionTimeout` caps it further.
pub const MAX_HANDLER_TIMEOUT_SECONDS: u32 = 3600;
/// Default and ceiling of `scale.limit` (Azure's Flex Consumption default is 100 instances).
pub const DEFAULT_SCALE_LIMIT: u32 = 100;
pub const MAX_SCALE_LIMIT: u32 = 1000;

/// Where and how the app's code is reached.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Handler {
    /// Base URL; functions are invoked at `{url}/{functionName}`. http or https only.
    #[schema(value_type = String, example = "https://handler.example.com/api")]
    pub url: url::Url,
    /// Seconds to wait for one invocation's response (1–3600, default 30).
    pub timeout_seconds: u32,
    /// The handler's health endpoint: while its checks fail, no listener of the app receives
    /// and messages in hand wait (see docs/triggers.md, "When the handler is down"). Absent:
    /// only refused connections say the handler is down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthCheck>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Scale {
    /// Maximum instances (1–1000, default 100); the tenant's `maxInstances` caps it further.
    pub limit: u32,
    /// Instances kept even without work (0 to `limit`, default 0).
    pub minimum_instances: u32,
    /// Computed from the app setting `TARGET_BASED_SCALING_ENABLED` ("0" → incremental).
    pub mode: ScaleMode,
    /// Scale on the messages no worker is processing (the queue length less the messages
    /// workers report in flight) instead of the storage service's count, which includes
    /// invisible messages and can over-scale an app with long invocations (default false).
    pub visible_only: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum IdentityType {
    None,
    SystemAssigned,
    UserAssigned,
    #[serde(rename = "SystemAssigned, UserAssigned")]
    SystemAssignedUserAssigned,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Identity {
    #[serde(rename = "type")]
    pub kind: IdentityType,
    /// Names of the tenant's user-assigned identities attached to the app.
    pub user_assigned_identities: Vec<String>,
    /// The system-assigned identity's ids (issued by the identity service; null until then).
    pub principal_id: Option<String>,
    pub client_id: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum AppState {
    Running,
    Stopped,
}

/// A validated app with defaults filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct AppSpec {
    pub handler: Handler,
    pub app_settings: BTreeMap<String, String>,
    pub host_config: HostConfig,
    pub scale: Scale,
    pub identity: Identity,
    pub state: AppState,
    /// Limits of the webhook ingress for the app's HTTP-triggered functions.
    pub webhooks: WebhookLimits,
}

/// The result of parsing a written app body.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenApp {
    pub spec: AppSpec,
    /// What to store: the body as written without settings and read-only fields.
    pub stored: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Body {
    // Read-only fields tolerated so a client can PUT back what it read.
    name: Option<Value>,
    #[allow(dead_code)]
    tenant: Option<Value>,
    #[allow(dead_code)]
    etag: Option<Value>,
    #[allow(dead_code)]
    created_at: Option<Value>,
    #[allow(dead_code)]
    updated_at: Option<Value>,
    handler: Option<Value>,
    app_settings: Option<Value>,
    host_config: Option<Value>,
    scale: Option<Value>,
    identity: Option<Value>,
    state: Option<Value>,
    webhooks: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct HandlerBody {
    url: String,
    timeout_seconds: Option<u32>,
    health: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ScaleBody {
    limit: Option<u32>,
    minimum_instances: Option<u32>,
    visible_only: Option<bool>,
    #[allow(dead_code)]
    mode: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct IdentityBody {
    #[serde(rename = "type")]
    kind: IdentityType,
    #[serde(default)]
    user_assigned_identities: Vec<String>,
    #[allow(dead_code)]
    principal_id: Option<Value>,
    #[allow(dead_code)]
    client_id: Option<Value>,
}

impl AppSpec {
    /// Parses and validates an app body for the app named `name`, reporting every problem.
    pub fn parse(name: &str, body: &Value) -> Result<WrittenApp, ValidationError> {
        let (body, mut problems) = named_body(name, body, |b: &Body| b.name.as_ref())?;

        let handler = match &body.handler {
            None | Some(Value::Null) => {
                problems.push("handler", "is required");
                None
            }
            Some(value) => parse_handler(value, &mut problems),
        };

        let app_settings = match &body.app_settings {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(value) => validate_app_settings(value, "appSettings").unwrap_or_else(|e| {
                problems.absorb(e);
                BTreeMap::new()
            }),
        };

        let host_config = match &body.host_config {
            None | Some(Value::Null) => HostConfig::default(),
            Some(value) => HostConfig::parse(value, "hostConfig").unwrap_or_else(|e| {
                problems.absorb(e);
                HostConfig::default()
            }),
        };

        let mode = ScaleMode::from_app_settings(&app_settings);
        let scale = parse_scale(body.scale.as_ref(), mode, &mut problems);
        let identity = parse_identity(body.identity.as_ref(), &mut problems);
        let state = match &body.state {
            None | Some(Value::Null) => AppState::Running,
            Some(value) => from_json::<AppState>(value.clone(), "state").unwrap_or_else(|_| {
                problems.push("state", "must be \"Running\" or \"Stopped\"");
                AppState::Running
            }),
        };
        let webhooks =
            WebhookLimits::parse(body.webhooks.as_ref(), "webhooks").unwrap_or_else(|e| {
                problems.absorb(e);
                WebhookLimits::default()
            });

        problems.finish()?;
        let handler = handler.ok_or_else(|| ValidationError::single("handler", "is required"))?;
        let stored = stored_form(&body);
        Ok(WrittenApp {
            spec: AppSpec {
                handler,
                app_settings,
                host_config,
                scale,
                identity,
                state,
                webhooks,
            },
            stored,
        })
    }
}

fn parse_handler(value: &Value, problems: &mut Problems) -> Option<Handler> {
    let body: HandlerBody = match from_json(value.clone(), "handler") {
        Ok(body) => body,
        Err(e) => {
            problems.absorb(e);
            return None;
        }
    };
    let url = match url::Url::parse(&body.url) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Some(url),
        Ok(_) => {
            problems.push("handler.url", "must be an absolute http or https URL");
            None
        }
        Err(e) => {
            problems.push("handler.url", format!("is not a valid URL: {e}"));
            None
        }
    };
    let timeout_seconds = body
        .timeout_seconds
        .unwrap_or(DEFAULT_HANDLER_TIMEOUT_SECONDS);
    if !(1..=MAX_HANDLER_TIMEOUT_SECONDS).contains(&timeout_seconds) {
        problems.push(
            "handler.timeoutSeconds",
            format!("must be between 1 and {MAX_HANDLER_TIMEOUT_SECONDS}"),
        );
    }
    let health = match &body.health {
        None | Some(Value::Null) => None,
        Some(value) => HealthCheck::parse(value, "handler.health", problems),
    };
    Some(Handler {
        url: url?,
        timeout_seconds,
        health,
    })
}

fn parse_scale(value: Option<&Value>, mode: ScaleMode, problems: &mut Problems) -> Scale {
    let body = match value {
        None | Some(Value::Null) => ScaleBody {
            limit: None,
            minimum_instances: None,
            visible_only: None,
            mode: None,
        },
        Some(value) => match from_json::<ScaleBody>(value.clone(), "scale") {
            Ok(body) => body,
            Err(e) => {
                problems.absorb(e);
                ScaleBody {
                    limit: None,
                    minimum_instances: None,
                    visible_only: None,
                    mode: None,
                }
            }
        },
    };
    let limit = body.limit.unwrap_or(DEFAULT_SCALE_LIMIT);
    if !(1..=MAX_SCALE_LIMIT).contains(&limit) {
        problems.push(
            "scale.limit",
            format!("must be between 1 and {MAX_SCALE_LIMIT}"),
        );
    }
    let minimum_instances = body.minimum_instances.unwrap_or(0);
    if minimum_instances > limit {
        problems.push(
            "scale.minimumInstances",
            format!("must not exceed scale.limit ({limit})"),
        );
    }
    Scale {
        limit,
        minimum_instances,
        mode,
        visible_only: body.visible_only.unwrap_or(false),
    }
}

fn parse_identity(value: Option<&Value>, problems: &mut Problems) -> Identity {
    let none = Identity {
        kind: IdentityType::None,
        user_assigned_identities: Vec::new(),
        principal_id: None,
        client_id: None,
    };
    let body = match value {
        None | Some(Value::Null) => return none,
        Some(value) => match from_json::<IdentityBody>(value.clone(), "identity") {
            Ok(body) => body,
            Err(e) => {
                problems.absorb(e);
                return none;
            }
        },
    };
    let wants_user_assigned = matches!(
        body.kind,
        IdentityType::UserAssigned | IdentityType::SystemAssignedUserAssigned
    );
    if wants_user_assigned && body.user_assigned_identities.is_empty() {
        problems.push(
            "identity.userAssignedIdentities",
            "must name at least one identity for this type",
        );
    }
    if !wants_user_assigned && !body.user_assigned_identities.is_empty() {
        problems.push(
            "identity.userAssignedIdentities",
            "is only allowed with a UserAssigned type",
        );
    }
    for (i, name) in body.user_assigned_identities.iter().enumerate() {
        if let Err(message) = crate::names::AppName::parse(name) {
            problems.push(
                join_path("identity.userAssignedIdentities", &format!("[{i}]")),
                message,
            );
        }
    }
    Identity {
        kind: body.kind,
        user_assigned_identities: body.user_assigned_identities,
        ..none
    }
}

/// The body as written, minus settings (stored encrypted elsewhere) and read-only fields.
fn stored_form(body: &Body) -> Value {
    let mut stored = serde_json::Map::new();
    let mut put = |key: &str, value: &Option<Value>| {
        if let Some(v) = value
            && !v.is_null()
        {
            stored.insert(key.to_string(), v.clone());
        }
    };
    put("handler", &body.handler);
    put("hostConfig", &body.host_config);
    put("scale", &body.scale.as_ref().map(|s| without(s, &["mode"])));
    put(
        "identity",
        &body
            .identity
            .as_ref()
            .map(|s| without(s, &["principalId", "clientId"])),
    );
    put("state", &body.state);
    put("webhooks", &body.webhooks);
    Value::Object(stored)
}

fn without(value: &Value, keys: &[&str]) -> Value {
    let mut value = value.clone();
    if let Value::Object(map) = &mut value {
        for key in keys {
            map.remove(*key);
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paths(err: &ValidationError) -> Vec<&str> {
        err.errors.iter().map(|e| e.path.as_str()).collect()
    }

    #[test]
    fn minimal_app_gets_documented_defaults() {
        let app = AppSpec::parse(
            "orders",
            &json!({"handler": {"url": "http://127.0.0.1:7071"}}),
        )
        .unwrap();
        assert_eq!(app.spec.handler.timeout_seconds, 30);
        assert_eq!(app.spec.scale.limit, 100);
        assert_eq!(app.spec.scale.minimum_instances, 0);
        assert_eq!(app.spec.scale.mode, ScaleMode::Target);
        assert_eq!(app.spec.state, AppState::Running);
        assert_eq!(app.spec.identity.kind, IdentityType::None);
        assert_eq!(app.spec.host_config, HostConfig::default());
        assert_eq!(
            app.stored,
            json!({"handler": {"url": "http://127.0.0.1:7071"}})
        );
    }

    #[test]
    fn scale_mode_follows_the_app_setting() {
        let body = json!({"handler": {"url": "http://h"}, "appSettings": {"TARGET_BASED_SCALING_ENABLED": "0"}});
        assert_eq!(
            AppSpec::parse("a1", &body).unwrap().spec.scale.mode,
            ScaleMode::Incremental
        );
    }

    #[test]
    fn every_problem_is_reported_with_its_path() {
        let body = json!({
            "handler": {"url": "ftp://x", "timeoutSeconds": 0},
            "scale": {"limit": 0, "minimumInstances": 5},
            "state": "Paused",
        });
        let err = AppSpec::parse("a1", &body).unwrap_err();
        let got = paths(&err);
        for want in [
            "handler.url",
            "handler.timeoutSeconds",
            "scale.limit",
            "scale.minimumInstances",
            "state",
        ] {
            assert!(got.contains(&want), "missing {want} in {got:?}");
        }
    }

    #[test]
    fn unknown_fields_are_rejected_with_their_path() {
        let err = AppSpec::parse(
            "a1",
            &json!({"handler": {"url": "http://h", "verb": "GET"}}),
        )
        .unwrap_err();
        assert_eq!(paths(&err), vec!["handler.verb"]);
        let err = AppSpec::parse("a1", &json!({"handler": {"url": "http://h"}, "colour": 1}))
            .unwrap_err();
        assert_eq!(paths(&err), vec!["colour"]);
    }

    #[test]
    fn missing_handler_and_non_object_body() {
        assert_eq!(
            paths(&AppSpec::parse("a1", &json!({})).unwrap_err()),
            vec!["handler"]
        );
        assert_eq!(
            paths(&AppSpec::parse("a1", &json!([1])).unwrap_err()),
            vec![""]
        );
    }

    #[test]
    fn read_only_fields_are_tolerated_but_the_name_must_match() {
        let echoed = json!({"name": "a1", "etag": "x", "handler": {"url": "http://h"},
            "scale": {"limit": 3, "mode": "target"}, "identity": {"type": "None", "principalId": null}});
        let app = AppSpec::parse("a1", &echoed).unwrap();
        assert_eq!(app.stored["scale"], json!({"limit": 3}));
        assert!(app.stored.get("name").is_none());
        let err = AppSpec::parse("other", &echoed).unwrap_err();
        assert_eq!(paths(&err), vec!["name"]);
    }

    #[test]
    fn webhook_limits_default_validate_and_are_stored_as_written() {
        let app = AppSpec::parse("a1", &json!({"handler": {"url": "http://h"}})).unwrap();
        assert_eq!(app.spec.webhooks, WebhookLimits::default());
        let body = json!({"handler": {"url": "http://h"}, "webhooks": {"requestsPerSecond": 5}});
        let app = AppSpec::parse("a1", &body).unwrap();
        assert_eq!(
            (
                app.spec.webhooks.requests_per_second,
                app.spec.webhooks.burst
            ),
            (5, 10)
        );
        assert_eq!(app.stored["webhooks"], json!({"requestsPerSecond": 5}));
        let body = json!({"handler": {"url": "ftp://h"}, "webhooks": {"burst": 0, "maxRequestBodyBytes": 0}});
        let err = AppSpec::parse("a1", &body).unwrap_err();
        assert_eq!(
            paths(&err),
            vec![
                "handler.url",
                "webhooks.maxRequestBodyBytes",
                "webhooks.burst"
            ]
        );
    }

    #[test]
    fn user_assigned_identity_needs_names() {
        let err = AppSpec::parse(
            "a1",
            &json!({"handler": {"url": "http://h"}, "identity": {"type": "UserAssigned"}}),
        )
        .unwrap_err();
        assert_eq!(paths(&err), vec!["identity.userAssignedIdentities"]);
    }
}
