//! `--principal-rate`, `--tenant-rate` and `--ready-timeout`: how many management API requests
//! `serve` takes from one principal and from one tenant, and how long its readiness probe may
//! take; `--tenant-defaults`, the quotas of tenants whose limits do not say, for `serve` and
//! `scheduler` (docs/operating/limits.md).

use std::time::Duration;

use clap::Args;
use shoal_api::ApiLimits;
use shoal_api::throttle::{Rate, RequestRates};
use shoal_domain::quotas::Quotas;

use super::parsers::parse_duration;

/// Shared by `serve` and `scheduler`: give both the same value.
#[derive(Debug, Args)]
pub struct TenantDefaultsArgs {
    /// The quotas of tenants whose own `limits` do not set them:
    /// `maxApps=N,maxInstances=N,maxFunctionsPerApp=N,maxSettingsPerApp=N,maxWebhookRequestsPerSecond=N`,
    /// any subset (default 100 apps, 100 instances, 200 functions and 500 settings per app,
    /// 1000 webhook requests a second per app). Give `serve` and `scheduler` the same value.
    #[arg(
        long,
        env = "SHOAL_TENANT_DEFAULTS",
        value_name = "LIMITS",
        default_value = ""
    )]
    pub tenant_defaults: Quotas,
}

#[derive(Debug, Args)]
pub struct ApiLimitArgs {
    #[command(flatten)]
    pub tenant_defaults: TenantDefaultsArgs,
    /// Management API requests one principal may make, per replica: `PER_SECOND[/BURST]`
    /// (default 25/250, Azure Resource Manager's reads per principal). More answer 429 with
    /// Retry-After.
    #[arg(long, env = "SHOAL_PRINCIPAL_RATE", value_name = "RATE", value_parser = parse_rate)]
    pub principal_rate: Option<Rate>,
    /// Management API requests all principals of one tenant may make together, per replica:
    /// `PER_SECOND[/BURST]` (default 375/3750, 15 times a principal's, as Resource Manager's
    /// subscription-wide limit).
    #[arg(long, env = "SHOAL_TENANT_RATE", value_name = "RATE", value_parser = parse_rate)]
    pub tenant_rate: Option<Rate>,
    /// The longest a throttled request's 429 is held before it is answered, e.g. `1s`, `0s`
    /// to answer at once (at most 10s; never longer than its Retry-After, which then says
    /// what is left): a client that retries at once sends one request a connection per hold.
    #[arg(long, env = "SHOAL_THROTTLE_HOLD", default_value = "1s", value_parser = parse_throttle_hold)]
    pub throttle_hold: Duration,
    /// The longest /readyz waits on the database before answering 503, e.g. `1s`, `500ms`
    /// (from 50ms to 60s).
    #[arg(long, env = "SHOAL_READY_TIMEOUT", default_value = "1s", value_parser = parse_ready_timeout)]
    pub ready_timeout: Duration,
}

impl ApiLimitArgs {
    pub fn limits(&self) -> ApiLimits {
        let defaults = RequestRates::default();
        ApiLimits {
            tenant_defaults: self.tenant_defaults.tenant_defaults,
            rates: RequestRates {
                principal: self.principal_rate.unwrap_or(defaults.principal),
                tenant: self.tenant_rate.unwrap_or(defaults.tenant),
            },
            throttle_hold: self.throttle_hold,
            ready_timeout: self.ready_timeout,
        }
    }
}

/// `PER_SECOND` or `PER_SECOND/BURST`, each from 1 to 1000000; the burst defaults to ten
/// seconds' worth, and may not be below the rate (a bucket smaller than a second's refill
/// would cap the rate below what was asked).
pub(super) fn parse_rate(text: &str) -> Result<Rate, String> {
    const MAX: u32 = 1_000_000;
    let number = |part: &str| match part.trim().parse::<u32>() {
        Ok(n) if (1..=MAX).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{text}` must be PER_SECOND or PER_SECOND/BURST, each from 1 to {MAX}"
        )),
    };
    let (per_second, burst) = match text.split_once('/') {
        Some((rate, burst)) => (number(rate)?, number(burst)?),
        None => {
            let rate = number(text)?;
            (rate, rate.saturating_mul(10).min(MAX))
        }
    };
    if burst < per_second {
        return Err(format!(
            "`{text}`: the burst ({burst}) must be at least the rate ({per_second})"
        ));
    }
    Ok(Rate { per_second, burst })
}

fn parse_ready_timeout(text: &str) -> Result<Duration, String> {
    let timeout = parse_duration(text)?;
    if timeout < Duration::from_millis(50) || timeout > Duration::from_secs(60) {
        return Err(format!("{text}: must be between 50ms and 60s"));
    }
    Ok(timeout)
}

fn parse_throttle_hold(text: &str) -> Result<Duration, String> {
    let hold = parse_duration(text)?;
    if hold > Duration::from_secs(10) {
        return Err(format!("{text}: must be at most 10s"));
    }
    Ok(hold)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_with_and_without_a_burst() {
        let rate = |per_second, burst| Rate { per_second, burst };
        assert_eq!(parse_rate("25/250"), Ok(rate(25, 250)));
        assert_eq!(parse_rate(" 25 "), Ok(rate(25, 250)));
        assert_eq!(parse_rate("1000000"), Ok(rate(1_000_000, 1_000_000)));
        for bad in ["", "0", "25/0", "-1", "x/2", "25/", "/25", "2000000", "1.5"] {
            let err = parse_rate(bad).unwrap_err();
            assert!(err.contains("PER_SECOND"), "{bad}: {err}");
        }
        assert!(
            parse_rate("25/10")
                .unwrap_err()
                .contains("at least the rate")
        );
    }

    #[test]
    fn throttle_holds_are_bounded() {
        assert_eq!(parse_throttle_hold("0s"), Ok(Duration::ZERO));
        assert_eq!(parse_throttle_hold("250ms"), Ok(Duration::from_millis(250)));
        assert!(parse_throttle_hold("11s").is_err());
        assert!(parse_throttle_hold("soon").is_err());
    }

    #[test]
    fn ready_timeouts_are_bounded() {
        assert_eq!(parse_ready_timeout("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_ready_timeout("50ms"), Ok(Duration::from_millis(50)));
        assert!(parse_ready_timeout("10ms").is_err());
        assert!(parse_ready_timeout("2m").is_err());
    }
}
