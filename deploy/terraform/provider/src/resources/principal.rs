//! `shoal_user_assigned_identity` and `shoal_service_principal`: principals that have a name
//! and nothing to update, so every argument forces replacement. A service principal's secret
//! is returned once, by the `PUT` that creates it, and kept (sensitive) in state.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};
use tf_provider::schema::{
    AttributeConstraint::{Computed, Required},
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

const FIELDS: FieldMap = FieldMap {
    documents: &[],
    maps: &[],
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrincipalKind {
    UserAssignedIdentity,
    ServicePrincipal,
}

impl PrincipalKind {
    fn collection(self) -> Collection {
        match self {
            PrincipalKind::UserAssignedIdentity => Collection::Identities,
            PrincipalKind::ServicePrincipal => Collection::ServicePrincipals,
        }
    }

    fn noun(self) -> &'static str {
        match self {
            PrincipalKind::UserAssignedIdentity => "user-assigned identity",
            PrincipalKind::ServicePrincipal => "service principal",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PrincipalState {
    pub id: Value<String>,
    pub tenant: Value<String>,
    pub name: Value<String>,
    pub principal_id: Value<String>,
    pub client_id: Value<String>,
    /// Service principals only (absent from the identity's schema, so never serialized there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Value<String>>,
}

pub struct PrincipalResource {
    client: SharedClient,
    kind: PrincipalKind,
}

impl PrincipalResource {
    pub fn new(client: SharedClient, kind: PrincipalKind) -> Self {
        PrincipalResource { client, kind }
    }

    fn id(&self, state: &PrincipalState, diags: &mut Diagnostics) -> Option<ChildId> {
        if let Value::Value(id) = &state.id {
            return ChildId::parse(id, self.kind.collection())
                .map_err(|m| diags.error("Invalid id", m, AttributePath::new("id")))
                .ok();
        }
        match (&state.tenant, &state.name) {
            (Value::Value(tenant), Value::Value(name)) => Some(ChildId {
                tenant: tenant.clone(),
                collection: self.kind.collection(),
                name: name.clone(),
            }),
            _ => {
                diags.root_error_short("The tenant and name are not known yet");
                None
            }
        }
    }

    /// Terraform's `null` for `client_secret` deserializes as `None`; a service principal's
    /// state must still carry the attribute.
    /// The API's principal at `id`.
    fn target(&self, id: &ChildId) -> Target<'static> {
        Target::new(self.kind.noun(), id, id.api_path(), &FIELDS)
    }

    fn normalize(&self, mut state: PrincipalState) -> PrincipalState {
        if self.kind == PrincipalKind::ServicePrincipal && state.client_secret.is_none() {
            state.client_secret = Some(Value::Null);
        }
        state
    }

    fn state_from(&self, body: &Json, id: &ChildId, prior: &PrincipalState) -> PrincipalState {
        let client_secret = match self.kind {
            PrincipalKind::UserAssignedIdentity => None,
            PrincipalKind::ServicePrincipal => Some(match json_string(body, "clientSecret") {
                Value::Value(secret) => Value::Value(secret),
                _ => match &prior.client_secret {
                    Some(Value::Value(secret)) => Value::Value(secret.clone()),
                    _ => Value::Null,
                },
            }),
        };
        PrincipalState {
            id: Value::Value(id.to_string()),
            tenant: Value::Value(id.tenant.clone()),
            name: Value::Value(id.name.clone()),
            principal_id: json_string(body, "principalId"),
            client_id: json_string(body, "clientId"),
            client_secret,
        }
    }
}

#[async_trait]
impl Resource for PrincipalResource {
    type State<'a> = PrincipalState;
    type PrivateState<'a> = PrivateState;
    type ProviderMetaState<'a> = ValueEmpty;

    /// The tenant by the API's rule, at plan time and at its attribute.
    async fn validate<'a>(&self, diags: &mut Diagnostics, config: PrincipalState) -> Option<()> {
        check_attribute(diags, "tenant", NameKind::Tenant, &config.tenant);
        Some(())
    }

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        let noun = self.kind.noun();
        let mut attrs = attributes([
            (
                "id",
                attribute(
                    T::String,
                    Computed,
                    &format!(
                        "`/tenants/{{tenant}}/{}/{{name}}`; the id `terraform import` takes.",
                        self.kind.collection()
                    ),
                ),
            ),
            (
                "tenant",
                attribute(
                    T::String,
                    Required,
                    "The tenant. Changing it replaces the principal.",
                ),
            ),
            (
                "name",
                attribute(
                    T::String,
                    Required,
                    "The name. Changing it replaces the principal.",
                ),
            ),
            (
                "principal_id",
                attribute(T::String, Computed, "The object id role assignments name."),
            ),
            (
                "client_id",
                attribute(T::String, Computed, "The application (client) id."),
            ),
        ]);
        if self.kind == PrincipalKind::ServicePrincipal {
            let mut secret = attribute(
                T::String,
                Computed,
                "The client secret, returned once when the service principal is created (null after an import).",
            );
            secret.sensitive = true;
            attrs.insert("client_secret".into(), secret);
        }
        Some(Schema {
            version: 1,
            block: Block {
                version: 1,
                description: Description::markdown(format!("A Shoal {noun}.")),
                attributes: attrs,
                ..Default::default()
            },
        })
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        state: PrincipalState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(PrincipalState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = self.id(&state, diags)?;
        match crud::read(&client, diags, &self.target(&id)).await {
            Found::Entity(entity) => Some((
                self.state_from(&entity.body, &id, &state),
                crud::private(&entity),
            )),
            Found::Gone => None,
            Found::Failed => Some((self.normalize(state), private)),
        }
    }

    async fn plan_create<'a>(
        &self,
        _diags: &mut Diagnostics,
        mut planned: PrincipalState,
        _config: PrincipalState,
        _meta: ValueEmpty,
    ) -> Option<(PrincipalState, PrivateState)> {
        planned.id = Value::Unknown;
        planned.principal_id = Value::Unknown;
        planned.client_id = Value::Unknown;
        if self.kind == PrincipalKind::ServicePrincipal {
            planned.client_secret = Some(Value::Unknown);
        }
        Some((planned, None))
    }

    async fn plan_update<'a>(
        &self,
        _diags: &mut Diagnostics,
        prior: PrincipalState,
        planned: PrincipalState,
        _config: PrincipalState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(PrincipalState, PrivateState, Vec<AttributePath>)> {
        let mut replace = Vec::new();
        if planned.tenant != prior.tenant {
            replace.push(AttributePath::new("tenant"));
        }
        if planned.name != prior.name {
            replace.push(AttributePath::new("name"));
        }
        Some((self.normalize(planned), private, replace))
    }

    async fn plan_destroy<'a>(
        &self,
        _diags: &mut Diagnostics,
        _prior: PrincipalState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<PrivateState> {
        Some(private)
    }

    async fn create<'a>(
        &self,
        diags: &mut Diagnostics,
        planned: PrincipalState,
        _config: PrincipalState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(PrincipalState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = self.id(&planned, diags)?;
        // Principals take no body. The API answers a PUT of an existing one with it (200,
        // without its secret) and takes no `If-None-Match`, so a read first keeps it from
        // being adopted silently.
        let entity = crud::create(
            &client,
            diags,
            &self.target(&id),
            &json!({}),
            Guard::LookFirst,
        )
        .await?;
        Some((
            self.state_from(&entity.body, &id, &PrincipalState::default()),
            crud::private(&entity),
        ))
    }

    /// Nothing is updatable: every argument forces replacement.
    async fn update<'a>(
        &self,
        _diags: &mut Diagnostics,
        _prior: PrincipalState,
        planned: PrincipalState,
        _config: PrincipalState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(PrincipalState, PrivateState)> {
        Some((self.normalize(planned), private))
    }

    async fn destroy<'a>(
        &self,
        diags: &mut Diagnostics,
        prior: PrincipalState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<()> {
        let client = configured(&self.client, diags)?;
        let id = self.id(&prior, diags)?;
        crud::destroy(&client, diags, &self.target(&id)).await
    }

    async fn import<'a>(
        &self,
        diags: &mut Diagnostics,
        id: String,
    ) -> Option<(PrincipalState, PrivateState)> {
        match ChildId::parse(&id, self.kind.collection()) {
            Ok(id) => Some((
                PrincipalState {
                    id: Value::Value(id.to_string()),
                    client_secret: (self.kind == PrincipalKind::ServicePrincipal)
                        .then_some(Value::Null),
                    ..PrincipalState::default()
                },
                None,
            )),
            Err(message) => {
                diags.root_error(format!("Cannot import the {}", self.kind.noun()), message);
                None
            }
        }
    }
}
