//! Table tests for `connection.rs`.

use super::*;

pub(super) const KEY: &str = "a2V5a2V5a2V5a2V5a2V5a2V5";

pub(super) fn settings(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

pub(super) fn storage(
    connection: Option<&str>,
    pairs: &[(&str, &str)],
) -> Result<ConnectionSpec, ConnectionError> {
    resolve(ConnectionKind::StorageQueue, connection, &settings(pairs))
}

pub(super) fn service_bus(
    connection: Option<&str>,
    pairs: &[(&str, &str)],
) -> Result<ConnectionSpec, ConnectionError> {
    resolve(ConnectionKind::ServiceBus, connection, &settings(pairs))
}

pub(super) fn identity(spec: Result<ConnectionSpec, ConnectionError>) -> IdentityConnection {
    match spec {
        Ok(ConnectionSpec::Identity(i)) => i,
        other => panic!("expected identity, got {other:?}"),
    }
}

pub(super) fn conn_str(spec: Result<ConnectionSpec, ConnectionError>) -> StorageConnectionString {
    match spec {
        Ok(ConnectionSpec::StorageConnectionString(s)) => s,
        other => panic!("expected storage connection string, got {other:?}"),
    }
}

pub(super) fn account_string(account: &str) -> String {
    format!(
        "DefaultEndpointsProtocol=https;AccountName={account};AccountKey={KEY};EndpointSuffix=core.windows.net"
    )
}

#[test]
fn connection_name_lookup_order() {
    let acct = |name: &str| account_string(name);
    type Case<'a> = (Option<&'a str>, Vec<(&'a str, String)>, &'a str);
    let cases: [Case; 9] = [
        // Empty connection → AzureWebJobsStorage.
        (
            None,
            vec![("AzureWebJobsStorage", acct("hoststore"))],
            "AzureWebJobsStorage",
        ),
        (
            Some(""),
            vec![("AzureWebJobsStorage", acct("hoststore"))],
            "AzureWebJobsStorage",
        ),
        (
            Some("  "),
            vec![("AzureWebJobsStorage", acct("hoststore"))],
            "AzureWebJobsStorage",
        ),
        // AzureWebJobs<name> is preferred over <name>.
        (
            Some("MyStorage"),
            vec![
                ("AzureWebJobsMyStorage", acct("prefixed")),
                ("MyStorage", acct("plain")),
            ],
            "AzureWebJobsMyStorage",
        ),
        // The plain name works on its own.
        (
            Some("MyStorage"),
            vec![("MyStorage", acct("plain"))],
            "MyStorage",
        ),
        // A name that already has the prefix is used as is.
        (
            Some("AzureWebJobsStorage"),
            vec![("AzureWebJobsStorage", acct("hoststore"))],
            "AzureWebJobsStorage",
        ),
        // Names match case-insensitively, like .NET configuration.
        (
            Some("mystorage"),
            vec![("MyStorage", acct("plain"))],
            "MyStorage",
        ),
        // A blank value does not shadow a later candidate.
        (
            Some("MyStorage"),
            vec![
                ("AzureWebJobsMyStorage", " ".to_owned()),
                ("MyStorage", acct("plain")),
            ],
            "MyStorage",
        ),
        // Azure falls back from AzureWebJobsStorage to a setting named Storage.
        (None, vec![("Storage", acct("plain"))], "Storage"),
    ];
    for (connection, pairs, want) in cases {
        let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let spec = storage(connection, &pairs).unwrap_or_else(|e| panic!("{connection:?}: {e}"));
        assert_eq!(spec.setting(), want, "{connection:?}");
    }
}

#[test]
fn single_value_beats_prefix_group() {
    let plain = account_string("plain");
    let spec = storage(
        Some("MyStorage"),
        &[
            ("MyStorage", &plain),
            (
                "MyStorage__queueServiceUri",
                "https://grp.queue.core.windows.net",
            ),
        ],
    );
    assert_eq!(conn_str(spec).account_name, "plain");
}

#[test]
fn azure_web_jobs_prefix_applies_to_groups_too() {
    let plain = account_string("plain");
    let spec = storage(
        Some("MyStorage"),
        &[
            (
                "AzureWebJobsMyStorage__queueServiceUri",
                "https://grp.queue.core.windows.net",
            ),
            ("MyStorage", &plain),
        ],
    );
    let i = identity(spec);
    assert_eq!(i.setting_prefix, "AzureWebJobsMyStorage");
}

#[test]
fn identity_based_storage_queue_uris() {
    let cases = [
        (
            vec![("Q__queueServiceUri", "https://a.queue.core.windows.net")],
            "https://a.queue.core.windows.net/",
        ),
        (
            vec![("Q__serviceUri", "https://b.queue.core.windows.net")],
            "https://b.queue.core.windows.net/",
        ),
        (
            vec![
                ("Q__serviceUri", "https://b.queue.core.windows.net"),
                ("Q__queueServiceUri", "https://a.queue.core.windows.net"),
            ],
            "https://a.queue.core.windows.net/",
        ),
        (
            vec![("Q:queueServiceUri", "https://c.queue.core.windows.net")],
            "https://c.queue.core.windows.net/",
        ),
        (
            vec![("Q__accountName", "hoststore")],
            "https://hoststore.queue.core.windows.net/",
        ),
        (
            vec![(
                "Q__queueServiceUri",
                "https://127.0.0.1:10001/devstoreaccount1",
            )],
            "https://127.0.0.1:10001/devstoreaccount1",
        ),
    ];
    for (pairs, want) in cases {
        let i = identity(storage(Some("Q"), &pairs));
        assert_eq!(i.service_uri.as_str(), want, "{pairs:?}");
        assert_eq!(i.credential, CredentialKind::Default);
    }
}

#[test]
fn authority_host_is_optional_and_kept() {
    let uri = ("Q__queueServiceUri", "https://a.queue.core.windows.net");
    let cases = [
        (vec![], None),
        (
            vec![("Q__authorityHost", "https://login.microsoftonline.us")],
            Some("https://login.microsoftonline.us/"),
        ),
        (
            vec![("Q:authorityHost", "https://127.0.0.1:8443")],
            Some("https://127.0.0.1:8443/"),
        ),
        (
            vec![
                ("Q__credential", "clientsecret"),
                ("Q__tenantId", "t"),
                ("Q__clientId", "c"),
                ("Q__clientSecret", "s"),
                ("Q__authorityHost", "  https://login.chinacloudapi.cn  "),
            ],
            Some("https://login.chinacloudapi.cn/"),
        ),
        (vec![("Q__authorityHost", " ")], None),
    ];
    for (mut pairs, want) in cases {
        pairs.push(uri);
        let i = identity(storage(Some("Q"), &pairs));
        assert_eq!(
            i.authority_host.as_ref().map(Url::as_str),
            want,
            "{pairs:?}"
        );
    }
}

#[test]
fn credential_kinds() {
    let uri = ("Q__queueServiceUri", "https://a.queue.core.windows.net");
    let cases = [
        (vec![], CredentialKind::Default),
        (
            vec![("Q__credential", "managedidentity")],
            CredentialKind::ManagedIdentity,
        ),
        (
            vec![("Q__credential", "ManagedIdentity"), ("Q__clientId", "cid")],
            CredentialKind::ManagedIdentity,
        ),
        (
            vec![("Q__credential", "WORKLOADIDENTITY")],
            CredentialKind::WorkloadIdentity,
        ),
        (
            vec![
                ("Q__credential", "clientsecret"),
                ("Q__tenantId", "t"),
                ("Q__clientId", "c"),
                ("Q__clientSecret", "s"),
            ],
            CredentialKind::ClientSecret,
        ),
        (
            vec![
                ("Q__tenantId", "t"),
                ("Q__clientId", "c"),
                ("Q__clientSecret", "s"),
            ],
            CredentialKind::ClientSecret,
        ),
        (vec![("Q__clientId", "c")], CredentialKind::Default),
    ];
    for (mut pairs, want) in cases {
        pairs.push(uri);
        let i = identity(storage(Some("Q"), &pairs));
        assert_eq!(i.credential, want, "{pairs:?}");
    }
    let i = identity(storage(
        Some("Q"),
        &[
            uri,
            ("Q__credential", "managedidentity"),
            ("Q__clientId", "cid"),
        ],
    ));
    assert_eq!(i.client_id.as_deref(), Some("cid"));
}

#[test]
fn invalid_and_unsupported_identity_settings() {
    let uri = ("Q__queueServiceUri", "https://a.queue.core.windows.net");
    let invalid = |setting: &str, message: &str| ConnectionError::Invalid {
        setting: setting.to_owned(),
        message: message.to_owned(),
    };
    let cases = [
        (vec![uri, ("Q__credential", "azurecli")], invalid("Q__credential", "must be managedidentity, workloadidentity or clientsecret")),
        (
            vec![uri, ("Q__credential", "clientsecret"), ("Q__clientId", "c")],
            invalid("Q__credential", "clientsecret needs tenantId, clientId and clientSecret; missing Q__tenantId, Q__clientSecret"),
        ),
        (
            vec![uri, ("Q__managedIdentityResourceId", "/subscriptions/x")],
            ConnectionError::Unsupported {
                setting: "Q__managedIdentityResourceId".into(),
                message: "choosing a user-assigned identity by resource ID is not supported for Storage queue connections; set Q__clientId to the identity's client ID instead".into(),
            },
        ),
        (vec![("Q__queueServiceUri", "not a url")], invalid("Q__queueServiceUri", "must be a URL like https://<account>.queue.core.windows.net")),
        (vec![("Q__queueServiceUri", "http://a.queue.core.windows.net")], invalid("Q__queueServiceUri", "must be an https URL (tokens are only sent over TLS)")),
        (vec![("Q__credential", "managedidentity")], invalid("Q__queueServiceUri", "an identity-based queue connection needs Q__queueServiceUri (or Q__serviceUri)")),
        (vec![("Q__accountName", "bad.name")], invalid("Q__accountName", "must be a storage account name (letters and digits)")),
        (vec![uri, ("Q__authorityHost", "http://login.example")], invalid("Q__authorityHost", "must be an https URL like https://login.microsoftonline.com")),
        (vec![uri, ("Q__authorityHost", "login.microsoftonline.com")], invalid("Q__authorityHost", "must be an https URL like https://login.microsoftonline.com")),
        (vec![uri, ("Q__authorityHost", "https://login.example/?x=1")], invalid("Q__authorityHost", "must be an https URL like https://login.microsoftonline.com")),
    ];
    for (pairs, want) in cases {
        assert_eq!(storage(Some("Q"), &pairs), Err(want), "{pairs:?}");
    }
}

#[test]
fn not_found_lists_what_was_looked_up() {
    let cases = [
        (
            None,
            ConnectionKind::StorageQueue,
            vec!["AzureWebJobsStorage", "Storage"],
        ),
        (
            Some("MyConn"),
            ConnectionKind::StorageQueue,
            vec!["AzureWebJobsMyConn", "MyConn"],
        ),
        (
            None,
            ConnectionKind::ServiceBus,
            vec!["AzureWebJobsServiceBus", "ServiceBus"],
        ),
        (
            Some("AzureWebJobsStorage"),
            ConnectionKind::StorageQueue,
            vec!["AzureWebJobsStorage"],
        ),
    ];
    for (connection, kind, want) in cases {
        let got = resolve(
            kind,
            connection,
            &settings(&[("Other", "x"), ("MyConnection", "y")]),
        );
        let looked_up = want.into_iter().map(str::to_owned).collect();
        assert_eq!(
            got,
            Err(ConnectionError::NotFound { looked_up }),
            "{connection:?}"
        );
    }
    let err = storage(Some("MyConn"), &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "no connection settings found; looked up AzureWebJobsMyConn, MyConn (as a value or as a __ group)"
    );
}

#[test]
fn service_bus_identity_uses_fully_qualified_namespace() {
    let cases = [
        "contoso.servicebus.windows.net",
        "sb://contoso.servicebus.windows.net/",
        "https://contoso.servicebus.windows.net",
    ];
    for ns in cases {
        let i = identity(service_bus(
            Some("Sb"),
            &[
                ("Sb__fullyQualifiedNamespace", ns),
                ("Sb__credential", "managedidentity"),
            ],
        ));
        assert_eq!(
            i.service_uri.as_str(),
            "sb://contoso.servicebus.windows.net",
            "{ns}"
        );
        assert_eq!(
            ConnectionSpec::Identity(i).describe(),
            "identity-based (managedidentity) sb://contoso.servicebus.windows.net"
        );
    }
    let i = identity(service_bus(
        None,
        &[(
            "AzureWebJobsServiceBus__fullyQualifiedNamespace",
            "ns.servicebus.windows.net",
        )],
    ));
    assert_eq!(i.setting_prefix, "AzureWebJobsServiceBus");
    let missing = service_bus(Some("Sb"), &[("Sb__credential", "managedidentity")]);
    assert_eq!(
        missing,
        Err(ConnectionError::Invalid {
            setting: "Sb__fullyQualifiedNamespace".into(),
            message: "an identity-based Service Bus connection needs Sb__fullyQualifiedNamespace"
                .into(),
        })
    );
    let bad = service_bus(
        Some("Sb"),
        &[(
            "Sb__fullyQualifiedNamespace",
            "ns.servicebus.windows.net/path",
        )],
    );
    assert!(
        matches!(bad, Err(ConnectionError::Invalid { .. })),
        "{bad:?}"
    );
    let by_resource_id = service_bus(
        Some("Sb"),
        &[
            ("Sb__fullyQualifiedNamespace", "ns"),
            ("Sb__managedIdentityResourceId", "/x"),
        ],
    );
    assert!(matches!(
        by_resource_id,
        Err(ConnectionError::Unsupported { .. })
    ));
}

#[test]
fn describe_and_debug_never_show_secrets() {
    let specs = [
        storage(
            Some("S"),
            &[("S", &format!("AccountName=acct;AccountKey={KEY}"))],
        ),
        storage(
            Some("S"),
            &[(
                "S",
                "QueueEndpoint=https://acct.queue.core.windows.net/?sv=1&sig=SASSECRET;SharedAccessSignature=sv=1&sig=SASSECRET",
            )],
        ),
        service_bus(
            Some("Sb"),
            &[(
                "Sb",
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=SBSECRET",
            )],
        ),
        service_bus(
            Some("Sb"),
            &[(
                "Sb",
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessSignature=SASSECRET",
            )],
        ),
        storage(
            Some("Q"),
            &[
                ("Q__queueServiceUri", "https://a.queue.core.windows.net"),
                ("Q__tenantId", "t"),
                ("Q__clientId", "c"),
                ("Q__clientSecret", "CLIENTSECRET"),
            ],
        ),
    ];
    for spec in specs {
        let spec = spec.unwrap();
        let shown = format!("{spec:?} {}", spec.describe());
        for secret in [KEY, "SASSECRET", "SBSECRET", "CLIENTSECRET"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
    let i = identity(storage(
        Some("Q"),
        &[("Q__queueServiceUri", "https://acct.queue.core.windows.net")],
    ));
    assert_eq!(
        ConnectionSpec::Identity(i).describe(),
        "identity-based (default) https://acct.queue.core.windows.net"
    );
}

#[test]
fn errors_never_echo_setting_values() {
    let err = storage(
        Some("S"),
        &[("S", "AccountName=acct;AccountKey=TOPSECRET!")],
    )
    .unwrap_err();
    assert!(!err.to_string().contains("TOPSECRET"), "{err}");
    let err = storage(
        Some("Q"),
        &[("Q__queueServiceUri", "http://TOPSECRET.example")],
    )
    .unwrap_err();
    assert!(!err.to_string().contains("TOPSECRET"), "{err}");
}
