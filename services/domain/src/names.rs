//! Validated names: tenants, apps, functions, queues, app settings and bindings.
//!
//! Each name is a newtype that can only be built through `parse`, so code holding a
//! `TenantName` never re-checks it. The rules are Azure's where Azure has one, so a name that
//! works in Azure Functions works in Shoal and the other way round. On the wire every name is a
//! plain JSON string; deserializing validates it.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

/// Declares a string newtype with `parse`, `as_str`, `Display`, `AsRef<str>`, serde as a
/// string (validating on the way in) and an OpenAPI string schema.
macro_rules! name_type {
    (
        $(#[$doc:meta])*
        $name:ident,
        validate = $validate:path,
        pattern = $pattern:expr,
        min = $min:expr,
        max = $max:expr,
        example = $example:expr,
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Checks `s` against the rule above; the error is a short message for the field.
            pub fn parse(s: &str) -> Result<Self, String> {
                $validate(s)?;
                Ok(Self(s.to_owned()))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                Self::parse(s)
            }
        }

        impl TryFrom<String> for $name {
            type Error = String;
            fn try_from(s: String) -> Result<Self, String> {
                $validate(&s)?;
                Ok(Self(s))
            }
        }

        impl From<$name> for String {
            fn from(name: $name) -> String {
                name.0
            }
        }

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some($pattern))
                    .min_length(Some($min))
                    .max_length(Some($max))
                    .examples([$example])
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

/// For the names other modules declare with the same shape (`bindings::OutputQueueName`).
pub(crate) use name_type;

name_type! {
    /// A tenant: 2–63 lowercase ASCII letters, digits and hyphens, not starting or ending with
    /// a hyphen. Kept this strict because the name is written into Postgres session settings
    /// for row-level security and into URLs without escaping.
    TenantName,
    validate = validate_tenant,
    pattern = "^[a-z0-9][a-z0-9-]*[a-z0-9]$",
    min = 2,
    max = 63,
    example = "contoso",
}

name_type! {
    /// A function app, by Azure's rule for app names: 2–60 ASCII letters, digits and hyphens,
    /// not starting or ending with a hyphen.
    AppName,
    validate = validate_app,
    pattern = "^[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]$",
    min = 2,
    max = 60,
    example = "orders-app",
}

name_type! {
    /// A function, by Azure Functions' rule `^[a-zA-Z][a-zA-Z0-9_-]{0,127}$`.
    FunctionName,
    validate = validate_function,
    pattern = "^[a-zA-Z][a-zA-Z0-9_-]{0,127}$",
    min = 1,
    max = 128,
    example = "ProcessOrder",
}

name_type! {
    /// A storage queue by Azure Storage's rule (3–63 lowercase letters, digits and hyphens,
    /// starting and ending with a letter or digit, no consecutive hyphens), with the two
    /// liberties Azure's queue extension takes: upper case, which it lower-cases before checking
    /// (`QueueTriggerAttributeBindingProvider.NormalizeAndValidate`), and `%SettingName%`
    /// references anywhere in the name (`orders-%Env%`), each replaced by that app setting's
    /// value when the worker starts the listener (`INameResolver.ResolveWholeString`).
    ///
    /// The name is stored as written, so a read returns exactly what was written;
    /// [`QueueName::resolve`] gives the queue it stands for.
    QueueName,
    validate = validate_queue,
    pattern = "^([A-Za-z0-9-]|%[A-Za-z0-9_.:-]{1,256}%)+$",
    min = 3,
    max = 1024,
    example = "orders",
}

name_type! {
    /// An app setting name: 1–256 ASCII letters, digits, `_`, `.`, `-` and `:` (`:` and `__`
    /// separate the parts of identity-based connection settings).
    SettingName,
    validate = validate_setting,
    pattern = "^[A-Za-z0-9_.:-]{1,256}$",
    min = 1,
    max = 256,
    example = "MyStorage__queueServiceUri",
}

name_type! {
    /// A binding's `name`: an identifier (`^[A-Za-z_][A-Za-z0-9_]*$`), or `$return` for the
    /// output binding that receives the handler's `ReturnValue`.
    BindingName,
    validate = validate_binding,
    pattern = "^([A-Za-z_][A-Za-z0-9_]*|\\$return)$",
    min = 1,
    max = 128,
    example = "myQueueItem",
}

/// What a queue trigger appends to its queue's name for the poison queue (`<queue>-poison`;
/// see `queue_trigger::poison_queue_name` for the queues that have none).
pub const POISON_SUFFIX: &str = "-poison";

impl QueueName {
    /// The app setting named by a name that is one `%SettingName%` reference and nothing else,
    /// or `None` (a literal name, or references among other text).
    pub fn setting_reference(&self) -> Option<&str> {
        self.0
            .strip_prefix('%')
            .and_then(|rest| rest.strip_suffix('%'))
            .filter(|inner| !inner.contains('%'))
    }

    /// Whether the name has `%Setting%` references to resolve.
    pub fn has_setting_references(&self) -> bool {
        self.0.contains('%')
    }

    /// The queue this name stands for: each `%Setting%` reference replaced by that app
    /// setting's value (matched case-insensitively like other settings; not resolved again),
    /// the whole lower-cased, then checked as a literal queue name. Errors name the settings,
    /// never their values.
    pub fn resolve(
        &self,
        settings: &std::collections::BTreeMap<String, String>,
    ) -> Result<QueueName, String> {
        let mut resolved = String::with_capacity(self.0.len());
        let mut references = Vec::new();
        // Checked when parsed, so the parts are there.
        for part in queue_name_parts(&self.0)? {
            match part {
                QueueNamePart::Literal(text) => resolved.push_str(text),
                QueueNamePart::Setting(setting) => {
                    resolved.push_str(setting_value(settings, setting)?);
                    references.push(setting);
                }
            }
        }
        let resolved = resolved.to_ascii_lowercase();
        match validate_literal_queue(&resolved) {
            Ok(()) => Ok(QueueName(resolved)),
            Err(m) => Err(match references.as_slice() {
                [] => m,
                [setting] if self.setting_reference().is_some() => {
                    format!("app setting {setting} is not a valid queue name: {m}")
                }
                settings => format!(
                    "{} with app settings {} is not a valid queue name: {m}",
                    self.0,
                    settings.join(", ")
                ),
            }),
        }
    }
}

/// A piece of a written queue name.
enum QueueNamePart<'a> {
    Literal(&'a str),
    Setting(&'a str),
}

/// A written queue name as literal text and `%Setting%` references, in order; an unclosed `%`
/// is an error, as in Azure's `ResolveWholeString`.
fn queue_name_parts(s: &str) -> Result<Vec<QueueNamePart<'_>>, String> {
    let mut parts = Vec::new();
    let mut rest = s;
    let mut at = 0;
    while let Some(start) = rest.find('%') {
        if start > 0 {
            parts.push(QueueNamePart::Literal(&rest[..start]));
        }
        let Some(len) = rest[start + 1..].find('%') else {
            return Err(format!(
                "the '%' at position {} has no closing '%'",
                at + start
            ));
        };
        parts.push(QueueNamePart::Setting(&rest[start + 1..start + 1 + len]));
        let consumed = start + len + 2;
        at += consumed;
        rest = &rest[consumed..];
    }
    if !rest.is_empty() {
        parts.push(QueueNamePart::Literal(rest));
    }
    Ok(parts)
}

impl BindingName {
    /// `$return` binds the handler's return value rather than a named output.
    pub fn is_return(&self) -> bool {
        self.0 == "$return"
    }
}

pub(crate) fn check_length(s: &str, min: usize, max: usize) -> Result<(), String> {
    let len = s.chars().count();
    if len < min || len > max {
        return Err(format!("must be {min} to {max} characters long"));
    }
    Ok(())
}

/// Shared rule of tenant and app names: letters/digits/hyphens, no hyphen at either end.
fn check_hyphenated(s: &str, allowed: impl Fn(char) -> bool, what: &str) -> Result<(), String> {
    if !s.chars().all(|c| allowed(c) || c == '-') {
        return Err(format!("may contain only {what}, digits and hyphens"));
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Err("must not start or end with a hyphen".to_owned());
    }
    Ok(())
}

fn validate_tenant(s: &str) -> Result<(), String> {
    check_length(s, 2, 63)?;
    check_hyphenated(
        s,
        |c| c.is_ascii_lowercase() || c.is_ascii_digit(),
        "lowercase letters",
    )
}

fn validate_app(s: &str) -> Result<(), String> {
    check_length(s, 2, 60)?;
    check_hyphenated(s, |c| c.is_ascii_alphanumeric(), "letters")
}

fn validate_function(s: &str) -> Result<(), String> {
    check_length(s, 1, 128)?;
    let mut chars = s.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic()) {
        return Err("must start with a letter".to_owned());
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Err("may contain only letters, digits, '_' and '-'".to_owned());
    }
    Ok(())
}

