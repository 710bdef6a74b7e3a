//! The egress policy ([`shoal_domain::egress`]) where it takes effect: when a process of Shoal's
//! connects to a destination a tenant chose.
//!
//! Every address a name resolves to is checked before it is dialled ([`Egress::resolve`], and
//! the [`GuardedResolver`] that HTTP clients built by [`Egress::client_builder`] use), so a
//! public name that resolves, or re-resolves, to a refused address gets nowhere. Literal
//! addresses never reach a resolver, so callers check URLs first ([`Egress::check_url`]).
//! Clients ignore `HTTP_PROXY` and friends: a proxy would resolve the name itself, out of the
//! policy's sight. A refusal is counted by rule for `/metrics` ([`EgressMetrics`]) and logged
//! once per destination. Answers are read up to a cap ([`read_capped`]).

mod body;
mod metrics;
mod resolver;

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

pub use body::{ReadError, read_capped};
pub use metrics::EgressMetrics;
pub use resolver::GuardedResolver;
use shoal_domain::egress::destinations::Destination;
use shoal_domain::egress::{AllowList, EgressPolicy, Refusal, Rule};

/// The policy a process enforces, with its refusal counters. Cheap to clone; clones and
/// [`Egress::for_tenant`] views share the counters.
#[derive(Clone, Debug)]
pub struct Egress {
    policy: Arc<EgressPolicy>,
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    metrics: EgressMetrics,
    /// Destinations already logged, so a listener retrying a refused host does not flood the
    /// log; cleared when it grows past [`LOGGED_LIMIT`].
    logged: Mutex<HashSet<(String, u16, Rule)>>,
}

const LOGGED_LIMIT: usize = 4096;

/// Why a destination could not be reached before anything was sent to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EgressError {
    Refused(Refusal),
    /// The name did not resolve. The text is the resolver's, which says nothing about ports.
    Unresolved {
        host: String,
        message: String,
    },
}

impl std::fmt::Display for EgressError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EgressError::Refused(refusal) => refusal.fmt(f),
            EgressError::Unresolved { host, message } => {
                write!(f, "{host} could not be resolved: {message}")
            }
        }
    }
}

impl std::error::Error for EgressError {}

impl Egress {
    pub fn new(policy: EgressPolicy) -> Egress {
        Egress {
            policy: Arc::new(policy),
            shared: Arc::default(),
        }
    }

    /// Only global addresses; what `serve`, `worker` and `scheduler` start with.
    pub fn strict() -> Egress {
        Egress::new(EgressPolicy::strict())
    }

    pub fn policy(&self) -> &EgressPolicy {
        &self.policy
    }

    /// The same counters, with a tenant's allowances (set by a platform admin) added.
    pub fn for_tenant(&self, tenant: &AllowList) -> Egress {
        if tenant.is_empty() {
            return self.clone();
        }
        Egress {
            policy: Arc::new(self.policy.for_tenant(tenant)),
            shared: self.shared.clone(),
        }
    }

    pub fn metrics(&self) -> EgressMetrics {
        self.shared.metrics.clone()
    }

    /// What a URL's text decides (a literal address, `localhost`, the metadata names); a
    /// refusal is counted and logged.
    pub fn check_url(&self, url: &url::Url) -> Result<(), Refusal> {
        self.policy.check_url(url).map_err(|r| self.refused(r))
    }

    /// What the text of each destination decides (see [`Egress::check_url`]), the first
    /// refusal as `<setting>: <reason>`: for a listener or output whose connection settings
    /// aim at a refused address, which then does not start.
    pub fn check_destinations(&self, destinations: &[Destination]) -> Result<(), String> {
        for destination in destinations {
            self.policy
                .check_literal(&destination.host, destination.port)
                .map_err(|r| format!("{}: {}", destination.setting, self.refused(r)))?;
        }
        Ok(())
    }

    /// Every address `host` resolves to, each allowed; refused when any is refused, so that a
    /// name with one public and one internal address cannot be used to reach the internal one
    /// by racing the two.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, EgressError> {
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if let Some(ip) = shoal_domain::egress::parse_host(bare) {
            self.check_address(host, SocketAddr::new(ip, port))?;
            return Ok(vec![SocketAddr::new(ip, port)]);
        }
        self.policy
            .check_literal(bare, port)
            .map_err(|r| EgressError::Refused(self.refused(r)))?;
        let addresses: Vec<SocketAddr> = tokio::net::lookup_host((bare, port))
            .await
            .map_err(|e| EgressError::Unresolved {
                host: host.to_owned(),
                message: e.to_string(),
            })?
            .collect();
        if addresses.is_empty() {
            return Err(EgressError::Unresolved {
                host: host.to_owned(),
                message: "no addresses".into(),
            });
        }
        for address in &addresses {
            self.check_address(bare, *address)?;
        }
        Ok(addresses)
    }

    /// Whether `address`, reached through `host`, may be dialled.
    pub fn check_address(&self, host: &str, address: SocketAddr) -> Result<(), EgressError> {
        self.policy
            .check(host, address.ip(), address.port())
            .map_err(|r| EgressError::Refused(self.refused(r)))
    }

    /// A resolver for HTTP clients that only dial `port` (reqwest hands a resolver the name
    /// alone, so the port a client dials is fixed when it is built).
    pub fn resolver(&self, port: u16) -> GuardedResolver {
        GuardedResolver::new(self.clone(), port)
    }

    /// A client builder whose connections go only where the policy allows, on `port`: the
    /// guarded resolver, no proxies, no redirects (a redirect would dial a host nobody
    /// checked).
    pub fn client_builder(&self, port: u16) -> reqwest::ClientBuilder {
        reqwest::Client::builder()
            .no_proxy()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(self.resolver(port)))
    }

    fn refused(&self, refusal: Refusal) -> Refusal {
        self.shared.metrics.count(refusal.rule);
        let key = (refusal.host.clone(), refusal.port, refusal.rule);
        let mut logged = self.shared.logged.lock().expect("not poisoned");
        if logged.len() >= LOGGED_LIMIT {
            logged.clear();
        }
        if logged.insert(key) {
            tracing::warn!(
                host = refusal.host,
                address = ?refusal.address,
                port = refusal.port,
                rule = %refusal.rule,
                "egress refused (logged once per destination)"
            );
        }
        refusal
    }
}

/// The refusal somewhere in an error's source chain (a reqwest error whose connector's resolver
/// refused), so callers can tell "refused by policy" from "could not connect".
pub fn refusal_in(error: &(dyn std::error::Error + 'static)) -> Option<Refusal> {
    let mut current = Some(error);
    while let Some(e) = current {
        if let Some(EgressError::Refused(refusal)) = e.downcast_ref::<EgressError>() {
            return Some(refusal.clone());
        }
        if let Some(refusal) = e.downcast_ref::<Refusal>() {
            return Some(refusal.clone());
        }
        current = e.source();
    }
    None
}
