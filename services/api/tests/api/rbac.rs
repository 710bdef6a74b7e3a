//! Every built-in role against every management endpoint, through role assignments made with
//! the API and tokens of registered principals: what each role may do succeeds, what it may
//! not is a 403 (or, from another tenant, a 404 that shows no data), and denials are audited.

use std::collections::BTreeSet;
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_api::identity::Principal;
use shoal_domain::names::TenantName;
use uuid::Uuid;

use crate::helpers::{Fetch, Options, TestApp, minimal_app};

const T: &str = "contoso";
/// The issuer the fixtures register users with, which Shoal must trust (no token of it is ever
/// presented, so its keys are never fetched).
const FIXTURE_ISSUER: &str = "https://idp.example";

fn queue_function() -> Value {
    json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}]})
}

/// A service principal created through the API with `role` at `scope`; its token.
pub(crate) async fn principal_with_role(
    app: &TestApp,
    tenant: &str,
    name: &str,
    roles: &[(&str, &str)],
) -> (Uuid, String) {
    let created = app
        .admin(
            Method::PUT,
            &format!("/v1/tenants/{tenant}/servicePrincipals/{name}"),
        )
        .fetch()
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let body: Value = created.json().await.unwrap();
    let id = Uuid::parse_str(body["principalId"].as_str().unwrap()).unwrap();
    for (role, scope) in roles {
        let assigned = app
            .admin(
                Method::PUT,
                &format!("/v1/tenants/{tenant}/roleAssignments/{}", Uuid::new_v4()),
            )
            .json(&json!({"principalId": id, "roleDefinitionId": role, "scope": scope}))
            .fetch()
            .await;
        assert_eq!(assigned.status(), StatusCode::CREATED, "{role} at {scope}");
    }
    let token = app
        .tokens
        .issue(
            &Principal::Registered {
                id,
                tenant: TenantName::parse(tenant).unwrap(),
            },
            Duration::from_secs(600),
        )
        .unwrap();
    (id, token)
}

/// One endpoint: method, path (`{r}` becomes the caller's own resource suffix), body, and
/// the roles that may call it.
struct Endpoint {
    method: Method,
    path: &'static str,
    body: Option<Value>,
    allowed: &'static [&'static str],
}

const ALL: &[&str] = &["Owner", "Contributor", "Reader"];
const MANAGE: &[&str] = &["Owner", "Contributor"];
const OWNER: &[&str] = &["Owner"];
const NOBODY: &[&str] = &[];

