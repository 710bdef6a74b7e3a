//! One pooled HTTP client per (allow list, port): reqwest hands its resolver the name alone, so
//! a client that checks resolved addresses against port-specific entries and Shoal's own
//! listeners must know its port. Handlers of one deployment share a few ports, so the set stays
//! small; tenants with allowances of their own get clients of their own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shoal_domain::egress::AllowList;
use shoal_egress::Egress;

#[derive(Debug, Default)]
pub(crate) struct Clients {
    /// By allow list, then port: found by reference on every call, so a delivery does not
    /// allocate a key to find its pool.
    built: Mutex<HashMap<AllowList, HashMap<u16, reqwest::Client>>>,
}

impl Clients {
    pub(crate) fn get(
        &self,
        egress: &Egress,
        port: u16,
    ) -> Result<reqwest::Client, reqwest::Error> {
        let allow = egress.policy().allow();
        let mut built = self.built.lock().expect("not poisoned");
        if let Some(client) = built.get(allow).and_then(|ports| ports.get(&port)) {
            return Ok(client.clone());
        }
        let client = egress
            .client_builder(port)
            // A handler that does not accept within this is unreachable (see `pressure`), not
            // slow: no request reached it.
            .connect_timeout(Duration::from_secs(10))
            .pool_idle_timeout(Duration::from_secs(90))
            .pool_max_idle_per_host(64)
            .tcp_nodelay(true)
            // reqwest's default policy replays a request only on an HTTP/2 refusal, and to be
            // able to it copies every request's parts first. A handler call is never replayed
            // by the client: a failed attempt is the retry policy's to count and repeat.
            .retry(reqwest::retry::never().max_retries_per_request(0))
            .build()?;
        built
            .entry(allow.clone())
            .or_default()
            .insert(port, client.clone());
        Ok(client)
    }
}

pub(crate) type SharedClients = Arc<Clients>;
