//! A tenant's quotas as they apply: each limit the tenant's own `limits` set, else the
//! platform's default (`--tenant-defaults`), so no tenant is unbounded unless an operator
//! makes it so. Azure bounds a subscription the same way (default quotas, raised on request);
//! Kubernetes leaves it to a ResourceQuota per namespace.
//!
//! Quotas bound what is written: a write past one is refused naming the limit and its value.
//! A lowered quota refuses further writes; what is already there stays.

use std::str::FromStr;

use serde::Serialize;
use utoipa::ToSchema;

use crate::tenants::{MAX_LIMIT, TenantLimits};

/// Every limit with a value: a tenant's `effectiveLimits`, or the platform's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Quotas {
    /// Apps the tenant may have.
    pub max_apps: u32,
    /// App instances running at once across the tenant (the scheduler's share weight too).
    pub max_instances: u32,
    /// Functions one app may have: diagnostics, the scheduler and every listener's work grow
    /// with it.
    pub max_functions_per_app: u32,
    /// Application settings one app may have.
    pub max_settings_per_app: u32,
    /// The highest `webhooks.requestsPerSecond` an app may set (its `burst` at most twice it).
    pub max_webhook_requests_per_second: u32,
}

impl Default for Quotas {
    /// Azure's own figures where it has them: 100 function apps per plan and 100 instances
    /// (Linux Consumption) in "Azure Functions hosting options" (learn.microsoft.com); no
    /// Azure limit on functions or settings per app, so enough for any app seen in practice;
    /// ten times an app's default webhook rate.
    fn default() -> Self {
        Quotas {
            max_apps: 100,
            max_instances: 100,
            max_functions_per_app: 200,
            max_settings_per_app: 500,
            max_webhook_requests_per_second: 10
                * crate::webhook_limits::DEFAULT_REQUESTS_PER_SECOND,
        }
    }
}

impl TenantLimits {
    /// What applies to the tenant: its own limits over the platform's `defaults`.
    pub fn effective(&self, defaults: &Quotas) -> Quotas {
        Quotas {
            max_apps: self.max_apps.unwrap_or(defaults.max_apps),
            max_instances: self.max_instances.unwrap_or(defaults.max_instances),
            max_functions_per_app: self
                .max_functions_per_app
                .unwrap_or(defaults.max_functions_per_app),
            max_settings_per_app: self
                .max_settings_per_app
                .unwrap_or(defaults.max_settings_per_app),
            max_webhook_requests_per_second: self
                .max_webhook_requests_per_second
                .unwrap_or(defaults.max_webhook_requests_per_second),
        }
    }
}

impl FromStr for Quotas {
    type Err = String;

    /// `maxApps=100,maxInstances=50,…` (the `limits` names): the built-in default for each
    /// limit not named.
    fn from_str(text: &str) -> Result<Quotas, String> {
        let mut quotas = Quotas::default();
        let mut seen = Vec::new();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (key, value) = part
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .ok_or_else(|| format!("`{part}` is not name=number"))?;
            let slot = match key {
                "maxApps" => &mut quotas.max_apps,
                "maxInstances" => &mut quotas.max_instances,
                "maxFunctionsPerApp" => &mut quotas.max_functions_per_app,
                "maxSettingsPerApp" => &mut quotas.max_settings_per_app,
                "maxWebhookRequestsPerSecond" => &mut quotas.max_webhook_requests_per_second,
                other => {
                    return Err(format!(
                        "unknown limit `{other}` (use maxApps, maxInstances, maxFunctionsPerApp, \
                         maxSettingsPerApp, maxWebhookRequestsPerSecond)"
                    ));
                }
            };
            if seen.contains(&key) {
                return Err(format!("`{key}` is given twice"));
            }
            seen.push(key);
            *slot = match value.parse::<u32>() {
                Ok(n) if n <= MAX_LIMIT => n,
                _ => return Err(format!("`{key}` must be a number from 0 to {MAX_LIMIT}")),
            };
        }
        if quotas.max_webhook_requests_per_second == 0 {
            return Err("`maxWebhookRequestsPerSecond` must be at least 1".into());
        }
        Ok(quotas)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenants_limits_override_the_defaults_one_by_one() {
        let defaults = Quotas::default();
        assert_eq!(TenantLimits::default().effective(&defaults), defaults);
        let own = TenantLimits {
            max_apps: Some(3),
            max_functions_per_app: Some(0),
            ..TenantLimits::default()
        };
        let effective = own.effective(&defaults);
        assert_eq!(effective.max_apps, 3);
        assert_eq!(effective.max_functions_per_app, 0);
        assert_eq!(effective.max_instances, defaults.max_instances);
        assert_eq!(
            effective.max_webhook_requests_per_second,
            defaults.max_webhook_requests_per_second
        );
    }

    #[test]
    fn defaults_parse_by_name() {
        let quotas: Quotas = "maxApps=10, maxInstances=0,maxWebhookRequestsPerSecond=5"
            .parse()
            .unwrap();
        assert_eq!(quotas.max_apps, 10);
        assert_eq!(quotas.max_instances, 0);
        assert_eq!(quotas.max_webhook_requests_per_second, 5);
        assert_eq!(
            quotas.max_functions_per_app,
            Quotas::default().max_functions_per_app
        );
        assert_eq!("".parse::<Quotas>(), Ok(Quotas::default()));
        for (bad, says) in [
            ("maxApps", "name=number"),
            ("maxPods=1", "unknown limit `maxPods`"),
            ("maxApps=1,maxApps=2", "given twice"),
            ("maxApps=-1", "from 0 to 100000"),
            ("maxApps=100001", "from 0 to 100000"),
            ("maxWebhookRequestsPerSecond=0", "at least 1"),
        ] {
            let err = bad.parse::<Quotas>().unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }
}
