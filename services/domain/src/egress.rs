//! The egress policy: where Shoal's processes may connect on a tenant's behalf.
//!
//! Tenants choose destinations (handler URLs, `notifyUrl`, queue and namespace endpoints,
//! broker lists, authority hosts), and Shoal's processes dial them from inside the platform's
//! network. By default only global addresses are allowed: loopback, private, link-local (the
//! metadata service among them), shared, unique-local, multicast, reserved blocks and Shoal's own
//! listeners are refused, whatever the spelling ([`literal`]) and whatever IPv6 form carries them
//! ([`ranges::canonical`]). An operator allows more with an [`AllowList`], for the platform and
//! per tenant; tenants cannot.
//!
//! The decision is made twice: when a destination is saved, on what its text says (a literal
//! address or a name that always means this host, see [`EgressPolicy::check_literal`]), and at
//! connect time, on every address a name resolves to ([`EgressPolicy::check`]), so a public name
//! that resolves, or later re-resolves, to a refused address gets nowhere. The connect-time half
//! lives in the `shoal-egress` crate, which every client that dials a tenant's destination uses.

mod allow;
mod authority;
pub mod destinations;
mod literal;
mod ranges;

use std::fmt;
use std::net::{IpAddr, SocketAddr};

pub use allow::{AllowEntry, AllowList};
pub use authority::{ENTRA_AUTHORITIES, check_authority_field};
pub use literal::parse_host;
pub use ranges::{Rule, canonical, classify, classify_name};

use crate::validation::ValidationError;

/// The platform's allow list and the addresses Shoal listens on.
#[derive(Debug, Clone, Default)]
pub struct EgressPolicy {
    allow: AllowList,
    platform: Vec<SocketAddr>,
}

/// Why a destination was refused: what was asked for, the address it came to, and the rule.
/// Its text is the same whether or not anything listens there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub host: String,
    /// The address the host spelled or resolved to; `None` for a name refused before lookup.
    pub address: Option<IpAddr>,
    pub port: u16,
    pub rule: Rule,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.rule {
            Rule::Platform => "one of Shoal's own listeners".to_owned(),
            rule => format!("a {rule} address"),
        };
        match self.address {
            Some(address) if parse_host(&self.host) == Some(address) => write!(
                f,
                "{address} port {} is {what}, which the egress policy refuses",
                self.port
            ),
            Some(address) => write!(
                f,
                "{} resolves to {address} port {}, {what}, which the egress policy refuses",
                self.host, self.port
            ),
            None => write!(
                f,
                "{} always names {what}, which the egress policy refuses",
                self.host
            ),
        }
    }
}

impl std::error::Error for Refusal {}

impl EgressPolicy {
    /// Only global addresses.
    pub fn strict() -> EgressPolicy {
        EgressPolicy::default()
    }

    /// `allow` beyond the global addresses, and never `platform` (Shoal's listen addresses)
    /// unless an entry names that address and port exactly.
    pub fn new(allow: AllowList, platform: Vec<SocketAddr>) -> EgressPolicy {
        EgressPolicy { allow, platform }
    }

    pub fn allow(&self) -> &AllowList {
        &self.allow
    }

    /// This policy with a tenant's own allowances added (set by a platform admin).
    pub fn for_tenant(&self, tenant: &AllowList) -> EgressPolicy {
        EgressPolicy {
            allow: self.allow.union(tenant),
            platform: self.platform.clone(),
        }
    }

    /// Whether dialling `ip:port`, reached through the name `host`, is allowed.
    pub fn check(&self, host: &str, ip: IpAddr, port: u16) -> Result<(), Refusal> {
        let refuse = |rule| Refusal {
            host: host.to_owned(),
            address: Some(ip),
            port,
            rule,
        };
        if self.is_platform(ip, port) {
            return match self.allow.allows_exactly(ip, port) {
                true => Ok(()),
                false => Err(refuse(Rule::Platform)),
            };
        }
        let name = (parse_host(host).is_none()).then_some(host);
        let rule = match name.and_then(classify_name) {
            // `localhost` may be reached where its address is allowed (`shoal dev`).
            Some(Rule::Loopback) => classify(ip).or(Some(Rule::Loopback)),
            Some(rule) => Some(rule),
            None => classify(ip),
        };
        match rule {
            None => Ok(()),
            // A name entry never opens the metadata service; only its address named does.
            Some(Rule::Metadata) if self.allow.allows_address(ip, port) => Ok(()),
            Some(Rule::Metadata) => Err(refuse(Rule::Metadata)),
            Some(_) if self.allow.allows(name, ip, port) => Ok(()),
            Some(rule) => Err(refuse(rule)),
        }
    }

    /// What can be decided from the text alone, when a destination is saved: a literal address
    /// in any spelling, or a name that always means this host or the metadata service. Other
    /// names pass here and are checked on every connection.
    pub fn check_literal(&self, host: &str, port: u16) -> Result<(), Refusal> {
        if let Some(ip) = parse_host(host) {
            return self.check(host, ip, port);
        }
        match classify_name(host) {
            None => Ok(()),
            Some(Rule::Loopback) => {
                let v4 = self.check(host, IpAddr::from([127, 0, 0, 1]), port);
                let v6 = self.check(host, IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]), port);
                v4.or(v6).map_err(|refusal| Refusal {
                    address: None,
                    ..refusal
                })
            }
            // The metadata names: no allow entry opens them.
            Some(rule) => Err(Refusal {
                host: host.to_owned(),
                address: None,
                port,
                rule,
            }),
        }
    }

    /// [`EgressPolicy::check_literal`] on a URL's host and port (its scheme's default port
    /// when none is written).
    pub fn check_url(&self, url: &url::Url) -> Result<(), Refusal> {
        let Some(host) = url.host_str() else {
            return Ok(());
        };
        let port = url.port_or_known_default().unwrap_or(0);
        self.check_literal(host, port)
    }

    fn is_platform(&self, ip: IpAddr, port: u16) -> bool {
        self.platform.iter().any(|own| {
            own.port() == port
                && (canonical(own.ip()) == canonical(ip)
                    || (own.ip().is_unspecified() && classify(ip).is_some()))
        })
    }
}

/// A 422 at `field` when `url` is refused by its text (see [`EgressPolicy::check_url`]).
pub fn check_url_field(
    policy: &EgressPolicy,
    field: &str,
    url: &url::Url,
) -> Result<(), ValidationError> {
    policy
        .check_url(url)
        .map_err(|refusal| ValidationError::single(field, refusal.to_string()))
}

#[cfg(test)]
mod tests;
