//! `shoal_tenant` (platform administrators): a tenant's display name, quota and whether its
//! apps' identity-based connections act as the worker host. Import by `/tenants/{name}`.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use shoal_client::Precondition;
use tf_provider::schema::{
    AttributeConstraint::{Computed, Optional, OptionalComputed, Required},
    AttributeType as T, Block, Description, Schema,
};
use tf_provider::value::{Value, ValueEmpty};
use tf_provider::{AttributePath, Diagnostics, Resource};

use crate::ids::TenantId;
use crate::names::{NameKind, check_attribute};
use crate::problem::FieldMap;
use crate::resources::crud::{self, Found, Guard, Target};
use crate::resources::{
    PrivateState, attribute, attributes, etag_of, json_bool, json_i64, json_string, put_known,
    unknown_if_null,
};
use crate::shared_client::{SharedClient, configured};

const FIELDS: FieldMap = FieldMap {
    documents: &[],
    maps: &[],
};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TenantState {
    pub id: Value<String>,
    pub name: Value<String>,
    pub display_name: Value<String>,
    pub limits: Value<Limits>,
    pub allow_host_identity: Value<bool>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub max_apps: Value<i64>,
    pub max_instances: Value<i64>,
}

pub struct TenantResource {
    client: SharedClient,
}

impl TenantResource {
    pub fn new(client: SharedClient) -> Self {
        TenantResource { client }
    }
}

fn schema() -> Schema {
    let limits = attributes([
        (
            "max_apps",
            attribute(
                T::Number,
                Optional,
                "Most apps the tenant may have (unset: the platform's default, `--tenant-defaults`).",
            ),
        ),
        (
            "max_instances",
            attribute(
                T::Number,
                Optional,
                "Most app instances running at once across the tenant (unset: the platform's default, `--tenant-defaults`).",
            ),
        ),
    ]);
    Schema {
        version: 1,
        block: Block {
            version: 1,
            description: Description::markdown("A Shoal tenant (platform administrators only)."),
            attributes: attributes([
                (
                    "id",
                    attribute(
                        T::String,
                        Computed,
                        "`/tenants/{name}`; the id `terraform import` takes.",
                    ),
                ),
                (
                    "name",
                    attribute(
                        T::String,
                        Required,
                        "The tenant's name. Changing it replaces the tenant.",
                    ),
                ),
                (
                    "display_name",
                    attribute(
                        T::String,
                        OptionalComputed,
                        "Display name (server default: the name).",
                    ),
                ),
                (
                    "limits",
                    attribute(
                        T::AttributeSingle(limits),
                        Optional,
                        "The tenant's quotas (unset: the platform's defaults, `--tenant-defaults`).",
                    ),
                ),
                (
                    "allow_host_identity",
                    attribute(
                        T::Bool,
                        OptionalComputed,
                        "Identity-based connections of the tenant's apps act as the worker host's own identity (default false).",
                    ),
                ),
            ]),
            ..Default::default()
        },
    }
}

fn tenant_id(state: &TenantState, diags: &mut Diagnostics) -> Option<TenantId> {
    if let Value::Value(id) = &state.id {
        return TenantId::parse(id)
            .map_err(|m| diags.error("Invalid tenant id", m, AttributePath::new("id")))
            .ok();
    }
    match &state.name {
        Value::Value(name) => Some(TenantId {
            tenant: name.clone(),
        }),
        _ => {
            diags.root_error_short("The tenant's name is not known yet");
            None
        }
    }
}

fn body(planned: &TenantState) -> Json {
    let mut tenant = Map::new();
    put_known(&mut tenant, "displayName", &planned.display_name);
    if let Value::Value(limits) = &planned.limits {
        let mut l = Map::new();
        put_known(&mut l, "maxApps", &limits.max_apps);
        put_known(&mut l, "maxInstances", &limits.max_instances);
        tenant.insert("limits".into(), Json::Object(l));
    }
    put_known(
        &mut tenant,
        "allowHostIdentity",
        &planned.allow_host_identity,
    );
    Json::Object(tenant)
}

