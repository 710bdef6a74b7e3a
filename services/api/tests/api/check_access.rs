//! `GET /v1/tenants/{t}/checkAccess`: what one of the tenant's principals may do at a scope and
//! through which role assignments; who may ask; bad input at its field; tenant isolation.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use uuid::Uuid;

use crate::helpers::{Fetch, TestApp, error_paths, minimal_app, problem};
use crate::rbac::principal_with_role;

const T: &str = "contoso";
const ORDERS: &str = "/tenants/contoso/apps/orders";
const PROCESS: &str = "/tenants/contoso/apps/orders/functions/process";

/// Scopes are paths, and `/` is allowed as it is in a query string.
fn check_path(principal: &str, scope: Option<&str>) -> String {
    let mut path = format!("/v1/tenants/{T}/checkAccess?principalId={principal}");
    if let Some(scope) = scope {
        path.push_str(&format!("&scope={scope}"));
    }
    path
}

fn names(list: &Value) -> BTreeSet<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|a| a["action"].as_str().unwrap().to_owned())
        .collect()
}

async fn fixtures(app: &TestApp) {
    for tenant in [T, "fabrikam"] {
        assert!(app.put_tenant(tenant).await.status().is_success());
    }
    for name in ["orders", "billing"] {
        assert!(
            app.put_app(T, name, &minimal_app())
                .await
                .status()
                .is_success()
        );
    }
    let function = json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}]});
    let s = app
        .admin(
            Method::PUT,
            &format!("/v1/tenants/{T}/apps/orders/functions/process"),
        )
        .json(&function)
        .fetch()
        .await
        .status();
    assert!(s.is_success(), "{s}");
    // A custom role that sends test messages and invokes, assignable anywhere in the tenant.
    let s = app
        .admin(Method::PUT, &format!("/v1/tenants/{T}/roleDefinitions/Order%20Sender"))
        .json(&json!({
            "permissions": {"actions": ["Shoal/apps/functions/send/action"], "dataActions": ["Shoal/apps/functions/invoke/action"]},
            "assignableScopes": ["/tenants/contoso"]
        }))
        .fetch()
        .await
        .status();
    assert!(s.is_success(), "{s}");
    let s = app
        .admin(
            Method::PUT,
            &format!("/v1/tenants/{T}/roleDefinitions/Apps%20Lister"),
        )
        .json(&json!({
            "permissions": {"actions": ["Shoal/apps/read"]},
            "assignableScopes": ["/tenants/contoso"]
        }))
        .fetch()
        .await
        .status();
    assert!(s.is_success(), "{s}");
}