fn endpoints() -> Vec<Endpoint> {
    let e = |method: Method, path: &'static str, body: Option<Value>, allowed| Endpoint {
        method,
        path,
        body,
        allowed,
    };
    vec![
        e(Method::GET, "/v1/tenants/contoso", None, ALL),
        e(Method::GET, "/v1/tenants/contoso/apps", None, ALL),
        e(Method::GET, "/v1/tenants/contoso/apps/orders", None, ALL),
        e(
            Method::PUT,
            "/v1/tenants/contoso/apps/new-{r}",
            Some(minimal_app()),
            MANAGE,
        ),
        e(
            Method::PATCH,
            "/v1/tenants/contoso/apps/orders",
            Some(json!({"appSettings": {"K": "v"}})),
            MANAGE,
        ),
        e(
            Method::DELETE,
            "/v1/tenants/contoso/apps/gone-{r}",
            None,
            MANAGE,
        ),
        e(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/settings/list",
            None,
            MANAGE,
        ),
        e(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/signingSecret/list",
            None,
            OWNER,
        ),
        e(
            Method::POST,
            "/v1/tenants/contoso/apps/keys-{r}/signingSecret/regenerate",
            None,
            OWNER,
        ),
        e(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/identityEndpoint/list",
            None,
            OWNER,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/apps/orders/scale",
            None,
            ALL,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/apps/orders/diagnostics",
            None,
            ALL,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/apps/orders/functions",
            None,
            ALL,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/apps/orders/functions/process",
            None,
            ALL,
        ),
        e(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/fn-{r}",
            Some(queue_function()),
            MANAGE,
        ),
        e(
            Method::PATCH,
            "/v1/tenants/contoso/apps/orders/functions/process",
            Some(json!({})),
            MANAGE,
        ),
        e(
            Method::DELETE,
            "/v1/tenants/contoso/apps/orders/functions/gone-{r}",
            None,
            MANAGE,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/apps/orders/functions/process/breaker",
            None,
            ALL,
        ),
        e(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/functions/process/pause",
            None,
            MANAGE,
        ),
        e(
            Method::POST,
            "/v1/tenants/contoso/apps/orders/functions/process/resume",
            None,
            MANAGE,
        ),
        e(Method::GET, "/v1/tenants/contoso/identities", None, ALL),
        e(
            Method::GET,
            "/v1/tenants/contoso/identities/shared",
            None,
            ALL,
        ),
        e(
            Method::PUT,
            "/v1/tenants/contoso/identities/id-{r}",
            None,
            MANAGE,
        ),
        e(
            Method::DELETE,
            "/v1/tenants/contoso/identities/gone-{r}",
            None,
            MANAGE,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/servicePrincipals",
            None,
            ALL,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/servicePrincipals/shared",
            None,
            ALL,
        ),
        e(
            Method::PUT,
            "/v1/tenants/contoso/servicePrincipals/sp-{r}",
            None,
            MANAGE,
        ),
        e(
            Method::POST,
            "/v1/tenants/contoso/servicePrincipals/secret-{r}/secrets",
            None,
            MANAGE,
        ),
        e(
            Method::DELETE,
            "/v1/tenants/contoso/servicePrincipals/gone-{r}",
            None,
            MANAGE,
        ),
        e(Method::GET, "/v1/tenants/contoso/users", None, ALL),
        e(
            Method::PUT,
            "/v1/tenants/contoso/users/user-{r}",
            Some(json!({"issuer": FIXTURE_ISSUER, "subject": "user-{r}"})),
            MANAGE,
        ),
        e(
            Method::DELETE,
            "/v1/tenants/contoso/users/gone-{r}",
            None,
            MANAGE,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/roleDefinitions",
            None,
            ALL,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/roleDefinitions/Reader",
            None,
            ALL,
        ),
        e(
            Method::PUT,
            "/v1/tenants/contoso/roleDefinitions/custom-{r}",
            Some(
                json!({"permissions": {"actions": ["Shoal/apps/read"]}, "assignableScopes": ["/tenants/contoso"]}),
            ),
            OWNER,
        ),
        e(
            Method::DELETE,
            "/v1/tenants/contoso/roleDefinitions/gone-{r}",
            None,
            OWNER,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/roleAssignments",
            None,
            ALL,
        ),
        e(
            Method::GET,
            "/v1/tenants/contoso/checkAccess?principalId={target}&scope=/tenants/contoso/apps/orders",
            None,
            ALL,
        ),
        e(
            Method::PUT,
            "/v1/tenants/contoso/roleAssignments/{assign}",
            Some(
                json!({"principalId": "{target}", "roleDefinitionId": "Reader", "scope": "/tenants/contoso/apps/orders"}),
            ),
            OWNER,
        ),
        e(
            Method::DELETE,
            "/v1/tenants/contoso/roleAssignments/{unassign}",
            None,
            OWNER,
        ),
        e(Method::GET, "/v1/tenants/contoso/auditLog", None, ALL),
        // Platform scope: no tenant role reaches it.
        e(Method::GET, "/v1/tenants", None, NOBODY),
        e(Method::PUT, "/v1/tenants/new-{r}", Some(json!({})), NOBODY),
        e(
            Method::PATCH,
            "/v1/tenants/contoso",
            Some(json!({"displayName": "x"})),
            NOBODY,
        ),
        e(Method::DELETE, "/v1/tenants/contoso", None, NOBODY),
        e(Method::GET, "/v1/workers", None, NOBODY),
        e(Method::POST, "/v1/signingKeys/rotate", None, NOBODY),
    ]
}

