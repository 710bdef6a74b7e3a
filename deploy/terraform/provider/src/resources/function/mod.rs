//! `shoal_function`, after azurerm's `azurerm_function_app_function`: a function is `name` +
//! `function_app_id` (both force replacement) and `config_json`, its `function.json` (the
//! `bindings` and the file's other keys), with `disabled`, the `retry` policy, the
//! `circuit_breaker`, `max_concurrency` and the stream triggers' `dead_letter` as attributes
//! of their own. Import by `/tenants/{tenant}/apps/{app}/functions/{name}`.

pub mod breaker;
pub mod dead_letter;
pub mod model;

use async_trait::async_trait;
use shoal_client::Precondition;
use tf_provider::schema::Schema;
use tf_provider::value::{Value, ValueEmpty};
use tf_provider::{AttributePath, Diagnostics, Resource};

use crate::ids::{AppId, FunctionId};
use crate::names::{NameKind, check_attribute};
use crate::resources::crud::{self, Found, Guard, Target};
use crate::resources::{PrivateState, etag_of, unknown_if_null};
use crate::shared_client::{SharedClient, configured};
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

/// The API's function at `id`.
fn target(id: &FunctionId) -> Target<'static> {
    Target::new("function", id, id.api_path(), &FIELDS)
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
        check_attribute(diags, "name", NameKind::Function, &config.name);
        if let Value::Value(text) = &config.config_json
            && let Err(message) = check_document(text)
        {
            diags.error(
                "Invalid config_json",
                message,
                AttributePath::new("config_json"),
            );
        }
        dead_letter::validate(diags, &config.dead_letter);
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
        match crud::read(&client, diags, &target(&id)).await {
            Found::Entity(entity) => {
                Some((from_api(&entity.body, &id, &state), crud::private(&entity)))
            }
            // Deleted outside Terraform (or with its app): planned for re-creation.
            Found::Gone => None,
            Found::Failed => Some((state, private)),
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
        let entity = crud::create(
            &client,
            diags,
            &target(&id),
            &body(&planned),
            Guard::IfNoneMatch,
        )
        .await?;
        Some((
            from_api(&entity.body, &id, &planned),
            crud::private(&entity),
        ))
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
        let Some(entity) =
            crud::update(&client, diags, &target(&id), &body(&planned), &precondition).await
        else {
            // Nothing was written: the prior state still describes the function.
            return Some((prior, private));
        };
        Some((
            from_api(&entity.body, &id, &planned),
            crud::private(&entity),
        ))
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
        crud::destroy(&client, diags, &target(&id)).await
    }

    async fn import<'a>(
        &self,
        diags: &mut Diagnostics,
        id: String,
    ) -> Option<(FunctionState, PrivateState)> {
        let parsed = FunctionId::parse(&id).map(|id| FunctionState {
            id: Value::Value(id.to_string()),
            ..FunctionState::default()
        });
        crud::import(diags, "function", parsed)
    }
}
