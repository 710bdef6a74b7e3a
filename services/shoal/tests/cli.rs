//! The command-line contract other tests and scripts rely on, exercised on the real binary:
//! `migrate`, `serve --listen`, `token` printing only the token, `openapi` printing the
//! committed spec, `dev` on a private cluster, and flag errors that name the flag.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use shoal_testkit::{ScratchDatabase, admin_url};

const SHOAL: &str = env!("CARGO_BIN_EXE_shoal");

mod support {
    pub mod dev;
}

async fn scratch_database() -> ScratchDatabase {
    ScratchDatabase::create(&admin_url(), "shoal_cli")
        .await
        .unwrap()
}

fn secret_key() -> String {
    shoal_store::crypto::SecretKey::generate().to_base64()
}

fn shoal(args: &[&str]) -> Command {
    let mut command = Command::new(SHOAL);
    command
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("SHOAL_SECRET_KEY")
        .env("SHOAL_EGRESS_ALLOW", shoal_testkit::EGRESS_ALLOW_LOOPBACK)
        .env("RUST_LOG", "warn");
    command
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn wait_for(url: &str, deadline: Duration) {
    let client = reqwest::Client::new();
    let until = Instant::now() + deadline;
    loop {
        if let Ok(r) = client.get(url).send().await
            && r.status().is_success()
        {
            return;
        }
        assert!(
            Instant::now() < until,
            "{url} did not answer within {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn terminate(child: &std::process::Child) {
    // SIGTERM, as an orchestrator would send it.
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
}

#[test]
fn openapi_prints_the_committed_spec() {
    let output = shoal(&["openapi"]).output().unwrap();
    assert!(output.status.success());
    let committed = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../openapi/openapi.json"
    ))
    .unwrap();
    assert_eq!(
        String::from_utf8(output.stdout).unwrap().trim_end(),
        committed.trim_end()
    );
}

#[tokio::test]
async fn migrate_token_and_serve_work_together() {
    let db = scratch_database().await;
    let key = secret_key();
    let migrate = shoal(&["migrate"])
        .env("DATABASE_URL", db.url())
        .output()
        .unwrap();
    assert!(
        migrate.status.success(),
        "{}",
        String::from_utf8_lossy(&migrate.stderr)
    );

    let token = shoal(&[
        "token",
        "--subject",
        "ops",
        "--platform-admin",
        "--ttl",
        "15m",
    ])
    .env("DATABASE_URL", db.url())
    .env("SHOAL_SECRET_KEY", &key)
    .output()
    .unwrap();
    assert!(
        token.status.success(),
        "{}",
        String::from_utf8_lossy(&token.stderr)
    );
    let stdout = String::from_utf8(token.stdout).unwrap();
    let token = stdout.trim_end_matches('\n');
    assert_eq!(
        token.lines().count(),
        1,
        "only the token is printed: {stdout:?}"
    );
    assert_eq!(token.split('.').count(), 3, "a JWT");

    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut server = shoal(&["serve", "--listen", &listen])
        .env("DATABASE_URL", db.url())
        .env("SHOAL_SECRET_KEY", &key)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://{listen}");
    wait_for(&format!("{base}/readyz"), Duration::from_secs(30)).await;
    let client = reqwest::Client::new();
    let created = client
        .put(format!("{base}/v1/tenants/contoso"))
        .bearer_auth(token)
        .json(&serde_json::json!({"displayName": "Contoso"}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), reqwest::StatusCode::CREATED);

    // A tenant token issued by the CLI for that tenant reads it, and sees nothing else.
    let tenant_token = shoal(&[
        "token",
        "--subject",
        "alice",
        "--tenant",
        "contoso",
        "--role",
        "Reader",
    ])
    .env("DATABASE_URL", db.url())
    .env("SHOAL_SECRET_KEY", &key)
    .output()
    .unwrap();
    let tenant_token = String::from_utf8(tenant_token.stdout).unwrap();
    let read = client
        .get(format!("{base}/v1/tenants/contoso"))
        .bearer_auth(tenant_token.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), reqwest::StatusCode::OK);
    let list = client
        .get(format!("{base}/v1/tenants"))
        .bearer_auth(tenant_token.trim())
        .send()
        .await
        .unwrap();
    assert_eq!(list.status(), reqwest::StatusCode::FORBIDDEN);

    terminate(&server);
    let status = server.wait().unwrap();
    assert!(status.success(), "SIGTERM is a clean shutdown: {status}");
}

fn kid_of(token: &str) -> String {
    use base64::Engine as _;
    let header = token.split('.').next().unwrap();
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .unwrap();
    let header: serde_json::Value = serde_json::from_slice(&header).unwrap();
    header["kid"].as_str().unwrap().to_string()
}

