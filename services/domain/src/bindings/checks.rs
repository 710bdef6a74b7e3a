//! Per-type reading of binding properties and the checks serde cannot express.

use serde_json::{Map, Value};

use super::{Binding, known_type_names};
use crate::binding_expressions::Template;
use crate::binding_kinds;
use crate::validation::{Problems, join_path};

/// The target names of an output binding that may hold binding expressions, by property.
pub(super) fn output_templates(binding: &Binding) -> Vec<(&'static str, Template)> {
    binding
        .kind()
        .output_names(binding.properties())
        .into_iter()
        .filter_map(|(field, name)| Template::parse(name).ok().map(|t| (field, t)))
        .collect()
}

pub(super) fn unknown_type_message(written: &str) -> String {
    if let Some(known) = known_type_names().find(|k| k.eq_ignore_ascii_case(written)) {
        return format!("unknown binding type \"{written}\", did you mean \"{known}\"?");
    }
    let known: Vec<&str> = known_type_names().collect();
    format!(
        "unknown binding type \"{written}\"; known types: {}",
        known.join(", ")
    )
}

/// Reads the properties of a binding of type `t` and applies the checks serde cannot express.
pub(super) fn read_properties(
    t: &str,
    properties: Map<String, Value>,
    prefix: &str,
    problems: &mut Problems,
) -> Option<Binding> {
    let kind = binding_kinds::find(t)?;
    let binding = Binding::read(kind, properties, prefix, problems)?;
    // A kind's connection property may have its own name (`connectionStringSetting`).
    if let Some((field, setting)) = kind.connection(binding.properties()) {
        check_connection(problems, &join_path(prefix, field), Some(setting));
    }
    Some(binding)
}

/// `connection` names an app setting or a prefix of settings, so it must be a valid setting name.
fn check_connection(problems: &mut Problems, path: &str, connection: Option<&str>) {
    if let Some(connection) = connection {
        binding_kinds::check_setting_name(problems, path, connection);
    }
}
