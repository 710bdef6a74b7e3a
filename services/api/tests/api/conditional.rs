//! Conditional requests as RFC 9110 §13 defines them, against every resource with an `ETag`
//! (tenants, apps, functions): `If-Match` compares strongly and `If-None-Match` weakly, both
//! take `*` or a list, a well-formed tag that is not current is 412 (304 on a read), and only a
//! field that is not an entity-tag list is 400.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

const TENANT: &str = "/v1/tenants/contoso";
const APP: &str = "/v1/tenants/contoso/apps/orders";
const FUNCTION: &str = "/v1/tenants/contoso/apps/orders/functions/Process";

fn queue_function() -> Value {
    json!({"bindings": [
        {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}
    ]})
}

/// Each resource's path and a body a `PUT` to it accepts.
fn resources() -> [(&'static str, Value); 3] {
    [
        (TENANT, json!({"displayName": "Contoso"})),
        (APP, minimal_app()),
        (FUNCTION, queue_function()),
    ]
}

async fn seeded() -> TestApp {
    let app = TestApp::spawn().await;
    app.with_app("contoso", "orders").await;
    let function = app
        .admin(Method::PUT, FUNCTION)
        .json(&queue_function())
        .fetch()
        .await;
    assert_eq!(function.status(), StatusCode::CREATED);
    app
}

async fn current_etag(app: &TestApp, path: &str) -> String {
    let read = app.get(path).await;
    assert_eq!(read.status(), StatusCode::OK, "{path}");
    etag_of(&read)
}

/// A write carrying one conditional header.
async fn write(
    app: &TestApp,
    method: Method,
    path: &str,
    body: &Value,
    header: &str,
    value: &str,
) -> StatusCode {
    let request = app.admin(method.clone(), path).header(header, value);
    let request = match method {
        Method::PUT => request.json(body),
        Method::PATCH => request.json(&json!({})),
        _ => request,
    };
    request.fetch().await.status()
}

#[tokio::test]
async fn if_match_with_any_well_formed_tag_that_is_not_current_is_412() {
    let app = seeded().await;
    for (path, body) in resources() {
        let etag = current_etag(&app, path).await;
        let stale = format!("\"{}\"", uuid::Uuid::new_v4());
        let not_current = [
            "\"xyzzy\"".to_string(),
            "\"\"".to_string(),
            stale.clone(),
            // Strong comparison: a weak tag never matches, even with the current value.
            format!("W/{etag}"),
            // A list of tags none of which is current.
            format!("\"a\", {stale}, W/{etag}"),
            // Upper case is another opaque tag (octet-by-octet comparison).
            etag.to_uppercase(),
        ];
        for value in &not_current {
            for method in [Method::PUT, Method::PATCH, Method::DELETE] {
                let status = write(&app, method.clone(), path, &body, "if-match", value).await;
                assert_eq!(
                    status,
                    StatusCode::PRECONDITION_FAILED,
                    "{method} {path} If-Match: {value}"
                );
            }
        }
        assert_eq!(current_etag(&app, path).await, etag, "nothing was written");
    }
}

#[tokio::test]
async fn if_match_with_a_list_naming_the_current_tag_proceeds() {
    let app = seeded().await;
    for (path, body) in resources() {
        let etag = current_etag(&app, path).await;
        let list = format!("\"elsewhere\", {etag}, W/\"x\"");
        let status = write(&app, Method::PUT, path, &body, "if-match", &list).await;
        assert_eq!(status, StatusCode::OK, "PUT {path}");
        let etag = current_etag(&app, path).await;
        let status = write(&app, Method::PATCH, path, &body, "if-match", &etag).await;
        assert_eq!(status, StatusCode::OK, "PATCH {path}");
    }
    // Deletes, innermost first; `*` matches any current representation.
    for (path, body) in resources().into_iter().rev() {
        let status = write(&app, Method::DELETE, path, &body, "if-match", "*").await;
        assert_eq!(status, StatusCode::NO_CONTENT, "DELETE {path}");
    }
}

#[tokio::test]
async fn if_none_match_naming_the_current_tag_on_get_is_304_with_the_etag() {
    let app = seeded().await;
    for (path, _) in resources() {
        let etag = current_etag(&app, path).await;
        let stale = format!("\"{}\"", uuid::Uuid::new_v4());
        // Weak comparison: `W/` does not matter; a list matches when any member does.
        for value in [
            etag.clone(),
            format!("W/{etag}"),
            format!("{stale}, {etag}"),
            "*".into(),
        ] {
            let read = app
                .admin(Method::GET, path)
                .header("if-none-match", &value)
                .fetch()
                .await;
            assert_eq!(
                read.status(),
                StatusCode::NOT_MODIFIED,
                "{path} If-None-Match: {value}"
            );
            assert_eq!(etag_of(&read), etag, "{path}: a 304 carries the ETag");
            assert!(read.bytes().await.unwrap().is_empty(), "{path}: no body");
        }
        for value in [stale.clone(), "\"xyzzy\"".into(), format!("W/{stale}")] {
            let read = app
                .admin(Method::GET, path)
                .header("if-none-match", &value)
                .fetch()
                .await;
            assert_eq!(
                read.status(),
                StatusCode::OK,
                "{path} If-None-Match: {value}"
            );
            assert_eq!(etag_of(&read), etag);
            let body: Value = read.json().await.unwrap();
            assert_eq!(body["etag"].as_str(), Some(etag.trim_matches('"')));
        }
    }
}

#[tokio::test]
async fn if_match_on_get_is_412_unless_it_names_the_current_tag() {
    let app = seeded().await;
    for (path, _) in resources() {
        let etag = current_etag(&app, path).await;
        for (value, expected) in [
            (etag.clone(), StatusCode::OK),
            ("*".into(), StatusCode::OK),
            (format!("W/{etag}"), StatusCode::PRECONDITION_FAILED),
            ("\"xyzzy\"".into(), StatusCode::PRECONDITION_FAILED),
        ] {
            let read = app
                .admin(Method::GET, path)
                .header("if-match", &value)
                .fetch()
                .await;
            assert_eq!(read.status(), expected, "{path} If-Match: {value}");
        }
    }
}

#[tokio::test]
async fn if_none_match_with_tags_on_writes_is_412_when_one_is_current() {
    let app = seeded().await;
    for (path, body) in resources() {
        let etag = current_etag(&app, path).await;
        for value in [etag.clone(), format!("W/{etag}"), format!("\"a\", {etag}")] {
            for method in [Method::PUT, Method::PATCH, Method::DELETE] {
                let status =
                    write(&app, method.clone(), path, &body, "if-none-match", &value).await;
                assert_eq!(
                    status,
                    StatusCode::PRECONDITION_FAILED,
                    "{method} {path} If-None-Match: {value}"
                );
            }
        }
        assert_eq!(current_etag(&app, path).await, etag, "nothing was written");
        let stale = format!("\"{}\"", uuid::Uuid::new_v4());
        let status = write(&app, Method::PUT, path, &body, "if-none-match", &stale).await;
        assert_eq!(status, StatusCode::OK, "PUT {path} If-None-Match: {stale}");
        let status = write(&app, Method::PATCH, path, &body, "if-none-match", &stale).await;
        assert_eq!(
            status,
            StatusCode::OK,
            "PATCH {path} If-None-Match: {stale}"
        );
    }
    // A tag cannot name a resource that does not exist: the create proceeds.
    let created = write(
        &app,
        Method::PUT,
        "/v1/tenants/contoso/apps/fresh",
        &minimal_app(),
        "if-none-match",
        "\"anything\"",
    )
    .await;
    assert_eq!(created, StatusCode::CREATED);
}

#[tokio::test]
async fn both_headers_are_evaluated_if_match_first() {
    let app = seeded().await;
    let etag = current_etag(&app, APP).await;
    let read = |if_match: String, if_none_match: String| {
        app.admin(Method::GET, APP)
            .header("if-match", if_match)
            .header("if-none-match", if_none_match)
            .fetch()
    };
    let stale = "\"stale\"".to_string();
    assert_eq!(
        read(stale.clone(), etag.clone()).await.status(),
        StatusCode::PRECONDITION_FAILED
    );
    assert_eq!(
        read(etag.clone(), etag.clone()).await.status(),
        StatusCode::NOT_MODIFIED
    );
    assert_eq!(read(etag.clone(), stale).await.status(), StatusCode::OK);
}

#[tokio::test]
async fn conditional_headers_that_are_not_entity_tag_lists_are_400() {
    let app = seeded().await;
    for value in [
        "not-an-etag",
        "\"unterminated",
        "\"a\" \"b\"",
        "w/\"lowercase-weak\"",
        "*, \"a\"",
    ] {
        for header in ["if-match", "if-none-match"] {
            let read = app
                .admin(Method::GET, APP)
                .header(header, value)
                .fetch()
                .await;
            assert_eq!(
                read.status(),
                StatusCode::BAD_REQUEST,
                "GET {header}: {value}"
            );
            problem(read).await;
            let status = write(&app, Method::PUT, APP, &minimal_app(), header, value).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "PUT {header}: {value}");
        }
    }
}
