//! Identity-based connections: a `<prefix>__<property>` group of app settings naming the
//! service and, optionally, which credential to use.

use std::collections::BTreeMap;

use url::Url;

use super::{ConnectionError, ConnectionKind, CredentialKind, IdentityConnection, child, invalid};

pub(super) fn identity(
    kind: ConnectionKind,
    prefix: &str,
    settings: &BTreeMap<String, String>,
) -> Result<IdentityConnection, ConnectionError> {
    // Azure documents that a user-assigned identity cannot be chosen by resource ID for these
    // connections; Shoal's identities have no Azure resource IDs anyway.
    if let Some((setting, _)) = child(settings, prefix, "managedIdentityResourceId") {
        return Err(ConnectionError::Unsupported {
            setting: setting.to_owned(),
            message: format!(
                "choosing a user-assigned identity by resource ID is not supported for {} connections; set {prefix}__clientId to the identity's client ID instead",
                match kind {
                    ConnectionKind::StorageQueue => "Storage queue",
                    ConnectionKind::ServiceBus => "Service Bus",
                }
            ),
        });
    }
    let service_uri = match kind {
        ConnectionKind::StorageQueue => storage_service_uri(prefix, settings)?,
        ConnectionKind::ServiceBus => service_bus_namespace_uri(prefix, settings)?,
    };
    let client_id = child(settings, prefix, "clientId").map(|(_, v)| v.to_owned());
    let tenant_id = child(settings, prefix, "tenantId").map(|(_, v)| v.to_owned());
    let client_secret = child(settings, prefix, "clientSecret").map(|(_, v)| v.to_owned());
    let authority_host = authority_host(prefix, settings)?;
    let shoal_identity = child(settings, prefix, "shoalIdentity").map(|(_, v)| v.to_owned());
    let credential = match child(settings, prefix, "credential") {
        Some((_, v)) if v.eq_ignore_ascii_case("managedidentity") => {
            CredentialKind::ManagedIdentity
        }
        Some((_, v)) if v.eq_ignore_ascii_case("workloadidentity") => {
            CredentialKind::WorkloadIdentity
        }
        Some((_, v)) if v.eq_ignore_ascii_case("clientsecret") => CredentialKind::ClientSecret,
        Some((setting, _)) => {
            return Err(invalid(
                setting,
                "must be managedidentity, workloadidentity or clientsecret",
            ));
        }
        // Like Microsoft.Extensions.Azure: tenant, client and secret together mean a client
        // secret credential even without `credential`.
        None if client_id.is_some() && tenant_id.is_some() && client_secret.is_some() => {
            CredentialKind::ClientSecret
        }
        None => CredentialKind::Default,
    };
    if credential == CredentialKind::ClientSecret {
        let missing: Vec<String> = [
            ("tenantId", &tenant_id),
            ("clientId", &client_id),
            ("clientSecret", &client_secret),
        ]
        .into_iter()
        .filter(|(_, v)| v.is_none())
        .map(|(p, _)| format!("{prefix}__{p}"))
        .collect();
        if !missing.is_empty() {
            return Err(invalid(
                &format!("{prefix}__credential"),
                format!(
                    "clientsecret needs tenantId, clientId and clientSecret; missing {}",
                    missing.join(", ")
                ),
            ));
        }
    }
    Ok(IdentityConnection {
        setting_prefix: prefix.to_owned(),
        service_uri,
        credential,
        client_id,
        tenant_id,
        client_secret,
        authority_host,
        shoal_identity,
    })
}

/// `authorityHost`, e.g. `https://login.microsoftonline.us` for a sovereign cloud: an https URL
/// without query or fragment (tokens are requested from it with the client secret).
fn authority_host(
    prefix: &str,
    settings: &BTreeMap<String, String>,
) -> Result<Option<Url>, ConnectionError> {
    let Some((setting, value)) = child(settings, prefix, "authorityHost") else {
        return Ok(None);
    };
    let message = "must be an https URL like https://login.microsoftonline.com";
    let url = Url::parse(value).map_err(|_| invalid(setting, message))?;
    if url.scheme() != "https"
        || url.host_str().is_none()
        || url.query().is_some()
        || url.fragment().is_some()
        || !url.username().is_empty()
        || url.password().is_some()
    {
        return Err(invalid(setting, message));
    }
    Ok(Some(url))
}

/// `queueServiceUri`, else its alias `serviceUri` (Azure: the former wins when both are set),
/// else `accountName` for the public cloud as host storage allows.
fn storage_service_uri(
    prefix: &str,
    settings: &BTreeMap<String, String>,
) -> Result<Url, ConnectionError> {
    let uri = child(settings, prefix, "queueServiceUri")
        .or_else(|| child(settings, prefix, "serviceUri"));
    if let Some((setting, value)) = uri {
        let url = Url::parse(value).map_err(|_| {
            invalid(
                setting,
                "must be a URL like https://<account>.queue.core.windows.net",
            )
        })?;
        if url.scheme() != "https" || url.host_str().is_none() {
            return Err(invalid(
                setting,
                "must be an https URL (tokens are only sent over TLS)",
            ));
        }
        return Ok(url);
    }
    if let Some((setting, account)) = child(settings, prefix, "accountName") {
        if account.is_empty() || !account.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(invalid(
                setting,
                "must be a storage account name (letters and digits)",
            ));
        }
        return Url::parse(&format!("https://{account}.queue.core.windows.net"))
            .map_err(|_| invalid(setting, "must be a storage account name"));
    }
    Err(invalid(
        &format!("{prefix}__queueServiceUri"),
        format!(
            "an identity-based queue connection needs {prefix}__queueServiceUri (or {prefix}__serviceUri)"
        ),
    ))
}

/// `fullyQualifiedNamespace` → `sb://<namespace>`. A pasted `sb://…/` or `https://…/` is
/// reduced to its host rather than rejected.
fn service_bus_namespace_uri(
    prefix: &str,
    settings: &BTreeMap<String, String>,
) -> Result<Url, ConnectionError> {
    let Some((setting, value)) = child(settings, prefix, "fullyQualifiedNamespace") else {
        return Err(invalid(
            &format!("{prefix}__fullyQualifiedNamespace"),
            format!(
                "an identity-based Service Bus connection needs {prefix}__fullyQualifiedNamespace"
            ),
        ));
    };
    let host = value
        .split_once("://")
        .map_or(value, |(_, rest)| rest)
        .trim_end_matches('/');
    let message = "must be a namespace host name like contoso.servicebus.windows.net";
    let url = Url::parse(&format!("sb://{host}")).map_err(|_| invalid(setting, message))?;
    if host.is_empty() || host.contains(['/', '?', '#', '@']) || url.host_str().is_none() {
        return Err(invalid(setting, message));
    }
    Ok(url)
}
