//! `shoal_function_app`: create with `PUT` + `If-None-Match: *`, read with `GET` (a 404 drops
//! it from state so Terraform plans it again), update with `PUT` + `If-Match` of the `ETag` in
//! private state, delete with `DELETE`, import by `/tenants/{tenant}/apps/{name}`.

pub mod health;
pub mod model;
pub mod schema;

use async_trait::async_trait;
use serde_json::Value as Json;
use shoal_client::{ApiClient, Precondition, routes};
use tf_provider::schema::Schema;
use tf_provider::value::{Value, ValueEmpty};
use tf_provider::{AttributePath, Diagnostics, Resource};

use crate::ids::AppId;
use crate::json_doc;
use crate::names::{NameKind, check_attribute};
use crate::resources::crud::{self, Found, Guard, Target};
use crate::resources::{PrivateState, etag_of};
use crate::shared_client::{SharedClient, configured};
use model::{AppState, FIELDS};

pub struct FunctionAppResource {
    client: SharedClient,
}

impl FunctionAppResource {
    pub fn new(client: SharedClient) -> Self {
        FunctionAppResource { client }
    }
}

/// The app's id from a state: its `id`, or `tenant` and `name` before it has one.
fn app_id(state: &AppState, diags: &mut Diagnostics) -> Option<AppId> {
    if let Value::Value(id) = &state.id {
        return match AppId::parse(id) {
            Ok(id) => Some(id),
            Err(message) => {
                diags.error("Invalid function app id", message, AttributePath::new("id"));
                None
            }
        };
    }
    match (&state.tenant, &state.name) {
        (Value::Value(tenant), Value::Value(app)) => Some(AppId {
            tenant: tenant.clone(),
            app: app.clone(),
        }),
        _ => {
            diags.root_error_short("The function app's tenant and name are not known yet");
            None
        }
    }
}

/// The API's function app at `id`.
fn target(id: &AppId) -> Target<'static> {
    Target::new("function app", id, id.api_path(), &FIELDS)
}

/// The state after a read or write of the app, with raw values for the secret settings the
/// prior state cannot supply (after an import) fetched from `settings/list`.
async fn settle(
    client: &ApiClient,
    id: &AppId,
    body: &Json,
    prior: &AppState,
    diags: &mut Diagnostics,
) -> AppState {
    let (mut state, unresolved) = model::from_api(body, prior);
    if unresolved.is_empty() {
        return state;
    }
    let path = routes::LIST_SETTINGS.path(&[&id.tenant, &id.app]);
    match client.post(&path, &serde_json::json!({})).await {
        Ok(raw) => {
            if let (Value::Value(settings), Some(raw)) = (
                &mut state.app_settings,
                raw.body.get("appSettings").and_then(Json::as_object),
            ) {
                for key in unresolved {
                    if let Some(value) = raw.get(&key).and_then(Json::as_str) {
                        settings.insert(key, Value::Value(value.to_owned()));
                    }
                }
            }
        }
        Err(error) => diags.warning(
            "Secret app settings could not be read",
            format!(
                "Shoal masks secret settings; reading their values needs Contributor on the \
                 app ({error}). They stay masked in state, so the next plan shows them as \
                 changes."
            ),
            AttributePath::new("app_settings"),
        ),
    }
    state
}

#[async_trait]
impl Resource for FunctionAppResource {
    type State<'a> = AppState;
    type PrivateState<'a> = PrivateState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(schema::schema())
    }

    async fn validate<'a>(&self, diags: &mut Diagnostics, config: AppState) -> Option<()> {
        check_attribute(diags, "tenant", NameKind::Tenant, &config.tenant);
        check_attribute(diags, "name", NameKind::App, &config.name);
        if let Value::Value(text) = &config.host_config
            && let Err(message) = json_doc::parse_object(text)
        {
            diags.error(
                "Invalid host_config",
                format!("host_config {message}"),
                AttributePath::new("host_config"),
            );
        }
        Some(())
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        state: AppState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(AppState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = app_id(&state, diags)?;
        match crud::read(&client, diags, &target(&id)).await {
            Found::Entity(entity) => {
                let new = settle(&client, &id, &entity.body, &state, diags).await;
                Some((new, crud::private(&entity)))
            }
            Found::Gone => None,
            Found::Failed => Some((state, private)),
        }
    }

    async fn plan_create<'a>(
        &self,
        _diags: &mut Diagnostics,
        proposed: AppState,
        _config: AppState,
        _meta: ValueEmpty,
    ) -> Option<(AppState, PrivateState)> {
        Some((model::plan_create(proposed), None))
    }

    async fn plan_update<'a>(
        &self,
        _diags: &mut Diagnostics,
        prior: AppState,
        proposed: AppState,
        _config: AppState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(AppState, PrivateState, Vec<AttributePath>)> {
        let mut replace = Vec::new();
        if proposed.tenant != prior.tenant {
            replace.push(AttributePath::new("tenant"));
        }
        if proposed.name != prior.name {
            replace.push(AttributePath::new("name"));
        }
        Some((model::plan_update(&prior, proposed), private, replace))
    }

    async fn plan_destroy<'a>(
        &self,
        _diags: &mut Diagnostics,
        _prior: AppState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<PrivateState> {
        Some(private)
    }

    async fn create<'a>(
        &self,
        diags: &mut Diagnostics,
        planned: AppState,
        _config: AppState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(AppState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = app_id(&planned, diags)?;
        let entity = crud::create(
            &client,
            diags,
            &target(&id),
            &model::body(&planned),
            Guard::IfNoneMatch,
        )
        .await?;
        let state = settle(&client, &id, &entity.body, &planned, diags).await;
        Some((state, crud::private(&entity)))
    }

    async fn update<'a>(
        &self,
        diags: &mut Diagnostics,
        prior: AppState,
        planned: AppState,
        _config: AppState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(AppState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = app_id(&planned, diags)?;
        let precondition = etag_of(&private).map_or(Precondition::None, Precondition::Matches);
        let Some(entity) = crud::update(
            &client,
            diags,
            &target(&id),
            &model::body(&planned),
            &precondition,
        )
        .await
        else {
            return Some((prior, private));
        };
        let state = settle(&client, &id, &entity.body, &planned, diags).await;
        Some((state, crud::private(&entity)))
    }

    async fn destroy<'a>(
        &self,
        diags: &mut Diagnostics,
        prior: AppState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<()> {
        let client = configured(&self.client, diags)?;
        let id = app_id(&prior, diags)?;
        crud::destroy(&client, diags, &target(&id)).await
    }

    async fn import<'a>(
        &self,
        diags: &mut Diagnostics,
        id: String,
    ) -> Option<(AppState, PrivateState)> {
        let parsed = AppId::parse(&id).map(|id| AppState {
            id: Value::Value(id.to_string()),
            ..AppState::default()
        });
        crud::import(diags, "function app", parsed)
    }
}
