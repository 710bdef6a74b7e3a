use std::collections::BTreeMap;

use uuid::Uuid;

use super::*;
use crate::connection::{ConnectionKind, ConnectionSpec, resolve};

const ENTRA_TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const ENTRA_CLIENT: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

fn id(n: u128) -> Uuid {
    Uuid::from_u128(n)
}

fn system() -> AppIdentity {
    AppIdentity {
        user_assigned: None,
        principal_id: id(1),
        client_id: id(2),
    }
}

fn user(name: &str, n: u128) -> AppIdentity {
    AppIdentity {
        user_assigned: Some(name.into()),
        principal_id: id(n),
        client_id: id(n + 1000),
    }
}

/// The identity connection `AzureWebJobsStorage__*` with these properties.
fn connection(properties: &[(&str, &str)]) -> IdentityConnection {
    let mut settings = BTreeMap::from([(
        "AzureWebJobsStorage__queueServiceUri".to_string(),
        "https://acct.queue.core.windows.net".to_string(),
    )]);
    for (property, value) in properties {
        settings.insert(
            format!("AzureWebJobsStorage__{property}"),
            value.to_string(),
        );
    }
    match resolve(ConnectionKind::StorageQueue, None, &settings) {
        Ok(ConnectionSpec::Identity(identity)) => identity,
        other => panic!("not an identity connection: {other:?}"),
    }
}

fn federated(identity: AppIdentity) -> Result<Outbound, OutboundError> {
    Ok(Outbound::Federated(Federation {
        identity,
        entra_client_id: ENTRA_CLIENT.into(),
        entra_tenant_id: ENTRA_TENANT.into(),
    }))
}

fn entra() -> Vec<(&'static str, &'static str)> {
    vec![("tenantId", ENTRA_TENANT), ("clientId", ENTRA_CLIENT)]
}

fn with<'a>(
    mut base: Vec<(&'a str, &'a str)>,
    more: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    base.extend_from_slice(more);
    base
}

/// (what it shows, the connection's properties, the app's identities, the decision)
type Case<'a> = (
    &'a str,
    Vec<(&'a str, &'a str)>,
    &'a AppIdentities,
    Result<Outbound, OutboundError>,
);

#[test]
fn the_app_identity_signs_in_never_the_hosts() {
    let both = AppIdentities {
        system_assigned: Some(system()),
        user_assigned: vec![user("orders", 10), user("billing", 20)],
        host_identity_allowed: false,
    };
    let user_only = AppIdentities {
        system_assigned: None,
        ..both.clone()
    };
    let opted_in = AppIdentities {
        host_identity_allowed: true,
        ..both.clone()
    };
    let billing_client = id(1020).to_string();
    let none = AppIdentities::default();
    let prefix = || "AzureWebJobsStorage".to_string();
    let cases: Vec<Case> = vec![
        (
            "no credential: system-assigned",
            entra(),
            &both,
            federated(system()),
        ),
        (
            "managedidentity: system-assigned",
            with(entra(), &[("credential", "managedidentity")]),
            &both,
            federated(system()),
        ),
        (
            "workloadidentity: the app's identity too, never the host's token file",
            with(entra(), &[("credential", "workloadidentity")]),
            &both,
            federated(system()),
        ),
        (
            "a user-assigned identity by name",
            with(entra(), &[("shoalIdentity", "billing")]),
            &both,
            federated(user("billing", 20)),
        ),
        (
            "a user-assigned identity by its client id, as Azure picks one",
            with(entra(), &[("shoalIdentity", billing_client.as_str())]),
            &user_only,
            federated(user("billing", 20)),
        ),
        (
            "an identity not attached to the app is never used",
            with(entra(), &[("shoalIdentity", "payroll")]),
            &both,
            Err(OutboundError::IdentityNotAttached { prefix: prefix() }),
        ),
        (
            "a principal id is not a client id",
            with(
                entra(),
                &[("shoalIdentity", "00000000-0000-0000-0000-000000000014")],
            ),
            &both,
            Err(OutboundError::IdentityNotAttached { prefix: prefix() }),
        ),
        (
            "only user-assigned identities and none named",
            entra(),
            &user_only,
            Err(OutboundError::NoAppIdentity { prefix: prefix() }),
        ),
        (
            "no Entra tenant",
            vec![("clientId", ENTRA_CLIENT)],
            &both,
            Err(OutboundError::EntraClientMissing {
                prefix: prefix(),
                missing: "tenantId",
            }),
        ),
        (
            "no Entra client",
            vec![("tenantId", ENTRA_TENANT)],
            &both,
            Err(OutboundError::EntraClientMissing {
                prefix: prefix(),
                missing: "clientId",
            }),
        ),
        (
            "an opted-in tenant uses the host identity",
            vec![("credential", "managedidentity")],
            &opted_in,
            Ok(Outbound::HostIdentity),
        ),
        (
            "an opted-in tenant's workloadidentity is the host's too",
            vec![("credential", "workloadidentity")],
            &opted_in,
            Ok(Outbound::HostIdentity),
        ),
        (
            "a client secret is the connection's own, opted in or not",
            vec![
                ("tenantId", ENTRA_TENANT),
                ("clientId", ENTRA_CLIENT),
                ("clientSecret", "s"),
            ],
            &both,
            Ok(Outbound::ClientSecret),
        ),
        (
            "a client secret without any app identity",
            vec![
                ("credential", "clientsecret"),
                ("tenantId", ENTRA_TENANT),
                ("clientId", ENTRA_CLIENT),
                ("clientSecret", "s"),
            ],
            &none,
            Ok(Outbound::ClientSecret),
        ),
    ];
    for (name, properties, identities, want) in cases {
        assert_eq!(
            outbound(&connection(&properties), identities),
            want,
            "{name}"
        );
    }
}

#[test]
fn errors_say_what_to_configure() {
    let no_identity = outbound(&connection(&entra()), &AppIdentities::default())
        .unwrap_err()
        .to_string();
    for needle in [
        "identity.type",
        "AzureWebJobsStorage__shoalIdentity",
        "never used",
    ] {
        assert!(no_identity.contains(needle), "{no_identity}");
    }
    let identities = AppIdentities {
        system_assigned: Some(system()),
        ..AppIdentities::default()
    };
    let no_client = outbound(&connection(&[("tenantId", ENTRA_TENANT)]), &identities)
        .unwrap_err()
        .to_string();
    for needle in [
        "AzureWebJobsStorage__clientId",
        "federated credential",
        "diagnostics",
    ] {
        assert!(no_client.contains(needle), "{no_client}");
    }
}

#[test]
fn the_federated_credential_names_issuer_subject_and_audience() {
    assert_eq!(
        federation_issuer("https://shoal.example.com/"),
        "https://shoal.example.com/federation"
    );
    assert_eq!(
        federation_issuer("https://shoal.example.com/api"),
        "https://shoal.example.com/api/federation"
    );
    let credential =
        user("orders", 10).federated_credential("https://shoal.example.com/federation");
    assert_eq!(
        credential,
        FederatedCredential {
            issuer: "https://shoal.example.com/federation".into(),
            subject: id(10).to_string(),
            audience: "api://AzureADTokenExchange".into(),
        }
    );
}
