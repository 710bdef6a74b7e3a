//! A function's `bindings`: the `function.json` array Azure Functions users already write.
//!
//! Each element is dispatched on its `type` to its kind's descriptor (`crate::binding_kinds`),
//! which reads the remaining properties into the kind's struct with unknown properties
//! rejected. (serde's internally tagged enums would do the dispatch too, but they buffer the
//! input and lose the path of the failing property.) Problems in different bindings are all
//! reported at once, each with its path.

mod catalog;
mod checks;
mod properties;
mod trigger_data;

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::names::BindingName;
use crate::service_bus_entity::settings::EntitySettings;
use crate::validation::{Problems, ValidationError, join_path};

pub use crate::binding_kinds::service_bus::{ServiceBusOutputBinding, ServiceBusTriggerBinding};
pub use crate::binding_kinds::storage_queue::{
    OutputQueueName, QueueOutputBinding, QueueTriggerBinding, resolved_queue_name,
};
pub use crate::binding_kinds::stream::{
    EventHubOutputBinding, EventHubTriggerBinding, KafkaClientSettings, KafkaOutputBinding,
    KafkaSsl, KafkaTriggerBinding,
};
pub use catalog::{BindingType, binding_types};
pub use properties::{Cardinality, DataType, Direction};
pub use trigger_data::{DataShape, check_for_trigger};

use crate::binding_kinds;

/// One element of `bindings`: a binding of a kind of [`crate::binding_kinds`], its properties
/// kept as written (checked by its kind when read).
pub use crate::binding_kinds::KindBinding as Binding;

/// The trigger types something in Shoal runs, in the order they are listed.
pub fn triggers_with_runner() -> impl Iterator<Item = &'static str> {
    binding_kinds::all()
        .filter(|k| k.is_trigger() && k.runs())
        .map(|k| k.type_name())
}

/// Every binding type Shoal knows, in the order error messages list them (the client's project
/// import asks it which of a project's bindings map).
pub fn known_type_names() -> impl Iterator<Item = &'static str> {
    binding_kinds::all().map(|k| k.type_name())
}

impl Binding {
    pub fn type_name(&self) -> &'static str {
        self.kind().type_name()
    }

    /// Triggers are `in`, outputs `out`; no known type is `inout`.
    pub fn direction(&self) -> Direction {
        if self.is_trigger() {
            Direction::In
        } else {
            Direction::Out
        }
    }

    pub fn is_trigger(&self) -> bool {
        self.kind().is_trigger()
    }

    /// Whether something in Shoal runs this trigger (see [`triggers_with_runner`]); false for
    /// outputs.
    pub fn has_runner(&self) -> bool {
        self.kind().is_trigger() && self.kind().runs()
    }

    /// Whether it is a trigger whose caller waits for the handler's answer (`httpTrigger`; see
    /// [`binding_kinds::BindingKind::answers_its_caller`]).
    pub fn answers_its_caller(&self) -> bool {
        self.kind().answers_its_caller()
    }

    /// Its `dataType`, which every kind may carry (checked when the binding was read).
    pub fn data_type(&self) -> Option<DataType> {
        let written = self.properties().get("dataType")?;
        serde_json::from_value(written.clone()).ok()
    }

    /// The property naming its connection (`connection`, or a kind's own such as
    /// `connectionStringSetting`), `None` when absent or empty (the type's default
    /// connection).
    pub fn connection(&self) -> Option<&str> {
        let connection = self.kind().connection(self.properties()).map(|(_, v)| v);
        connection.filter(|c| !c.is_empty())
    }
}

fn is_trigger_type(type_name: &str) -> bool {
    binding_kinds::find(type_name).is_some_and(|k| k.is_trigger())
}

/// Validate a bindings array: every element an object with a known `type`, a `direction`
/// matching it (triggers `in`, outputs `out`), a valid `name`, the type's required properties
/// and no unknown ones; binding names unique (case-insensitively, as Azure compares them);
/// exactly one trigger; and output names' binding expressions ones the trigger supplies (see
/// [`check_for_trigger`]). Every problem found is reported.
pub fn parse_bindings(value: &Value, prefix: &str) -> Result<Vec<Binding>, ValidationError> {
    let Some(items) = value.as_array() else {
        return Err(ValidationError::single(prefix, "expected an array"));
    };
    let mut problems = Problems::new();
    let mut bindings = Vec::with_capacity(items.len());
    let mut triggers = Vec::new();
    let mut names: HashMap<String, usize> = HashMap::new();
    // Where each parsed binding sits in `items` (invalid ones are left out of `bindings`).
    let mut positions = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let path = join_path(prefix, &format!("[{index}]"));
        if let Some(type_name) = item.get("type").and_then(Value::as_str)
            && is_trigger_type(type_name)
        {
            triggers.push(type_name);
        }
        let binding = match parse_binding(item, &path) {
            Ok(binding) => binding,
            Err(err) => {
                problems.absorb(err);
                continue;
            }
        };
        let name_path = join_path(&path, "name");
        if let Some(first) = names.insert(binding.name().as_str().to_ascii_lowercase(), index) {
            problems.push(
                name_path,
                format!(
                    "duplicate binding name \"{}\" (also used by {prefix}[{first}]; names are case-insensitive)",
                    binding.name()
                ),
            );
        } else if binding.name().is_return() && binding.is_trigger() {
            problems.push(name_path, "\"$return\" is only allowed on output bindings");
        }
        bindings.push(binding);
        positions.push(index);
    }
    if let Some(trigger) = bindings.iter().find(|b| b.is_trigger()) {
        for (index, binding) in bindings.iter().enumerate() {
            for (field, template) in checks::output_templates(binding) {
                if let Err(message) = trigger_data::check_for_trigger(&template, trigger) {
                    let at = join_path(prefix, &format!("[{}]", positions[index]));
                    problems.push(join_path(&at, field), message);
                }
            }
        }
    }
    if triggers.len() != 1 {
        let found = if triggers.is_empty() {
            "none".to_owned()
        } else {
            format!("{} ({})", triggers.len(), triggers.join(", "))
        };
        problems.push(
            prefix,
            format!("must contain exactly one trigger binding, found {found}"),
        );
    }
    problems.finish()?;
    Ok(bindings)
}

