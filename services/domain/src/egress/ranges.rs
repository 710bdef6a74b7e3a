//! Which addresses a tenant's destination may not be: the special-purpose ranges of the IANA
//! IPv4 and IPv6 registries (RFC 6890) that reach the platform's own network, or nothing at all.
//! IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`,
//! NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) are judged by that address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::Serialize;

/// Why an address is refused; shown in diagnostics and counted in `/metrics` by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    /// 127.0.0.0/8, ::1, and the name `localhost`.
    Loopback,
    /// 0.0.0.0/8 and `::`: dialled, they reach this host.
    Unspecified,
    /// The clouds' instance metadata services: 169.254.169.254, `fd00:ec2::254`, and the names
    /// `metadata.google.internal` and `metadata`.
    Metadata,
    /// 169.254.0.0/16 and fe80::/10.
    LinkLocal,
    /// RFC 1918: 10/8, 172.16/12, 192.168/16.
    Private,
    /// RFC 6598 carrier-grade NAT, 100.64/10 (also what many clusters use for pods).
    SharedAddressSpace,
    /// fc00::/7.
    UniqueLocal,
    /// 224/4 and ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// The remaining IANA special-purpose blocks: 192.0.0/24, the documentation nets, 198.18/15
    /// benchmarking, 240/4, 100::/64 discard, 2001:db8::/32.
    Reserved,
    /// An address and port Shoal itself listens on.
    Platform,
}

impl Rule {
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Loopback => "loopback",
            Rule::Unspecified => "unspecified",
            Rule::Metadata => "metadata",
            Rule::LinkLocal => "link-local",
            Rule::Private => "private",
            Rule::SharedAddressSpace => "shared-address-space",
            Rule::UniqueLocal => "unique-local",
            Rule::Multicast => "multicast",
            Rule::Broadcast => "broadcast",
            Rule::Reserved => "reserved",
            Rule::Platform => "platform",
        }
    }

    pub const ALL: [Rule; 11] = [
        Rule::Loopback,
        Rule::Unspecified,
        Rule::Metadata,
        Rule::LinkLocal,
        Rule::Private,
        Rule::SharedAddressSpace,
        Rule::UniqueLocal,
        Rule::Multicast,
        Rule::Broadcast,
        Rule::Reserved,
        Rule::Platform,
    ];
}

