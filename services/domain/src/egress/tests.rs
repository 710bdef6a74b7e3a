use super::*;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn url(text: &str) -> url::Url {
    url::Url::parse(text).unwrap()
}

#[test]
fn strict_refuses_every_spelling_of_a_refused_url_at_save_time() {
    let policy = EgressPolicy::strict();
    for (text, rule) in [
        ("http://169.254.169.254/latest", Rule::Metadata),
        ("http://2852039166/", Rule::Metadata),
        ("http://0xa9fea9fe/", Rule::Metadata),
        ("http://0251.0376.0251.0376/", Rule::Metadata),
        ("http://[::ffff:169.254.169.254]/", Rule::Metadata),
        ("http://[fd00:ec2::254]/", Rule::Metadata),
        (
            "http://metadata.google.internal/computeMetadata/v1/",
            Rule::Metadata,
        ),
        ("http://[::1]:7071/", Rule::Loopback),
        ("http://127.1:5432/", Rule::Loopback),
        ("http://localhost:8080/", Rule::Loopback),
        ("http://api.localhost/", Rule::Loopback),
        ("http://10.0.0.1/", Rule::Private),
        ("https://192.168.1.1/", Rule::Private),
        ("http://100.64.1.1/", Rule::SharedAddressSpace),
        ("http://[fe80::1]/", Rule::LinkLocal),
        ("http://[fc00::1]/", Rule::UniqueLocal),
        ("http://0.0.0.0:7071/", Rule::Unspecified),
        ("http://[64:ff9b::7f00:1]/", Rule::Loopback),
    ] {
        let refusal = policy.check_url(&url(text)).expect_err(text);
        assert_eq!(refusal.rule, rule, "{text}");
    }
    for text in [
        "https://handler.example.com/api",
        "http://8.8.8.8/",
        "https://[2606:4700::1111]/",
    ] {
        assert_eq!(policy.check_url(&url(text)), Ok(()), "{text}");
    }
}

#[test]
fn the_refusal_names_the_host_the_address_and_the_rule_and_nothing_about_the_port_state() {
    let policy = EgressPolicy::strict();
    let refusal = policy
        .check("handler.example.com", ip("10.1.2.3"), 8080)
        .unwrap_err();
    assert_eq!(
        refusal.to_string(),
        "handler.example.com resolves to 10.1.2.3 port 8080, a private address, which the egress policy refuses"
    );
    let literal = policy
        .check_url(&url("http://127.0.0.1:5432/"))
        .unwrap_err();
    assert_eq!(
        literal.to_string(),
        "127.0.0.1 port 5432 is a loopback address, which the egress policy refuses"
    );
    let name = policy.check_url(&url("http://localhost/")).unwrap_err();
    assert_eq!(
        name.to_string(),
        "localhost always names a loopback address, which the egress policy refuses"
    );
}

#[test]
fn a_public_name_that_resolves_to_a_refused_address_is_refused_at_connect_time() {
    let policy = EgressPolicy::strict();
    assert_eq!(
        policy.check_url(&url("https://rebind.example.com/")),
        Ok(())
    );
    for address in ["127.0.0.1", "169.254.169.254", "::ffff:10.0.0.1", "fd00::1"] {
        assert!(
            policy
                .check("rebind.example.com", ip(address), 443)
                .is_err(),
            "{address}"
        );
    }
    assert_eq!(
        policy.check("rebind.example.com", ip("93.184.215.14"), 443),
        Ok(())
    );
}

#[test]
fn the_allow_list_opens_what_it_names_and_nothing_else() {
    let policy = EgressPolicy::new(
        AllowList::parse("127.0.0.0/8,::1,10.0.0.0/8:8080,*.svc.cluster.local").unwrap(),
        vec![],
    );
    assert_eq!(policy.check_url(&url("http://127.0.0.1:9000/")), Ok(()));
    assert_eq!(policy.check_url(&url("http://localhost:9000/")), Ok(()));
    assert_eq!(policy.check_url(&url("http://[::1]:9000/")), Ok(()));
    assert_eq!(policy.check("h", ip("10.2.3.4"), 8080), Ok(()));
    assert_eq!(
        policy.check("h", ip("10.2.3.4"), 8081).unwrap_err().rule,
        Rule::Private
    );
    assert_eq!(
        policy.check("a.b.svc.cluster.local", ip("172.20.0.9"), 80),
        Ok(())
    );
    // A name entry does not open the metadata service, nor the metadata names.
    assert_eq!(
        policy
            .check("x.svc.cluster.local", ip("169.254.169.254"), 80)
            .unwrap_err()
            .rule,
        Rule::Metadata
    );
    assert_eq!(
        policy
            .check_url(&url("http://metadata.google.internal/"))
            .unwrap_err()
            .rule,
        Rule::Metadata
    );
    assert_eq!(
        policy.check("h", ip("192.168.0.1"), 80).unwrap_err().rule,
        Rule::Private
    );
}

#[test]
fn shoal_s_own_listeners_are_refused_even_where_loopback_is_allowed() {
    let policy = EgressPolicy::new(
        AllowList::loopback(),
        vec![
            "0.0.0.0:7071".parse().unwrap(),
            "127.0.0.1:9090".parse().unwrap(),
        ],
    );
    for (host, port) in [
        ("127.0.0.1", 7071),
        ("127.0.0.1", 9090),
        ("::1", 7071),
        ("10.0.0.5", 7071),
    ] {
        assert_eq!(
            policy.check(host, ip(host), port).unwrap_err().rule,
            Rule::Platform,
            "{host}:{port}"
        );
    }
    assert_eq!(policy.check("127.0.0.1", ip("127.0.0.1"), 7072), Ok(()));
    // A public address on the same port is somebody else's server.
    assert_eq!(policy.check("8.8.8.8", ip("8.8.8.8"), 7071), Ok(()));
    // Only an entry naming the address and port reaches a listener of Shoal's.
    let exact = EgressPolicy::new(
        AllowList::parse("127.0.0.1:9090").unwrap(),
        vec!["127.0.0.1:9090".parse().unwrap()],
    );
    assert_eq!(exact.check("127.0.0.1", ip("127.0.0.1"), 9090), Ok(()));
}

#[test]
fn a_tenant_s_allowances_add_to_the_platform_s_for_that_tenant_only() {
    let platform = EgressPolicy::strict();
    let tenant = platform.for_tenant(&AllowList::parse("10.20.0.0/16").unwrap());
    assert_eq!(tenant.check("h", ip("10.20.1.1"), 80), Ok(()));
    assert!(platform.check("h", ip("10.20.1.1"), 80).is_err());
}

#[test]
fn check_url_field_is_a_422_at_the_field() {
    let error = check_url_field(
        &EgressPolicy::strict(),
        "handler.url",
        &url("http://[::1]/"),
    )
    .unwrap_err();
    assert_eq!(error.errors.len(), 1);
    assert_eq!(error.errors[0].path, "handler.url");
    assert!(error.errors[0].message.contains("loopback"), "{error:?}");
}
