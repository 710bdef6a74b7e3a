use chrono::TimeZone;
use serde_json::json;

use super::*;

fn request<'a>(headers: &'a [(&'a str, &'a str)], body: &'a [u8]) -> HttpRequestData<'a> {
    HttpRequestData {
        method: "POST",
        url: "https://shoal.example/webhooks/contoso/orders/order?id=7",
        query: Some("id=7&tag=a&tag=b&q=hello+world%21"),
        headers,
        body,
    }
}

fn payload(request: &HttpRequestData<'_>) -> Value {
    http_payload(&HttpDelivery {
        binding: "req",
        function: "order",
        request,
        now: Utc.timestamp_opt(1_570_643_912, 0).unwrap(),
        rand_guid: "24ad2b68",
    })
}

#[test]
fn request_becomes_data_req_like_the_hosts_example() {
    let headers = [
        ("content-type", "application/json"),
        ("x-custom", "1"),
        ("X-Custom", "2"),
        ("authorization", "Bearer secret-token"),
        ("connection", "keep-alive"),
    ];
    let body = br#"{"id":1005,"quantity":2}"#;
    let value = payload(&request(&headers, body));
    assert_eq!(
        value["Data"]["req"],
        json!({
            "Url": "https://shoal.example/webhooks/contoso/orders/order?id=7",
            "Method": "POST",
            "Query": {"id": "7", "tag": "a,b", "q": "hello world!"},
            "Headers": {"Content-Type": ["application/json"], "X-Custom": ["1", "2"]},
            "Params": {},
            "Body": "{\"id\":1005,\"quantity\":2}"
        })
    );
    assert_eq!(
        value["Metadata"],
        json!({
            "Query": {"id": "7", "tag": "a,b", "q": "hello world!"},
            "Headers": {"Content-Type": "application/json", "X-Custom": "1, 2"},
            "sys": {"MethodName": "order", "UtcNow": "2019-10-09T17:58:32Z", "RandGuid": "24ad2b68"}
        })
    );
}

#[test]
fn credentials_and_hop_by_hop_headers_never_reach_the_handler() {
    let headers = [
        ("Authorization", "Bearer t"),
        ("Proxy-Authorization", "Basic x"),
        ("Transfer-Encoding", "chunked"),
        ("TE", "trailers"),
        ("Upgrade", "h2c"),
        ("Host", "shoal.example"),
    ];
    let value = payload(&request(&headers, b""));
    assert_eq!(
        value["Data"]["req"]["Headers"],
        json!({"Host": ["shoal.example"]})
    );
    assert!(!value.to_string().contains("Bearer"));
}

#[test]
fn empty_body_is_omitted_and_binary_bodies_are_base64() {
    let none = payload(&request(&[], b""));
    assert!(none["Data"]["req"].get("Body").is_none());

    let octets = [("Content-Type", "application/octet-stream")];
    let value = payload(&request(&octets, b"\x00\x01hi"));
    assert_eq!(value["Data"]["req"]["Body"], "AAFoaQ==");

    let multipart = [("content-type", "multipart/form-data; boundary=x")];
    assert_eq!(
        payload(&request(&multipart, b"ab"))["Data"]["req"]["Body"],
        "YWI="
    );

    let text = [("content-type", "text/plain")];
    assert_eq!(
        payload(&request(&text, b"\xff\xfe"))["Data"]["req"]["Body"],
        "//4=",
        "not UTF-8: base64 rather than a lossy string"
    );
    assert_eq!(
        payload(&request(&text, "héllo".as_bytes()))["Data"]["req"]["Body"],
        "héllo"
    );
}

#[test]
fn missing_query_is_an_empty_object() {
    let mut req = request(&[], b"");
    req.query = None;
    assert_eq!(payload(&req)["Data"]["req"]["Query"], json!({}));
}

#[test]
fn header_names_are_canonicalised() {
    for (raw, canonical) in [
        ("content-type", "Content-Type"),
        ("X-REQUEST-ID", "X-Request-Id"),
        ("te", "Te"),
        ("a--b", "A--B"),
    ] {
        assert_eq!(canonical_header_name(raw), canonical);
    }
}

/// serde_json keeps object keys sorted or in insertion order depending on the features the
/// build unifies; compare header lists without depending on either.
fn sorted(mut headers: Vec<(String, String)>) -> Vec<(String, String)> {
    headers.sort();
    headers
}

fn handler(outputs: Value, return_value: Option<Value>) -> HandlerResponse {
    HandlerResponse {
        outputs: outputs
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        logs: Vec::new(),
        return_value,
        undeclared_outputs: Vec::new(),
        settlement: None,
        retry_after: None,
        batch_item_failures: None,
    }
}

#[test]
fn named_output_sets_status_headers_and_body() {
    let response = handler(
        json!({"res": {"statusCode": 201, "headers": {"X-Order": "7", "Set-Cookie": ["a=1", "b=2"], "Connection": "close"}, "body": "created"}}),
        None,
    );
    let result = http_response(&response, HttpOutput::Named("res")).unwrap();
    assert_eq!(result.status, 201);
    assert_eq!(
        sorted(result.headers),
        vec![
            (
                "Content-Type".to_owned(),
                "text/plain; charset=utf-8".to_owned()
            ),
            ("Set-Cookie".to_owned(), "a=1".to_owned()),
            ("Set-Cookie".to_owned(), "b=2".to_owned()),
            ("X-Order".to_owned(), "7".to_owned()),
        ]
    );
    assert_eq!(result.body, HttpBody::Text("created".into()));
}

