//! Data sources: an app, a function, a role definition and an app's system-assigned identity,
//! read by name. App and function have their resource's attributes, all read from the API
//! (secret app settings read masked, as the API shows them).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use shoal_client::ApiClient;
use tf_provider::schema::{
    AttributeConstraint::{Computed, Required},
    AttributeType as T, Block, Description, Schema,
};
use tf_provider::value::{Value, ValueEmpty};
use tf_provider::{AttributePath, DataSource, Diagnostics};

use crate::ids::{AppId, ChildId, Collection, FunctionId};
use crate::problem::{FieldMap, report};
use crate::resources::function::{self, FunctionState};
use crate::resources::function_app::model::{self, AppState};
use crate::resources::{attribute, attributes, computed_copy, json_bool, json_string};
use crate::shared_client::{SharedClient, configured};

const NO_FIELDS: FieldMap = FieldMap {
    documents: &[],
    maps: &[],
};

fn known(
    value: &Value<String>,
    attribute: &'static str,
    diags: &mut Diagnostics,
) -> Option<String> {
    match value {
        Value::Value(v) => Some(v.clone()),
        _ => {
            diags.error_short(
                format!("`{attribute}` must be known to read"),
                AttributePath::new(attribute),
            );
            None
        }
    }
}

/// GETs `path`, with an error naming `what` when it does not exist.
async fn fetch(
    client: &ApiClient,
    path: &str,
    what: &str,
    diags: &mut Diagnostics,
) -> Option<serde_json::Value> {
    match client.get(path).await {
        Ok(Some(entity)) => Some(entity.body),
        Ok(None) => {
            diags.root_error(
                format!("{what} does not exist"),
                format!("GET {path} answered 404"),
            );
            None
        }
        Err(error) => {
            report(diags, &error, what, &NO_FIELDS);
            None
        }
    }
}

pub struct FunctionAppData {
    pub client: SharedClient,
}

#[async_trait]
impl DataSource for FunctionAppData {
    type State<'a> = AppState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(computed_copy(
            crate::resources::function_app::schema::schema(),
            &["tenant", "name"],
        ))
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        config: AppState,
        _meta: ValueEmpty,
    ) -> Option<AppState> {
        let client = configured(&self.client, diags)?;
        let id = AppId {
            tenant: known(&config.tenant, "tenant", diags)?,
            app: known(&config.name, "name", diags)?,
        };
        let body = fetch(
            &client,
            &id.api_path(),
            &format!("function app {id}"),
            diags,
        )
        .await?;
        Some(model::from_api(&body, &AppState::default()).0)
    }
}

pub struct FunctionData {
    pub client: SharedClient,
}

