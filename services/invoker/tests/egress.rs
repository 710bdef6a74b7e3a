//! The invoker under the egress policy, against real listeners on this machine: a refused
//! destination is never connected to, whether its URL spells the address or a name resolves to
//! it; an allowed one is called; answers are read only up to the cap; forwarded answers keep
//! none of the handler's hop-by-hop or platform headers.

use std::time::Duration;

use shoal_domain::egress::{AllowList, EgressPolicy, Rule};
use shoal_domain::webhooks::WebhookSecret;
use shoal_egress::Egress;
use shoal_invoker::{ForwardedRequest, HttpInvocation, InvocationError, Invoker};
use shoal_testkit::flood::{FloodingHandler, Framing};
use uuid::Uuid;

fn strict() -> Invoker {
    Invoker::new(Egress::strict())
}

fn allowing(entries: &str) -> Invoker {
    Invoker::new(Egress::new(EgressPolicy::new(
        AllowList::parse(entries).unwrap(),
        Vec::new(),
    )))
}

async fn call(invoker: &Invoker, handler: &url::Url) -> Result<(), InvocationError> {
    let secret = WebhookSecret::from_bytes(vec![7; 32]).unwrap();
    invoker
        .invoke_http(HttpInvocation {
            handler,
            function: "f",
            secret: &secret,
            invocation_id: Uuid::now_v7(),
            request_id: None,
            body: b"{}".to_vec(),
            timeout: Duration::from_secs(10),
            outputs: &[],
            trace: None,
        })
        .await
        .map(|_| ())
}

fn refused_rule(result: Result<(), InvocationError>) -> Rule {
    match result {
        Err(InvocationError::Refused(refusal)) => refusal.rule,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn a_literal_loopback_handler_is_refused_without_a_connection() {
    let handler = FloodingHandler::start(10, Framing::Declared).await.unwrap();
    let invoker = strict();
    assert_eq!(
        refused_rule(call(&invoker, handler.url()).await),
        Rule::Loopback
    );
    let mut spelled = handler.url().clone();
    spelled.set_host(Some("[::ffff:127.0.0.1]")).unwrap();
    assert_eq!(refused_rule(call(&invoker, &spelled).await), Rule::Loopback);
    let mut named = handler.url().clone();
    named.set_host(Some("localhost")).unwrap();
    assert_eq!(refused_rule(call(&invoker, &named).await), Rule::Loopback);
    assert_eq!(handler.connections(), 0);
    assert_eq!(invoker.egress().metrics().refusals(Rule::Loopback), 3);
}

#[tokio::test]
async fn a_name_that_resolves_to_loopback_is_refused_at_connect_time() {
    // A name that passes every check of its text, refused only on the address it resolves to.
    let name = shoal_testkit::loopback_host_name();
    let handler = FloodingHandler::start(10, Framing::Declared).await.unwrap();
    let mut url = handler.url().clone();
    url.set_host(Some(&name)).unwrap();
    let invoker = strict();
    assert_eq!(
        invoker.egress().check_url(&url),
        Ok(()),
        "the text alone passes"
    );
    assert_eq!(refused_rule(call(&invoker, &url).await), Rule::Loopback);
    assert_eq!(handler.connections(), 0);
    // Allowed, the same name reaches the handler.
    call(&allowing("127.0.0.0/8"), &url).await.unwrap_err();
    assert_eq!(handler.connections(), 1);
}

#[tokio::test]
async fn a_tenant_s_allowances_apply_to_its_view_only() {
    let handler = FloodingHandler::start(2, Framing::Declared).await.unwrap();
    let platform = strict();
    let tenant = platform.for_tenant(&AllowList::parse("127.0.0.1").unwrap());
    // The handler answers `aa`, which is no custom-handler body: reached, then malformed.
    assert!(matches!(
        call(&tenant, handler.url()).await,
        Err(InvocationError::Malformed(_))
    ));
    assert_eq!(handler.connections(), 1);
    assert_eq!(
        refused_rule(call(&platform, handler.url()).await),
        Rule::Loopback
    );
    assert_eq!(handler.connections(), 1);
}

#[tokio::test]
async fn an_answer_over_the_cap_fails_whether_or_not_its_length_is_declared() {
    for framing in [Framing::Declared, Framing::Chunked] {
        let handler = FloodingHandler::start(64 * 1024 * 1024, framing)
            .await
            .unwrap();
        let invoker = allowing("127.0.0.0/8").with_max_response_bytes(1024 * 1024);
        match call(&invoker, handler.url()).await {
            Err(InvocationError::TooLarge(limit)) => assert_eq!(limit, 1024 * 1024),
            other => panic!("{framing:?}: expected TooLarge, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn forwarded_answers_drop_hop_by_hop_and_platform_headers() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut buf = vec![0u8; 8192];
        let _ = stream.read(&mut buf).await.unwrap();
        let answer = "HTTP/1.1 200 OK\r\nconnection: x-internal-hop, close\r\nx-internal-hop: 1\r\n\
                      x-shoal-worker: w9\r\nx-request-id: forged\r\nx-kept: yes\r\ncontent-length: 2\r\n\r\nok";
        stream.write_all(answer.as_bytes()).await.unwrap();
    });
    let handler = url::Url::parse(&format!("http://127.0.0.1:{port}/api")).unwrap();
    let secret = WebhookSecret::from_bytes(vec![7; 32]).unwrap();
    let response = allowing("127.0.0.1")
        .forward_http(ForwardedRequest {
            handler: &handler,
            function: "f",
            secret: &secret,
            invocation_id: Uuid::now_v7(),
            method: "GET",
            query: None,
            headers: &[],
            body: Vec::new(),
            timeout: Duration::from_secs(10),
        })
        .await
        .unwrap();
    let names: Vec<&str> = response.headers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["x-kept"], "{names:?}");
    assert_eq!(response.body, b"ok");
}
