//! `shoal_role_definition`: a custom role (its permissions in Azure's four lists, and where it
//! may be assigned). The API takes no preconditions on roles, so a create checks that the name
//! is free first, and an update replaces the role as planned. Import by
//! `/tenants/{tenant}/roleDefinitions/{name}`.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json, json};
use shoal_client::Precondition;
use tf_provider::schema::{
    AttributeConstraint::{Computed, OptionalComputed, Required},
    AttributeType as T, Block, Description, Schema,
};
use tf_provider::value::{Value, ValueEmpty};
use tf_provider::{AttributePath, Diagnostics, Resource};

use crate::ids::{ChildId, Collection};
use crate::names::{NameKind, check_attribute};
use crate::problem::FieldMap;
use crate::resources::crud::{self, Found, Guard, Target};
use crate::resources::{
    PrivateState, attribute, attributes, json_string, put_known, unknown_if_null,
};
use crate::shared_client::{SharedClient, configured};

const COLLECTION: Collection = Collection::RoleDefinitions;

const FIELDS: FieldMap = FieldMap {
    documents: &[],
    maps: &[],
};

type Names = Value<Vec<Value<String>>>;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoleState {
    pub id: Value<String>,
    pub tenant: Value<String>,
    pub name: Value<String>,
    pub description: Value<String>,
    pub actions: Names,
    pub not_actions: Names,
    pub data_actions: Names,
    pub not_data_actions: Names,
    pub assignable_scopes: Names,
    pub role_definition_id: Value<String>,
}

pub struct RoleDefinitionResource {
    client: SharedClient,
}

impl RoleDefinitionResource {
    pub fn new(client: SharedClient) -> Self {
        RoleDefinitionResource { client }
    }
}

fn list(
    description: &str,
    constraint: tf_provider::schema::AttributeConstraint,
) -> tf_provider::schema::Attribute {
    attribute(T::List(Box::new(T::String)), constraint, description)
}

fn schema() -> Schema {
    Schema {
        version: 1,
        block: Block {
            version: 1,
            description: Description::markdown("A custom role of a tenant."),
            attributes: attributes([
                (
                    "id",
                    attribute(
                        T::String,
                        Computed,
                        "`/tenants/{tenant}/roleDefinitions/{name}`; the id `terraform import` takes.",
                    ),
                ),
                (
                    "tenant",
                    attribute(
                        T::String,
                        Required,
                        "The tenant. Changing it replaces the role.",
                    ),
                ),
                (
                    "name",
                    attribute(
                        T::String,
                        Required,
                        "The role's name. Changing it replaces the role.",
                    ),
                ),
                (
                    "description",
                    attribute(T::String, OptionalComputed, "What the role is for."),
                ),
                (
                    "actions",
                    list(
                        "Control-plane operations granted, e.g. `Shoal/apps/read`, `*/read`.",
                        OptionalComputed,
                    ),
                ),
                (
                    "not_actions",
                    list("Taken away from this role's `actions`.", OptionalComputed),
                ),
                (
                    "data_actions",
                    list(
                        "Data operations granted, e.g. `Shoal/apps/functions/invoke/action`.",
                        OptionalComputed,
                    ),
                ),
                (
                    "not_data_actions",
                    list(
                        "Taken away from this role's `data_actions`.",
                        OptionalComputed,
                    ),
                ),
                (
                    "assignable_scopes",
                    list(
                        "Scopes inside the tenant where the role may be assigned, e.g. `/tenants/contoso`.",
                        Required,
                    ),
                ),
                (
                    "role_definition_id",
                    attribute(T::String, Computed, "The role's id."),
                ),
            ]),
            ..Default::default()
        },
    }
}

fn role_id(state: &RoleState, diags: &mut Diagnostics) -> Option<ChildId> {
    if let Value::Value(id) = &state.id {
        return ChildId::parse(id, COLLECTION)
            .map_err(|m| diags.error("Invalid role definition id", m, AttributePath::new("id")))
            .ok();
    }
    match (&state.tenant, &state.name) {
        (Value::Value(tenant), Value::Value(name)) => Some(ChildId {
            tenant: tenant.clone(),
            collection: COLLECTION,
            name: name.clone(),
        }),
        _ => {
            diags.root_error_short("The role's tenant and name are not known yet");
            None
        }
    }
}

fn known_names(names: &Names) -> Option<Vec<String>> {
    names.as_ref_option().map(|n| {
        n.iter()
            .filter_map(|v| v.as_ref_option().cloned())
            .collect()
    })
}

fn names(value: &Json) -> Names {
    Value::Value(
        value
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(|s| Value::Value(s.to_owned())))
                    .collect()
            })
            .unwrap_or_default(),
    )
}