fn cli_token(db: &ScratchDatabase, key: &str) -> String {
    let output = shoal(&["token", "--subject", "ops", "--platform-admin"])
        .env("DATABASE_URL", db.url())
        .env("SHOAL_SECRET_KEY", key)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

fn rotate(db: &ScratchDatabase, key: &str, grace: &str) -> String {
    let output = shoal(&["keys", "rotate", "--grace", grace])
        .env("DATABASE_URL", db.url())
        .env("SHOAL_SECRET_KEY", key)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[tokio::test]
async fn keys_rotate_signs_with_a_new_key_while_old_tokens_verify_until_the_grace_ends() {
    let db = scratch_database().await;
    let key = secret_key();
    let migrate = shoal(&["migrate"])
        .env("DATABASE_URL", db.url())
        .output()
        .unwrap();
    assert!(migrate.status.success());
    let old = cli_token(&db, &key);

    let printed = rotate(&db, &key, "1h");
    let new = cli_token(&db, &key);
    assert_ne!(kid_of(&new), kid_of(&old));
    assert!(
        printed.contains(&format!("signing key {} signs from now on", kid_of(&new)))
            && printed.contains(&format!("key {} verifies until", kid_of(&old))),
        "{printed}"
    );

    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut server = shoal(&["serve", "--listen", &listen])
        .env("DATABASE_URL", db.url())
        .env("SHOAL_SECRET_KEY", &key)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://{listen}");
    wait_for(&format!("{base}/readyz"), Duration::from_secs(30)).await;
    let client = reqwest::Client::new();
    let status = async |token: &str| {
        client
            .get(format!("{base}/v1/tenants"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .status()
    };
    assert_eq!(
        status(&old).await,
        reqwest::StatusCode::OK,
        "during the grace"
    );
    assert_eq!(status(&new).await, reqwest::StatusCode::OK);
    let jwks: serde_json::Value = client
        .get(format!("{base}/.well-known/jwks.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let kids: Vec<&str> = jwks["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kid"].as_str().unwrap())
        .collect();
    assert_eq!(kids, vec![kid_of(&new), kid_of(&old)]);

    // An emergency rotation: the serving process learns of it from the first token naming the
    // newest key, and from then on refuses every older token.
    rotate(&db, &key, "0s");
    let newest = cli_token(&db, &key);
    assert_eq!(status(&newest).await, reqwest::StatusCode::OK);
    assert_eq!(status(&new).await, reqwest::StatusCode::UNAUTHORIZED);
    assert_eq!(status(&old).await, reqwest::StatusCode::UNAUTHORIZED);

    terminate(&server);
    server.wait().unwrap();
}

#[test]
fn missing_or_malformed_settings_name_the_flag() {
    let key = secret_key();
    let db = ("DATABASE_URL", "postgres://x");
    type Case<'a> = (&'a [&'a str], Vec<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 26] = [
        (&["serve"], vec![db], "--secret-key"),
        (
            &["serve"],
            vec![db, ("SHOAL_SECRET_KEY", "c2hvcnQ=")],
            "--secret-key",
        ),
        (
            &["serve"],
            vec![
                db,
                (
                    "SHOAL_SECRET_KEY",
                    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                ),
            ],
            "--secret-key",
        ),
        (
            &["serve", "--listen", "nowhere"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--listen",
        ),
        (
            &["serve"],
            vec![("SHOAL_SECRET_KEY", &key)],
            "--database-url",
        ),
        (
            &["token", "--subject", "s"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--platform-admin",
        ),
        (
            &["token", "--subject", "s", "--platform-admin", "--ttl", "3d"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--ttl",
        ),
        (
            &["keys", "rotate", "--grace", "8d"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--grace",
        ),
        (
            &["serve", "--token-lifetime", "2d"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--token-lifetime",
        ),
        (
            &["serve", "--public-url", "ftp://shoal.example.com"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--public-url",
        ),
        (
            &[
                "serve",
                "--external-issuer",
                "issuer=http://login.example.com/x/v2.0,audience=api://shoal",
            ],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--external-issuer",
        ),
        (
            &["serve"],
            vec![
                db,
                ("SHOAL_SECRET_KEY", &key),
                (
                    "SHOAL_EXTERNAL_ISSUERS",
                    "issuer=https://a.example.com,audience=x;audience=y",
                ),
            ],
            "--external-issuer",
        ),
        (
            &["serve"],
            vec![
                db,
                ("SHOAL_SECRET_KEY", &key),
                (
                    "SHOAL_EXTERNAL_ISSUERS",
                    "issuer=https://a.example.com,audience=x;issuer=https://a.example.com,audience=y",
                ),
            ],
            "--external-issuer",
        ),
        (
            &["worker", "--name", "w1", "--lease-ttl", "soon"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--lease-ttl",
        ),
        (
            &["worker", "--all-apps"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--name",
        ),
        (
            &["worker", "--all-apps", "--name", "bad name!"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--name",
        ),
        (
            &[
                "worker",
                "--all-apps",
                "--name",
                "w1",
                "--drain-deadline",
                "soon",
            ],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--drain-deadline",
        ),
        (
            &[
                "worker",
                "--all-apps",
                "--name",
                "w1",
                "--extra-ca-file",
                "/nonexistent/ca.pem",
            ],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--extra-ca-file",
        ),
        (
            &["worker", "--all-apps", "--name", "w1"],
            vec![
                db,
                ("SHOAL_SECRET_KEY", &key),
                ("SHOAL_INVOCATION_TELEMETRY", "sometimes"),
            ],
            "--invocation-telemetry",
        ),
        (
            &["scheduler", "--tick", "0"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--tick",
        ),
        (
            &["scheduler", "--tick", "1s", "--lease-ttl", "1s"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--lease-ttl",
        ),
        (
            &["scheduler", "--metric-reads-per-account", "0"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--metric-reads-per-account",
        ),
        (
            &["scheduler", "--scale-in-window", "forever"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--scale-in-window",
        ),
        (
            &["serve", "--web-dir", "/nonexistent/shoal-dashboard"],
            vec![db, ("SHOAL_SECRET_KEY", &key)],
            "--web-dir",
        ),
        (
            &["serve"],
            vec![db, ("SHOAL_SECRET_KEY", &key), ("SHOAL_ENVIRONMENT", " ")],
            "--environment",
        ),
        (&["dev", "--environment", "a\tb"], vec![], "--environment"),
    ];
    for (args, env, flag) in cases {
        let mut command = shoal(args);
        for (k, v) in env {
            command.env(k, v);
        }
        let output = command.output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} should fail");
        assert!(
            stderr.contains(flag),
            "{args:?}: expected {flag} in {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn token_against_an_unmigrated_database_explains_itself() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let db = runtime.block_on(scratch_database());
    let output = shoal(&["token", "--subject", "s", "--platform-admin"])
        .env("DATABASE_URL", db.url())
        .env("SHOAL_SECRET_KEY", secret_key())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("shoal migrate"), "{stderr}");
    drop(db);
}

#[tokio::test]
async fn dev_runs_on_a_private_cluster_and_prints_what_to_open() {
    let dir = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut dev = shoal(&[
        "dev",
        "--listen",
        &listen,
        "--dir",
        dir.path().to_str().unwrap(),
    ])
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let printed = support::dev::banner(dev.stdout.take().unwrap()).await;
    let base = format!("http://{listen}");
    assert!(printed.contains(&format!("{base}/docs")), "{printed}");
    let token = support::dev::printed(&printed, "export SHOAL_TOKEN=");
    // The demo flows: a message on demo-in reaches the demo handler through the worker and its
    // result lands on demo-out.
    let connection = support::dev::printed(&printed, "connection string ");
    let queues =
        shoal_connectors::StorageQueues::from_connection_string(&connection, &Default::default())
            .unwrap();
    let input = queues.queue("demo-in").unwrap();
    input.create_if_missing().await.unwrap();
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    input.enqueue(&b64.encode("world")).await.unwrap();
    let output = queues.queue("demo-out").unwrap();
    let until = Instant::now() + Duration::from_secs(30);
    let result = loop {
        if let Ok(got) = output.receive(1, Duration::from_secs(30)).await
            && let Some(message) = got.into_iter().next()
        {
            break message;
        }
        assert!(Instant::now() < until, "no result on demo-out");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let result: serde_json::Value =
        serde_json::from_slice(&b64.decode(&result.text).unwrap()).unwrap();
    assert_eq!(result["greeting"], "Hello, world!");

    let client = reqwest::Client::new();
    let get = |path: &str| {
        let request = client.get(format!("{base}{path}")).bearer_auth(&token);
        async move {
            let response = request.send().await.unwrap();
            response.json::<serde_json::Value>().await.unwrap()
        }
    };
    let workers = get("/v1/workers").await;
    let names: Vec<&str> = workers["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["name"].as_str())
        .collect();
    assert_eq!(
        names,
        ["dev-worker-1", "dev-worker-2", "dev-worker-3"],
        "{workers}"
    );
    // The scheduler scaled the demo app from zero to one instance for the message.
    let scale = get("/v1/tenants/demo/apps/hello/scale").await;
    assert_eq!(scale["desiredInstances"], 1, "{scale}");
    assert_eq!(
        scale["placement"].as_array().map(Vec::len),
        Some(1),
        "{scale}"
    );
    assert_eq!(scale["decisions"][0]["from"], 0, "{scale}");
    let metrics = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("shoal_listener_messages_received_total{tenant=\"demo\""),
        "{metrics}"
    );
    assert!(dir.path().join("secret-key").exists());
    // The HTTP function answers through the webhook ingress to the printed invoker token, which
    // may do nothing else.
    let invoker = support::dev::printed(&printed, "export SHOAL_INVOKE_TOKEN=");
    let welcome = client
        .post(format!("{base}/webhooks/demo/hello/welcome?name=world"))
        .bearer_auth(&invoker)
        .send()
        .await
        .unwrap();
    assert_eq!(welcome.status(), 200);
    let welcome: serde_json::Value = welcome.json().await.unwrap();
    assert_eq!(welcome["greeting"], "Welcome, world!", "{welcome}");
    let read = client
        .get(format!("{base}/v1/tenants/demo/apps"))
        .bearer_auth(&invoker)
        .send()
        .await
        .unwrap();
    assert_eq!(read.status(), 403);

    terminate(&dev);
    let status = dev.wait().unwrap();
    assert!(status.success(), "{status}");
    assert!(
        !dir.path().join("postgres/postmaster.pid").exists(),
        "the private cluster is stopped"
    );
}
