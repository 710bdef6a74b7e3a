//! `httpTrigger` and the `http` output: the function is invoked by a caller through Shoal's
//! webhook ingress and answers it, as an Azure Functions HTTP function answers its request
//! (azure-functions-host, `src/WebJobs.Script/Binding/Http/HttpTriggerAttributeBindingProvider.cs`
//! reads `authLevel`, `methods` and `route`).
//!
//! Nothing listens for it: the ingress (`api/src/webhooks/`) finds the function by its
//! trigger. It reads from no source and scales on no backlog, and the caller gets the handler's
//! answer, so a retry policy, a circuit breaker and a concurrency cap have nothing to act on
//! ([`BindingKind::answers_its_caller`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::binding_kinds::{BindingKind, DataType, KindBinding, PropertiesSchema, read_typed};
use crate::names::BindingName;
use crate::validation::{Problems, join_path};

/// The trigger's `type`.
pub const TRIGGER_TYPE: &str = "httpTrigger";
/// The output's `type`.
pub const OUTPUT_TYPE: &str = "http";

pub struct Trigger;
pub struct Output;

pub const TRIGGER: Trigger = Trigger;
pub const OUTPUT: Output = Output;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthLevel {
    Anonymous,
    Function,
    Admin,
}

/// `httpTrigger`'s properties.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TriggerBinding {
    pub name: BindingName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_level: Option<AuthLevel>,
    /// Allowed HTTP methods (any case); absent means all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub methods: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_type: Option<DataType>,
}

/// `http` (out): the handler's HTTP response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct OutputBinding {
    pub name: BindingName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_type: Option<DataType>,
}

/// The methods a trigger may allow.
const METHODS: [&str; 8] = [
    "GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "TRACE",
];

impl BindingKind for Trigger {
    fn type_name(&self) -> &'static str {
        TRIGGER_TYPE
    }

    fn is_trigger(&self) -> bool {
        true
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<TriggerBinding>()
    }

    /// Each method once, of the eight HTTP/1.1 defines (any case); a route without a query,
    /// a fragment or control characters.
    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        let b: TriggerBinding = read_typed(properties, prefix, problems)?;
        let mut seen = Vec::new();
        for (i, method) in b.methods.iter().flatten().enumerate() {
            let upper = method.to_ascii_uppercase();
            let path = join_path(&join_path(prefix, "methods"), &format!("[{i}]"));
            if !METHODS.contains(&upper.as_str()) {
                problems.push(path, format!("must be one of {}", METHODS.join(", ")));
            } else if seen.contains(&upper) {
                problems.push(path, format!("duplicate method {upper}"));
            } else {
                seen.push(upper);
            }
        }
        if let Some(route) = &b.route
            && route
                .chars()
                .any(|c| c.is_control() || c == '?' || c == '#')
        {
            problems.push(
                join_path(prefix, "route"),
                "must not contain '?', '#' or control characters",
            );
        }
        Some(b.name)
    }

    fn answers_its_caller(&self) -> bool {
        true
    }

    fn failed_messages(&self) -> &'static str {
        "its caller gets the handler's answer"
    }
}

impl BindingKind for Output {
    fn type_name(&self) -> &'static str {
        OUTPUT_TYPE
    }

    fn is_trigger(&self) -> bool {
        false
    }

    fn properties(&self) -> PropertiesSchema {
        PropertiesSchema::of::<OutputBinding>()
    }

    fn check(
        &self,
        properties: &Map<String, Value>,
        prefix: &str,
        problems: &mut Problems,
    ) -> Option<BindingName> {
        read_typed::<OutputBinding>(properties, prefix, problems).map(|b| b.name)
    }
}

/// The HTTP trigger of `binding`, when it is one.
pub fn trigger_of(binding: &KindBinding) -> Option<Result<TriggerBinding, String>> {
    (binding.kind().type_name() == TRIGGER_TYPE).then(|| binding.typed())
}

/// Whether `binding` is an `http` output.
pub fn is_output(binding: &KindBinding) -> bool {
    binding.kind().type_name() == OUTPUT_TYPE
}
