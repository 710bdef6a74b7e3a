//! The name of the queue a `queue` output binding writes to, which may hold binding
//! expressions (see [`crate::binding_expressions`]).

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use crate::names::{QueueName, check_length, name_type, validate_literal_queue, validate_queue};

name_type! {
    /// The queue a `queue` output binding writes to: a [`QueueName`], or a name with binding
    /// expressions (`out-{Id}`, `{region}-orders`, `audit-{DateTime:yyyyMMdd}`) resolved for
    /// each invocation from the trigger's binding data, as Azure's `QueueAttribute.QueueName`
    /// is `[AutoResolve]` (azure-sdk-for-net `Microsoft.Azure.WebJobs.Extensions.Storage.Queues`,
    /// `src/QueueAttribute.cs`). See [`crate::binding_expressions`]; after resolution the name is
    /// lower-cased and checked as a literal queue name, as
    /// `src/Config/QueuesExtensionConfigProvider.cs` (`GetQueue`) does.
    OutputQueueName,
    validate = validate_output_queue,
    pattern = "^([A-Za-z0-9-]|%[A-Za-z0-9_.:-]{1,256}%|\\{[^{}]+\\}|\\{\\{|\\}\\})+$",
    min = 3,
    max = 1024,
    example = "out-{Id}",
}

impl OutputQueueName {
    /// The name parsed into text, settings and expressions (it was checked when parsed).
    pub fn template(&self) -> Result<crate::binding_expressions::Template, String> {
        crate::binding_expressions::Template::parse(&self.0)
    }

    /// Whether the name has `{…}` expressions to resolve per invocation.
    pub fn has_expressions(&self) -> bool {
        crate::binding_expressions::has_expressions(&self.0)
    }

    /// The queue a name without expressions stands for (see [`QueueName::resolve`]).
    pub fn literal(&self) -> Option<QueueName> {
        if self.has_expressions() {
            return None;
        }
        // Checked by the same rule when this name was parsed.
        QueueName::parse(&self.0).ok()
    }
}

/// A resolved output queue name: lower-cased and checked as Azure Storage names queues. The
/// error says what the expressions produced, so a handler's author sees why.
pub fn resolved_queue_name(written: &str, resolved: &str) -> Result<QueueName, String> {
    let lowered = resolved.to_ascii_lowercase();
    validate_literal_queue(&lowered).map_err(|m| {
        format!("{written} resolves to {resolved:?}, which is not a valid queue name: {m}")
    })?;
    QueueName::parse(&lowered)
}

/// An output queue name: a queue name, or text, `%Setting%` references and binding
/// expressions whose text could make a valid queue name.
fn validate_output_queue(s: &str) -> Result<(), String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '-';
    match crate::binding_expressions::output_name(s, allowed, "a queue name")? {
        Some(template) if template.has_expressions() => check_length(s, 3, 1024),
        Some(_) => Err("'{{' and '}}' write braces, which cannot be part of a queue name".into()),
        None => validate_queue(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(valid: &[&str], invalid: &[&str]) {
        for name in valid {
            assert!(
                OutputQueueName::parse(name).is_ok(),
                "{name:?} should be valid"
            );
        }
        for name in invalid {
            assert!(
                OutputQueueName::parse(name).is_err(),
                "{name:?} should be invalid"
            );
        }
    }

    #[test]
    fn output_queue_names_may_have_binding_expressions() {
        check(
            &[
                "orders",
                "MyQueue",
                "orders-%Env%",
                "out-{Id}",
                "{queueTrigger}",
                "{region}-%Env%-{DateTime:yyyyMMdd}",
                "{rand-guid}",
            ],
            &[
                "ab",
                "a--b",
                "out_{Id}",
                "out-{Id",
                "out-}",
                "{{x}}",
                "out-{}",
                "{1x}",
                "x-{DateTime:q}",
            ],
        );
        let templated = OutputQueueName::parse("out-{Id}").unwrap();
        assert!(templated.has_expressions());
        assert_eq!(templated.literal(), None);
        let plain = OutputQueueName::parse("Orders-%Env%").unwrap();
        assert!(!plain.has_expressions());
        assert_eq!(plain.literal().unwrap().as_str(), "Orders-%Env%");
    }

    #[test]
    fn resolved_output_queue_names_are_lower_cased_and_checked() {
        assert_eq!(
            resolved_queue_name("out-{Id}", "OUT-ABC").unwrap().as_str(),
            "out-abc"
        );
        let err = resolved_queue_name("{region}", "eu_west").unwrap_err();
        assert!(
            err.contains("{region} resolves to \"eu_west\", which is not a valid queue name"),
            "{err}"
        );
        assert!(resolved_queue_name("x-{Id}", &format!("x-{}", "a".repeat(70))).is_err());
        assert!(resolved_queue_name("{a}-{b}", "-x").is_err());
    }
}