pub(crate) fn validate_queue(s: &str) -> Result<(), String> {
    if s.contains(['{', '}']) {
        // Azure's queue trigger refuses them too: `QueueTriggerAttributeBindingProvider` resolves
        // the name once, with no binding data to resolve it from.
        return Err(
            "a trigger's queue name cannot have binding expressions such as {Id}: there is no message to resolve them from yet; write the name, or build it from app settings with %Setting% references (output bindings' names may use them)"
                .to_owned(),
        );
    }
    if !s.contains('%') {
        // Azure lower-cases the name before checking it.
        return validate_literal_queue(&s.to_ascii_lowercase());
    }
    check_length(s, 3, 1024)?;
    for part in queue_name_parts(s)? {
        match part {
            QueueNamePart::Setting(setting) => validate_setting(setting)
                .map_err(|message| format!("app setting reference %{setting}%: name {message}"))?,
            QueueNamePart::Literal(text) => {
                if !text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
                    return Err(
                        "may contain only letters, digits and hyphens besides %Setting% references"
                            .to_owned(),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Azure Storage's rule for a queue name, on the lower-cased name.
pub(crate) fn validate_literal_queue(s: &str) -> Result<(), String> {
    check_length(s, 3, 63)?;
    if !s
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(
            "may contain only letters, digits and hyphens (or app setting references like %QueueName%)"
                .to_owned(),
        );
    }
    if s.starts_with('-') || s.ends_with('-') {
        return Err("must start and end with a letter or digit".to_owned());
    }
    if s.contains("--") {
        return Err("must not contain consecutive hyphens".to_owned());
    }
    Ok(())
}

fn validate_setting(s: &str) -> Result<(), String> {
    check_length(s, 1, 256)?;
    if !s
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | ':'))
    {
        return Err("may contain only letters, digits, '_', '.', '-' and ':'".to_owned());
    }
    Ok(())
}

fn validate_binding(s: &str) -> Result<(), String> {
    if s == "$return" {
        return Ok(());
    }
    check_length(s, 1, 128)?;
    let mut chars = s.chars();
    if !chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
    {
        return Err("must start with a letter or '_' (or be \"$return\")".to_owned());
    }
    if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err("may contain only letters, digits and '_'".to_owned());
    }
    Ok(())
}

/// The value of the app setting a `%Name%` reference names: matched case-insensitively like
/// every other setting, trimmed, and required to be non-empty. The error names the setting,
/// never a value.
pub fn setting_value<'a>(
    settings: &'a std::collections::BTreeMap<String, String>,
    setting: &str,
) -> Result<&'a str, String> {
    settings
        .get(setting)
        .or_else(|| {
            settings
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(setting))
                .map(|(_, v)| v)
        })
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| format!("app setting {setting} is not set"))
}

#[cfg(test)]
mod tests;