/// Validate one binding object; see [`parse_bindings`]. `prefix` is the element's path.
pub fn parse_binding(value: &Value, prefix: &str) -> Result<Binding, ValidationError> {
    let Some(object) = value.as_object() else {
        return Err(ValidationError::single(prefix, "expected an object"));
    };
    let mut problems = Problems::new();
    let type_path = join_path(prefix, "type");
    let type_name = match object.get("type") {
        None | Some(Value::Null) => {
            problems.push(type_path, "is required");
            None
        }
        Some(Value::String(t)) => match known_type_names().find(|known| known == t) {
            Some(known) => Some(known),
            None => {
                problems.push(type_path, checks::unknown_type_message(t));
                None
            }
        },
        Some(_) => {
            problems.push(type_path, "expected a string");
            None
        }
    };
    let direction_path = join_path(prefix, "direction");
    match (object.get("direction"), type_name) {
        (None | Some(Value::Null), _) => problems.push(direction_path, "is required"),
        (Some(Value::String(d)), Some(t)) => {
            let want = if is_trigger_type(t) { "in" } else { "out" };
            if d != want {
                problems.push(direction_path, format!("must be \"{want}\" for {t}"));
            }
        }
        (Some(Value::String(_)), None) => {}
        (Some(_), _) => problems.push(direction_path, "expected a string"),
    }
    let mut properties = object.clone();
    properties.remove("type");
    properties.remove("direction");
    let binding = match type_name {
        Some(t) => checks::read_properties(t, properties, prefix, &mut problems),
        None => None,
    };
    problems.finish()?;
    binding.ok_or_else(|| ValidationError::single(prefix, "is not a valid binding"))
}

/// Writes the binding back in `function.json` shape: `type`, `direction`, then its properties.
impl Serialize for Binding {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'a> {
            #[serde(rename = "type")]
            type_name: &'static str,
            direction: Direction,
            /// The properties as written, `name` among them.
            #[serde(flatten)]
            properties: &'a Map<String, Value>,
        }
        Tagged {
            type_name: self.type_name(),
            direction: self.direction(),
            properties: self.properties(),
        }
        .serialize(serializer)
    }
}

/// Reads a binding stored in `function.json` shape (e.g. from the database) with the same
/// validation as [`parse_binding`].
impl<'de> Deserialize<'de> for Binding {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        parse_binding(&value, "").map_err(serde::de::Error::custom)
    }
}

/// A loose schema: the common properties typed, the type-specific ones allowed.
impl PartialSchema for Binding {
    fn schema() -> RefOr<Schema> {
        let string = || ObjectBuilder::new().schema_type(Type::String);
        let known: Vec<&str> = known_type_names().collect();
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "One function.json binding: `type`, `direction`, `name` and the type's own properties \
                 (e.g. `queueName`, `connection`, `topicName`, `subscriptionName`, `isSessionsEnabled`, `isBatched`). \
                 A `serviceBusTrigger` may declare its queue's or subscription's settings in `entity`. \
                 The target name of a `queue`, `serviceBus` or `kafka` output (`queueName`, `topicName`, `topic`) may hold \
                 binding expressions such as `out-{Id}` or `{region}-%Env%`, resolved for each message from the trigger's \
                 binding data (its metadata, `sys`, `{rand-guid}`, `{DateTime}`, and a JSON body's properties); a trigger's \
                 own names may not. A `timerTrigger` has a `schedule` (an NCRONTAB expression with seconds such as \
                 `0 30 9 * * 1-5`, or a TimeSpan such as `00:05:00`), read in the app's `WEBSITE_TIME_ZONE`, and may \
                 set `runOnStartup` and `useMonitor`.",
            ))
            .property("type", string().enum_values(Some(known)))
            .property("direction", string().enum_values(Some(["in", "out"])))
            .property("name", BindingName::schema())
            .property("dataType", string().enum_values(Some(["string", "binary", "stream"])))
            .property("connection", string())
            .property("entity", EntitySettings::schema())
            .required("type")
            .required("direction")
            .required("name")
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .examples([serde_json::json!({
                "type": "queueTrigger", "direction": "in", "name": "order",
                "queueName": "orders", "connection": "OrdersStorage"
            })])
            .into()
    }
}

impl ToSchema for Binding {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Binding")
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod timer_tests;