impl std::fmt::Display for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The rule that refuses `ip` by its address alone, or `None` for a global address.
pub fn classify(ip: IpAddr) -> Option<Rule> {
    match canonical(ip) {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// The IPv4 address an IPv6 address carries (mapped, compatible, NAT64 well-known prefix,
/// 6to4), or the address itself.
pub fn canonical(ip: IpAddr) -> IpAddr {
    let IpAddr::V6(v6) = ip else { return ip };
    let s = v6.segments();
    let embedded = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated but still routed by some
    // stacks); `::` and `::1` themselves are IPv6's own unspecified and loopback.
    if s[..5] == [0; 5] && s[5] == 0xffff {
        return IpAddr::V4(embedded(s[6], s[7]));
    }
    if s[..6] == [0; 6] && (s[6] != 0 || s[7] > 1) {
        return IpAddr::V4(embedded(s[6], s[7]));
    }
    // 64:ff9b::/96 (RFC 6052) and 64:ff9b:1::/48 (RFC 8215, local-use NAT64).
    if s[0] == 0x64 && s[1] == 0xff9b && (s[2..6] == [0; 4] || s[2] == 1) {
        return IpAddr::V4(embedded(s[6], s[7]));
    }
    // 2002:AABB:CCDD::/48 (6to4) reaches AA.BB.CC.DD.
    if s[0] == 0x2002 {
        return IpAddr::V4(embedded(s[1], s[2]));
    }
    ip
}

fn classify_v4(ip: Ipv4Addr) -> Option<Rule> {
    let [a, b, c, _] = ip.octets();
    let rule = match (a, b, c) {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => Rule::Metadata,
        _ if ip.is_broadcast() => Rule::Broadcast,
        (0, ..) => Rule::Unspecified,
        (127, ..) => Rule::Loopback,
        (10, ..) | (172, 16..=31, _) | (192, 168, _) => Rule::Private,
        (100, 64..=127, _) => Rule::SharedAddressSpace,
        (169, 254, _) => Rule::LinkLocal,
        (224..=239, ..) => Rule::Multicast,
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (198, 18..=19, _) => {
            Rule::Reserved
        }
        (240..=255, ..) => Rule::Reserved,
        _ => return None,
    };
    Some(rule)
}

fn classify_v6(ip: Ipv6Addr) -> Option<Rule> {
    let s = ip.segments();
    let rule = match s {
        _ if ip.is_unspecified() => Rule::Unspecified,
        _ if ip.is_loopback() => Rule::Loopback,
        // AWS's IPv6 instance metadata endpoint.
        [0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254] => Rule::Metadata,
        [first, ..] if first & 0xffc0 == 0xfe80 => Rule::LinkLocal,
        // fec0::/10, the deprecated site-local range, is still local on some stacks.
        [first, ..] if first & 0xffc0 == 0xfec0 => Rule::Private,
        [first, ..] if first & 0xfe00 == 0xfc00 => Rule::UniqueLocal,
        [first, ..] if first & 0xff00 == 0xff00 => Rule::Multicast,
        [0x0100, 0, 0, 0, ..] | [0x2001, 0x0db8, ..] => Rule::Reserved,
        // The rest of ::/8 that is not a carried IPv4 address (handled by `canonical`).
        [0, ..] => Rule::Reserved,
        _ => return None,
    };
    Some(rule)
}

/// Names that reach this host or the metadata service whatever a resolver says, refused before
/// any lookup: `localhost` and `*.localhost` (RFC 6761), the GCP/Azure metadata names.
pub fn classify_name(host: &str) -> Option<Rule> {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return Some(Rule::Loopback);
    }
    if matches!(
        host.as_str(),
        "metadata.google.internal" | "metadata" | "metadata.azure.internal"
    ) {
        return Some(Rule::Metadata);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(text: &str) -> Option<Rule> {
        classify(text.parse().unwrap())
    }

    #[test]
    fn every_refused_range_is_classified_by_its_rule() {
        let table = [
            ("127.0.0.1", Rule::Loopback),
            ("127.255.255.254", Rule::Loopback),
            ("::1", Rule::Loopback),
            ("0.0.0.0", Rule::Unspecified),
            ("0.1.2.3", Rule::Unspecified),
            ("::", Rule::Unspecified),
            ("169.254.169.254", Rule::Metadata),
            ("fd00:ec2::254", Rule::Metadata),
            ("169.254.0.1", Rule::LinkLocal),
            ("fe80::1", Rule::LinkLocal),
            ("febf::1", Rule::LinkLocal),
            ("10.0.0.1", Rule::Private),
            ("172.16.0.1", Rule::Private),
            ("172.31.255.255", Rule::Private),
            ("192.168.1.1", Rule::Private),
            ("fec0::1", Rule::Private),
            ("100.64.0.1", Rule::SharedAddressSpace),
            ("100.127.255.255", Rule::SharedAddressSpace),
            ("fc00::1", Rule::UniqueLocal),
            ("fd12:3456::1", Rule::UniqueLocal),
            ("224.0.0.1", Rule::Multicast),
            ("239.255.255.250", Rule::Multicast),
            ("ff02::1", Rule::Multicast),
            ("255.255.255.255", Rule::Broadcast),
            ("192.0.0.8", Rule::Reserved),
            ("192.0.2.1", Rule::Reserved),
            ("198.51.100.7", Rule::Reserved),
            ("203.0.113.9", Rule::Reserved),
            ("198.18.0.1", Rule::Reserved),
            ("240.0.0.1", Rule::Reserved),
            ("100::1", Rule::Reserved),
            ("2001:db8::1", Rule::Reserved),
            // IPv4 carried in IPv6 is judged as the IPv4 address.
            ("::ffff:169.254.169.254", Rule::Metadata),
            ("::ffff:127.0.0.1", Rule::Loopback),
            ("::ffff:10.1.2.3", Rule::Private),
            ("::127.0.0.1", Rule::Loopback),
            ("::a9fe:a9fe", Rule::Metadata),
            ("64:ff9b::a9fe:a9fe", Rule::Metadata),
            ("64:ff9b::7f00:1", Rule::Loopback),
            ("64:ff9b:1::c0a8:101", Rule::Private),
            ("2002:7f00:1::", Rule::Loopback),
            ("2002:a9fe:a9fe::1", Rule::Metadata),
        ];
        for (address, expected) in table {
            assert_eq!(rule(address), Some(expected), "{address}");
        }
    }

    #[test]
    fn global_addresses_pass() {
        for address in [
            "1.1.1.1",
            "8.8.8.8",
            "100.63.255.255",
            "100.128.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "169.253.255.255",
            "192.169.0.1",
            "198.17.255.255",
            "198.20.0.0",
            "223.255.255.255",
            "2606:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(rule(address), None, "{address}");
        }
    }

    #[test]
    fn names_that_always_reach_this_host_or_the_metadata_service() {
        for (name, expected) in [
            ("localhost", Some(Rule::Loopback)),
            ("LOCALHOST.", Some(Rule::Loopback)),
            ("api.localhost", Some(Rule::Loopback)),
            ("metadata.google.internal", Some(Rule::Metadata)),
            ("metadata", Some(Rule::Metadata)),
            ("localhost.example.com", None),
            ("handler.example.com", None),
        ] {
            assert_eq!(classify_name(name), expected, "{name}");
        }
    }

    #[test]
    fn rule_names_are_the_metric_labels() {
        for rule in Rule::ALL {
            let json = serde_json::to_value(rule).unwrap();
            assert_eq!(json, rule.as_str());
        }
    }
}