/// Per caller, the resources its destructive calls act on, created by the admin first.
struct Fixtures {
    target: Uuid,
    assign: Uuid,
    unassign: Uuid,
}

async fn fixtures(app: &TestApp, r: &str) -> Fixtures {
    let admin = |m, p: String| app.admin(m, &p);
    for path in [
        format!("/v1/tenants/{T}/apps/gone-{r}"),
        format!("/v1/tenants/{T}/apps/keys-{r}"),
    ] {
        let s = admin(Method::PUT, path)
            .json(&minimal_app())
            .fetch()
            .await
            .status();
        assert!(s.is_success(), "{s}");
    }
    let s = admin(
        Method::PUT,
        format!("/v1/tenants/{T}/apps/orders/functions/gone-{r}"),
    )
    .json(&queue_function())
    .fetch()
    .await
    .status();
    assert!(s.is_success(), "{s}");
    for path in [
        format!("/v1/tenants/{T}/identities/gone-{r}"),
        format!("/v1/tenants/{T}/servicePrincipals/gone-{r}"),
        format!("/v1/tenants/{T}/servicePrincipals/secret-{r}"),
    ] {
        let s = admin(Method::PUT, path).fetch().await.status();
        assert!(s.is_success(), "{s}");
    }
    let s = admin(Method::PUT, format!("/v1/tenants/{T}/users/gone-{r}"))
        .json(&json!({"issuer": FIXTURE_ISSUER, "subject": format!("gone-{r}")}))
        .fetch()
        .await
        .status();
    assert!(s.is_success(), "{s}");
    let s = admin(Method::PUT, format!("/v1/tenants/{T}/roleDefinitions/gone-{r}"))
        .json(&json!({"permissions": {"actions": ["Shoal/apps/read"]}, "assignableScopes": ["/tenants/contoso"]}))
        .fetch()
        .await
        .status();
    assert!(s.is_success(), "{s}");
    let target: Value = admin(
        Method::PUT,
        format!("/v1/tenants/{T}/identities/target-{r}"),
    )
    .fetch_json()
    .await;
    let target = Uuid::parse_str(target["principalId"].as_str().unwrap()).unwrap();
    let unassign = Uuid::new_v4();
    let s = admin(
        Method::PUT,
        format!("/v1/tenants/{T}/roleAssignments/{unassign}"),
    )
    .json(
        &json!({"principalId": target, "roleDefinitionId": "Reader", "scope": "/tenants/contoso"}),
    )
    .fetch()
    .await
    .status();
    assert_eq!(s, StatusCode::CREATED);
    Fixtures {
        target,
        assign: Uuid::new_v4(),
        unassign,
    }
}

fn fill(text: &str, r: &str, f: &Fixtures) -> String {
    text.replace("{r}", r)
        .replace("{target}", &f.target.to_string())
        .replace("{assign}", &f.assign.to_string())
        .replace("{unassign}", &f.unassign.to_string())
}

async fn shared_fixtures(app: &TestApp) {
    for tenant in [T, "fabrikam"] {
        assert!(app.put_tenant(tenant).await.status().is_success());
    }
    assert!(
        app.put_app(T, "orders", &minimal_app())
            .await
            .status()
            .is_success()
    );
    let s = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/apps/orders/functions/process",
        )
        .json(&queue_function())
        .fetch()
        .await
        .status();
    assert!(s.is_success(), "{s}");
    for path in [
        "/v1/tenants/contoso/identities/shared",
        "/v1/tenants/contoso/servicePrincipals/shared",
    ] {
        assert!(
            app.admin(Method::PUT, path)
                .fetch()
                .await
                .status()
                .is_success()
        );
    }
}

async fn spawn_trusting_fixture_issuer() -> TestApp {
    let issuer = format!("issuer={FIXTURE_ISSUER},audience=api://shoal").parse();
    TestApp::spawn_with(Options {
        external_issuers: shoal_api::external_issuers::ExternalIssuersConfig {
            issuers: vec![issuer.unwrap()],
            ..Default::default()
        },
        ..Options::default()
    })
    .await
}

