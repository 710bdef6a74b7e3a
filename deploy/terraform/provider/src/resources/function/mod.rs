//! `shoal_function`, after azurerm's `azurerm_function_app_function`: a function is `name` +
//! `function_app_id` (both force replacement) and `config_json`, its `function.json` (the
//! `bindings` and the file's other keys), with `disabled`, the `retry` policy and the
//! `circuit_breaker` as attributes of their own. Import by `/tenants/{tenant}/apps/{app}/functions/{name}`.

pub mod breaker;
pub mod model;

use async_trait::async_trait;
use tf_provider::schema::Schema;
use tf_provider::value::{Value, ValueEmpty};
use tf_provider::{AttributePath, Diagnostics, Resource};

use crate::client::Precondition;
use crate::ids::{AppId, FunctionId};
use crate::problem::report;
use crate::provider::{SharedClient, configured};
use crate::resources::{Private, PrivateState, etag_of, unknown_if_null};
use model::{FIELDS, body, check_document};
pub use model::{FunctionState, Retry, from_api, schema};

pub struct FunctionResource {
    client: SharedClient,
}

impl FunctionResource {
    pub fn new(client: SharedClient) -> Self {
        FunctionResource { client }
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
        breaker::plan_create(&mut planned.circuit_breaker);
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
        breaker::plan_update(&prior.circuit_breaker, &mut planned.circuit_breaker);
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
