//! Validation errors that carry the path of the offending field.
//!
//! The API answers every bad input with a 422 listing *all* problems it found, each with a path
//! in the same dotted camelCase form the request used (`hostConfig.extensions.queues.batchSize`,
//! `bindings[0].queueName`, `appSettings.MySetting`). Collecting problems instead of stopping at
//! the first one saves Terraform and dashboard users a round trip per mistake.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_path_to_error::Segment;
use utoipa::ToSchema;

/// One invalid field: where it is and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct FieldError {
    /// Dotted camelCase path with array indices in brackets, e.g. `bindings[0].queueName`.
    pub path: String,
    /// Short, human, lower-case message, e.g. `must be between 1 and 32`.
    pub message: String,
}

/// Collects several field errors so one response reports them all.
#[derive(Debug, Default)]
pub struct Problems {
    errors: Vec<FieldError>,
}

impl Problems {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(FieldError {
            path: path.into(),
            message: message.into(),
        });
    }

    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// Appends another error's fields, e.g. from a nested parser that already prefixed its paths.
    pub fn absorb(&mut self, err: ValidationError) {
        self.errors.extend(err.errors);
    }

    /// `Err` when anything was pushed, so a validator can end with `problems.finish()?`.
    pub fn finish(self) -> Result<(), ValidationError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ValidationError {
                errors: self.errors,
            })
        }
    }
}

/// One or more invalid fields; the API turns this into a 422 problem+json with `errors`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("validation failed: {}", .errors.iter().map(|e| format!("{}: {}", e.path, e.message)).collect::<Vec<_>>().join("; "))]
pub struct ValidationError {
    pub errors: Vec<FieldError>,
}

impl ValidationError {
    pub fn single(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            errors: vec![FieldError {
                path: path.into(),
                message: message.into(),
            }],
        }
    }
}

/// Join a path prefix and a child: `join_path("hostConfig", "extensions") == "hostConfig.extensions"`,
/// `join_path("bindings", "[0]") == "bindings[0]"`, `join_path("", "x") == "x"`.
pub fn join_path(prefix: &str, child: &str) -> String {
    if prefix.is_empty() {
        child.to_owned()
    } else if child.is_empty() {
        prefix.to_owned()
    } else if child.starts_with('[') {
        format!("{prefix}{child}")
    } else {
        format!("{prefix}.{child}")
    }
}

/// Deserialize `value` into `T`; a type error, unknown field or missing field becomes a
/// [`ValidationError`] whose path is `prefix` joined with the failing field's path.
///
/// serde stops at the first error, so this reports one problem; callers that want every range
/// error at once deserialize into a loosely typed "as written" struct first and check ranges
/// themselves with [`Problems`]. Note that serde lets a struct be written as a JSON array of its
/// fields; use [`object_from_json`] where only an object may stand.
pub fn from_json<T: DeserializeOwned>(
    value: serde_json::Value,
    prefix: &str,
) -> Result<T, ValidationError> {
    deserialize_at(value, prefix)
}

/// [`from_json`] reading an object in place, without copying it first.
pub fn from_json_object<T: DeserializeOwned>(
    object: &serde_json::Map<String, serde_json::Value>,
    prefix: &str,
) -> Result<T, ValidationError> {
    deserialize_at(object, prefix)
}

fn deserialize_at<'de, D, T>(deserializer: D, prefix: &str) -> Result<T, ValidationError>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    serde_path_to_error::deserialize(deserializer).map_err(|err| {
        let mut path = prefix.to_owned();
        for segment in err.path().iter() {
            match segment {
                Segment::Seq { index } => path = join_path(&path, &format!("[{index}]")),
                Segment::Map { key } => path = join_path(&path, key),
                Segment::Enum { variant } => path = join_path(&path, variant),
                Segment::Unknown => {}
            }
        }
        let (child, message) = humanize(&err.inner().to_string());
        // serde_path_to_error already ends the path with an unknown field's key, but stops at
        // the parent object for a missing one.
        if let Some(child) = child {
            let last = err.path().iter().next_back();
            if !matches!(last, Some(Segment::Map { key }) if *key == child) {
                path = join_path(&path, &child);
            }
        }
        ValidationError::single(path, message)
    })
}

/// Like [`from_json`] but insists on a JSON object, so `[16, 8]` is not silently read as a
/// struct's fields in order.
pub fn object_from_json<T: DeserializeOwned>(
    value: serde_json::Value,
    prefix: &str,
) -> Result<T, ValidationError> {
    if value.is_object() {
        from_json(value, prefix)
    } else {
        Err(ValidationError::single(prefix, "expected an object"))
    }
}

/// A request body into a parser's "as written" struct: it must be a JSON object.
pub fn body_from_json<T: DeserializeOwned>(body: &serde_json::Value) -> Result<T, ValidationError> {
    if !body.is_object() {
        return Err(ValidationError::single(
            "",
            "the body must be a JSON object",
        ));
    }
    from_json(body.clone(), "")
}

/// The opening every resource parser shares: the body must be a JSON object, deserializes
/// into the parser's "as written" struct, and a `name` written in it must be the one in the
/// path (Azure lets the body repeat it or leave it out). Returns the struct and the problems
/// found so far, for the parser to add to.
pub fn named_body<T: DeserializeOwned>(
    name: &str,
    body: &serde_json::Value,
    written_name: impl FnOnce(&T) -> Option<&serde_json::Value>,
) -> Result<(T, Problems), ValidationError> {
    let parsed: T = body_from_json(body)?;
    let mut problems = Problems::new();
    if let Some(written) = written_name(&parsed)
        && written.as_str() != Some(name)
    {
        problems.push(
            "name",
            format!("must match the name in the path ({name}) or be omitted"),
        );
    }
    Ok((parsed, problems))
}

