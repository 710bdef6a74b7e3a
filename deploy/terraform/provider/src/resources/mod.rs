//! One module per resource type, as HashiCorp's scaffolding lays a provider out, and the
//! schema and state helpers they share.

pub mod crud;
pub mod function;
pub mod function_app;
pub mod principal;
pub mod role_assignment;
pub mod role_definition;
pub mod tenant;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use tf_provider::schema::{Attribute, AttributeConstraint, AttributeType, Description, Schema};
use tf_provider::value::Value;

/// What the provider keeps in a resource's private state: the `ETag` of the version Terraform
/// last read or wrote, sent as `If-Match` on the next update.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Private {
    pub etag: Option<String>,
}

/// Private state as the framework hands it over: nothing at all after an import.
pub type PrivateState = Option<Private>;

pub fn etag_of(private: &PrivateState) -> Option<String> {
    private.as_ref().and_then(|p| p.etag.clone())
}

pub fn attribute(
    attr_type: AttributeType,
    constraint: AttributeConstraint,
    description: &str,
) -> Attribute {
    Attribute {
        attr_type,
        description: Description::markdown(description),
        constraint,
        sensitive: false,
        deprecated: false,
    }
}

pub fn attributes<const N: usize>(list: [(&str, Attribute); N]) -> HashMap<String, Attribute> {
    list.into_iter()
        .map(|(name, attribute)| (name.to_owned(), attribute))
        .collect()
}

/// A known string from a JSON field (`null` or absent → `Null`).
pub fn json_string(value: &serde_json::Value, key: &str) -> Value<String> {
    match value.get(key).and_then(serde_json::Value::as_str) {
        Some(s) => Value::Value(s.to_owned()),
        None => Value::Null,
    }
}

pub fn json_i64(value: &serde_json::Value, key: &str) -> Value<i64> {
    match value.get(key).and_then(serde_json::Value::as_i64) {
        Some(n) => Value::Value(n),
        None => Value::Null,
    }
}

pub fn json_bool(value: &serde_json::Value, key: &str) -> Value<bool> {
    match value.get(key).and_then(serde_json::Value::as_bool) {
        Some(b) => Value::Value(b),
        None => Value::Null,
    }
}

/// `Null` becomes `Unknown`: what a plan says of an Optional+Computed attribute the
/// configuration leaves out on create (the server picks the value).
pub fn unknown_if_null<T>(value: &mut Value<T>) {
    if value.is_null() {
        *value = Value::Unknown;
    }
}

/// Puts `key: value` into `object` when the value is known (a plan's unknowns and nulls are
/// left for the server to default).
pub fn put_known<T: Serialize>(
    object: &mut serde_json::Map<String, serde_json::Value>,
    key: &str,
    value: &Value<T>,
) {
    if let Value::Value(v) = value
        && let Ok(json) = serde_json::to_value(v)
    {
        object.insert(key.to_owned(), json);
    }
}

/// A resource's schema turned into its data source's: the arguments in `required` look the
/// object up, everything else (nested attributes too) is read.
pub fn computed_copy(mut schema: Schema, required: &[&str]) -> Schema {
    fn all_computed(attributes: &mut HashMap<String, Attribute>) {
        for attribute in attributes.values_mut() {
            attribute.constraint = AttributeConstraint::Computed;
            if let AttributeType::AttributeSingle(inner) = &mut attribute.attr_type {
                all_computed(inner);
            }
        }
    }
    all_computed(&mut schema.block.attributes);
    for name in required {
        if let Some(attribute) = schema.block.attributes.get_mut(*name) {
            attribute.constraint = AttributeConstraint::Required;
        }
    }
    schema
}
