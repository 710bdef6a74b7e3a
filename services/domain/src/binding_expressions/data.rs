//! One invocation's binding data, read from the request the handler was sent: its `Metadata`
//! (the trigger's binding data and `sys`, as Azure hands them to a custom handler) and, when
//! the trigger value is text holding a JSON object, that object's top-level properties.
//!
//! Azure's script host adds those properties over the trigger's own data (arrays left out,
//! objects kept for dotted paths; `azure-functions-host`, `src/WebJobs.Script/Utility.cs`,
//! `ApplyBindingData`), and looks names up case-insensitively (`BindingTemplate.Bind` with
//! `ignoreCase`, `BindingTemplateToken.GetProperty` on a `JObject`). Shoal does the same, with
//! one difference: a value that is missing, `null`, an object or an array fails the invocation
//! with the reason, where Azure would write an empty string into the name.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::format::{self, DEFAULT_DATE_TIME};
use super::{Builtin, Expression};

/// The data an invocation's expressions are resolved from.
pub struct BindingData<'a> {
    metadata: Option<&'a Map<String, Value>>,
    /// The trigger value's JSON properties, when it is a JSON object.
    body: Option<Map<String, Value>>,
    now: DateTime<Utc>,
    new_guid: fn() -> Uuid,
}

impl<'a> BindingData<'a> {
    /// The data of the request `{"Data": {<trigger>: …}, "Metadata": {…}}` sent for an
    /// invocation of a function whose trigger binding is named `trigger`. `now` is the time
    /// `{DateTime}` stands for.
    pub fn from_request(request: &'a Value, trigger: &str, now: DateTime<Utc>) -> Self {
        let body = request
            .get("Data")
            .and_then(Value::as_object)
            .and_then(|data| {
                data.get(trigger).or_else(|| {
                    data.iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(trigger))
                        .map(|(_, v)| v)
                })
            })
            .and_then(json_properties);
        BindingData {
            metadata: request.get("Metadata").and_then(Value::as_object),
            body,
            now,
            new_guid: Uuid::new_v4,
        }
    }

    /// The same data with a fixed GUID source, for tests.
    pub fn with_guids(mut self, new_guid: fn() -> Uuid) -> Self {
        self.new_guid = new_guid;
        self
    }

    /// The text one expression stands for.
    pub fn evaluate(&self, expression: &Expression) -> Result<String, String> {
        let format = expression.format();
        match expression.builtin() {
            Some(Builtin::RandGuid) => return format::guid((self.new_guid)(), format),
            // Binding data named DateTime wins over the built-in, as in Azure.
            Some(Builtin::DateTime) if self.lookup("DateTime").is_none() => {
                return format::date_time(self.now, format.unwrap_or(DEFAULT_DATE_TIME));
            }
            _ => {}
        }
        let (first, rest) = expression
            .path()
            .split_first()
            .ok_or_else(|| "an empty expression".to_owned())?;
        let Some((mut current, from_metadata)) = self.lookup(first) else {
            return Err(format!(
                "{expression}: the trigger's binding data has no {first} for this message (and the message is not a JSON object with that property)"
            ));
        };
        for (depth, part) in rest.iter().enumerate() {
            let walked = expression.path()[..=depth].join(".");
            current = match current {
                Value::Object(map) => property(map, part)
                    .ok_or_else(|| format!("{expression}: {walked} has no property {part}"))?,
                _ => return Err(format!("{expression}: {walked} is not an object")),
            };
        }
        let is_sys_guid = expression.path().len() == 2
            && first.eq_ignore_ascii_case("sys")
            && expression.path()[1].eq_ignore_ascii_case("RandGuid");
        text(current, format, from_metadata, is_sys_guid)
            .map_err(|reason| format!("{expression}: {reason}"))
    }

    /// A name's value and whether it came from the trigger's metadata (not the JSON body).
    /// `sys` is always the host's.
    fn lookup(&self, name: &str) -> Option<(&Value, bool)> {
        if !name.eq_ignore_ascii_case("sys")
            && let Some(value) = self.body.as_ref().and_then(|b| property(b, name))
        {
            return Some((value, false));
        }
        self.metadata
            .and_then(|m| property(m, name))
            .map(|value| (value, true))
    }
}

/// Exact name first, then case-insensitively.
fn property<'m>(map: &'m Map<String, Value>, name: &str) -> Option<&'m Value> {
    map.get(name).or_else(|| {
        map.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// The top-level properties of a trigger value that is text holding a JSON object, without
/// arrays and nulls (`ApplyBindingData` skips both).
fn json_properties(value: &Value) -> Option<Map<String, Value>> {
    let text = value.as_str()?.trim();
    if !(text.starts_with('{') && text.ends_with('}')) {
        return None;
    }
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    Some(
        map.into_iter()
            .filter(|(_, v)| !v.is_null() && !v.is_array())
            .collect(),
    )
}

/// A value as text for a name. The trigger's date-times (RFC 3339 strings in `Metadata`) are
/// date-times, formatted as Azure formats a `DateTime` (by default `yyyy-MM-ddTHH-mm-ssK`);
/// `sys.RandGuid` is a GUID; a JSON body's strings are text, as Azure reads them.
fn text(
    value: &Value,
    format: Option<&str>,
    from_metadata: bool,
    is_guid: bool,
) -> Result<String, String> {
    match value {
        Value::String(s) => {
            if is_guid && let Ok(guid) = Uuid::parse_str(s) {
                return format::guid(guid, format);
            }
            if from_metadata && let Ok(t) = DateTime::parse_from_rfc3339(s) {
                return format::date_time(
                    t.with_timezone(&Utc),
                    format.unwrap_or(DEFAULT_DATE_TIME),
                );
            }
            if format.is_some() {
                return Err("a format applies only to date-times and GUIDs".into());
            }
            Ok(s.clone())
        }
        Value::Number(n) if format.is_none() => Ok(n.to_string()),
        Value::Bool(b) if format.is_none() => Ok(if *b { "True" } else { "False" }.to_owned()),
        Value::Number(_) | Value::Bool(_) => {
            Err("a format applies only to date-times and GUIDs".into())
        }
        Value::Null => Err("has no value for this message".into()),
        Value::Object(_) => Err("is an object; name one of its properties with a dot".into()),
        Value::Array(_) => Err("is an array, which cannot be part of a name".into()),
    }
}
