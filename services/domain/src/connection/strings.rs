//! Connection strings: Azure Storage (`AccountName=…;AccountKey=…`, `UseDevelopmentStorage=true`,
//! explicit endpoints, SAS) and Service Bus (`Endpoint=sb://…;SharedAccessKeyName=…`).

use url::Url;

use super::{
    ConnectionError, DEVELOPMENT_ACCOUNT_KEY, DEVELOPMENT_ACCOUNT_NAME, DEVELOPMENT_QUEUE_PORT,
    ServiceBusConnectionString, ServiceBusCredential, StorageConnectionString, StorageCredential,
    invalid,
};

/// `Key=Value;…` pairs; keys case-insensitive and unique, values may contain `=`.
fn pairs<'a>(setting: &str, value: &'a str) -> Result<Vec<(&'a str, &'a str)>, ConnectionError> {
    let mut out: Vec<(&str, &str)> = Vec::new();
    for part in value.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, val)) = part.split_once('=').map(|(k, v)| (k.trim(), v.trim())) else {
            return Err(invalid(
                setting,
                "expected a connection string of Key=Value pairs separated by ';'",
            ));
        };
        if key.is_empty() {
            return Err(invalid(
                setting,
                "expected a connection string of Key=Value pairs separated by ';'",
            ));
        }
        if out.iter().any(|(k, _)| k.eq_ignore_ascii_case(key)) {
            return Err(invalid(setting, format!("{key} appears more than once")));
        }
        out.push((key, val));
    }
    Ok(out)
}

fn get<'a>(pairs: &[(&str, &'a str)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| *v)
        .filter(|v| !v.is_empty())
}

fn check_known(
    setting: &str,
    pairs: &[(&str, &str)],
    known: &[&str],
) -> Result<(), ConnectionError> {
    match pairs
        .iter()
        .find(|(k, _)| !known.iter().any(|n| n.eq_ignore_ascii_case(k)))
    {
        Some((key, _)) => Err(invalid(
            setting,
            format!("unknown connection string key {key}"),
        )),
        None => Ok(()),
    }
}

pub(super) fn parse_storage(
    setting: &str,
    value: &str,
) -> Result<StorageConnectionString, ConnectionError> {
    let pairs = pairs(setting, value)?;
    check_known(
        setting,
        &pairs,
        &[
            "UseDevelopmentStorage",
            "DevelopmentStorageProxyUri",
            "DefaultEndpointsProtocol",
            "AccountName",
            "AccountKey",
            "EndpointSuffix",
            "SharedAccessSignature",
            "QueueEndpoint",
            "BlobEndpoint",
            "TableEndpoint",
            "FileEndpoint",
            "QueueSecondaryEndpoint",
            "BlobSecondaryEndpoint",
            "TableSecondaryEndpoint",
            "FileSecondaryEndpoint",
        ],
    )?;
    if let Some(dev) = get(&pairs, "UseDevelopmentStorage") {
        return development_storage(setting, dev, &pairs);
    }
    let protocol = match get(&pairs, "DefaultEndpointsProtocol") {
        None => "https".to_owned(),
        Some(p) if p.eq_ignore_ascii_case("https") || p.eq_ignore_ascii_case("http") => {
            p.to_ascii_lowercase()
        }
        Some(_) => {
            return Err(invalid(
                setting,
                "DefaultEndpointsProtocol must be https or http",
            ));
        }
    };
    let account_name = get(&pairs, "AccountName");
    if let Some(name) = account_name
        && !name.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(invalid(
            setting,
            "AccountName must contain only letters and digits",
        ));
    }
    let queue_endpoint = match (get(&pairs, "QueueEndpoint"), account_name) {
        (Some(endpoint), _) => {
            let url = Url::parse(endpoint)
                .map_err(|_| invalid(setting, "QueueEndpoint must be a URL"))?;
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err(invalid(
                    setting,
                    "QueueEndpoint must be an http or https URL",
                ));
            }
            url
        }
        (None, Some(account)) => {
            let suffix = get(&pairs, "EndpointSuffix").unwrap_or("core.windows.net");
            Url::parse(&format!("{protocol}://{account}.queue.{suffix}")).map_err(|_| {
                invalid(
                    setting,
                    "EndpointSuffix must be a host name suffix like core.windows.net",
                )
            })?
        }
        (None, None) => return Err(invalid(setting, "needs AccountName (or QueueEndpoint)")),
    };
    let credential = match (
        get(&pairs, "AccountKey"),
        get(&pairs, "SharedAccessSignature"),
    ) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                setting,
                "set AccountKey or SharedAccessSignature, not both",
            ));
        }
        (Some(_), None) if account_name.is_none() => {
            return Err(invalid(setting, "AccountKey needs AccountName"));
        }
        (Some(key), None) if !is_base64(key) => {
            return Err(invalid(setting, "AccountKey is not valid base64"));
        }
        (Some(key), None) => StorageCredential::AccountKey(key.to_owned()),
        (None, Some(sas)) => {
            StorageCredential::SharedAccessSignature(sas.trim_start_matches('?').to_owned())
        }
        (None, None) => {
            return Err(invalid(
                setting,
                "needs AccountKey or SharedAccessSignature",
            ));
        }
    };
    let account_name = match account_name {
        Some(name) => name.to_owned(),
        None => account_from_endpoint(&queue_endpoint),
    };
    Ok(StorageConnectionString {
        setting: setting.to_owned(),
        account_name,
        queue_endpoint,
        credential,
        development_storage: false,
    })
}

