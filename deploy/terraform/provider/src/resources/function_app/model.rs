//! `shoal_function_app`'s state, and how it maps to the API's `App` (the schema is in
//! [`super::schema`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};
use tf_provider::value::Value;

use super::health::{self, HealthCheck};
use crate::json_doc;
use crate::problem::FieldMap;
use crate::resources::{json_bool, json_i64, json_string, put_known, unknown_if_null};

/// What the API answers in place of a secret setting's value.
pub const MASKED: &str = "********";

/// The app setting the API derives `scale.mode` from.
const TARGET_SCALING_SETTING: &str = "TARGET_BASED_SCALING_ENABLED";

pub const FIELDS: FieldMap = FieldMap {
    documents: &[("hostConfig", "host_config")],
    maps: &["appSettings"],
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AppState {
    pub id: Value<String>,
    pub tenant: Value<String>,
    pub name: Value<String>,
    pub handler: Value<Handler>,
    pub app_settings: Value<BTreeMap<String, Value<String>>>,
    pub host_config: Value<String>,
    pub scale: Value<Scale>,
    pub identity: Value<Identity>,
    pub state: Value<String>,
    pub webhooks: Value<Webhooks>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Handler {
    pub url: Value<String>,
    pub timeout_seconds: Value<i64>,
    pub health: Value<HealthCheck>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Scale {
    pub limit: Value<i64>,
    pub minimum_instances: Value<i64>,
    pub visible_only: Value<bool>,
    pub mode: Value<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Identity {
    #[serde(rename = "type")]
    pub kind: Value<String>,
    pub user_assigned_identities: Value<Vec<Value<String>>>,
    pub principal_id: Value<String>,
    pub client_id: Value<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Webhooks {
    pub max_request_body_bytes: Value<i64>,
    pub requests_per_second: Value<i64>,
    pub burst: Value<i64>,
}

/// The `PUT` body for a planned state (unknown values are left to the server's defaults).
pub fn body(planned: &AppState) -> Json {
    let mut app = Map::new();
    if let Value::Value(handler) = &planned.handler {
        let mut h = Map::new();
        put_known(&mut h, "url", &handler.url);
        put_known(&mut h, "timeoutSeconds", &handler.timeout_seconds);
        // The PUT replaces the whole handler: a check left out of it is removed.
        health::put(&mut h, &handler.health);
        app.insert("handler".into(), Json::Object(h));
    }
    if let Value::Value(settings) = &planned.app_settings {
        let known: Map<String, Json> = settings
            .iter()
            .filter_map(|(k, v)| v.as_ref_option().map(|v| (k.clone(), json!(v))))
            .collect();
        app.insert("appSettings".into(), Json::Object(known));
    }
    if let Value::Value(text) = &planned.host_config
        && let Ok(host) = json_doc::parse_object(text)
    {
        app.insert("hostConfig".into(), Json::Object(host));
    }
    if let Value::Value(scale) = &planned.scale {
        let mut s = Map::new();
        put_known(&mut s, "limit", &scale.limit);
        put_known(&mut s, "minimumInstances", &scale.minimum_instances);
        put_known(&mut s, "visibleOnly", &scale.visible_only);
        app.insert("scale".into(), Json::Object(s));
    }
    if let Value::Value(identity) = &planned.identity {
        let mut i = Map::new();
        put_known(&mut i, "type", &identity.kind);
        if let Value::Value(names) = &identity.user_assigned_identities {
            let names: Vec<&String> = names.iter().filter_map(Value::as_ref_option).collect();
            i.insert("userAssignedIdentities".into(), json!(names));
        }
        app.insert("identity".into(), Json::Object(i));
    }
    put_known(&mut app, "state", &planned.state);
    if let Value::Value(webhooks) = &planned.webhooks {
        let mut w = Map::new();
        put_known(
            &mut w,
            "maxRequestBodyBytes",
            &webhooks.max_request_body_bytes,
        );
        put_known(&mut w, "requestsPerSecond", &webhooks.requests_per_second);
        put_known(&mut w, "burst", &webhooks.burst);
        app.insert("webhooks".into(), Json::Object(w));
    }
    Json::Object(app)
}

/// The state for an app the API returned, given what Terraform held before (`prior`): the
/// user's `host_config` text while the server still agrees with it, and the prior value of
/// each secret setting the API masks. The second value lists the masked settings `prior`
/// has no value for (after an import), whose raw values only `settings/list` gives.
pub fn from_api(app: &Json, prior: &AppState) -> (AppState, Vec<String>) {
    let tenant = json_string(app, "tenant");
    let name = json_string(app, "name");
    let id = match (&tenant, &name) {
        (Value::Value(t), Value::Value(n)) => Value::Value(format!("/tenants/{t}/apps/{n}")),
        _ => prior.id.clone(),
    };
    let handler = &app["handler"];
    let prior_settings = prior.app_settings.as_ref_option();
    let mut unresolved = Vec::new();
    let settings: BTreeMap<String, Value<String>> = app["appSettings"]
        .as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let v = v.as_str().unwrap_or_default();
                    let kept = (v == MASKED)
                        .then(|| prior_settings.and_then(|p| p.get(k)))
                        .flatten()
                        .and_then(|p| p.as_ref_option().cloned());
                    let value = match kept {
                        Some(prior) => prior,
                        None => {
                            if v == MASKED {
                                unresolved.push(k.clone());
                            }
                            v.to_owned()
                        }
                    };
                    (k.clone(), Value::Value(value))
                })
                .collect()
        })
        .unwrap_or_default();
    let host_config = json_doc::reconcile(
        prior.host_config.as_ref_option().map(String::as_str),
        &app["hostConfig"],
    );
    let scale = &app["scale"];
    let identity = &app["identity"];
    let webhooks = &app["webhooks"];
    let user_assigned = identity["userAssignedIdentities"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|n| n.as_str().map(|n| Value::Value(n.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    let state = AppState {
        id,
        tenant,
        name,
        handler: Value::Value(Handler {
            url: json_string(handler, "url"),
            timeout_seconds: json_i64(handler, "timeoutSeconds"),
            health: health::from_api(handler),
        }),
        app_settings: Value::Value(settings),
        host_config: Value::Value(host_config),
        scale: Value::Value(Scale {
            limit: json_i64(scale, "limit"),
            minimum_instances: json_i64(scale, "minimumInstances"),
            visible_only: json_bool(scale, "visibleOnly"),
            mode: json_string(scale, "mode"),
        }),
        identity: Value::Value(Identity {
            kind: json_string(identity, "type"),
            user_assigned_identities: Value::Value(user_assigned),
            principal_id: json_string(identity, "principalId"),
            client_id: json_string(identity, "clientId"),
        }),
        state: json_string(app, "state"),
        webhooks: Value::Value(Webhooks {
            max_request_body_bytes: json_i64(webhooks, "maxRequestBodyBytes"),
            requests_per_second: json_i64(webhooks, "requestsPerSecond"),
            burst: json_i64(webhooks, "burst"),
        }),
    };
    (state, unresolved)
}

/// `scale.mode` as the API will compute it from these settings.
pub fn expected_mode(settings: &Value<BTreeMap<String, Value<String>>>) -> Value<String> {
    match settings {
        Value::Value(map) => match map.get(TARGET_SCALING_SETTING) {
            Some(Value::Unknown) => Value::Unknown,
            Some(Value::Value(v)) if v == "0" => Value::Value("incremental".into()),
            _ => Value::Value("target".into()),
        },
        _ => Value::Unknown,
    }
}

/// The planned state of a new app: what the configuration says, the rest unknown.
pub fn plan_create(mut planned: AppState) -> AppState {
    planned.id = Value::Unknown;
    if let Value::Value(handler) = &mut planned.handler {
        unknown_if_null(&mut handler.timeout_seconds);
        health::plan(&mut handler.health);
    }
    unknown_if_null(&mut planned.app_settings);
    unknown_if_null(&mut planned.host_config);
    let mode = expected_mode(&planned.app_settings);
    match &mut planned.scale {
        Value::Value(scale) => {
            unknown_if_null(&mut scale.limit);
            unknown_if_null(&mut scale.minimum_instances);
            unknown_if_null(&mut scale.visible_only);
            scale.mode = mode;
        }
        other => *other = Value::Unknown,
    }
    match &mut planned.identity {
        Value::Value(identity) => {
            unknown_if_null(&mut identity.kind);
            unknown_if_null(&mut identity.user_assigned_identities);
            identity.principal_id = Value::Unknown;
            identity.client_id = Value::Unknown;
        }
        other => *other = Value::Unknown,
    }
    unknown_if_null(&mut planned.state);
    match &mut planned.webhooks {
        Value::Value(webhooks) => {
            unknown_if_null(&mut webhooks.max_request_body_bytes);
            unknown_if_null(&mut webhooks.requests_per_second);
            unknown_if_null(&mut webhooks.burst);
        }
        other => *other = Value::Unknown,
    }
    planned
}

/// The planned state of an update: Terraform's proposal (configuration over prior state), with
/// the computed values the change will move marked unknown or computed ahead.
pub fn plan_update(prior: &AppState, mut planned: AppState) -> AppState {
    // Terraform accepts the prior value in place of the configuration's when the provider
    // holds them equal. After an import the prior is the server's whole document, defaults
    // included; a configuration that means the same must plan no change.
    if let (Value::Value(written), Value::Value(held)) = (&planned.host_config, &prior.host_config)
        && written != held
        && json_doc::same_host_config(written, held)
    {
        planned.host_config = prior.host_config.clone();
    }
    // A check added to a handler that had none: its defaulted fields are the server's.
    if let Value::Value(handler) = &mut planned.handler {
        health::plan(&mut handler.health);
    }
    let mode = expected_mode(&planned.app_settings);
    if let Value::Value(scale) = &mut planned.scale {
        scale.mode = mode;
    }
    let prior_kind = prior.identity.as_ref_option().map(|i| i.kind.clone());
    if let Value::Value(identity) = &mut planned.identity
        && prior_kind.as_ref() != Some(&identity.kind)
    {
        identity.principal_id = Value::Unknown;
        identity.client_id = Value::Unknown;
    }
    planned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, Value<String>)]) -> Value<BTreeMap<String, Value<String>>> {
        Value::Value(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn mode_follows_the_target_scaling_setting() {
        let v = |s: &str| Value::Value(s.to_owned());
        let cases = [
            (settings(&[]), v("target")),
            (
                settings(&[(TARGET_SCALING_SETTING, v("0"))]),
                v("incremental"),
            ),
            (settings(&[(TARGET_SCALING_SETTING, v("1"))]), v("target")),
            (
                settings(&[(TARGET_SCALING_SETTING, Value::Unknown)]),
                Value::Unknown,
            ),
            (Value::Unknown, Value::Unknown),
        ];
        for (settings, mode) in cases {
            assert_eq!(expected_mode(&settings), mode, "{settings:?}");
        }
    }

    #[test]
    fn masked_settings_keep_their_prior_value_and_unknown_ones_are_listed() {
        let app = json!({
            "tenant": "t", "name": "a",
            "handler": {"url": "http://h", "timeoutSeconds": 30},
            "appSettings": {"PLAIN": "x", "DB_PASSWORD": MASKED, "API_KEY": MASKED},
            "hostConfig": {"version": "2.0"},
            "scale": {"limit": 100, "minimumInstances": 0, "visibleOnly": false, "mode": "target"},
            "identity": {"type": "None", "userAssignedIdentities": []},
            "state": "Running",
            "webhooks": {"maxRequestBodyBytes": 1, "requestsPerSecond": 2, "burst": 4}
        });
        let prior = AppState {
            app_settings: settings(&[("DB_PASSWORD", Value::Value("hunter2".into()))]),
            host_config: Value::Value("{}".into()),
            ..AppState::default()
        };
        let (state, unresolved) = from_api(&app, &prior);
        assert_eq!(state.id, Value::Value("/tenants/t/apps/a".into()));
        let map = state.app_settings.unwrap();
        assert_eq!(map["DB_PASSWORD"], Value::Value("hunter2".into()));
        assert_eq!(map["PLAIN"], Value::Value("x".into()));
        assert_eq!(unresolved, vec!["API_KEY".to_owned()]);
        assert_eq!(state.host_config, Value::Value("{}".into()));
    }

    #[test]
    fn the_body_leaves_unknowns_to_the_server() {
        let planned = plan_create(AppState {
            tenant: Value::Value("t".into()),
            name: Value::Value("a".into()),
            handler: Value::Value(Handler {
                url: Value::Value("http://h".into()),
                timeout_seconds: Value::Null,
                health: Value::Null,
            }),
            scale: Value::Value(Scale {
                limit: Value::Value(5),
                ..Scale::default()
            }),
            ..AppState::default()
        });
        assert_eq!(
            body(&planned),
            json!({"handler": {"url": "http://h"}, "scale": {"limit": 5}})
        );
    }
}