/// `limits` is Optional only (no limits means the platform's defaults), so the API's `{}` stays `null` in
/// state unless the configuration wrote an object (`prior`).
fn from_api(tenant: &Json, id: &TenantId, prior: &TenantState) -> TenantState {
    let limits = &tenant["limits"];
    let limits = Limits {
        max_apps: json_i64(limits, "maxApps"),
        max_instances: json_i64(limits, "maxInstances"),
    };
    let limits = if limits == Limits::default() && !prior.limits.is_value() {
        Value::Null
    } else {
        Value::Value(limits)
    };
    TenantState {
        id: Value::Value(id.to_string()),
        name: Value::Value(id.tenant.clone()),
        display_name: json_string(tenant, "displayName"),
        limits,
        allow_host_identity: json_bool(tenant, "allowHostIdentity"),
    }
}

/// The API's tenant at `id`.
fn target(id: &TenantId) -> Target<'static> {
    Target::new("tenant", id, id.api_path(), &FIELDS)
}

#[async_trait]
impl Resource for TenantResource {
    type State<'a> = TenantState;
    type PrivateState<'a> = PrivateState;
    type ProviderMetaState<'a> = ValueEmpty;

    fn schema(&self, _diags: &mut Diagnostics) -> Option<Schema> {
        Some(schema())
    }

    /// Names by the API's rules, at plan time and at their attribute.
    async fn validate<'a>(&self, diags: &mut Diagnostics, config: TenantState) -> Option<()> {
        check_attribute(diags, "name", NameKind::Tenant, &config.name);
        Some(())
    }

    async fn read<'a>(
        &self,
        diags: &mut Diagnostics,
        state: TenantState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(TenantState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = tenant_id(&state, diags)?;
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
        mut planned: TenantState,
        _config: TenantState,
        _meta: ValueEmpty,
    ) -> Option<(TenantState, PrivateState)> {
        planned.id = Value::Unknown;
        unknown_if_null(&mut planned.display_name);
        unknown_if_null(&mut planned.allow_host_identity);
        Some((planned, None))
    }

    async fn plan_update<'a>(
        &self,
        _diags: &mut Diagnostics,
        prior: TenantState,
        planned: TenantState,
        _config: TenantState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(TenantState, PrivateState, Vec<AttributePath>)> {
        let replace = if planned.name != prior.name {
            vec![AttributePath::new("name")]
        } else {
            vec![]
        };
        Some((planned, private, replace))
    }

    async fn plan_destroy<'a>(
        &self,
        _diags: &mut Diagnostics,
        _prior: TenantState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<PrivateState> {
        Some(private)
    }

    async fn create<'a>(
        &self,
        diags: &mut Diagnostics,
        planned: TenantState,
        _config: TenantState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(TenantState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = tenant_id(&planned, diags)?;
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
        prior: TenantState,
        planned: TenantState,
        _config: TenantState,
        private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<(TenantState, PrivateState)> {
        let client = configured(&self.client, diags)?;
        let id = tenant_id(&planned, diags)?;
        let precondition = etag_of(&private).map_or(Precondition::None, Precondition::Matches);
        let Some(entity) =
            crud::update(&client, diags, &target(&id), &body(&planned), &precondition).await
        else {
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
        prior: TenantState,
        _private: PrivateState,
        _meta: ValueEmpty,
    ) -> Option<()> {
        let client = configured(&self.client, diags)?;
        let id = tenant_id(&prior, diags)?;
        crud::destroy(&client, diags, &target(&id)).await
    }

    async fn import<'a>(
        &self,
        diags: &mut Diagnostics,
        id: String,
    ) -> Option<(TenantState, PrivateState)> {
        let parsed = TenantId::parse(&id).map(|id| TenantState {
            id: Value::Value(id.to_string()),
            ..TenantState::default()
        });
        crud::import(diags, "tenant", parsed)
    }
}