/// `UseDevelopmentStorage=true[;DevelopmentStorageProxyUri=…]` → Azurite's queue service.
fn development_storage(
    setting: &str,
    flag: &str,
    pairs: &[(&str, &str)],
) -> Result<StorageConnectionString, ConnectionError> {
    if !flag.eq_ignore_ascii_case("true") {
        return Err(invalid(
            setting,
            "UseDevelopmentStorage must be true when present",
        ));
    }
    if let Some((key, _)) = pairs.iter().find(|(k, _)| {
        !k.eq_ignore_ascii_case("UseDevelopmentStorage")
            && !k.eq_ignore_ascii_case("DevelopmentStorageProxyUri")
    }) {
        return Err(invalid(
            setting,
            format!("UseDevelopmentStorage=true cannot be combined with {key}"),
        ));
    }
    let base = match get(pairs, "DevelopmentStorageProxyUri") {
        Some(proxy) => {
            let url = Url::parse(proxy)
                .map_err(|_| invalid(setting, "DevelopmentStorageProxyUri must be a URL"))?;
            let host = url
                .host_str()
                .ok_or_else(|| invalid(setting, "DevelopmentStorageProxyUri must be a URL"))?;
            format!("{}://{host}", url.scheme())
        }
        None => "http://127.0.0.1".to_owned(),
    };
    let queue_endpoint = Url::parse(&format!(
        "{base}:{DEVELOPMENT_QUEUE_PORT}/{DEVELOPMENT_ACCOUNT_NAME}"
    ))
    .map_err(|_| invalid(setting, "DevelopmentStorageProxyUri must be a URL"))?;
    Ok(StorageConnectionString {
        setting: setting.to_owned(),
        account_name: DEVELOPMENT_ACCOUNT_NAME.to_owned(),
        queue_endpoint,
        credential: StorageCredential::AccountKey(DEVELOPMENT_ACCOUNT_KEY.to_owned()),
        development_storage: true,
    })
}

/// Path-style endpoints (Azurite, `http://127.0.0.1:10001/<account>`) carry the account in the
/// path; service endpoints carry it in the first host label.
fn account_from_endpoint(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    let path_style =
        matches!(url.host(), Some(url::Host::Ipv4(_) | url::Host::Ipv6(_))) || host == "localhost";
    if path_style {
        url.path_segments()
            .and_then(|mut segments| segments.next())
            .unwrap_or_default()
            .to_owned()
    } else {
        host.split('.').next().unwrap_or_default().to_owned()
    }
}

