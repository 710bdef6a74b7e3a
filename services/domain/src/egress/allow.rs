//! What an operator allows beyond the public internet: CIDRs, addresses and host names, each
//! optionally with a port, from `--egress-allow` / `SHOAL_EGRESS_ALLOW` (comma-separated) and,
//! per tenant, from the tenant's `egressAllow`.
//!
//! | entry                   | allows                                                        |
//! |-------------------------|---------------------------------------------------------------|
//! | `10.0.0.0/8`            | every address in the block, any port                          |
//! | `10.1.2.3:8080`         | that address on that port                                     |
//! | `[fd00::/8]:443`        | an IPv6 block on one port                                     |
//! | `handler.internal`      | whatever that name resolves to (but the metadata service)     |
//! | `*.svc.cluster.local:80`| every name under that suffix, on port 80                      |

use std::fmt;
use std::net::IpAddr;

use super::literal::parse_host;
use super::ranges::canonical;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllowEntry {
    target: Target,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Target {
    Block { network: IpAddr, prefix: u8 },
    Name(String),
    Suffix(String),
}

/// A set of [`AllowEntry`]s; empty is the strict default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AllowList {
    entries: Vec<AllowEntry>,
}

impl AllowEntry {
    pub fn parse(text: &str) -> Result<AllowEntry, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an entry is empty".into());
        }
        let (target, port) = split_port(text)?;
        let target = target.trim_end_matches('.');
        if let Some((address, prefix)) = target.split_once('/') {
            let network = parse_host(address)
                .filter(|_| !address.contains('%'))
                .ok_or_else(|| format!("`{text}`: {address:?} is not an IP address"))?;
            let max = if network.is_ipv4() { 32 } else { 128 };
            let prefix: u8 = prefix
                .parse()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{text}`: the prefix length must be 0 to {max}"))?;
            if prefix == 0 {
                return Err(format!(
                    "`{text}` would allow every address; name the blocks handlers are in"
                ));
            }
            return Ok(AllowEntry {
                target: Target::Block {
                    network: mask(network, prefix),
                    prefix,
                },
                port,
            });
        }
        if let Some(address) = parse_host(target) {
            let prefix = if address.is_ipv4() { 32 } else { 128 };
            return Ok(AllowEntry {
                target: Target::Block {
                    network: address,
                    prefix,
                },
                port,
            });
        }
        let name = target.to_ascii_lowercase();
        let (wildcard, bare) = match name.strip_prefix("*.") {
            Some(rest) => (true, rest.to_owned()),
            None => (false, name.clone()),
        };
        let valid_label = |label: &str| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if bare.is_empty() || !bare.split('.').all(valid_label) {
            return Err(format!(
                "`{text}` is neither a CIDR, an IP address nor a host name (`*.` may lead a name)"
            ));
        }
        let target = if wildcard {
            Target::Suffix(bare)
        } else {
            Target::Name(bare)
        };
        Ok(AllowEntry { target, port })
    }

    /// Whether this entry allows dialling `ip:port` reached through the name `host`.
    fn allows(&self, host: Option<&str>, ip: IpAddr, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        match &self.target {
            Target::Block { network, prefix } => {
                contains(*network, *prefix, ip) || contains(*network, *prefix, canonical(ip))
            }
            Target::Name(name) => host.is_some_and(|h| normal(h) == *name),
            Target::Suffix(suffix) => host.is_some_and(|h| {
                let h = normal(h);
                h.len() > suffix.len() + 1
                    && h.ends_with(suffix.as_str())
                    && h[..h.len() - suffix.len()].ends_with('.')
            }),
        }
    }

    fn is_address(&self) -> bool {
        matches!(self.target, Target::Block { .. })
    }
}

impl fmt::Display for AllowEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let target = match &self.target {
            Target::Block { network, prefix } => {
                let full = if network.is_ipv4() { 32 } else { 128 };
                match (network, self.port) {
                    (IpAddr::V6(_), Some(_)) if *prefix == full => format!("[{network}]"),
                    (IpAddr::V6(_), Some(_)) => format!("[{network}/{prefix}]"),
                    _ if *prefix == full => network.to_string(),
                    _ => format!("{network}/{prefix}"),
                }
            }
            Target::Name(name) => name.clone(),
            Target::Suffix(suffix) => format!("*.{suffix}"),
        };
        match self.port {
            Some(port) => write!(f, "{target}:{port}"),
            None => f.write_str(&target),
        }
    }
}

impl AllowList {
    /// Comma- or whitespace-separated entries; the first bad one is the error.
    pub fn parse(text: &str) -> Result<AllowList, String> {
        Self::from_items(
            text.split(|c: char| c == ',' || c.is_whitespace())
                .filter(|s| !s.is_empty()),
        )
    }

    pub fn from_items<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<AllowList, String> {
        let entries = items
            .into_iter()
            .map(AllowEntry::parse)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(AllowList { entries })
    }

    pub fn from_entries(entries: Vec<AllowEntry>) -> AllowList {
        let mut list = AllowList::default();
        for entry in entries {
            if !list.entries.contains(&entry) {
                list.entries.push(entry);
            }
        }
        list
    }

    /// 127.0.0.0/8 and ::1: what `shoal dev` and the test suites allow, so handlers on this
    /// machine can be reached.
    pub fn loopback() -> AllowList {
        AllowList::parse("127.0.0.0/8,::1").expect("the loopback entries parse")
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[AllowEntry] {
        &self.entries
    }

    /// Both lists' entries: the platform's list and a tenant's own.
    pub fn union(&self, other: &AllowList) -> AllowList {
        let mut entries = self.entries.clone();
        entries.extend(
            other
                .entries
                .iter()
                .filter(|e| !self.entries.contains(e))
                .cloned(),
        );
        AllowList { entries }
    }

    pub(super) fn allows(&self, host: Option<&str>, ip: IpAddr, port: u16) -> bool {
        self.entries.iter().any(|e| e.allows(host, ip, port))
    }

    /// Only name and suffix entries: whether the name `host` is named on `port`.
    pub(super) fn allows_name(&self, host: &str, port: u16) -> bool {
        self.entries.iter().any(|e| {
            !e.is_address() && e.allows(Some(host), std::net::Ipv4Addr::UNSPECIFIED.into(), port)
        })
    }

    /// Only address entries that name the port: what it takes to reach Shoal's own listeners.
    pub(super) fn allows_exactly(&self, ip: IpAddr, port: u16) -> bool {
        self.entries
            .iter()
            .any(|e| e.is_address() && e.port == Some(port) && e.allows(None, ip, port))
    }

    /// Only address entries: a name entry does not make the metadata service reachable.
    pub(super) fn allows_address(&self, ip: IpAddr, port: u16) -> bool {
        self.entries
            .iter()
            .any(|e| e.is_address() && e.allows(None, ip, port))
    }
}

impl fmt::Display for AllowList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let items: Vec<String> = self.entries.iter().map(ToString::to_string).collect();
        f.write_str(&items.join(","))
    }
}

fn normal(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// `target` and its port: `host:port`, `[v6]:port`, `[v6/len]:port`, or `v4/len:port`.
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let port = |p: &str| {
        p.parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| format!("`{text}`: {p:?} is not a port (1-65535)"))
    };
    if let Some(rest) = text.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or_else(|| format!("`{text}`: a `[` without its `]`"))?;
        return match after {
            "" => Ok((inside, None)),
            _ => match after.strip_prefix(':') {
                Some(p) => Ok((inside, Some(port(p)?))),
                None => Err(format!("`{text}`: only `:port` may follow `]`")),
            },
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, None)),
        1 => {
            let (target, p) = text.split_once(':').expect("one colon");
            Ok((target, Some(port(p)?)))
        }
        // Bare IPv6, with or without a prefix length: no port.
        _ => Ok((text, None)),
    }
}

fn mask(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4((bits & mask).into())
        }
        IpAddr::V6(v6) => {
            let bits = u128::from(v6);
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6((bits & mask).into())
        }
    }
}

fn contains(network: IpAddr, prefix: u8, ip: IpAddr) -> bool {
    network.is_ipv4() == ip.is_ipv4() && mask(ip, prefix) == network
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn entries_parse_and_print_back() {
        for (text, printed) in [
            ("10.0.0.0/8", "10.0.0.0/8"),
            ("10.1.2.3/8", "10.0.0.0/8"),
            ("10.1.2.3:8080", "10.1.2.3:8080"),
            ("10.0.0.0/8:443", "10.0.0.0/8:443"),
            ("fd00::/8", "fd00::/8"),
            ("[fd00::/8]:443", "[fd00::/8]:443"),
            ("[::1]:7071", "[::1]:7071"),
            ("::1", "::1"),
            ("Handler.Internal.", "handler.internal"),
            ("*.svc.cluster.local:80", "*.svc.cluster.local:80"),
            ("0x7f.1", "127.0.0.1"),
        ] {
            let entry = AllowEntry::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(entry.to_string(), printed, "{text}");
        }
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        for (text, needle) in [
            ("", "empty"),
            ("10.0.0.0/33", "prefix length"),
            ("0.0.0.0/0", "every address"),
            ("10.0.0.1:0", "not a port"),
            ("10.0.0.1:http", "not a port"),
            ("[::1", "without its"),
            ("[::1]x", "only `:port`"),
            ("bad name!", "neither"),
            ("*.", "neither"),
            ("nothere/8", "not an IP"),
        ] {
            let error = AllowEntry::parse(text).expect_err(text);
            assert!(error.contains(needle), "{text}: {error}");
        }
    }

    #[test]
    fn blocks_ports_and_names_allow_what_they_say() {
        let list = AllowList::parse(
            "10.0.0.0/8, 192.168.1.5:8080,*.svc.cluster.local,handler.internal:443",
        )
        .unwrap();
        assert!(list.allows(None, ip("10.9.8.7"), 1));
        assert!(list.allows(None, ip("::ffff:10.9.8.7"), 1));
        assert!(list.allows(None, ip("192.168.1.5"), 8080));
        assert!(!list.allows(None, ip("192.168.1.5"), 8081));
        assert!(!list.allows(None, ip("192.168.1.6"), 8080));
        assert!(list.allows(Some("a.ns.svc.cluster.local"), ip("172.16.0.1"), 80));
        assert!(!list.allows(Some("svc.cluster.local"), ip("172.16.0.1"), 80));
        assert!(!list.allows(Some("evilsvc.cluster.local"), ip("172.16.0.1"), 80));
        assert!(list.allows(Some("HANDLER.internal."), ip("172.16.0.1"), 443));
        assert!(!list.allows(Some("handler.internal"), ip("172.16.0.1"), 80));
        assert!(!list.allows_address(ip("172.16.0.1"), 443));
    }

    #[test]
    fn union_keeps_both_lists_once() {
        let platform = AllowList::parse("10.0.0.0/8").unwrap();
        let tenant = AllowList::parse("10.0.0.0/8,192.168.0.0/16").unwrap();
        assert_eq!(
            platform.union(&tenant).to_string(),
            "10.0.0.0/8,192.168.0.0/16"
        );
    }
}
