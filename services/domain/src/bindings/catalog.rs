//! Every binding type with the JSON Schema of its properties, for clients that build a
//! binding field by field (the dashboard's binding forms, editors).
//!
//! There is no second list to keep in step: each schema is generated from the very type serde
//! reads the binding into when `function.json` is validated (the built-in kinds' structs in
//! `properties`, a table kind's own type through [`BindingKind::properties`]). What serde
//! cannot say — a queue name's rules, a schedule's syntax, which properties go together — is
//! still checked by validation, and a client learns it from the 422's field paths.
//!
//! Each schema is self-contained: references to other schemas are written out in place, an
//! `allOf` of objects (a flattened group of settings) is merged into one object, and an
//! optional value's "or null" is left out (a property that may be absent is simply not
//! `required`), so a client reads `properties`, `required`, `type`, `enum`, `description`,
//! `default`, `pattern` and the bounds, and nothing else.

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

use crate::binding_kinds::{self, BindingKind, PropertiesSchema};

/// One binding type as a client sees it.
#[derive(Clone, Debug, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BindingType {
    /// The `function.json` `type`.
    #[serde(rename = "type")]
    #[schema(example = "queueTrigger")]
    pub type_name: &'static str,
    /// `in` for a trigger, `out` for an output.
    #[schema(example = "in")]
    pub direction: &'static str,
    /// Whether something in Shoal runs it: false for a trigger accepted and stored as written
    /// that gets no listener yet (`cosmosDBTrigger`).
    pub runs: bool,
    /// The JSON Schema of its properties besides `type` and `direction` (`name` among them),
    /// self-contained.
    #[schema(value_type = Object)]
    pub schema: Value,
}

/// Every binding type Shoal knows, in the order error messages list them.
pub fn binding_types() -> Vec<BindingType> {
    binding_kinds::all()
        .map(|kind: &'static dyn BindingKind| BindingType {
            type_name: kind.type_name(),
            direction: if kind.is_trigger() { "in" } else { "out" },
            runs: kind.runs(),
            schema: kind.properties().written_out(),
        })
        .collect()
}

impl PropertiesSchema {
    /// The schema with every reference written out in place and every `allOf` of objects
    /// merged.
    fn written_out(&self) -> Value {
        let components: Map<String, Value> = self
            .components
            .iter()
            .map(|(name, schema)| (name.clone(), to_value(schema)))
            .collect();
        inline(to_value(&self.schema), &components, 0)
    }
}

fn to_value(schema: &RefOr<Schema>) -> Value {
    serde_json::to_value(schema).unwrap_or(Value::Null)
}

/// How deep references are followed: binding properties nest a few levels at most, and a
/// schema that referred to itself would otherwise never end.
const MAX_DEPTH: usize = 8;

const COMPONENTS: &str = "#/components/schemas/";

fn inline(value: Value, components: &Map<String, Value>, depth: usize) -> Value {
    match value {
        Value::Object(mut object) => {
            if let Some(Value::String(reference)) = object.get("$ref")
                && let Some(name) = reference.strip_prefix(COMPONENTS)
                && depth < MAX_DEPTH
                && let Some(target) = components.get(name)
            {
                // Keep what the referring schema adds (a description, a default).
                let mut resolved = inline(target.clone(), components, depth + 1);
                object.remove("$ref");
                if let Value::Object(resolved) = &mut resolved {
                    resolved.extend(object);
                }
                return resolved;
            }
            let object: Map<String, Value> = object
                .into_iter()
                .map(|(key, value)| (key, inline(value, components, depth)))
                .collect();
            without_null(merge_all_of(object))
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| inline(item, components, depth))
                .collect(),
        ),
        other => other,
    }
}

/// `{"type": ["string", "null"]}` as `{"type": "string"}`, and `{"oneOf": [X, {"type":
/// "null"}]}` as X (with what the outer schema adds).
fn without_null(value: Value) -> Value {
    let Value::Object(mut object) = value else {
        return value;
    };
    if let Some(Value::Array(types)) = object.get("type") {
        let kept: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        if let [only] = kept.as_slice() {
            object.insert("type".into(), only.clone());
        }
    }
    let is_null = |part: &Value| part.get("type").is_some_and(|t| t == "null");
    if let Some(Value::Array(parts)) = object.get("oneOf")
        && parts.len() == 2
        && parts.iter().any(is_null)
        && let Some(Value::Object(kept)) = parts.iter().find(|p| !is_null(p)).cloned()
    {
        object.remove("oneOf");
        let mut kept = kept;
        // The property's own description says more than its type's.
        kept.extend(object);
        return Value::Object(kept);
    }
    Value::Object(object)
}

/// An `allOf` whose parts are objects becomes one object: their properties and required
/// names together (what `#[serde(flatten)]` means).
fn merge_all_of(mut object: Map<String, Value>) -> Value {
    let Some(Value::Array(parts)) = object.get("allOf") else {
        return Value::Object(object);
    };
    let all_objects = parts
        .iter()
        .all(|part| part.get("properties").is_some() || part.get("type") == Some(&"object".into()));
    if !all_objects {
        return Value::Object(object);
    }
    let Some(Value::Array(parts)) = object.remove("allOf") else {
        return Value::Object(object);
    };
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    for part in parts {
        if let Some(Value::Object(more)) = part.get("properties") {
            properties.extend(more.clone());
        }
        if let Some(Value::Array(names)) = part.get("required") {
            required.extend(names.iter().cloned());
        }
    }
    object.insert("type".into(), "object".into());
    object.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        object.insert("required".into(), Value::Array(required));
    }
    Value::Object(object)
}

#[cfg(test)]
mod tests;
