use reqwest::{Method, StatusCode};
use serde_json::json;
use shoal_api::identity::Role;
use sqlx::{Connection, Executor, PgConnection};

use crate::helpers::*;

#[tokio::test]
async fn another_tenants_resources_are_404_never_403() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    app.with_app("fabrikam", "billing").await;
    let owner = app.token_for("fabrikam", Role::Owner);
    for (method, path) in [
        (Method::GET, "/v1/tenants/contoso"),
        (Method::GET, "/v1/tenants/contoso/apps"),
        (Method::GET, "/v1/tenants/contoso/apps/orders"),
        (Method::DELETE, "/v1/tenants/contoso/apps/orders"),
        (
            Method::POST,
            "/v1/tenants/contoso/apps/orders/settings/list",
        ),
        (Method::GET, "/v1/tenants/contoso/apps/orders/diagnostics"),
        (Method::GET, "/v1/tenants/contoso/apps/nonexistent"),
    ] {
        let response = app
            .request(method.clone(), path, Some(&owner))
            .fetch()
            .await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method} {path}");
    }
    let put = app
        .request(Method::PUT, "/v1/tenants/contoso/apps/stolen", Some(&owner))
        .json(&minimal_app())
        .fetch()
        .await;
    assert_eq!(put.status(), StatusCode::NOT_FOUND);
    // The other tenant's app is untouched.
    assert_eq!(
        app.get("/v1/tenants/contoso/apps/orders").await.status(),
        StatusCode::OK
    );
    assert_eq!(
        app.get("/v1/tenants/contoso/apps/stolen").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn row_level_security_hides_rows_without_the_tenant_setting() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    app.with_app("fabrikam", "billing").await;
    app.admin(Method::PUT, "/v1/tenants/contoso/apps/orders/functions/Process")
        .json(&json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"}]}))
        .fetch().await;

    let mut db = PgConnection::connect(&app.database_url).await.unwrap();
    db.execute("set role shoal_app").await.unwrap();
    for table in [
        "apps",
        "app_settings",
        "functions",
        "principals",
        "role_assignments",
    ] {
        let count: i64 =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from {table}")))
                .fetch_one(&mut db)
                .await
                .unwrap();
        assert_eq!(count, 0, "{table} is visible without a tenant");
    }

    let mut tx = db.begin().await.unwrap();
    sqlx::query("select set_config('shoal.tenant_id', 'contoso', true)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let names: Vec<String> = sqlx::query_scalar("select name from apps")
        .fetch_all(&mut *tx)
        .await
        .unwrap();
    assert_eq!(names, vec!["orders"], "only the tenant's own rows");
    let functions: i64 = sqlx::query_scalar("select count(*) from functions")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(functions, 1);
    // Writing a row for another tenant is refused by the policy's check.
    let cross = sqlx::query("insert into apps (tenant_id, name, spec, etag) values ('fabrikam', 'x', '{}', gen_random_uuid())")
        .execute(&mut *tx)
        .await;
    assert!(cross.is_err(), "cross-tenant insert must fail");
    tx.rollback().await.unwrap();

    // The setting is transaction-local: after the transaction nothing is visible again.
    let count: i64 = sqlx::query_scalar("select count(*) from apps")
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(count, 0);
}

#[tokio::test]
async fn single_statement_read_sets_the_tenant_only_for_itself() {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let mut db = PgConnection::connect(&app.database_url).await.unwrap();
    db.execute("set role shoal_app").await.unwrap();
    let found: Vec<String> =
        sqlx::query_scalar("select name from shoal_read_app('contoso', 'orders')")
            .fetch_all(&mut db)
            .await
            .unwrap();
    assert_eq!(found, vec!["orders"]);
    let other: Vec<String> =
        sqlx::query_scalar("select name from shoal_read_app('fabrikam', 'orders')")
            .fetch_all(&mut db)
            .await
            .unwrap();
    assert!(
        other.is_empty(),
        "another tenant's app is not visible under its name"
    );
    let after: i64 = sqlx::query_scalar("select count(*) from apps")
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(after, 0, "the tenant setting ended with the statement");
}
