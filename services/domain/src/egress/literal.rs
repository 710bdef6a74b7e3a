//! Host text as the platform's resolvers read it. `getaddrinfo` (through `inet_aton`) and the
//! WHATWG URL parser both take IPv4 in one to four parts, each decimal, octal (`0` prefix) or
//! hex (`0x` prefix), the last part filling the remaining bytes: `2852039166`, `0xa9fea9fe`,
//! `0251.0376.0251.0376` and `169.254.43518` are all 169.254.169.254. A check that only knew the
//! dotted-quad spelling would let these through as "names".

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The address `host` spells, if it spells one: IPv4 in any `inet_aton` spelling, IPv6 with or
/// without brackets and with or without a zone id (`fe80::1%eth0`, `[fe80::1%25eth0]`).
pub fn parse_host(host: &str) -> Option<IpAddr> {
    let host = host.trim_end_matches('.');
    let unbracketed = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if unbracketed.contains(':') {
        let address = unbracketed.split('%').next().unwrap_or(unbracketed);
        return address.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    parse_ipv4(unbracketed).map(IpAddr::V4)
}

fn parse_ipv4(text: &str) -> Option<Ipv4Addr> {
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let numbers = parts
        .iter()
        .map(|part| parse_part(part))
        .collect::<Option<Vec<u64>>>()?;
    let (last, leading) = numbers.split_last()?;
    if leading.iter().any(|&n| n > 255) {
        return None;
    }
    let last_bits = 8 * (4 - leading.len() as u32);
    if *last >= 1u64 << last_bits {
        return None;
    }
    let mut value: u64 = 0;
    for (i, &n) in leading.iter().enumerate() {
        value |= n << (24 - 8 * i as u32);
    }
    value |= last;
    u32::try_from(value).ok().map(Ipv4Addr::from)
}

fn parse_part(part: &str) -> Option<u64> {
    if part.is_empty() {
        return None;
    }
    let (digits, radix) =
        if let Some(hex) = part.strip_prefix("0x").or_else(|| part.strip_prefix("0X")) {
            (hex, 16)
        } else if part.len() > 1 && part.starts_with('0') {
            (&part[1..], 8)
        } else {
            (part, 10)
        };
    if digits.is_empty() {
        // `0x` alone is 0 for inet_aton and the URL parser.
        return (radix == 16).then_some(0);
    }
    if digits.len() > 11 || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn every_spelling_of_the_metadata_address_is_that_address() {
        let metadata: IpAddr = "169.254.169.254".parse().unwrap();
        for spelling in [
            "169.254.169.254",
            "2852039166",
            "0xa9fea9fe",
            "0XA9FEA9FE",
            "0251.0376.0251.0376",
            "0xa9.0xfe.0xa9.0xfe",
            "169.254.43518",
            "169.16689662",
            "0251.0xfe.169.0376",
            "169.254.169.254.",
        ] {
            assert_eq!(parse_host(spelling), Some(metadata), "{spelling}");
        }
    }

    #[test]
    fn loopback_spellings() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        for spelling in [
            "127.1",
            "0x7f.1",
            "017700000001",
            "2130706433",
            "0177.0.0.1",
        ] {
            assert_eq!(parse_host(spelling), Some(loopback), "{spelling}");
        }
        assert_eq!(parse_host("0"), Some("0.0.0.0".parse().unwrap()));
    }

    #[test]
    fn ipv6_with_brackets_and_zone_ids() {
        for (text, expected) in [
            ("::1", "::1"),
            ("[::1]", "::1"),
            ("fe80::1%eth0", "fe80::1"),
            ("[fe80::1%25eth0]", "fe80::1"),
            ("[::ffff:169.254.169.254]", "::ffff:169.254.169.254"),
            ("fd00:ec2::254", "fd00:ec2::254"),
        ] {
            assert_eq!(parse_host(text), Some(expected.parse().unwrap()), "{text}");
        }
    }

    #[test]
    fn names_and_malformed_numbers_are_not_addresses() {
        for text in [
            "handler.example.com",
            "localhost",
            "1.2.3.4.5",
            "256.1.1.1",
            "1.2.3.256",
            "4294967296",
            "08.1.1.1",
            "1e3",
            "0x1g",
            "1..2",
            "",
            "[::1",
            "example.123",
        ] {
            assert_eq!(parse_host(text), None, "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn dotted_quads_in_any_radix_parse_to_themselves(octets: [u8; 4], radixes: [u8; 4]) {
            let spelled: Vec<String> = octets.iter().zip(radixes).map(|(o, r)| match r % 3 {
                0 => o.to_string(),
                1 => format!("0x{o:x}"),
                _ => format!("0{o:o}"),
            }).collect();
            let text = spelled.join(".");
            prop_assert_eq!(parse_host(&text), Some(IpAddr::V4(Ipv4Addr::from(octets))));
        }

        #[test]
        fn one_number_is_the_whole_address(value: u32) {
            prop_assert_eq!(parse_host(&value.to_string()), Some(IpAddr::V4(Ipv4Addr::from(value))));
            prop_assert_eq!(parse_host(&format!("{value:#x}")), Some(IpAddr::V4(Ipv4Addr::from(value))));
        }
    }
}