#[async_trait]
impl DataSource for FunctionData {
    type State<'a> = FunctionState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(computed_copy(
            function::schema(),
            &["function_app_id", "name"],
        ))
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        config: FunctionState,
        _meta: ValueEmpty,
    ) -> Option<FunctionState> {
        let client = configured(&self.client, diags)?;
        let app = known(&config.function_app_id, "function_app_id", diags)?;
        let app = AppId::parse(&app)
            .map_err(|m| {
                diags.error(
                    "Invalid function_app_id",
                    m,
                    AttributePath::new("function_app_id"),
                )
            })
            .ok()?;
        let id = FunctionId {
            app,
            function: known(&config.name, "name", diags)?,
        };
        let body = fetch(&client, &id.api_path(), &format!("function {id}"), diags).await?;
        Some(function::from_api(&body, &id, &FunctionState::default()))
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RoleDefinitionState {
    pub tenant: Value<String>,
    pub name: Value<String>,
    pub id: Value<String>,
    pub description: Value<String>,
    pub built_in: Value<bool>,
    pub permissions_json: Value<String>,
    pub assignable_scopes: Value<Vec<Value<String>>>,
}

pub struct RoleDefinitionData {
    pub client: SharedClient,
}

#[async_trait]
impl DataSource for RoleDefinitionData {
    type State<'a> = RoleDefinitionState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(Schema {
            version: 1,
            block: Block {
                version: 1,
                description: Description::markdown(
                    "A role definition (built-in or custom), by name or id.",
                ),
                attributes: attributes([
                    ("tenant", attribute(T::String, Required, "The tenant.")),
                    (
                        "name",
                        attribute(
                            T::String,
                            Required,
                            "The role's name (`Reader`, `Function Invoker`, a custom role) or id.",
                        ),
                    ),
                    (
                        "id",
                        attribute(
                            T::String,
                            Computed,
                            "The role's id (what `role_definition` may name).",
                        ),
                    ),
                    (
                        "description",
                        attribute(T::String, Computed, "The role's description."),
                    ),
                    (
                        "built_in",
                        attribute(T::Bool, Computed, "Whether Shoal defines the role."),
                    ),
                    (
                        "permissions_json",
                        attribute(
                            T::String,
                            Computed,
                            "The role's permissions (`actions`, `notActions`, `dataActions`, `notDataActions`) as JSON.",
                        ),
                    ),
                    (
                        "assignable_scopes",
                        attribute(
                            T::List(Box::new(T::String)),
                            Computed,
                            "Scopes the role may be assigned at.",
                        ),
                    ),
                ]),
                ..Default::default()
            },
        })
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        config: RoleDefinitionState,
        _meta: ValueEmpty,
    ) -> Option<RoleDefinitionState> {
        let client = configured(&self.client, diags)?;
        let id = ChildId {
            tenant: known(&config.tenant, "tenant", diags)?,
            collection: Collection::RoleDefinitions,
            name: known(&config.name, "name", diags)?,
        };
        let body = fetch(
            &client,
            &id.api_path(),
            &format!("role definition {id}"),
            diags,
        )
        .await?;
        let scopes = body["assignableScopes"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(|s| Value::Value(s.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Some(RoleDefinitionState {
            tenant: config.tenant,
            name: config.name,
            id: json_string(&body, "id"),
            description: json_string(&body, "description"),
            built_in: json_bool(&body, "builtIn"),
            permissions_json: Value::Value(body["permissions"].to_string()),
            assignable_scopes: Value::Value(scopes),
        })
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AppIdentityState {
    pub function_app_id: Value<String>,
    #[serde(rename = "type")]
    pub kind: Value<String>,
    pub principal_id: Value<String>,
    pub client_id: Value<String>,
    pub federated_subject: Value<String>,
    pub user_assigned_identities: Value<Vec<Value<String>>>,
}

pub struct AppIdentityData {
    pub client: SharedClient,
}

#[async_trait]
impl DataSource for AppIdentityData {
    type State<'a> = AppIdentityState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(Schema {
            version: 1,
            block: Block {
                version: 1,
                description: Description::markdown(
                    "An app's managed identities: what role assignments and federated credentials in Entra need.",
                ),
                attributes: attributes([
                    (
                        "function_app_id",
                        attribute(T::String, Required, "The app's `id`."),
                    ),
                    (
                        "type",
                        attribute(T::String, Computed, "The app's `identity.type`."),
                    ),
                    (
                        "principal_id",
                        attribute(
                            T::String,
                            Computed,
                            "The system-assigned identity's principal id (null without one).",
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
                    (
                        "federated_subject",
                        attribute(
                            T::String,
                            Computed,
                            "The subject of the federated credential an Entra identity needs to trust this app's system-assigned identity (its principal id; never reused).",
                        ),
                    ),
                    (
                        "user_assigned_identities",
                        attribute(
                            T::List(Box::new(T::String)),
                            Computed,
                            "Names of the user-assigned identities attached to the app.",
                        ),
                    ),
                ]),
                ..Default::default()
            },
        })
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        config: AppIdentityState,
        _meta: ValueEmpty,
    ) -> Option<AppIdentityState> {
        let client = configured(&self.client, diags)?;
        let app = known(&config.function_app_id, "function_app_id", diags)?;
        let id = AppId::parse(&app)
            .map_err(|m| {
                diags.error(
                    "Invalid function_app_id",
                    m,
                    AttributePath::new("function_app_id"),
                )
            })
            .ok()?;
        let body = fetch(
            &client,
            &id.api_path(),
            &format!("function app {id}"),
            diags,
        )
        .await?;
        let identity = &body["identity"];
        let principal_id = json_string(identity, "principalId");
        let names = identity["userAssignedIdentities"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(|s| Value::Value(s.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Some(AppIdentityState {
            function_app_id: config.function_app_id,
            kind: json_string(identity, "type"),
            federated_subject: principal_id.clone(),
            principal_id,
            client_id: json_string(identity, "clientId"),
            user_assigned_identities: Value::Value(names),
        })
    }
}
