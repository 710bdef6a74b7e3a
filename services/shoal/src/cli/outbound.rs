//! `--egress-allow` and `--max-response-bytes`: where `serve`, `worker` and `scheduler` may
//! connect on a tenant's behalf beyond the public internet, and how much of a handler's answer
//! `serve` and `worker` read.

use clap::Args;
use shoal_domain::egress::{AllowEntry, AllowList};

/// Shared by `serve` and `worker`; `dev` allows loopback on top of what is given.
#[derive(Debug, Args)]
pub struct OutboundArgs {
    #[command(flatten)]
    pub egress: EgressArgs,
    /// The most a handler's answer may weigh, in bytes (1024 to 1073741824). A larger answer
    /// fails the invocation without being buffered.
    #[arg(
        long,
        env = "SHOAL_MAX_RESPONSE_BYTES",
        default_value_t = shoal_invoker::DEFAULT_MAX_RESPONSE_BYTES,
        value_parser = parse_max_response_bytes
    )]
    pub max_response_bytes: usize,
}

/// The egress allow list alone: `scheduler` reads queues and brokers but no handler answers.
#[derive(Debug, Args)]
pub struct EgressArgs {
    /// Destinations tenants' handlers, queues, namespaces and brokers may be at beyond public
    /// addresses: CIDRs, addresses or host names, each optionally with `:port` (`10.0.0.0/8`,
    /// `[fd00::/8]:443`, `*.svc.cluster.local:80`). Loopback, private, link-local (the metadata
    /// service), shared, unique-local, multicast and reserved addresses, and Shoal's own
    /// listeners, are refused unless listed here (docs/operating/egress.md). Repeatable; the
    /// variable takes several separated by commas.
    #[arg(
        long = "egress-allow",
        env = "SHOAL_EGRESS_ALLOW",
        value_name = "ENTRY",
        value_delimiter = ',',
        value_parser = AllowEntry::parse
    )]
    pub egress_allow: Vec<AllowEntry>,
}

impl EgressArgs {
    pub fn allow_list(&self) -> AllowList {
        AllowList::from_entries(self.egress_allow.clone())
    }
}

impl OutboundArgs {
    pub fn allow_list(&self) -> AllowList {
        self.egress.allow_list()
    }
}

fn parse_max_response_bytes(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1024..=1 << 30).contains(&n) => Ok(n),
        _ => Err("must be a number of bytes from 1024 to 1073741824".into()),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Probe {
        #[command(flatten)]
        outbound: OutboundArgs,
    }

    #[test]
    fn entries_from_flags_and_commas() {
        let probe = Probe::try_parse_from([
            "p",
            "--egress-allow",
            "10.0.0.0/8,127.0.0.1:9000",
            "--egress-allow",
            "*.svc.cluster.local",
        ])
        .unwrap();
        assert_eq!(
            probe.outbound.allow_list().to_string(),
            "10.0.0.0/8,127.0.0.1:9000,*.svc.cluster.local"
        );
        assert_eq!(
            probe.outbound.max_response_bytes,
            shoal_invoker::DEFAULT_MAX_RESPONSE_BYTES
        );
    }

    #[test]
    fn bad_values_name_the_flag() {
        for (args, needle) in [
            (vec!["p", "--egress-allow", "0.0.0.0/0"], "--egress-allow"),
            (vec!["p", "--egress-allow", "10.0.0.1:http"], "not a port"),
            (
                vec!["p", "--max-response-bytes", "12"],
                "--max-response-bytes",
            ),
        ] {
            let error = Probe::try_parse_from(&args).unwrap_err().to_string();
            assert!(error.contains(needle), "{args:?}: {error}");
        }
    }
}