#[test]
fn keys_match_case_insensitively_and_status_may_be_a_string() {
    let response = handler(
        json!({"RES": {"StatusCode": "404", "Body": {"error": "nope"}, "Headers": {"content-type": "application/problem+json"}}}),
        None,
    );
    let result = http_response(&response, HttpOutput::Named("res")).unwrap();
    assert_eq!(result.status, 404);
    assert_eq!(
        result.headers,
        vec![(
            "content-type".to_owned(),
            "application/problem+json".to_owned()
        )]
    );
    assert_eq!(result.body, HttpBody::Json(json!({"error": "nope"})));
    assert_eq!(result.body.to_bytes(), br#"{"error":"nope"}"#);
}

#[test]
fn return_value_carries_a_dollar_return_response() {
    let response = handler(
        json!({}),
        Some(json!({"status": 202, "body": {"ok": true}})),
    );
    let result = http_response(&response, HttpOutput::Return).unwrap();
    assert_eq!(result.status, 202);
    assert_eq!(
        result.headers,
        vec![(
            "Content-Type".to_owned(),
            "application/json; charset=utf-8".to_owned()
        )]
    );
}

#[test]
fn plain_values_are_a_200_body() {
    let cases = [
        (json!("hello"), HttpBody::Text("hello".into())),
        (
            json!({"hello": "world"}),
            HttpBody::Json(json!({"hello": "world"})),
        ),
        (json!([1, 2]), HttpBody::Json(json!([1, 2]))),
    ];
    for (value, body) in cases {
        let result = http_response(&handler(json!({}), Some(value)), HttpOutput::Return).unwrap();
        assert_eq!((result.status, result.body), (200, body));
    }
}

#[test]
fn no_response_is_204() {
    let empty = handler(json!({}), None);
    for output in [
        HttpOutput::None,
        HttpOutput::Return,
        HttpOutput::Named("res"),
    ] {
        let result = http_response(&empty, output).unwrap();
        assert_eq!((result.status, result.body), (204, HttpBody::Empty));
        assert!(result.headers.is_empty());
    }
    let null = handler(json!({"res": null}), None);
    assert_eq!(
        http_response(&null, HttpOutput::Named("res"))
            .unwrap()
            .status,
        204
    );
}

#[test]
fn bad_statuses_name_their_path() {
    for status in [
        json!(99),
        json!(101),
        json!(600),
        json!("2OO"),
        json!(-1),
        json!(true),
    ] {
        let response = handler(json!({"res": {"statusCode": status}}), None);
        let err = http_response(&response, HttpOutput::Named("res")).unwrap_err();
        assert_eq!(err.path, "Outputs.res.statusCode", "{status}");
    }
    let response = handler(json!({}), Some(json!({"status": 700})));
    let err = http_response(&response, HttpOutput::Return).unwrap_err();
    assert_eq!(err.path, "ReturnValue.status");
}

#[test]
fn bad_headers_name_their_path() {
    let cases = [
        (json!({"Bad Name": "x"}), "Outputs.res.headers.Bad Name"),
        (
            json!({"X-Split": "a\r\nInjected: 1"}),
            "Outputs.res.headers.X-Split",
        ),
        (json!({"X-Nul": "a\u{0}"}), "Outputs.res.headers.X-Nul"),
        (json!({"X-Obj": {"a": 1}}), "Outputs.res.headers.X-Obj"),
        (json!({"": "x"}), "Outputs.res.headers."),
    ];
    for (headers, path) in cases {
        let response = handler(json!({"res": {"headers": headers}}), None);
        let err = http_response(&response, HttpOutput::Named("res")).unwrap_err();
        assert_eq!(err.path, path);
    }
    let response = handler(json!({"res": {"headers": ["x"]}}), None);
    let err = http_response(&response, HttpOutput::Named("res")).unwrap_err();
    assert_eq!(err.path, "Outputs.res.headers");
}

#[test]
fn hop_by_hop_and_length_headers_are_dropped_and_scalars_stringified() {
    let response = handler(
        json!({"res": {"headers": {"Content-Length": "999", "Transfer-Encoding": "chunked", "X-Count": 3, "X-Flag": true, "X-Text": "tab\tand é"}}}),
        None,
    );
    let result = http_response(&response, HttpOutput::Named("res")).unwrap();
    assert_eq!(
        sorted(result.headers),
        vec![
            ("X-Count".to_owned(), "3".to_owned()),
            ("X-Flag".to_owned(), "true".to_owned()),
            ("X-Text".to_owned(), "tab\tand é".to_owned()),
        ]
    );
    assert_eq!(result.status, 200);
}

#[test]
fn tokens() {
    assert!(is_token("X-Shoal_1.2~"));
    assert!(!is_token("a b"));
    assert!(!is_token("a:b"));
    assert!(!is_token("é"));
}
