//! The tenant resource (platform scope): a display name, the tenant's own limits (each
//! absent one is the platform's default, see `quotas`), and whether the tenant's connections may act as the
//! workers' own host identity (`allowHostIdentity`, see `connection::outbound`).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::egress::{AllowEntry, AllowList};
use crate::validation::{Problems, ValidationError, from_json, named_body};

/// Ceiling on every limit; a larger number is almost certainly a typo.
pub const MAX_LIMIT: u32 = 100_000;

/// What a platform administrator set for the tenant; each absent limit is the platform's
/// default (`--tenant-defaults`), and the tenant's `effectiveLimits` say what applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TenantLimits {
    /// Most apps the tenant may have (0–100000; absent = the platform's default).
    pub max_apps: Option<u32>,
    /// Most app instances running at once across the tenant, and its weight when workers are
    /// short (0–100000; absent = the platform's default).
    pub max_instances: Option<u32>,
    /// Most functions one of the tenant's apps may have (0–100000; absent = the platform's
    /// default).
    pub max_functions_per_app: Option<u32>,
    /// Most application settings one of the tenant's apps may have (0–100000; absent = the
    /// platform's default).
    pub max_settings_per_app: Option<u32>,
    /// Highest `webhooks.requestsPerSecond` an app of the tenant may set; its `burst` may be
    /// at most twice it (1–100000; absent = the platform's default).
    pub max_webhook_requests_per_second: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TenantSpec {
    pub display_name: String,
    pub limits: TenantLimits,
    /// Identity-based connections of this tenant's apps act as the worker host's own identity
    /// instead of the app's (for single-tenant installs). Only platform administrators write
    /// tenants, so only they can set it. Default false.
    pub allow_host_identity: bool,
    /// Destinations beyond public addresses this tenant's handlers and connections may reach,
    /// added to the platform's (`--egress-allow`); empty by default. Like the rest of the
    /// tenant, only platform administrators write it.
    pub egress_allow: AllowList,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Body {
    name: Option<Value>,
    #[allow(dead_code)]
    etag: Option<Value>,
    #[allow(dead_code)]
    created_at: Option<Value>,
    #[allow(dead_code)]
    updated_at: Option<Value>,
    display_name: Option<Value>,
    limits: Option<Value>,
    allow_host_identity: Option<Value>,
    egress_allow: Option<Value>,
}

impl TenantSpec {
    pub fn parse(name: &str, body: &Value) -> Result<TenantSpec, ValidationError> {
        let (body, mut problems) = named_body(name, body, |b: &Body| b.name.as_ref())?;
        let display_name = match &body.display_name {
            None | Some(Value::Null) => name.to_string(),
            Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= 256 => s.clone(),
            Some(Value::String(_)) => {
                problems.push("displayName", "must be 1–256 characters and not blank");
                String::new()
            }
            Some(_) => {
                problems.push("displayName", "expected a string");
                String::new()
            }
        };
        let limits = match &body.limits {
            None | Some(Value::Null) => TenantLimits::default(),
            Some(value) => from_json::<TenantLimits>(value.clone(), "limits").unwrap_or_else(|e| {
                problems.absorb(e);
                TenantLimits::default()
            }),
        };
        for (path, value) in [
            ("limits.maxApps", limits.max_apps),
            ("limits.maxInstances", limits.max_instances),
            ("limits.maxFunctionsPerApp", limits.max_functions_per_app),
            ("limits.maxSettingsPerApp", limits.max_settings_per_app),
            (
                "limits.maxWebhookRequestsPerSecond",
                limits.max_webhook_requests_per_second,
            ),
        ] {
            if value.is_some_and(|v| v > MAX_LIMIT) {
                problems.push(path, format!("must be at most {MAX_LIMIT}"));
            }
        }
        if limits.max_webhook_requests_per_second == Some(0) {
            problems.push(
                "limits.maxWebhookRequestsPerSecond",
                "must be at least 1 (an app's webhooks take at least one request a second)",
            );
        }
        let allow_host_identity = match &body.allow_host_identity {
            None | Some(Value::Null) => false,
            Some(Value::Bool(allowed)) => *allowed,
            Some(_) => {
                problems.push("allowHostIdentity", "expected true or false");
                false
            }
        };
        let egress_allow = egress_allow(body.egress_allow.as_ref(), &mut problems);
        problems.finish()?;
        Ok(TenantSpec {
            display_name,
            limits,
            allow_host_identity,
            egress_allow,
        })
    }
}

/// `egressAllow`: an array of allow-list entries, each checked at its index.
fn egress_allow(value: Option<&Value>, problems: &mut Problems) -> AllowList {
    let items = match value {
        None | Some(Value::Null) => return AllowList::default(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.push(
                "egressAllow",
                "expected an array of CIDRs, addresses or host names",
            );
            return AllowList::default();
        }
    };
    if items.len() > MAX_EGRESS_ENTRIES {
        problems.push(
            "egressAllow",
            format!("at most {MAX_EGRESS_ENTRIES} entries"),
        );
    }
    let mut entries = Vec::new();
    for (i, item) in items.iter().enumerate() {
        match item.as_str().map(AllowEntry::parse) {
            Some(Ok(entry)) => entries.push(entry),
            Some(Err(e)) => problems.push(format!("egressAllow[{i}]"), e),
            None => problems.push(format!("egressAllow[{i}]"), "expected a string"),
        }
    }
    AllowList::from_entries(entries)
}

/// Enough for a tenant's handler networks and brokers; more is a sign of allowing too much.
pub const MAX_EGRESS_ENTRIES: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn display_name_defaults_to_the_name() {
        let spec = TenantSpec::parse("contoso", &json!({})).unwrap();
        assert_eq!(spec.display_name, "contoso");
        assert_eq!(spec.limits, TenantLimits::default());
    }

    #[test]
    fn limits_are_validated_with_paths() {
        let err = TenantSpec::parse(
            "t1",
            &json!({"displayName": " ", "limits": {"maxApps": -1}}),
        )
        .unwrap_err();
        let paths: Vec<_> = err.errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, vec!["displayName", "limits.maxApps"]);
        let err =
            TenantSpec::parse("t1", &json!({"limits": {"maxInstances": 100001}})).unwrap_err();
        assert_eq!(err.errors[0].path, "limits.maxInstances");
        let err = TenantSpec::parse("t1", &json!({"limits": {"maxPods": 1}})).unwrap_err();
        assert_eq!(err.errors[0].path, "limits.maxPods");
        let err = TenantSpec::parse(
            "t1",
            &json!({"limits": {"maxFunctionsPerApp": 100001, "maxWebhookRequestsPerSecond": 0}}),
        )
        .unwrap_err();
        let paths: Vec<_> = err.errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "limits.maxFunctionsPerApp",
                "limits.maxWebhookRequestsPerSecond"
            ]
        );
        let spec = TenantSpec::parse(
            "t1",
            &json!({"limits": {"maxSettingsPerApp": 0, "maxWebhookRequestsPerSecond": 5}}),
        )
        .unwrap();
        assert_eq!(spec.limits.max_settings_per_app, Some(0));
        assert_eq!(spec.limits.max_webhook_requests_per_second, Some(5));
    }

    #[test]
    fn host_identity_is_off_unless_set_to_true() {
        assert!(
            !TenantSpec::parse("t1", &json!({}))
                .unwrap()
                .allow_host_identity
        );
        let allowed = TenantSpec::parse("t1", &json!({"allowHostIdentity": true})).unwrap();
        assert!(allowed.allow_host_identity);
        let err = TenantSpec::parse("t1", &json!({"allowHostIdentity": "yes"})).unwrap_err();
        assert_eq!(err.errors[0].path, "allowHostIdentity");
    }

    #[test]
    fn egress_allowances_are_checked_entry_by_entry() {
        let spec = TenantSpec::parse(
            "t1",
            &json!({"egressAllow": ["10.20.0.0/16", "*.svc.cluster.local:80"]}),
        )
        .unwrap();
        assert_eq!(
            spec.egress_allow.to_string(),
            "10.20.0.0/16,*.svc.cluster.local:80"
        );
        assert!(
            TenantSpec::parse("t1", &json!({}))
                .unwrap()
                .egress_allow
                .is_empty()
        );
        let err = TenantSpec::parse(
            "t1",
            &json!({"egressAllow": ["10.0.0.0/8", "0.0.0.0/0", 7]}),
        )
        .unwrap_err();
        let paths: Vec<_> = err.errors.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(paths, ["egressAllow[1]", "egressAllow[2]"]);
        let err = TenantSpec::parse("t1", &json!({"egressAllow": "10.0.0.0/8"})).unwrap_err();
        assert_eq!(err.errors[0].path, "egressAllow");
    }
}
