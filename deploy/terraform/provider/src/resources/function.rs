//! `shoal_function`, after azurerm's `azurerm_function_app_function`: a function is `name` +
//! `function_app_id` (both force replacement) and `config_json`, its `function.json` (the
//! `bindings` and the file's other keys), with `disabled` and the `retry` policy as
//! attributes of their own. Import by `/tenants/{tenant}/apps/{app}/functions/{name}`.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use tf_provider::schema::{
    AttributeConstraint::{Computed, Optional, OptionalComputed, Required},
    AttributeType as T, Block, Description, Schema,
};
use tf_provider::value::{Value, ValueEmpty};
use tf_provider::{AttributePath, Diagnostics, Resource};

use crate::client::Precondition;
use crate::ids::{AppId, FunctionId};
use crate::json_doc;
use crate::problem::{FieldMap, report};
use crate::provider::{SharedClient, configured};
use crate::resources::{
    Private, PrivateState, attribute, attributes, etag_of, json_bool, json_i64, json_string,
    put_known, unknown_if_null,
};

/// The `function.json` keys `config_json` carries; `disabled` and `retry` have attributes.
const DOCUMENT_KEYS: [&str; 6] = [
    "bindings",
    "excluded",
    "scriptFile",
    "entryPoint",
    "configurationSource",
    "generatedBy",
];