fn body(planned: &RoleState) -> Json {
    let mut permissions = Map::new();
    for (key, list) in [
        ("actions", &planned.actions),
        ("notActions", &planned.not_actions),
        ("dataActions", &planned.data_actions),
        ("notDataActions", &planned.not_data_actions),
    ] {
        if let Some(names) = known_names(list) {
            permissions.insert(key.into(), json!(names));
        }
    }
    let mut role = Map::new();
    put_known(&mut role, "description", &planned.description);
    role.insert("permissions".into(), Json::Object(permissions));
    role.insert(
        "assignableScopes".into(),
        json!(known_names(&planned.assignable_scopes).unwrap_or_default()),
    );
    Json::Object(role)
}

fn from_api(role: &Json, id: &ChildId) -> RoleState {
    let permissions = &role["permissions"];
    RoleState {
        id: Value::Value(id.to_string()),
        tenant: Value::Value(id.tenant.clone()),
        name: Value::Value(id.name.clone()),
        description: json_string(role, "description"),
        actions: names(&permissions["actions"]),
        not_actions: names(&permissions["notActions"]),
        data_actions: names(&permissions["dataActions"]),
        not_data_actions: names(&permissions["notDataActions"]),
        assignable_scopes: names(&role["assignableScopes"]),
        role_definition_id: json_string(role, "id"),
    }
}

/// The API's role definition at `id`.
fn target(id: &ChildId) -> Target<'static> {
    Target::new("role definition", id, id.api_path(), &FIELDS)
}

#[async_trait]
impl Resource for RoleDefinitionResource {
    type State<'a> = RoleState;
    type PrivateState<'a> = PrivateState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(schema())
    }

    /// Names by the API's rules, at plan time and at their attribute.
    async fn validate<'a>(&self, diags: &mut Diagnostics, config: RoleState) -> Option<()> {
        check_attribute(diags, "tenant", NameKind::Tenant, &config.tenant);
        Some(())
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        state: RoleState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(RoleState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = role_id(&state, diags)?;
        match crud::read(&client, diags, &target(&id)).await {
            Found::Entity(entity) => Some((from_api(&entity.body, &id), crud::private(&entity))),
            Found::Gone => None,
            Found::Failed => Some((state, private)),
        }
    }

    async fn plan_create<'a>(
        &self,
        _diags: &mut Diagnostics,
        mut planned: RoleState,
        _config: RoleState,
        _meta: ValueEmpty,
    ) -> Option<(RoleState, PrivateState)> {
        planned.id = Value::Unknown;
        planned.role_definition_id = Value::Unknown;
        unknown_if_null(&mut planned.description);
        unknown_if_null(&mut planned.actions);
        unknown_if_null(&mut planned.not_actions);
        unknown_if_null(&mut planned.data_actions);
        unknown_if_null(&mut planned.not_data_actions);
        Some((planned, None))
    }

    async fn plan_update<'a>(
        &self,
        _diags: &mut Diagnostics,
        prior: RoleState,
        planned: RoleState,
        _config: RoleState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(RoleState, PrivateState, Vec<AttributePath>)> {
        let mut replace = Vec::new();
        if planned.tenant != prior.tenant {
            replace.push(AttributePath::new("tenant"));
        }
        if planned.name != prior.name {
            replace.push(AttributePath::new("name"));
        }
        Some((planned, private, replace))
    }

    async fn plan_destroy<'a>(
        &self,
        _diags: &mut Diagnostics,
        _prior: RoleState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<PrivateState> {
        Some(private)
    }

    async fn create<'a>(
        &self,
        diags: &mut Diagnostics,
        planned: RoleState,
        _config: RoleState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(RoleState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = role_id(&planned, diags)?;
        // Roles take no If-None-Match: look first, so an existing role is never taken over.
        let entity = crud::create(
            &client,
            diags,
            &target(&id),
            &body(&planned),
            Guard::LookFirst,
        )
        .await?;
        Some((from_api(&entity.body, &id), crud::private(&entity)))
    }

    async fn update<'a>(
        &self,
        diags: &mut Diagnostics,
        prior: RoleState,
        planned: RoleState,
        _config: RoleState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(RoleState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = role_id(&planned, diags)?;
        let Some(entity) = crud::update(
            &client,
            diags,
            &target(&id),
            &body(&planned),
            &Precondition::None,
        )
        .await
        else {
            return Some((prior, private));
        };
        Some((from_api(&entity.body, &id), crud::private(&entity)))
    }

    async fn destroy<'a>(
        &self,
        diags: &mut Diagnostics,
        prior: RoleState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<()> {
        let client = configured(&self.client, diags)?;
        let id = role_id(&prior, diags)?;
        crud::destroy(&client, diags, &target(&id)).await
    }

    async fn import<'a>(
        &self,
        diags: &mut Diagnostics,
        id: String,
    ) -> Option<(RoleState, PrivateState)> {
        let parsed = ChildId::parse(&id, COLLECTION).map(|id| RoleState {
            id: Value::Value(id.to_string()),
            ..RoleState::default()
        });
        crud::import(diags, "role definition", parsed)
    }
}
