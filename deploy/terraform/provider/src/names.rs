//! Names checked at plan time by the API's own rules (`shoal_domain::names`): a name the API
//! would refuse fails `terraform plan` at its attribute, instead of an apply that fails at the
//! resource block — or, for a name with `#`, `?` or `/`, one that reaches a different URL.

use shoal_domain::names::{AppName, FunctionName, TenantName};
use tf_provider::value::Value;
use tf_provider::{AttributePath, Diagnostics};

#[derive(Clone, Copy, Debug)]
pub enum NameKind {
    Tenant,
    App,
    Function,
}

impl NameKind {
    /// Why `name` is not a valid name of this kind, by the API's rule.
    pub fn check(self, name: &str) -> Result<(), String> {
        match self {
            NameKind::Tenant => TenantName::parse(name).map(drop),
            NameKind::App => AppName::parse(name).map(drop),
            NameKind::Function => FunctionName::parse(name).map(drop),
        }
    }

    fn noun(self) -> &'static str {
        match self {
            NameKind::Tenant => "tenant",
            NameKind::App => "function app",
            NameKind::Function => "function",
        }
    }
}

/// Adds an error at `attribute` when its known value is not a valid name of `kind` (unknown
/// and null values are checked when they are known, by the API).
pub fn check_attribute(
    diags: &mut Diagnostics,
    attribute: &'static str,
    kind: NameKind,
    value: &Value<String>,
) {
    if let Value::Value(name) = value
        && let Err(reason) = kind.check(name)
    {
        diags.error(
            format!("Invalid {} name", kind.noun()),
            format!("`{name}` is not a valid {} name: {reason}", kind.noun()),
            AttributePath::new(attribute),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_api_rules_decide() {
        let cases = [
            (NameKind::App, "nightly-2", true),
            (NameKind::App, "nightly#2", false),
            (NameKind::App, "a/b", false),
            (NameKind::Tenant, "contoso", true),
            (NameKind::Tenant, "Contoso", false),
            (NameKind::Function, "ProcessOrder", true),
            (NameKind::Function, "process?order", false),
        ];
        for (kind, name, valid) in cases {
            assert_eq!(kind.check(name).is_ok(), valid, "{kind:?} {name}");
        }
    }
}
