//! `cosmosDBTrigger`: the change feed of a Cosmos DB container, in the binding shape of Azure's
//! Cosmos DB extension (azure-webjobs-sdk-extensions,
//! `src/WebJobs.Extensions.CosmosDB/Trigger/CosmosDBTriggerAttribute.cs`).
//!
//! Shoal accepts and stores it as written, so a project that has one imports whole, but no
//! listener reads a change feed yet ([`BindingKind::runs`] is false): the function is never
//! invoked, gets no instances, and diagnostics say so. What the table knows of it already is
//! what its listener will need: the checks, the connection settings, and the rule Azure's
//! `CosmosDBTargetScaler` scales on (pending changes over `maxItemsPerInvocation`).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::binding_kinds::{
    BindingKind, DataType, KindBinding, MetricKind, PropertiesSchema, check_setting_name,
    read_typed,
};
use crate::names::BindingName;
use crate::validation::{Problems, join_path};

/// The trigger's `type`.
pub const TRIGGER_TYPE: &str = "cosmosDBTrigger";

/// Azure's default `maxItemsPerInvocation` (the target scaler's per-instance figure).
pub const DEFAULT_MAX_ITEMS_PER_INVOCATION: u32 = 100;

pub struct Trigger;

pub const TRIGGER: Trigger = Trigger;

/// `cosmosDBTrigger`'s properties.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TriggerBinding {
    pub name: BindingName,
    pub database_name: String,
    pub container_name: String,
    /// The app setting (or prefix of settings) naming the account.
    pub connection: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_connection: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_database_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_container_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_container_prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_lease_container_if_not_exists: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leases_container_throughput: Option<u32>,
    /// Most changes per invocation; Azure's default is 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items_per_invocation: Option<u32>,
    /// Milliseconds between polls of an idle change feed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feed_poll_delay: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_from_beginning: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_from_time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preferred_locations: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_type: Option<DataType>,
}

impl BindingKind for Trigger {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn is_trigger(&self) -> bool {
        true
    }

    fn runs(&self) -> bool {
        false
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<TriggerBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: TriggerBinding = read_typed(properties, prefix, problems)?;
        let path = |field: &str| join_path(prefix, field);
        for (field, value) in [
            ("databaseName", &b.database_name),
            ("containerName", &b.container_name),
        ] {
            if value.trim().is_empty() {
                problems.push(path(field), "must not be empty");
            }
        }
        if b.connection.is_empty() {
            problems.push(path("connection"), "must not be empty");
        }
        if b.max_items_per_invocation == Some(0) {
            problems.push(path("maxItemsPerInvocation"), "must be at least 1");
        }
        if let Some(lease) = &b.lease_connection {
            check_setting_name(problems, &path("leaseConnection"), lease);
        }
        Some(b.name)
    }

    fn connection<'a>(
        &self,
        properties: &'a Map<String, Value>,
    ) -> Option<(&'static str, &'a str)> {
        let setting = properties.get("connection")?.as_str()?;
        Some(("connection", setting))
    }

    fn metric(&self) -> MetricKind {
        MetricKind::PendingChanges
    }

    /// `maxItemsPerInvocation`, as `CosmosDBTargetScaler` divides the pending changes by it.
    fn per_instance(&self, binding: &KindBinding, _section: Option<&Value>) -> Option<u32> {
        let b = binding.typed::<TriggerBinding>().ok()?;
        Some(
            b.max_items_per_invocation
                .unwrap_or(DEFAULT_MAX_ITEMS_PER_INVOCATION),
        )
    }

    /// A failed invocation's changes are not read again: Azure's listener reports the error
    /// and lets the change feed processor checkpoint past them
    /// (`Trigger/CosmosDBTriggerListener.cs`, `ProcessChangesAsync`).
    fn failed_messages(&self) -> &'static str {
        "its retry policy, then the change feed moves past them, as in Azure Functions"
    }
}
