//! `shoal_role_assignment`: a role for a principal at a scope. Assignments are immutable (as in
//! Azure), so every argument forces replacement; `name` (the assignment's UUID) is generated on
//! create unless given. Import by `/tenants/{tenant}/roleAssignments/{uuid}`.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};
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
use crate::resources::{PrivateState, attribute, attributes, json_string};
use crate::shared_client::{SharedClient, configured};

const COLLECTION: Collection = Collection::RoleAssignments;

/// The API names the role `roleDefinitionId`; here the argument is `role_definition`, where an
/// unknown role's error lands. Only the apply can tell: checking at plan time would refuse a
/// custom role (or a tenant) this same configuration creates.
const FIELDS: FieldMap = FieldMap {
    documents: &[("roleDefinitionId", "role_definition")],
    maps: &[],
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AssignmentState {
    pub id: Value<String>,
    pub tenant: Value<String>,
    pub name: Value<String>,
    pub principal_id: Value<String>,
    pub role_definition: Value<String>,
    pub scope: Value<String>,
    pub role_definition_id: Value<String>,
    pub role_definition_name: Value<String>,
}

pub struct RoleAssignmentResource {
    client: SharedClient,
}

impl RoleAssignmentResource {
    pub fn new(client: SharedClient) -> Self {
        RoleAssignmentResource { client }
    }
}

fn schema() -> Schema {
    Schema {
        version: 1,
        block: Block {
            version: 1,
            description: Description::markdown(
                "A role assignment: a role for a principal at a scope.",
            ),
            attributes: attributes([
                (
                    "id",
                    attribute(
                        T::String,
                        Computed,
                        "`/tenants/{tenant}/roleAssignments/{name}`; the id `terraform import` takes.",
                    ),
                ),
                ("tenant", attribute(T::String, Required, "The tenant.")),
                (
                    "name",
                    attribute(
                        T::String,
                        OptionalComputed,
                        "The assignment's UUID (generated when left out).",
                    ),
                ),
                (
                    "principal_id",
                    attribute(
                        T::String,
                        Required,
                        "The principal's object id (`principal_id` of an identity, service principal or app identity).",
                    ),
                ),
                (
                    "role_definition",
                    attribute(
                        T::String,
                        Required,
                        "The role's name (`Reader`, `Contributor`, `Owner`, `Function Invoker`, a custom role) or id.",
                    ),
                ),
                (
                    "scope",
                    attribute(
                        T::String,
                        Required,
                        "`/tenants/{t}`, `/tenants/{t}/apps/{a}` or `/tenants/{t}/apps/{a}/functions/{f}` (an app's or function's `id`).",
                    ),
                ),
                (
                    "role_definition_id",
                    attribute(T::String, Computed, "The role's id."),
                ),
                (
                    "role_definition_name",
                    attribute(T::String, Computed, "The role's name."),
                ),
            ]),
            ..Default::default()
        },
    }
}

fn assignment_id(state: &AssignmentState, diags: &mut Diagnostics) -> Option<ChildId> {
    if let Value::Value(id) = &state.id {
        return ChildId::parse(id, COLLECTION)
            .map_err(|m| diags.error("Invalid role assignment id", m, AttributePath::new("id")))
            .ok();
    }
    match (&state.tenant, &state.name) {
        (Value::Value(tenant), Value::Value(name)) => Some(ChildId {
            tenant: tenant.clone(),
            collection: COLLECTION,
            name: name.clone(),
        }),
        _ => {
            diags.root_error_short("The role assignment's tenant and name are not known yet");
            None
        }
    }
}

/// The state for an assignment the API returned; `role_definition` keeps what the
/// configuration wrote while it still names the same role (by name or by id).
fn from_api(body: &Json, id: &ChildId, prior: &AssignmentState) -> AssignmentState {
    let role_id = json_string(body, "roleDefinitionId");
    let role_name = json_string(body, "roleDefinitionName");
    let role_definition = match &prior.role_definition {
        Value::Value(written) if Some(written) == role_id.as_ref_option() => role_id.clone(),
        Value::Value(written) if Some(written) == role_name.as_ref_option() => role_name.clone(),
        _ => role_name.clone(),
    };
    AssignmentState {
        id: Value::Value(id.to_string()),
        tenant: Value::Value(id.tenant.clone()),
        name: Value::Value(id.name.clone()),
        principal_id: json_string(body, "principalId"),
        role_definition,
        scope: json_string(body, "scope"),
        role_definition_id: role_id,
        role_definition_name: role_name,
    }
}

/// The API's role assignment at `id`.
fn target(id: &ChildId) -> Target<'static> {
    Target::new("role assignment", id, id.api_path(), &FIELDS)
}

