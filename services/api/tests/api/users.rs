//! Users are tenant-scoped: each tenant registers the people who sign in at a trusted issuer
//! itself, one account may be a user of several tenants without any of them learning of the
//! others, and its token acts in each tenant as that tenant's registration only.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Role;
use uuid::Uuid;

use crate::helpers::{Fetch, TestApp, error_paths, minimal_app, problem};
use crate::oidc_issuer::{DEFAULT_KEY_AGE, DEFAULT_REFETCH, RsaKey, TestIssuer};

/// `PUT …/users/{name}` as the tenant's Owner (an operator token of that tenant).
async fn register(
    app: &TestApp,
    tenant: &str,
    name: &str,
    issuer: &str,
    subject: &str,
) -> reqwest::Response {
    let owner = app.token_for(tenant, Role::Owner);
    app.request(
        Method::PUT,
        &format!("/v1/tenants/{tenant}/users/{name}"),
        Some(&owner),
    )
    .json(&json!({"issuer": issuer, "subject": subject}))
    .fetch()
    .await
}

/// Assigns a built-in role at the tenant's scope through the API, as the tenant's Owner.
async fn assign(app: &TestApp, tenant: &str, principal: &str, role: &str) {
    let owner = app.token_for(tenant, Role::Owner);
    let assigned = app
        .request(
            Method::PUT,
            &format!("/v1/tenants/{tenant}/roleAssignments/{}", Uuid::new_v4()),
            Some(&owner),
        )
        .json(&json!({"principalId": principal, "roleDefinitionId": role, "scope": format!("/tenants/{tenant}")}))
        .fetch()
        .await;
    assert_eq!(assigned.status(), StatusCode::CREATED, "{role} in {tenant}");
}

async fn principal_id(response: reqwest::Response) -> String {
    let body: Value = response.json().await.unwrap();
    body["principalId"].as_str().unwrap().to_string()
}

async fn status(app: &TestApp, method: Method, path: &str, token: &str) -> StatusCode {
    let mut request = app.request(method.clone(), path, Some(token));
    if method == Method::PUT {
        request = request.json(&minimal_app());
    }
    request.fetch().await.status()
}