#[tokio::test]
async fn says_what_a_principal_may_do_at_a_scope_and_which_assignments_allow_it() {
    let app = TestApp::spawn().await;
    fixtures(&app).await;
    let (worker, token) = principal_with_role(
        &app,
        T,
        "worker",
        &[
            ("Reader", ORDERS),
            ("Order Sender", PROCESS),
            ("Contributor", "/tenants/contoso/apps/billing"),
        ],
    )
    .await;
    let assignments: Value = app
        .admin(
            Method::GET,
            &format!("/v1/tenants/{T}/roleAssignments?principalId={worker}"),
        )
        .fetch_json()
        .await;
    let id_of = |role: &str| -> String {
        assignments["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["roleDefinitionName"] == role)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (reader, sender) = (id_of("Reader"), id_of("Order Sender"));

    // At the function: the app's Reader assignment reaches down to it, the function's own
    // assignment applies, the other app's Contributor does not.
    let response = app
        .admin(Method::GET, &check_path(&worker.to_string(), Some(PROCESS)))
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let check: Value = response.json().await.unwrap();
    assert_eq!(check["scope"], PROCESS);
    assert_eq!(check["principal"]["name"], "worker");
    assert_eq!(check["principal"]["kind"], "servicePrincipal");
    let applying: Vec<(&str, &str)> = check["assignments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["roleDefinitionName"].as_str().unwrap(),
                a["scope"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(applying, [("Reader", ORDERS), ("Order Sender", PROCESS)]);
    let granted = |list: &Value, action: &str| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .find(|a| a["action"] == action)
            .map(|a| {
                a["grantedBy"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|id| id.as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        granted(&check["actions"], "Shoal/apps/read"),
        [reader.as_str()]
    );
    assert_eq!(
        granted(&check["actions"], "Shoal/apps/functions/send/action"),
        [sender.as_str()]
    );
    assert!(granted(&check["actions"], "Shoal/apps/write").is_empty());
    assert!(granted(&check["actions"], "Shoal/apps/settings/list/action").is_empty());
    assert_eq!(
        granted(&check["dataActions"], "Shoal/apps/functions/invoke/action"),
        [sender.as_str()]
    );
    // Each assignment lists what it allows there.
    let sender_row = &check["assignments"][1];
    assert_eq!(sender_row["id"], sender.as_str());
    assert_eq!(
        sender_row["actions"],
        json!(["Shoal/apps/functions/send/action"])
    );
    assert_eq!(
        sender_row["dataActions"],
        json!(["Shoal/apps/functions/invoke/action"])
    );

    // At the app: the function's assignment is below it and does not apply. What is allowed
    // is what the principal's own `GET /v1/me` says there.
    let at_app: Value = app
        .admin(Method::GET, &check_path(&worker.to_string(), Some(ORDERS)))
        .fetch_json()
        .await;
    assert_eq!(at_app["assignments"].as_array().unwrap().len(), 1);
    assert!(granted(&at_app["actions"], "Shoal/apps/functions/send/action").is_empty());
    let me: Value = app
        .request(
            Method::GET,
            &format!("/v1/me?tenant={T}&app=orders"),
            Some(&token),
        )
        .fetch_json()
        .await;
    let own: BTreeSet<String> = me["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    assert!(!own.is_empty());
    assert_eq!(names(&at_app["actions"]), own);

    // At the tenant (the default scope): nothing applies, nothing is allowed.
    let at_tenant: Value = app
        .admin(Method::GET, &check_path(&worker.to_string(), None))
        .fetch_json()
        .await;
    assert_eq!(at_tenant["scope"], "/tenants/contoso");
    assert_eq!(at_tenant["assignments"], json!([]));
    assert_eq!(at_tenant["actions"], json!([]));
    assert_eq!(at_tenant["dataActions"], json!([]));
}

#[tokio::test]
async fn bad_input_is_named_at_its_field_and_another_tenants_principal_is_not_found() {
    let app = TestApp::spawn().await;
    fixtures(&app).await;
    let (mine, _) = principal_with_role(&app, T, "mine", &[]).await;
    let (theirs, _) = principal_with_role(&app, "fabrikam", "theirs", &[]).await;
    let mine = mine.to_string();
    let cases = [
        (check_path(&theirs.to_string(), None), "principalId"),
        (check_path(&Uuid::new_v4().to_string(), None), "principalId"),
        (check_path("nope", None), "principalId"),
        (format!("/v1/tenants/{T}/checkAccess"), "principalId"),
        (check_path(&mine, Some("/tenants/fabrikam")), "scope"),
        (
            check_path(&mine, Some("/tenants/fabrikam/apps/orders")),
            "scope",
        ),
        (check_path(&mine, Some("/")), "scope"),
        (check_path(&mine, Some("/tenants/contoso/")), "scope"),
        (check_path(&mine, Some("orders")), "scope"),
    ];
    for (path, field) in cases {
        let response = app.admin(Method::GET, &path).fetch().await;
        assert_eq!(
            response.status(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "{path}"
        );
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{path}"
        );
        let problem = problem(response).await;
        assert_eq!(
            error_paths(&problem),
            vec![field.to_string()],
            "{path}: {problem}"
        );
    }
    // Asked in its own tenant, fabrikam's principal is found.
    let response = app
        .admin(
            Method::GET,
            &format!("/v1/tenants/fabrikam/checkAccess?principalId={theirs}"),
        )
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn only_callers_who_may_read_role_assignments_at_the_scope_may_ask() {
    let app = TestApp::spawn().await;
    fixtures(&app).await;
    let (target, _) = principal_with_role(&app, T, "target", &[("Reader", ORDERS)]).await;
    let target = target.to_string();
    let (_, lister) =
        principal_with_role(&app, T, "lister", &[("Apps Lister", "/tenants/contoso")]).await;
    let (_, app_owner) = principal_with_role(&app, T, "app-owner", &[("Owner", ORDERS)]).await;
    let (_, tenant_reader) =
        principal_with_role(&app, T, "reader", &[("Reader", "/tenants/contoso")]).await;
    let (_, stranger) = principal_with_role(
        &app,
        "fabrikam",
        "stranger",
        &[("Owner", "/tenants/fabrikam")],
    )
    .await;
    let status = |token: &str, scope: Option<&str>| {
        let path = check_path(&target, scope);
        let request = app.request(Method::GET, &path, Some(token));
        async move { request.fetch().await.status() }
    };
    // May read apps but not role assignments: 403, as a problem.
    assert_eq!(status(&lister, None).await, StatusCode::FORBIDDEN);
    let response = app
        .request(
            Method::GET,
            &check_path(&target, Some(ORDERS)),
            Some(&lister),
        )
        .fetch()
        .await;
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    // An app's Owner may check at the app and below, not at the tenant or beside it.
    assert_eq!(status(&app_owner, Some(ORDERS)).await, StatusCode::OK);
    assert_eq!(status(&app_owner, Some(PROCESS)).await, StatusCode::OK);
    assert_eq!(status(&app_owner, None).await, StatusCode::FORBIDDEN);
    assert_eq!(
        status(&app_owner, Some("/tenants/contoso/apps/billing")).await,
        StatusCode::FORBIDDEN
    );
    // A tenant Reader may read role assignments (`*/read`), so it may check anywhere in it.
    assert_eq!(status(&tenant_reader, None).await, StatusCode::OK);
    assert_eq!(status(&tenant_reader, Some(PROCESS)).await, StatusCode::OK);
    // Another tenant's principal learns nothing: the tenant is not found.
    assert_eq!(status(&stranger, None).await, StatusCode::NOT_FOUND);
}