#[tokio::test]
async fn every_built_in_role_against_every_endpoint() {
    let app = spawn_trusting_fixture_issuer().await;
    shared_fixtures(&app).await;
    let roles = ["Owner", "Contributor", "Reader", "Function Invoker"];
    let mut failures = Vec::new();
    for role in roles {
        let r = role.to_lowercase().replace(' ', "-");
        let (_, token) = principal_with_role(
            &app,
            T,
            &format!("caller-{r}"),
            &[(role, "/tenants/contoso")],
        )
        .await;
        let f = fixtures(&app, &r).await;
        for endpoint in endpoints() {
            let path = fill(endpoint.path, &r, &f);
            let mut request = app
                .client
                .request(endpoint.method.clone(), format!("{}{path}", app.base))
                .bearer_auth(&token);
            if let Some(body) = &endpoint.body {
                let body: Value = serde_json::from_str(&fill(&body.to_string(), &r, &f)).unwrap();
                request = request.json(&body);
            }
            let status = request.fetch().await.status();
            let allowed = endpoint.allowed.contains(&role);
            let ok = if allowed {
                status.is_success()
            } else {
                status == StatusCode::FORBIDDEN
            };
            if !ok {
                failures.push(format!(
                    "{role}: {} {path} answered {status}, expected {}",
                    endpoint.method,
                    if allowed { "success" } else { "403" }
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
async fn another_tenants_principals_get_404_and_no_data() {
    let app = spawn_trusting_fixture_issuer().await;
    shared_fixtures(&app).await;
    let f = fixtures(&app, "x").await;
    for role in ["Owner", "Contributor", "Reader", "Function Invoker"] {
        let name = format!("outsider-{}", role.to_lowercase().replace(' ', "-"));
        let (_, token) =
            principal_with_role(&app, "fabrikam", &name, &[(role, "/tenants/fabrikam")]).await;
        for endpoint in endpoints() {
            let path = fill(endpoint.path, "x", &f);
            if !path.starts_with("/v1/tenants/contoso") {
                continue;
            }
            let mut request = app
                .client
                .request(endpoint.method.clone(), format!("{}{path}", app.base))
                .bearer_auth(&token);
            if let Some(body) = &endpoint.body {
                let body: Value = serde_json::from_str(&fill(&body.to_string(), "x", &f)).unwrap();
                request = request.json(&body);
            }
            let response = request.fetch().await;
            let status = response.status();
            let body = response.text().await.unwrap();
            // Platform operations are refused for every tenant principal alike (403, which
            // says nothing about contoso); everything inside contoso is invisible (404).
            let platform = endpoint.allowed.is_empty();
            let expected = if platform {
                StatusCode::FORBIDDEN
            } else {
                StatusCode::NOT_FOUND
            };
            assert_eq!(
                status, expected,
                "{role}: {} {path}: {body}",
                endpoint.method
            );
            if platform {
                continue;
            }
            // Exactly the generic problem document: the path echoed back, nothing read.
            let problem: Value = serde_json::from_str(&body).unwrap();
            let keys: BTreeSet<&str> = problem
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(
                keys,
                BTreeSet::from(["type", "title", "status", "detail", "instance", "requestId"]),
                "{role}: {path}: {body}"
            );
            assert_eq!(problem["detail"], "no such resource", "{role}: {path}");
        }
    }
    // And the outsiders' attempts are in contoso's audit log, where contoso's owners see them.
    let log: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/auditLog?limit=1000")
        .fetch_json()
        .await;
    let denied = log["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["outcome"] == "denied")
        .count();
    assert!(denied >= 4, "{log}");
}

#[tokio::test]
async fn assignments_at_app_and_function_scope_reach_only_downwards() {
    let app = TestApp::spawn().await;
    shared_fixtures(&app).await;
    assert!(
        app.put_app(T, "billing", &minimal_app())
            .await
            .status()
            .is_success()
    );
    let (_, token) = principal_with_role(
        &app,
        T,
        "app-reader",
        &[("Reader", "/tenants/contoso/apps/orders")],
    )
    .await;
    let get = |path: &str| {
        app.client
            .get(format!("{}{path}", app.base))
            .bearer_auth(&token)
    };
    assert_eq!(
        get("/v1/tenants/contoso/apps/orders")
            .fetch()
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        get("/v1/tenants/contoso/apps/orders/functions/process")
            .fetch()
            .await
            .status(),
        StatusCode::OK,
        "inherited by the app's functions"
    );
    // Not upwards or sideways; it knows the tenant exists, so 403 rather than 404.
    assert_eq!(
        get("/v1/tenants/contoso/apps").fetch().await.status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        get("/v1/tenants/contoso/apps/billing")
            .fetch()
            .await
            .status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        get("/v1/tenants/fabrikam/apps").fetch().await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn a_custom_role_with_not_actions_and_a_second_role_combine_per_role() {
    let app = TestApp::spawn().await;
    shared_fixtures(&app).await;
    let role = json!({
        "description": "Manage apps but never delete them",
        "permissions": {"actions": ["Shoal/apps/*"], "notActions": ["Shoal/apps/delete"]},
        "assignableScopes": ["/tenants/contoso"]
    });
    let created = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/roleDefinitions/App Keeper",
        )
        .json(&role)
        .fetch()
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let (id, token) = principal_with_role(
        &app,
        T,
        "keeper",
        &[
            ("App Keeper", "/tenants/contoso"),
            ("Reader", "/tenants/contoso"),
        ],
    )
    .await;
    for name in ["a1", "a2"] {
        assert!(
            app.put_app(T, name, &minimal_app())
                .await
                .status()
                .is_success()
        );
    }
    let call = |m: Method, path: &str| {
        app.client
            .request(m, format!("{}{path}", app.base))
            .bearer_auth(&token)
    };
    assert_eq!(
        call(Method::PATCH, "/v1/tenants/contoso/apps/a1")
            .json(&json!({"appSettings": {"A": "1"}}))
            .fetch()
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        call(Method::DELETE, "/v1/tenants/contoso/apps/a1")
            .fetch()
            .await
            .status(),
        StatusCode::FORBIDDEN,
        "notActions subtract within the role, and Reader does not add delete"
    );
    // A second role that grants delete (Contributor) restores it: notActions are not denies.
    let more = app
        .admin(Method::PUT, &format!("/v1/tenants/contoso/roleAssignments/{}", Uuid::new_v4()))
        .json(&json!({"principalId": id, "roleDefinitionId": "Contributor", "scope": "/tenants/contoso/apps/a1"}))
        .fetch()
        .await;
    assert_eq!(more.status(), StatusCode::CREATED);
    assert_eq!(
        call(Method::DELETE, "/v1/tenants/contoso/apps/a1")
            .fetch()
            .await
            .status(),
        StatusCode::NO_CONTENT,
        "the change is seen at once (cache invalidated)"
    );
    assert_eq!(
        call(Method::DELETE, "/v1/tenants/contoso/apps/a2")
            .fetch()
            .await
            .status(),
        StatusCode::FORBIDDEN,
        "the Contributor assignment covers a1 only"
    );
    // The role cannot be deleted while assigned; the list shows built-ins and the custom one.
    assert_eq!(
        app.admin(
            Method::DELETE,
            "/v1/tenants/contoso/roleDefinitions/App Keeper"
        )
        .fetch()
        .await
        .status(),
        StatusCode::CONFLICT
    );
    let list: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/roleDefinitions")
        .fetch_json()
        .await;
    let names: BTreeSet<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        BTreeSet::from([
            "App Keeper",
            "Contributor",
            "Function Invoker",
            "Owner",
            "Reader"
        ])
    );
}

#[tokio::test]
async fn role_assignment_writes_are_validated_with_field_paths() {
    let app = TestApp::spawn().await;
    shared_fixtures(&app).await;
    let (other, _) = principal_with_role(&app, "fabrikam", "theirs", &[]).await;
    let (mine, _) = principal_with_role(&app, T, "mine", &[]).await;
    let cases = [
        (
            json!({"principalId": other, "roleDefinitionId": "Reader", "scope": "/tenants/contoso"}),
            "principalId",
        ),
        (
            json!({"principalId": "nope", "roleDefinitionId": "Reader", "scope": "/tenants/contoso"}),
            "principalId",
        ),
        (
            json!({"principalId": mine, "roleDefinitionId": "Janitor", "scope": "/tenants/contoso"}),
            "roleDefinitionId",
        ),
        (
            json!({"principalId": mine, "roleDefinitionId": "Reader", "scope": "/tenants/fabrikam"}),
            "scope",
        ),
        (
            json!({"principalId": mine, "roleDefinitionId": "Reader", "scope": "/"}),
            "scope",
        ),
        (
            json!({"principalId": mine, "roleDefinitionId": "Reader", "scope": "/tenants/contoso/"}),
            "scope",
        ),
    ];
    for (body, field) in cases {
        let response = app
            .admin(
                Method::PUT,
                &format!("/v1/tenants/contoso/roleAssignments/{}", Uuid::new_v4()),
            )
            .json(&body)
            .fetch()
            .await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{body}"
        );
        let problem = crate::helpers::problem(response).await;
        assert_eq!(
            crate::helpers::error_paths(&problem),
            vec![field.to_string()],
            "{problem}"
        );
    }
}

#[tokio::test]
async fn a_deleted_principals_token_stops_working_at_once() {
    let app = TestApp::spawn().await;
    shared_fixtures(&app).await;
    let (_, token) =
        principal_with_role(&app, T, "short-lived", &[("Reader", "/tenants/contoso")]).await;
    let get = || {
        app.client
            .get(format!("{}/v1/tenants/contoso/apps", app.base))
            .bearer_auth(&token)
    };
    assert_eq!(get().fetch().await.status(), StatusCode::OK);
    assert_eq!(
        get().fetch().await.status(),
        StatusCode::OK,
        "served from the cache"
    );
    let deleted = app
        .admin(
            Method::DELETE,
            "/v1/tenants/contoso/servicePrincipals/short-lived",
        )
        .fetch()
        .await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    assert_eq!(get().fetch().await.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn an_apps_system_assigned_identity_lives_and_dies_with_it() {
    let app = TestApp::spawn().await;
    shared_fixtures(&app).await;
    let body = json!({"handler": {"url": "http://127.0.0.1:7071/api"}, "identity": {"type": "SystemAssigned"}});
    let created: Value = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/with-id")
        .json(&body)
        .fetch_json()
        .await;
    let principal = created["identity"]["principalId"]
        .as_str()
        .expect("an id")
        .to_string();
    assert!(created["identity"]["clientId"].is_string());
    let read: Value = app
        .admin(Method::GET, "/v1/tenants/contoso/apps/with-id")
        .fetch_json()
        .await;
    assert_eq!(read["identity"]["principalId"], principal.as_str());
    // Naming a user-assigned identity that does not exist is a 422 at its index.
    let response = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/with-id")
        .json(&json!({"handler": {"url": "http://127.0.0.1:7071/api"},
                      "identity": {"type": "SystemAssigned, UserAssigned", "userAssignedIdentities": ["shared", "ghost"]}}))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let problem = crate::helpers::problem(response).await;
    assert_eq!(
        crate::helpers::error_paths(&problem),
        vec!["identity.userAssignedIdentities[1]".to_string()]
    );
    // Turning it off removes the principal; deleting the app would too.
    let off: Value = app
        .admin(Method::PUT, "/v1/tenants/contoso/apps/with-id")
        .json(
            &json!({"handler": {"url": "http://127.0.0.1:7071/api"}, "identity": {"type": "None"}}),
        )
        .fetch_json()
        .await;
    assert!(off["identity"]["principalId"].is_null(), "{off}");
    let assignments = app
        .admin(Method::PUT, &format!("/v1/tenants/contoso/roleAssignments/{}", Uuid::new_v4()))
        .json(&json!({"principalId": principal, "roleDefinitionId": "Reader", "scope": "/tenants/contoso"}))
        .fetch()
        .await;
    assert_eq!(
        assignments.status(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "the old identity is gone"
    );
}

#[tokio::test]
async fn service_principal_secrets_are_shown_once_and_never_read_back() {
    let app = TestApp::spawn().await;
    shared_fixtures(&app).await;
    let created: Value = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/servicePrincipals/deployer",
        )
        .fetch_json()
        .await;
    let secret = created["clientSecret"]
        .as_str()
        .expect("shown on creation")
        .to_string();
    assert!(secret.len() >= 40);
    for path in [
        "/v1/tenants/contoso/servicePrincipals/deployer",
        "/v1/tenants/contoso/servicePrincipals",
    ] {
        let text = app
            .admin(Method::GET, path)
            .fetch()
            .await
            .text()
            .await
            .unwrap();
        assert!(
            !text.contains(&secret) && !text.contains("clientSecret"),
            "{text}"
        );
    }
    let again = app
        .admin(
            Method::PUT,
            "/v1/tenants/contoso/servicePrincipals/deployer",
        )
        .fetch()
        .await;
    assert_eq!(again.status(), StatusCode::OK);
    assert!(!again.text().await.unwrap().contains("clientSecret"));
    let renewed: Value = app
        .admin(
            Method::POST,
            "/v1/tenants/contoso/servicePrincipals/deployer/secrets",
        )
        .fetch_json()
        .await;
    assert_ne!(renewed["clientSecret"].as_str().unwrap(), secret);
}

/// The cache must not outlive a lost notification: when the listening connection dies, a
/// change made meanwhile (its NOTIFY lost) is still seen, because the cache is bypassed while
/// disconnected and emptied on reconnection.
#[tokio::test]
async fn a_change_made_while_the_listener_is_down_is_not_served_from_the_cache() {
    let app = TestApp::spawn().await;
    shared_fixtures(&app).await;
    let (_, token) =
        principal_with_role(&app, T, "cached", &[("Reader", "/tenants/contoso")]).await;
    let get = || {
        app.client
            .get(format!("{}/v1/tenants/contoso/apps", app.base))
            .bearer_auth(&token)
    };
    assert_eq!(get().fetch().await.status(), StatusCode::OK);
    assert_eq!(get().fetch().await.status(), StatusCode::OK, "now cached");
    // Kill every server connection to the test database (the listener's among them) and, in
    // the same breath, delete the principal behind the API's back.
    let admin = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    sqlx::query(
        "select pg_terminate_backend(pid) from pg_stat_activity
         where datname = current_database() and pid <> pg_backend_pid()",
    )
    .execute(&admin)
    .await
    .unwrap();
    let deleted = sqlx::query("delete from principals where name = 'cached'")
        .execute(&admin)
        .await
        .unwrap();
    assert_eq!(deleted.rows_affected(), 1);
    admin.close().await;
    // Pooled connections that were killed may fail a request or two (503). A cached 200 is
    // possible only in the moment before the API notices its listener died; after that the
    // change must be seen, long before the cache's 30 s backstop.
    let deleted_at = std::time::Instant::now();
    let until = deleted_at + Duration::from_secs(10);
    loop {
        let status = get().fetch().await.status();
        if status == StatusCode::UNAUTHORIZED {
            break;
        }
        assert!(
            status != StatusCode::OK || deleted_at.elapsed() < Duration::from_secs(1),
            "a stale cached grant was still served {:?} after the change",
            deleted_at.elapsed()
        );
        assert!(std::time::Instant::now() < until, "still {status}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // And it stays refused once the listener is back (the cache was emptied on reconnection,
    // not merely bypassed while disconnected).
    let settle = std::time::Instant::now() + Duration::from_secs(2);
    while std::time::Instant::now() < settle {
        assert_eq!(get().fetch().await.status(), StatusCode::UNAUTHORIZED);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