/// `GET /v1/me?tenant=…` with the user's token.
async fn me_in(app: &TestApp, tenant: &str, token: &str) -> Value {
    let response = app
        .request(Method::GET, &format!("/v1/me?tenant={tenant}"), Some(token))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// The tester's sequence: fabrikam registers contoso's employee first (squatting their
/// subject), then contoso registers them too. Both registrations stand, neither tenant hears
/// of the other, and one token of the employee acts in each tenant with that tenant's
/// assignments only.
#[tokio::test]
async fn a_subject_registered_first_by_another_tenant_is_still_registered_in_each() {
    let key = RsaKey::generate();
    let issuer = TestIssuer::start(&[&key]).await;
    let app = issuer
        .trusted_by_shoal(DEFAULT_REFETCH, DEFAULT_KEY_AGE)
        .await;
    for tenant in ["contoso", "fabrikam", "northwind"] {
        app.with_app(tenant, "orders").await;
    }
    let oid = Uuid::new_v4().to_string();
    let token = key.sign(&issuer.claims(&oid));

    let squatted = register(&app, "fabrikam", "squatter", &issuer.issuer, &oid).await;
    assert_eq!(squatted.status(), StatusCode::CREATED);
    let fabrikam_user = principal_id(squatted).await;
    assign(&app, "fabrikam", &fabrikam_user, "Contributor").await;
    // Signed in before contoso registers them: nothing there yet, as for any other tenant.
    assert_eq!(
        status(&app, Method::GET, "/v1/tenants/contoso/apps", &token).await,
        StatusCode::NOT_FOUND
    );

    let registered = register(&app, "contoso", "alice", &issuer.issuer, &oid).await;
    assert_eq!(
        registered.status(),
        StatusCode::CREATED,
        "no 409 from another tenant's registration"
    );
    let contoso_user = principal_id(registered).await;
    assert_ne!(contoso_user, fabrikam_user);
    assign(&app, "contoso", &contoso_user, "Reader").await;

    // The same token, at once (the registrations it remembered lacked contoso): Reader in
    // contoso, Contributor in fabrikam, nothing in northwind.
    let cases = [
        (Method::GET, "/v1/tenants/contoso/apps", StatusCode::OK),
        (
            Method::PUT,
            "/v1/tenants/contoso/apps/billing",
            StatusCode::FORBIDDEN,
        ),
        (Method::GET, "/v1/tenants/fabrikam/apps", StatusCode::OK),
        (
            Method::PUT,
            "/v1/tenants/fabrikam/apps/billing",
            StatusCode::CREATED,
        ),
        (
            Method::GET,
            "/v1/tenants/northwind/apps",
            StatusCode::NOT_FOUND,
        ),
    ];
    for (method, path, expected) in cases {
        assert_eq!(
            status(&app, method.clone(), path, &token).await,
            expected,
            "{method} {path}"
        );
    }

    // Each tenant sees the caller as its own registration, and each audit log names it.
    let contoso = me_in(&app, "contoso", &token).await;
    assert_eq!(contoso["subject"], contoso_user.as_str());
    assert_eq!(contoso["tenant"], "contoso");
    let actions = contoso["actions"].to_string();
    assert!(
        actions.contains("Shoal/apps/read") && !actions.contains("Shoal/apps/write"),
        "{actions}"
    );
    let fabrikam = me_in(&app, "fabrikam", &token).await;
    assert_eq!(fabrikam["subject"], fabrikam_user.as_str());
    assert!(
        fabrikam["actions"].to_string().contains("Shoal/apps/write"),
        "{fabrikam}"
    );
    let audit: Value = app
        .request(
            Method::GET,
            "/v1/tenants/fabrikam/auditLog",
            Some(&app.token_for("fabrikam", Role::Owner)),
        )
        .fetch_json()
        .await;
    let write = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["action"] == "Shoal/apps/write")
        .expect("the app write is audited");
    assert_eq!(write["principal"], fabrikam_user.as_str());

    // Within one tenant a subject is still one user.
    let twice = register(&app, "contoso", "alice-again", &issuer.issuer, &oid).await;
    assert_eq!(twice.status(), StatusCode::CONFLICT);
    let detail = problem(twice).await["detail"].to_string();
    assert!(detail.contains("of this tenant"), "{detail}");
    // Registering it again under its own name is no conflict.
    assert_eq!(
        register(&app, "contoso", "alice", &issuer.issuer, &oid)
            .await
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn users_are_registered_only_with_an_issuer_shoal_trusts() {
    let key = RsaKey::generate();
    let issuer = TestIssuer::start(&[&key]).await;
    let app = issuer
        .trusted_by_shoal(DEFAULT_REFETCH, DEFAULT_KEY_AGE)
        .await;
    app.put_tenant("contoso").await;

    let untrusted = [
        "https://login.example.com/other/v2.0".to_string(),
        // `iss` is compared exactly, so a near miss is another issuer.
        format!("{}/", issuer.issuer),
    ];
    for other in untrusted {
        let refused = register(&app, "contoso", "mallory", &other, "someone").await;
        assert_eq!(
            refused.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{other}"
        );
        let body = problem(refused).await;
        assert_eq!(error_paths(&body), ["issuer"], "{body}");
        assert!(
            body["errors"][0]["message"]
                .as_str()
                .unwrap()
                .contains(&issuer.issuer),
            "{body}"
        );
    }
    // Every problem at once, each at its field.
    let both = register(
        &app,
        "contoso",
        "mallory",
        "https://login.example.com/other/v2.0",
        "",
    )
    .await;
    assert_eq!(error_paths(&problem(both).await), ["issuer", "subject"]);
    assert_eq!(
        app.get("/v1/tenants/contoso/users/mallory").await.status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        register(&app, "contoso", "alice", &issuer.issuer, "someone")
            .await
            .status(),
        StatusCode::CREATED
    );
}

#[tokio::test]
async fn without_trusted_issuers_no_user_can_be_registered() {
    let app = TestApp::spawn().await;
    app.put_tenant("contoso").await;
    let refused = register(
        &app,
        "contoso",
        "alice",
        "https://login.example.com/x/v2.0",
        "s",
    )
    .await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body = problem(refused).await;
    assert_eq!(error_paths(&body), ["issuer"]);
    let message = body["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("trusts no external issuer"), "{message}");
}
