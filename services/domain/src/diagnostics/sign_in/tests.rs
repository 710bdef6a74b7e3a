use std::collections::BTreeMap;

use uuid::Uuid;

use super::*;
use crate::connection::outbound::AppIdentity;

const ENTRA_TENANT: &str = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const ENTRA_CLIENT: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
const ISSUER: &str = "https://shoal.example.com/federation";

fn function() -> FunctionSpec {
    FunctionSpec::parse(
        "ship",
        &serde_json::json!({"bindings": [
            {"type": "queueTrigger", "direction": "in", "name": "order", "queueName": "orders"},
            {"type": "queue", "direction": "out", "name": "done", "queueName": "done", "connection": "Archive"}
        ]}),
    )
    .unwrap()
    .spec
}

fn settings(extra: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut settings: BTreeMap<String, String> = [
        (
            "AzureWebJobsStorage__queueServiceUri",
            "https://acct.queue.core.windows.net",
        ),
        ("AzureWebJobsStorage__tenantId", ENTRA_TENANT),
        ("AzureWebJobsStorage__clientId", ENTRA_CLIENT),
        ("Archive", "UseDevelopmentStorage=true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        settings.insert(k.to_string(), v.to_string());
    }
    settings
}

fn system() -> AppIdentities {
    AppIdentities {
        system_assigned: Some(AppIdentity {
            user_assigned: None,
            principal_id: Uuid::from_u128(7),
            client_id: Uuid::from_u128(8),
        }),
        ..AppIdentities::default()
    }
}

#[test]
fn a_federated_connection_shows_identity_entra_client_and_credential() {
    let settings = settings(&[]);
    let identities = system();
    let context = SignInContext {
        settings: &settings,
        identities: &identities,
        issuer: Some(ISSUER),
        token_errors: &[],
    };
    let (sign_ins, checks) = sign_ins("ship", &function(), &context);
    assert!(checks.is_empty(), "{checks:?}");
    assert_eq!(
        sign_ins.len(),
        1,
        "the connection string is not identity-based"
    );
    let sign_in = &sign_ins[0];
    assert_eq!(sign_in.signs_in_as, SignInKind::AppIdentity);
    assert_eq!(sign_in.connection, "AzureWebJobsStorage");
    assert_eq!(
        sign_in.shoal_identity,
        Some(ShoalIdentity {
            kind: "systemAssigned".into(),
            name: None,
            principal_id: Uuid::from_u128(7).to_string(),
            client_id: Uuid::from_u128(8).to_string(),
        })
    );
    assert_eq!(sign_in.entra_client_id.as_deref(), Some(ENTRA_CLIENT));
    assert_eq!(sign_in.entra_tenant_id.as_deref(), Some(ENTRA_TENANT));
    assert_eq!(
        sign_in.federated_credential,
        Some(FederatedCredential {
            issuer: ISSUER.into(),
            subject: Uuid::from_u128(7).to_string(),
            audience: "api://AzureADTokenExchange".into(),
        })
    );
}

#[test]
fn no_identity_and_token_errors_are_error_checks() {
    let settings = settings(&[]);
    let none = AppIdentities::default();
    let errors = [(
        "ship".to_string(),
        "AADSTS70021: no matching federated identity record".to_string(),
    )];
    let context = SignInContext {
        settings: &settings,
        identities: &none,
        issuer: Some(ISSUER),
        token_errors: &errors,
    };
    let (sign_ins, checks) = sign_ins("ship", &function(), &context);
    assert_eq!(sign_ins[0].signs_in_as, SignInKind::None);
    assert!(
        sign_ins[0]
            .error
            .as_deref()
            .unwrap()
            .contains("identity.type")
    );
    assert_eq!(
        sign_ins[0].last_token_error.as_deref(),
        Some("AADSTS70021: no matching federated identity record")
    );
    let details: Vec<(&str, CheckStatus)> = checks
        .iter()
        .map(|c| (c.subject.as_str(), c.status))
        .collect();
    assert_eq!(
        details,
        vec![
            ("identity", CheckStatus::Error),
            ("identity", CheckStatus::Error)
        ]
    );
    assert!(checks[1].detail.contains("AADSTS70021"));
}

#[test]
fn an_opted_in_tenant_signs_in_as_the_host() {
    let settings = settings(&[]);
    let identities = AppIdentities {
        host_identity_allowed: true,
        ..AppIdentities::default()
    };
    let context = SignInContext {
        settings: &settings,
        identities: &identities,
        issuer: None,
        token_errors: &[],
    };
    let (sign_ins, checks) = sign_ins("ship", &function(), &context);
    assert!(checks.is_empty());
    assert_eq!(sign_ins[0].signs_in_as, SignInKind::HostIdentity);
    assert_eq!(sign_ins[0].federated_credential, None);
}
