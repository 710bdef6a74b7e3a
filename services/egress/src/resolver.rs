//! reqwest's resolver hook, with the policy applied to every address before hyper dials it.

use std::net::SocketAddr;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use crate::Egress;

/// Resolves with the system resolver and refuses the lot when any address is refused.
#[derive(Clone, Debug)]
pub struct GuardedResolver {
    egress: Egress,
    port: u16,
}

impl GuardedResolver {
    pub(crate) fn new(egress: Egress, port: u16) -> GuardedResolver {
        GuardedResolver { egress, port }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let egress = self.egress.clone();
        let port = self.port;
        Box::pin(async move {
            let addresses: Vec<SocketAddr> = egress.resolve(name.as_str(), port).await?;
            // hyper sets the port it dials on each address itself.
            let addrs: Addrs = Box::new(addresses.into_iter());
            Ok(addrs)
        })
    }
}
