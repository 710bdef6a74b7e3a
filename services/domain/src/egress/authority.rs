//! Where a connection's client secret may be sent: an app connection's `…__authorityHost` must
//! be one of Entra ID's authorities — the public cloud's and the sovereign clouds' still in
//! service — or a host an operator allowed (`--egress-allow`, or the tenant's `egressAllow`).
//! Otherwise a tenant could aim the token request, which carries the secret, at any HTTPS host.
//!
//! The authorities are the ones Azure's identity libraries know
//! (`Azure/azure-sdk-for-java` `sdk/identity/azure-identity/src/main/java/com/azure/identity/KnownAuthorityHosts.java`,
//! `Azure/azure-sdk-for-rust` `sdk/core/azure_core/src/constants.rs`), without Azure Germany's
//! `login.microsoftonline.de`, closed in 2021: an operator who still needs it allows it.

use super::EgressPolicy;
use super::literal::parse_host;
use crate::validation::ValidationError;

/// Entra ID's authority hosts: the public cloud, Azure Government, Azure operated by 21Vianet.
pub const ENTRA_AUTHORITIES: [&str; 3] = [
    "login.microsoftonline.com",
    "login.microsoftonline.us",
    "login.chinacloudapi.cn",
];

impl EgressPolicy {
    /// Whether `url` may be an authority host: an Entra ID authority on the HTTPS port, or a
    /// host an operator's entry names (a name or `*.suffix` entry for a name, an address or
    /// block entry for a literal address). Where the name then resolves to is checked as for
    /// any destination when the token is requested.
    pub fn check_authority(&self, url: &url::Url) -> Result<(), String> {
        let Some(host) = url.host_str() else {
            return Err("has no host".into());
        };
        let port = url.port_or_known_default().unwrap_or(0);
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let name = bare.trim_end_matches('.').to_ascii_lowercase();
        if port == 443 && ENTRA_AUTHORITIES.contains(&name.as_str()) {
            return Ok(());
        }
        let allowed = match parse_host(bare) {
            Some(ip) => self.allow().allows(None, ip, port),
            None => self.allow().allows_name(&name, port),
        };
        if allowed {
            return Ok(());
        }
        Err(format!(
            "{host}{} is not an Entra ID authority ({}) and the platform has not allowed it: \
             the token request carries the connection's client secret",
            url.port().map(|p| format!(":{p}")).unwrap_or_default(),
            ENTRA_AUTHORITIES.join(", ")
        ))
    }
}

/// A 422 at `field` when `url` may not be an authority host (see
/// [`EgressPolicy::check_authority`]).
pub fn check_authority_field(
    policy: &EgressPolicy,
    field: &str,
    url: &url::Url,
) -> Result<(), ValidationError> {
    policy
        .check_authority(url)
        .map_err(|why| ValidationError::single(field, why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::egress::AllowList;

    fn policy(allow: &str) -> EgressPolicy {
        EgressPolicy::new(AllowList::parse(allow).unwrap(), Vec::new())
    }

    #[test]
    fn entra_authorities_pass_and_other_hosts_need_an_operator() {
        // (authority host, operator's allow list, allowed)
        let cases = [
            ("https://login.microsoftonline.com", "", true),
            ("https://login.microsoftonline.com/", "", true),
            ("https://LOGIN.microsoftonline.com.", "", true),
            ("https://login.microsoftonline.us", "", true),
            ("https://login.chinacloudapi.cn", "", true),
            // not Entra's
            ("https://login.microsoftonline.de", "", false),
            ("https://attacker.example", "", false),
            (
                "https://login.microsoftonline.com.attacker.example",
                "",
                false,
            ),
            ("https://evil-login.microsoftonline.com", "", false),
            // Entra's name on another port
            ("https://login.microsoftonline.com:8443", "", false),
            // what an operator allows
            (
                "https://login.microsoftonline.de",
                "login.microsoftonline.de",
                true,
            ),
            ("https://sts.corp.example", "*.corp.example", true),
            ("https://sts.corp.example:8443", "*.corp.example:443", false),
            (
                "https://sts.corp.example:8443",
                "sts.corp.example:8443",
                true,
            ),
            ("https://127.0.0.1:9443", "127.0.0.0/8", true),
            ("https://[::1]:9443", "::1", true),
            ("https://127.0.0.1:9443", "sts.corp.example", false),
            // a block entry does not allow a name, nor a name entry an address
            ("https://sts.corp.example", "10.0.0.0/8", false),
        ];
        for (url, allow, want) in cases {
            let got = policy(allow).check_authority(&url::Url::parse(url).unwrap());
            assert_eq!(got.is_ok(), want, "{url} with [{allow}]: {got:?}");
        }
    }

    #[test]
    fn a_refused_authority_is_a_422_naming_the_setting_and_the_authorities() {
        let err = check_authority_field(
            &EgressPolicy::strict(),
            "appSettings.Store__authorityHost",
            &url::Url::parse("https://attacker.example").unwrap(),
        )
        .unwrap_err();
        let shown = format!("{err:?}");
        assert!(
            shown.contains("appSettings.Store__authorityHost"),
            "{shown}"
        );
        assert!(shown.contains("login.microsoftonline.com"), "{shown}");
        assert!(shown.contains("attacker.example"), "{shown}");
    }
}
