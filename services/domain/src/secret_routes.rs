//! Settings that decide where a connection's credentials go. Changing one is as good as reading
//! the credential: point `<conn>__authorityHost` at a host you control and the worker posts the
//! stored client secret there, or the federation assertions it signs as the app's identity;
//! point a client-secret connection's service endpoint there and it receives bearer tokens. So
//! a write that changes such a setting needs the rights to read what would be sent
//! ([`REQUIRED_ACTIONS`]), not just `apps/write`.

use std::collections::BTreeMap;

use crate::rbac::actions;

/// What a caller must be allowed, at the app, to change where a credential is sent: the app
/// settings' values (client secrets) and the identity endpoint (the app identity's tokens and
/// assertions).
pub const REQUIRED_ACTIONS: [&str; 2] = [
    actions::APP_SETTINGS_LIST,
    actions::APP_IDENTITY_ENDPOINT_LIST,
];

/// Where a connection's sign-in goes, whatever its credential.
const AUTHORITY_SUFFIXES: [&str; 1] = ["__authorityhost"];
/// Where a connection's requests (with their bearer tokens) go.
const ENDPOINT_SUFFIXES: [&str; 3] = [
    "__queueserviceuri",
    "__serviceuri",
    "__fullyqualifiednamespace",
];
/// The stored secret that makes a connection's endpoint a secret route.
const SECRET_SUFFIX: &str = "__clientsecret";

/// Whether a setting of this name can route a credential (so a write that has one needs the
/// app's current settings to compare with).
pub fn may_route(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    AUTHORITY_SUFFIXES
        .iter()
        .chain(&ENDPOINT_SUFFIXES)
        .any(|s| name.ends_with(s))
}

/// The settings, by name as written, whose value differs between `before` and `after` (added,
/// removed or changed) and that route a credential: any `…__authorityHost`, and the service
/// endpoint of a connection that carries a `…__clientSecret` before or after.
pub fn changed_secret_routes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let lower = |m: &BTreeMap<String, String>| -> BTreeMap<String, (String, String)> {
        m.iter()
            .map(|(k, v)| (k.to_ascii_lowercase(), (k.clone(), v.clone())))
            .collect()
    };
    let (before, after) = (lower(before), lower(after));
    let has_secret = |prefix: &str| {
        let key = format!("{prefix}{SECRET_SUFFIX}");
        before.contains_key(&key) || after.contains_key(&key)
    };
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|name| {
            let routes = AUTHORITY_SUFFIXES.iter().any(|s| name.ends_with(s))
                || ENDPOINT_SUFFIXES
                    .iter()
                    .any(|s| name.strip_suffix(s).is_some_and(has_secret));
            routes && before.get(*name).map(|v| &v.1) != after.get(*name).map(|v| &v.1)
        })
        .map(|name| {
            after
                .get(name)
                .or_else(|| before.get(name))
                .map(|(written, _)| written.clone())
                .unwrap_or_else(|| name.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn authority_hosts_are_routes_whatever_the_credential() {
        let before = settings(&[("Store__queueServiceUri", "https://a.queue.core.windows.net")]);
        let after = settings(&[
            ("Store__queueServiceUri", "https://a.queue.core.windows.net"),
            ("Store__authorityHost", "https://attacker.example"),
        ]);
        assert_eq!(
            changed_secret_routes(&before, &after),
            ["Store__authorityHost"]
        );
        assert_eq!(
            changed_secret_routes(&after, &before),
            ["Store__authorityHost"]
        );
        assert!(changed_secret_routes(&after, &after).is_empty());
    }

    #[test]
    fn endpoints_are_routes_only_beside_a_client_secret() {
        let secret = settings(&[
            ("Store__queueServiceUri", "https://a.queue.core.windows.net"),
            ("Store__clientSecret", "s3cret"),
        ]);
        let moved = settings(&[
            ("Store__queueServiceUri", "https://attacker.example"),
            ("Store__clientSecret", "s3cret"),
        ]);
        assert_eq!(
            changed_secret_routes(&secret, &moved),
            ["Store__queueServiceUri"]
        );
        let plain = settings(&[("Store__queueServiceUri", "https://a.queue.core.windows.net")]);
        let plain_moved =
            settings(&[("Store__queueServiceUri", "https://b.queue.core.windows.net")]);
        assert!(changed_secret_routes(&plain, &plain_moved).is_empty());
        // Names are compared as Azure compares them, ignoring case.
        let other_case = settings(&[
            ("STORE__QUEUESERVICEURI", "https://attacker.example"),
            ("store__clientsecret", "s3cret"),
        ]);
        assert_eq!(
            changed_secret_routes(&secret, &other_case),
            ["STORE__QUEUESERVICEURI"]
        );
    }

    #[test]
    fn other_settings_are_not_routes() {
        let before = settings(&[("Region", "a"), ("Store__clientId", "x")]);
        let after = settings(&[("Region", "b"), ("Store__clientId", "y")]);
        assert!(changed_secret_routes(&before, &after).is_empty());
    }
}