fn is_base64(s: &str) -> bool {
    let body = s.trim_end_matches('=');
    !s.is_empty()
        && s.len().is_multiple_of(4)
        && s.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

pub(super) fn parse_service_bus(
    setting: &str,
    value: &str,
) -> Result<ServiceBusConnectionString, ConnectionError> {
    let pairs = pairs(setting, value)?;
    check_known(
        setting,
        &pairs,
        &[
            "Endpoint",
            "SharedAccessKeyName",
            "SharedAccessKey",
            "SharedAccessSignature",
            "EntityPath",
            "UseDevelopmentEmulator",
        ],
    )?;
    let endpoint = get(&pairs, "Endpoint")
        .ok_or_else(|| invalid(setting, "needs Endpoint=sb://<namespace>/"))?;
    let endpoint = Url::parse(endpoint).map_err(|_| {
        invalid(
            setting,
            "Endpoint must be a URL like sb://<namespace>.servicebus.windows.net/",
        )
    })?;
    let host = endpoint
        .host_str()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| invalid(setting, "Endpoint must name the namespace host"))?;
    let fully_qualified_namespace = match endpoint.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let credential = match (
        get(&pairs, "SharedAccessKeyName"),
        get(&pairs, "SharedAccessKey"),
        get(&pairs, "SharedAccessSignature"),
    ) {
        (Some(_), Some(_), Some(_)) | (None, Some(_), Some(_)) | (Some(_), None, Some(_)) => {
            return Err(invalid(
                setting,
                "set SharedAccessKeyName and SharedAccessKey, or SharedAccessSignature, not both",
            ));
        }
        (Some(key_name), Some(key), None) => ServiceBusCredential::SharedAccessKey {
            key_name: key_name.to_owned(),
            key: key.to_owned(),
        },
        (None, None, Some(sas)) => ServiceBusCredential::SharedAccessSignature(sas.to_owned()),
        (Some(_), None, None) => {
            return Err(invalid(
                setting,
                "SharedAccessKeyName needs SharedAccessKey",
            ));
        }
        (None, Some(_), None) => {
            return Err(invalid(
                setting,
                "SharedAccessKey needs SharedAccessKeyName",
            ));
        }
        (None, None, None) => {
            return Err(invalid(
                setting,
                "needs SharedAccessKeyName and SharedAccessKey, or SharedAccessSignature",
            ));
        }
    };
    let development_emulator = match get(&pairs, "UseDevelopmentEmulator") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(_) => {
            return Err(invalid(
                setting,
                "UseDevelopmentEmulator must be true or false",
            ));
        }
    };
    Ok(ServiceBusConnectionString {
        setting: setting.to_owned(),
        fully_qualified_namespace,
        endpoint,
        credential,
        entity_path: get(&pairs, "EntityPath").map(str::to_owned),
        development_emulator,
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{KEY, account_string, conn_str, service_bus, storage};
    use super::super::*;

    #[test]
    fn development_storage_means_azurite() {
        let s = conn_str(storage(
            None,
            &[("AzureWebJobsStorage", "UseDevelopmentStorage=true")],
        ));
        assert!(s.development_storage);
        assert_eq!(s.account_name, "devstoreaccount1");
        assert_eq!(
            s.queue_endpoint.as_str(),
            "http://127.0.0.1:10001/devstoreaccount1"
        );
        assert_eq!(
            s.credential,
            StorageCredential::AccountKey(DEVELOPMENT_ACCOUNT_KEY.to_owned())
        );
        let s = conn_str(storage(
            None,
            &[(
                "AzureWebJobsStorage",
                "UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://azurite",
            )],
        ));
        assert_eq!(
            s.queue_endpoint.as_str(),
            "http://azurite:10001/devstoreaccount1"
        );
        let described = ConnectionSpec::StorageConnectionString(s).describe();
        assert_eq!(described, "connection string for account devstoreaccount1");
    }

    #[test]
    fn storage_connection_strings() {
        let cases: Vec<(String, &str, &str)> = vec![
            (account_string("acct"), "acct", "https://acct.queue.core.windows.net/"),
            (format!("AccountName=acct;AccountKey={KEY}"), "acct", "https://acct.queue.core.windows.net/"),
            (format!("DefaultEndpointsProtocol=http;AccountName=acct;AccountKey={KEY};EndpointSuffix=core.chinacloudapi.cn"), "acct", "http://acct.queue.core.chinacloudapi.cn/"),
            (
                format!("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey={KEY};QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;"),
                "devstoreaccount1",
                "http://127.0.0.1:10001/devstoreaccount1",
            ),
            ("QueueEndpoint=https://acct.queue.core.windows.net;SharedAccessSignature=?sv=2022&sig=abc".to_owned(), "acct", "https://acct.queue.core.windows.net/"),
            ("QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;SharedAccessSignature=sv=1&sig=x".to_owned(), "devstoreaccount1", "http://127.0.0.1:10001/devstoreaccount1"),
            (format!("accountname=acct;accountkey={KEY};BlobEndpoint=https://acct.blob.core.windows.net"), "acct", "https://acct.queue.core.windows.net/"),
        ];
        for (value, account, endpoint) in cases {
            let s = conn_str(storage(Some("S"), &[("S", &value)]));
            assert_eq!(
                (s.account_name.as_str(), s.queue_endpoint.as_str()),
                (account, endpoint),
                "{value}"
            );
        }
        let s = conn_str(storage(
            Some("S"),
            &[(
                "S",
                "QueueEndpoint=https://acct.queue.core.windows.net;SharedAccessSignature=?sv=2022&sig=abc",
            )],
        ));
        assert_eq!(
            s.credential,
            StorageCredential::SharedAccessSignature("sv=2022&sig=abc".to_owned())
        );
    }

    #[test]
    fn malformed_storage_connection_strings_are_invalid() {
        let cases = [
            (
                format!("AccountKey={KEY}"),
                "needs AccountName (or QueueEndpoint)",
            ),
            (
                "AccountName=acct".to_owned(),
                "needs AccountKey or SharedAccessSignature",
            ),
            (
                "AccountName=acct;AccountKey=not base64!".to_owned(),
                "AccountKey is not valid base64",
            ),
            (
                format!("AccountName=acct;AccountKey={KEY};SharedAccessSignature=sig=1"),
                "set AccountKey or SharedAccessSignature, not both",
            ),
            (
                format!("QueueEndpoint=not a url;AccountKey={KEY}"),
                "QueueEndpoint must be a URL",
            ),
            (
                "QueueEndpoint=ftp://x/;SharedAccessSignature=sig=1".to_owned(),
                "QueueEndpoint must be an http or https URL",
            ),
            (
                format!("QueueEndpoint=https://a.queue.core.windows.net;AccountKey={KEY}"),
                "AccountKey needs AccountName",
            ),
            (
                format!("DefaultEndpointsProtocol=ftp;AccountName=a;AccountKey={KEY}"),
                "DefaultEndpointsProtocol must be https or http",
            ),
            (
                format!("AccountName=a.b;AccountKey={KEY}"),
                "AccountName must contain only letters and digits",
            ),
            (
                format!("AccountName=a;AcountKey={KEY}"),
                "unknown connection string key AcountKey",
            ),
            (
                format!("AccountName=a;AccountName=b;AccountKey={KEY}"),
                "AccountName appears more than once",
            ),
            (
                "just some text".to_owned(),
                "expected a connection string of Key=Value pairs separated by ';'",
            ),
            (
                "UseDevelopmentStorage=false".to_owned(),
                "UseDevelopmentStorage must be true when present",
            ),
            (
                "UseDevelopmentStorage=true;AccountName=x".to_owned(),
                "UseDevelopmentStorage=true cannot be combined with AccountName",
            ),
            (
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v"
                    .to_owned(),
                "unknown connection string key Endpoint",
            ),
        ];
        for (value, message) in cases {
            let want = ConnectionError::Invalid {
                setting: "S".into(),
                message: message.into(),
            };
            assert_eq!(storage(Some("S"), &[("S", &value)]), Err(want), "{value}");
        }
    }

    #[test]
    fn service_bus_connection_strings() {
        let spec = service_bus(
            None,
            &[(
                "AzureWebJobsServiceBus",
                "Endpoint=sb://contoso.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=c2VjcmV0;EntityPath=orders",
            )],
        );
        let Ok(ConnectionSpec::ServiceBusConnectionString(s)) = &spec else {
            panic!("{spec:?}")
        };
        assert_eq!(
            s.fully_qualified_namespace,
            "contoso.servicebus.windows.net"
        );
        assert_eq!(s.entity_path.as_deref(), Some("orders"));
        assert!(
            matches!(&s.credential, ServiceBusCredential::SharedAccessKey { key_name, .. } if key_name == "RootManageSharedAccessKey")
        );
        assert_eq!(
            spec.as_ref().map(ConnectionSpec::describe).ok().as_deref(),
            Some("connection string for namespace contoso.servicebus.windows.net")
        );

        let spec = service_bus(
            Some("Sb"),
            &[(
                "Sb",
                "Endpoint=sb://localhost:5672;SharedAccessSignature=SharedAccessSignature sr=x&sig=y&se=1&skn=k;UseDevelopmentEmulator=true",
            )],
        );
        let Ok(ConnectionSpec::ServiceBusConnectionString(s)) = spec else {
            panic!()
        };
        assert_eq!(s.fully_qualified_namespace, "localhost:5672");
        assert!(s.development_emulator);
        assert!(matches!(
            s.credential,
            ServiceBusCredential::SharedAccessSignature(_)
        ));
    }

    #[test]
    fn malformed_service_bus_connection_strings_are_invalid() {
        let cases = [
            (
                "SharedAccessKeyName=k;SharedAccessKey=v",
                "needs Endpoint=sb://<namespace>/",
            ),
            (
                "Endpoint=nonsense;SharedAccessKeyName=k;SharedAccessKey=v",
                "Endpoint must be a URL like sb://<namespace>.servicebus.windows.net/",
            ),
            (
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k",
                "SharedAccessKeyName needs SharedAccessKey",
            ),
            (
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKey=v",
                "SharedAccessKey needs SharedAccessKeyName",
            ),
            (
                "Endpoint=sb://ns.servicebus.windows.net/",
                "needs SharedAccessKeyName and SharedAccessKey, or SharedAccessSignature",
            ),
            (
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v;SharedAccessSignature=s",
                "set SharedAccessKeyName and SharedAccessKey, or SharedAccessSignature, not both",
            ),
            (
                "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=v;UseDevelopmentEmulator=maybe",
                "UseDevelopmentEmulator must be true or false",
            ),
            (
                "AccountName=a;AccountKey=b",
                "unknown connection string key AccountName",
            ),
        ];
        for (value, message) in cases {
            let want = ConnectionError::Invalid {
                setting: "Sb".into(),
                message: message.into(),
            };
            assert_eq!(
                service_bus(Some("Sb"), &[("Sb", value)]),
                Err(want),
                "{value}"
            );
        }
    }
}