/// Rewrites serde's messages (``invalid type: string "x", expected u32``) into ours
/// (`expected an integer`). Returns the field name to append to the path for unknown and
/// missing fields, whose path serde reports as the parent object.
fn humanize(raw: &str) -> (Option<String>, String) {
    if let Some(field) = backticked_after(raw, "unknown field `") {
        return (Some(field.to_owned()), format!("unknown field \"{field}\""));
    }
    if let Some(field) = backticked_after(raw, "missing field `") {
        return (Some(field.to_owned()), "is required".to_owned());
    }
    if let Some(variant) = backticked_after(raw, "unknown variant `") {
        let allowed = raw
            .split_once("expected ")
            .map(|(_, rest)| rest.replace('`', "\""))
            .unwrap_or_default();
        return (
            None,
            format!("unknown value \"{variant}\", expected {allowed}"),
        );
    }
    if (raw.starts_with("invalid type: ") || raw.starts_with("invalid value: "))
        && let Some((_, expected)) = raw.rsplit_once(", expected ")
    {
        return (None, format!("expected {}", describe_expected(expected)));
    }
    (None, raw.to_owned())
}

fn backticked_after<'a>(raw: &'a str, marker: &str) -> Option<&'a str> {
    let rest = raw.strip_prefix(marker)?;
    rest.split_once('`').map(|(name, _)| name)
}

/// Maps serde's "expected" phrases to the JSON vocabulary API users know.
fn describe_expected(expected: &str) -> String {
    let integer = [
        "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize",
    ];
    if integer.contains(&expected) {
        "an integer".to_owned()
    } else if expected == "f32" || expected == "f64" {
        "a number".to_owned()
    } else if expected.starts_with("struct ") || expected == "a map" {
        "an object".to_owned()
    } else if expected == "a sequence" || expected.starts_with("a sequence") {
        "an array".to_owned()
    } else if expected == "string or map" || expected.starts_with("enum ") {
        "a string".to_owned()
    } else {
        expected.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Inner {
        batch_size: u32,
        #[serde(default)]
        label: Option<String>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Outer {
        items: Vec<Inner>,
        #[serde(default)]
        flag: bool,
    }

    fn only_error(err: ValidationError) -> (String, String) {
        assert_eq!(err.errors.len(), 1, "{err:?}");
        let e = &err.errors[0];
        (e.path.clone(), e.message.clone())
    }

    #[test]
    fn join_path_uses_dots_and_brackets() {
        let cases = [
            ("hostConfig", "extensions", "hostConfig.extensions"),
            ("bindings", "[0]", "bindings[0]"),
            ("", "x", "x"),
            ("x", "", "x"),
            ("bindings[0]", "queueName", "bindings[0].queueName"),
        ];
        for (prefix, child, want) in cases {
            assert_eq!(join_path(prefix, child), want);
        }
    }

    #[test]
    fn wrong_type_reports_path_and_expected_kind() {
        let err = from_json::<Outer>(json!({"items": [{"batchSize": "x"}]}), "spec").unwrap_err();
        assert_eq!(
            only_error(err),
            (
                "spec.items[0].batchSize".into(),
                "expected an integer".into()
            )
        );
    }

    #[test]
    fn unknown_field_is_reported_at_its_own_path() {
        let err = from_json::<Outer>(json!({"items": [], "foo": 1}), "spec").unwrap_err();
        assert_eq!(
            only_error(err),
            ("spec.foo".into(), "unknown field \"foo\"".into())
        );
        let err =
            from_json::<Outer>(json!({"items": [{"batchSize": 1, "bar": 2}]}), "").unwrap_err();
        assert_eq!(
            only_error(err),
            ("items[0].bar".into(), "unknown field \"bar\"".into())
        );
    }

    #[test]
    fn missing_field_is_reported_as_required() {
        let err = from_json::<Outer>(json!({"items": [{}]}), "spec").unwrap_err();
        assert_eq!(
            only_error(err),
            ("spec.items[0].batchSize".into(), "is required".into())
        );
    }

    #[test]
    fn non_object_reports_expected_object() {
        let err = from_json::<Outer>(json!("x"), "hostConfig").unwrap_err();
        assert_eq!(
            only_error(err),
            ("hostConfig".into(), "expected an object".into())
        );
        let err = object_from_json::<Outer>(json!([1]), "hostConfig").unwrap_err();
        assert_eq!(
            only_error(err),
            ("hostConfig".into(), "expected an object".into())
        );
        let err = from_json::<Outer>(json!({"items": 3}), "").unwrap_err();
        assert_eq!(
            only_error(err),
            ("items".into(), "expected an array".into())
        );
        let err = from_json::<Outer>(json!({"items": [], "flag": 1}), "").unwrap_err();
        assert_eq!(
            only_error(err),
            ("flag".into(), "expected a boolean".into())
        );
    }

    #[test]
    fn negative_into_unsigned_is_expected_integer() {
        let err = from_json::<Inner>(json!({"batchSize": -1}), "q").unwrap_err();
        assert_eq!(
            only_error(err),
            ("q.batchSize".into(), "expected an integer".into())
        );
    }

    #[test]
    fn problems_collect_and_finish() {
        let mut problems = Problems::new();
        assert!(problems.is_empty());
        problems.push("a", "bad");
        problems.absorb(ValidationError::single("b", "worse"));
        let err = problems.finish().unwrap_err();
        assert_eq!(err.errors.len(), 2);
        assert_eq!(err.to_string(), "validation failed: a: bad; b: worse");
        assert!(Problems::new().finish().is_ok());
    }
}