#[async_trait]
impl Resource for RoleAssignmentResource {
    type State<'a> = AssignmentState;
    type PrivateState<'a> = PrivateState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(schema())
    }

    /// Names by the API's rules, at plan time and at their attribute.
    async fn validate<'a>(&self, diags: &mut Diagnostics, config: AssignmentState) -> Option<()> {
        check_attribute(diags, "tenant", NameKind::Tenant, &config.tenant);
        Some(())
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        state: AssignmentState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(AssignmentState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = assignment_id(&state, diags)?;
        match crud::read(&client, diags, &target(&id)).await {
            Found::Entity(entity) => {
                Some((from_api(&entity.body, &id, &state), crud::private(&entity)))
            }
            Found::Gone => None,
            Found::Failed => Some((state, private)),
        }
    }

    async fn plan_create<'a>(
        &self,
        _diags: &mut Diagnostics,
        mut planned: AssignmentState,
        _config: AssignmentState,
        _meta: ValueEmpty,
    ) -> Option<(AssignmentState, PrivateState)> {
        planned.id = Value::Unknown;
        if planned.name.is_null() {
            planned.name = Value::Unknown;
        }
        planned.role_definition_id = Value::Unknown;
        planned.role_definition_name = Value::Unknown;
        Some((planned, None))
    }

    async fn plan_update<'a>(
        &self,
        _diags: &mut Diagnostics,
        prior: AssignmentState,
        planned: AssignmentState,
        _config: AssignmentState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(AssignmentState, PrivateState, Vec<AttributePath>)> {
        let replace = [
            ("tenant", planned.tenant != prior.tenant),
            ("name", planned.name != prior.name),
            ("principal_id", planned.principal_id != prior.principal_id),
            (
                "role_definition",
                planned.role_definition != prior.role_definition,
            ),
            ("scope", planned.scope != prior.scope),
        ]
        .into_iter()
        .filter(|(_, changed)| *changed)
        .map(|(name, _)| AttributePath::new(name))
        .collect();
        Some((planned, private, replace))
    }

    async fn plan_destroy<'a>(
        &self,
        _diags: &mut Diagnostics,
        _prior: AssignmentState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<PrivateState> {
        Some(private)
    }

    async fn create<'a>(
        &self,
        diags: &mut Diagnostics,
        mut planned: AssignmentState,
        _config: AssignmentState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(AssignmentState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        if !planned.name.is_value() {
            planned.name = Value::Value(uuid::Uuid::new_v4().to_string());
        }
        let id = assignment_id(&planned, diags)?;
        let body = json!({
            "principalId": planned.principal_id.as_ref_option(),
            "roleDefinitionId": planned.role_definition.as_ref_option(),
            "scope": planned.scope.as_ref_option(),
        });
        // The API takes no `If-None-Match` on role assignments: a read first.
        let entity = crud::create(&client, diags, &target(&id), &body, Guard::LookFirst).await?;
        Some((
            from_api(&entity.body, &id, &planned),
            crud::private(&entity),
        ))
    }

    /// Nothing is updatable: every argument forces replacement.
    async fn update<'a>(
        &self,
        _diags: &mut Diagnostics,
        _prior: AssignmentState,
        planned: AssignmentState,
        _config: AssignmentState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(AssignmentState, PrivateState)> {
        Some((planned, private))
    }

    async fn destroy<'a>(
        &self,
        diags: &mut Diagnostics,
        prior: AssignmentState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<()> {
        let client = configured(&self.client, diags)?;
        let id = assignment_id(&prior, diags)?;
        crud::destroy(&client, diags, &target(&id)).await
    }

    async fn import<'a>(
        &self,
        diags: &mut Diagnostics,
        id: String,
    ) -> Option<(AssignmentState, PrivateState)> {
        let parsed = ChildId::parse(&id, COLLECTION).map(|id| AssignmentState {
            id: Value::Value(id.to_string()),
            ..AssignmentState::default()
        });
        crud::import(diags, "role assignment", parsed)
    }
}