const FIELDS: FieldMap = FieldMap {
    documents: &[
        ("bindings", "config_json"),
        ("excluded", "config_json"),
        ("scriptFile", "config_json"),
        ("entryPoint", "config_json"),
        ("configurationSource", "config_json"),
        ("generatedBy", "config_json"),
    ],
    maps: &[],
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FunctionState {
    pub id: Value<String>,
    pub function_app_id: Value<String>,
    pub name: Value<String>,
    pub config_json: Value<String>,
    pub disabled: Value<bool>,
    pub retry: Value<Retry>,
    pub trigger_type: Value<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Retry {
    pub strategy: Value<String>,
    pub max_retry_count: Value<i64>,
    pub delay_interval: Value<String>,
    pub minimum_interval: Value<String>,
    pub maximum_interval: Value<String>,
}

pub struct FunctionResource {
    client: SharedClient,
}

impl FunctionResource {
    pub fn new(client: SharedClient) -> Self {
        FunctionResource { client }
    }
}

pub(crate) fn schema() -> Schema {
    let retry = attributes([
        (
            "strategy",
            attribute(T::String, Required, "`fixedDelay` or `exponentialBackoff`."),
        ),
        (
            "max_retry_count",
            attribute(
                T::Number,
                Required,
                "Retries after the first attempt; `-1` retries indefinitely.",
            ),
        ),
        (
            "delay_interval",
            attribute(
                T::String,
                Optional,
                "Wait between attempts (`fixedDelay`), a TimeSpan such as `00:00:10`.",
            ),
        ),
        (
            "minimum_interval",
            attribute(
                T::String,
                Optional,
                "First back-off (`exponentialBackoff`).",
            ),
        ),
        (
            "maximum_interval",
            attribute(
                T::String,
                Optional,
                "Longest back-off (`exponentialBackoff`).",
            ),
        ),
    ]);
    Schema {
        version: 1,
        block: Block {
            version: 1,
            description: Description::markdown(
                "A function of a Shoal function app: its `function.json`.",
            ),
            attributes: attributes([
                (
                    "id",
                    attribute(
                        T::String,
                        Computed,
                        "`/tenants/{tenant}/apps/{app}/functions/{name}`; the id `terraform import` takes.",
                    ),
                ),
                (
                    "function_app_id",
                    attribute(
                        T::String,
                        Required,
                        "The `id` of the `shoal_function_app`. Changing it replaces the function.",
                    ),
                ),
                (
                    "name",
                    attribute(
                        T::String,
                        Required,
                        "The function's name. Changing it replaces the function.",
                    ),
                ),
                (
                    "config_json",
                    attribute(
                        T::String,
                        Required,
                        "The `function.json` as a JSON object (use `jsonencode`): `bindings` (exactly one trigger) and optionally `excluded`, `scriptFile`, `entryPoint`, `configurationSource`, `generatedBy`.",
                    ),
                ),
                (
                    "disabled",
                    attribute(
                        T::Bool,
                        OptionalComputed,
                        "Whether the function's trigger is stopped (server default false).",
                    ),
                ),
                (
                    "retry",
                    attribute(
                        T::AttributeSingle(retry),
                        Optional,
                        "The retry policy of the function's invocations.",
                    ),
                ),
                (
                    "trigger_type",
                    attribute(T::String, Computed, "The trigger binding's type."),
                ),
            ]),
            ..Default::default()
        },
    }
}

fn function_id(state: &FunctionState, diags: &mut Diagnostics) -> Option<FunctionId> {
    if let Value::Value(id) = &state.id {
        return FunctionId::parse(id)
            .map_err(|m| diags.error("Invalid function id", m, AttributePath::new("id")))
            .ok();
    }
    match (&state.function_app_id, &state.name) {
        (Value::Value(app), Value::Value(name)) => match AppId::parse(app) {
            Ok(app) => Some(FunctionId {
                app,
                function: name.clone(),
            }),
            Err(message) => {
                diags.error(
                    "Invalid function_app_id",
                    message,
                    AttributePath::new("function_app_id"),
                );
                None
            }
        },
        _ => {
            diags.root_error_short("The function's app and name are not known yet");
            None
        }
    }
}

fn describe(id: &FunctionId) -> String {
    format!("function {id}")
}

/// Problems with a `config_json` text, for `validate`.
fn check_document(text: &str) -> Result<(), String> {
    let document = json_doc::parse_object(text).map_err(|m| format!("config_json {m}"))?;
    for key in ["disabled", "retry"] {
        if document.contains_key(key) {
            return Err(format!(
                "config_json holds `{key}`: set it with the resource's `{key}` attribute instead"
            ));
        }
    }
    if let Some(unknown) = document
        .keys()
        .find(|k| !DOCUMENT_KEYS.contains(&k.as_str()))
    {
        return Err(format!(
            "config_json holds `{unknown}`, which is not a function.json key Shoal knows \
             (expected {})",
            DOCUMENT_KEYS.join(", ")
        ));
    }
    if !document.contains_key("bindings") {
        return Err("config_json needs `bindings` (the function.json bindings array)".into());
    }
    Ok(())
}

fn body(planned: &FunctionState) -> Json {
    let mut function = match &planned.config_json {
        Value::Value(text) => json_doc::parse_object(text).unwrap_or_default(),
        _ => Map::new(),
    };
    put_known(&mut function, "disabled", &planned.disabled);
    if let Value::Value(retry) = &planned.retry {
        let mut r = Map::new();
        put_known(&mut r, "strategy", &retry.strategy);
        put_known(&mut r, "maxRetryCount", &retry.max_retry_count);
        put_known(&mut r, "delayInterval", &retry.delay_interval);
        put_known(&mut r, "minimumInterval", &retry.minimum_interval);
        put_known(&mut r, "maximumInterval", &retry.maximum_interval);
        function.insert("retry".into(), Json::Object(r));
    }
    Json::Object(function)
}

pub(crate) fn from_api(function: &Json, id: &FunctionId, prior: &FunctionState) -> FunctionState {
    let document: Map<String, Json> = DOCUMENT_KEYS
        .iter()
        .filter_map(|k| {
            function
                .get(*k)
                .filter(|v| !v.is_null())
                .map(|v| ((*k).to_owned(), v.clone()))
        })
        .collect();
    let config_json = json_doc::reconcile(
        prior.config_json.as_ref_option().map(String::as_str),
        &Json::Object(document),
    );
    let retry = match function.get("retry") {
        Some(r) if r.is_object() => Value::Value(Retry {
            strategy: json_string(r, "strategy"),
            max_retry_count: json_i64(r, "maxRetryCount"),
            delay_interval: json_string(r, "delayInterval"),
            minimum_interval: json_string(r, "minimumInterval"),
            maximum_interval: json_string(r, "maximumInterval"),
        }),
        _ => Value::Null,
    };
    FunctionState {
        id: Value::Value(id.to_string()),
        function_app_id: Value::Value(id.app.to_string()),
        name: Value::Value(id.function.clone()),
        config_json: Value::Value(config_json),
        disabled: json_bool(function, "disabled"),
        retry,
        trigger_type: json_string(function, "triggerType"),
    }
}

#[async_trait]
impl Resource for FunctionResource {
    type State<'a> = FunctionState;
    type PrivateState<'a> = PrivateState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(schema())
    }

    async fn validate<'a>(&self, diags: &mut Diagnostics, config: FunctionState) -> Option<()> {
        if let Value::Value(text) = &config.config_json
            && let Err(message) = check_document(text)
        {
            diags.error(
                "Invalid config_json",
                message,
                AttributePath::new("config_json"),
            );
        }
        if let Value::Value(app) = &config.function_app_id
            && let Err(message) = AppId::parse(app)
        {
            diags.error(
                "Invalid function_app_id",
                message,
                AttributePath::new("function_app_id"),
            );
        }
        Some(())
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        state: FunctionState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(FunctionState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = function_id(&state, diags)?;
        match client.get(&id.api_path()).await {
            Ok(Some(entity)) => Some((
                from_api(&entity.body, &id, &state),
                Some(Private { etag: entity.etag }),
            )),
            // Deleted outside Terraform (or with its app): planned for re-creation.
            Ok(None) => None,
            Err(error) => {
                report(diags, &error, &describe(&id), &FIELDS);
                Some((state, private))
            }
        }
    }

    async fn plan_create<'a>(
        &self,
        _diags: &mut Diagnostics,
        mut planned: FunctionState,
        _config: FunctionState,
        _meta: ValueEmpty,
    ) -> Option<(FunctionState, PrivateState)> {
        planned.id = Value::Unknown;
        unknown_if_null(&mut planned.disabled);
        planned.trigger_type = Value::Unknown;
        Some((planned, None))
    }

    async fn plan_update<'a>(
        &self,
        _diags: &mut Diagnostics,
        prior: FunctionState,
        mut planned: FunctionState,
        _config: FunctionState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(FunctionState, PrivateState, Vec<AttributePath>)> {
        let mut replace = Vec::new();
        if planned.function_app_id != prior.function_app_id {
            replace.push(AttributePath::new("function_app_id"));
        }
        if planned.name != prior.name {
            replace.push(AttributePath::new("name"));
        }
        if planned.config_json != prior.config_json {
            planned.trigger_type = Value::Unknown;
        }
        Some((planned, private, replace))
    }

    async fn plan_destroy<'a>(
        &self,
        _diags: &mut Diagnostics,
        _prior: FunctionState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<PrivateState> {
        Some(private)
    }

    async fn create<'a>(
        &self,
        diags: &mut Diagnostics,
        planned: FunctionState,
        _config: FunctionState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(FunctionState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = function_id(&planned, diags)?;
        match client
            .put(&id.api_path(), &body(&planned), &Precondition::Absent)
            .await
        {
            Ok(entity) => Some((
                from_api(&entity.body, &id, &planned),
                Some(Private { etag: entity.etag }),
            )),
            Err(error) if error.status() == Some(412) => {
                diags.root_error(
                    format!("{} already exists", describe(&id)),
                    format!(
                        "To manage it with Terraform, import it: \
                         terraform import <resource address> {id}"
                    ),
                );
                None
            }
            Err(error) => {
                report(diags, &error, &describe(&id), &FIELDS);
                None
            }
        }
    }

    async fn update<'a>(
        &self,
        diags: &mut Diagnostics,
        prior: FunctionState,
        planned: FunctionState,
        _config: FunctionState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(FunctionState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = function_id(&planned, diags)?;
        let precondition = etag_of(&private).map_or(Precondition::None, Precondition::Matches);
        match client
            .put(&id.api_path(), &body(&planned), &precondition)
            .await
        {
            Ok(entity) => Some((
                from_api(&entity.body, &id, &planned),
                Some(Private { etag: entity.etag }),
            )),
            // Nothing was written: the prior state still describes the function.
            Err(error) => {
                report(diags, &error, &describe(&id), &FIELDS);
                Some((prior, private))
            }
        }
    }

    async fn destroy<'a>(
        &self,
        diags: &mut Diagnostics,
        prior: FunctionState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<()> {
        let client = configured(&self.client, diags)?;
        let id = function_id(&prior, diags)?;
        match client.delete(&id.api_path()).await {
            Ok(()) => Some(()),
            Err(error) => {
                report(diags, &error, &describe(&id), &FIELDS);
                None
            }
        }
    }

    async fn import<'a>(
        &self,
        diags: &mut Diagnostics,
        id: String,
    ) -> Option<(FunctionState, PrivateState)> {
        match FunctionId::parse(&id) {
            Ok(id) => Some((
                FunctionState {
                    id: Value::Value(id.to_string()),
                    ..FunctionState::default()
                },
                None,
            )),
            Err(message) => {
                diags.root_error("Cannot import the function", message);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_json_must_be_a_function_json_without_the_attributes_keys() {
        let ok = r#"{"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "q"}]}"#;
        assert!(check_document(ok).is_ok());
        let cases = [
            ("[]", "JSON object"),
            (
                r#"{"bindings": [], "disabled": true}"#,
                "`disabled` attribute",
            ),
            (r#"{"bindings": [], "retry": {}}"#, "`retry` attribute"),
            (r#"{"bindings": [], "bindngs": []}"#, "`bindngs`"),
            (r#"{"scriptFile": "x"}"#, "needs `bindings`"),
        ];
        for (text, expected) in cases {
            let error = check_document(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn reads_keep_the_users_document_while_the_server_agrees() {
        let id = FunctionId::parse("/tenants/t/apps/a/functions/f").unwrap();
        let mine =
            r#"{"bindings":[{"type":"queueTrigger","direction":"in","name":"m","queueName":"q"}]}"#;
        let prior = FunctionState {
            config_json: Value::Value(mine.into()),
            ..FunctionState::default()
        };
        let read = json!({
            "name": "f", "app": "a", "triggerType": "queueTrigger", "disabled": false,
            "excluded": false, "retry": null, "scriptFile": null,
            "bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "q"}],
            "etag": "x"
        });
        let state = from_api(&read, &id, &prior);
        assert_eq!(state.config_json, Value::Value(mine.into()));
        assert_eq!(
            state.function_app_id,
            Value::Value("/tenants/t/apps/a".into())
        );
        assert_eq!(state.retry, Value::Null);
        let mut changed = read.clone();
        changed["bindings"][0]["queueName"] = json!("other");
        let drifted = from_api(&changed, &id, &prior);
        assert!(drifted.config_json.unwrap().contains("other"));
    }
}
