//! Secrets never reach the logs, error bodies or ordinary reads. A full `shoal dev` run (API,
//! scheduler, workers, Azurite, the demo) logs at `debug` while the test creates and uses every
//! kind of secret Shoal handles: a service principal's client secret (and a wrong one), app
//! settings holding a connection string and an account key, the webhook signing secret, the
//! managed-identity header, access tokens, the token signing keys after a rotation, and the
//! master key. Then the captured output is searched for each of them.

use std::process::Stdio;

use base64::Engine as _;
use serde_json::{Value, json};
use shoal_store::crypto::{Cipher, SecretKey};
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_testkit::{ScratchDatabase, admin_url};

mod support {
    pub mod dev;
}

#[tokio::test]
async fn no_secret_appears_in_the_logs_of_a_full_run() {
    let database = ScratchDatabase::create(&admin_url(), "shoal_secrets")
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("dev.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let dev = support::dev::DevProcess::start(
        database.url(),
        dir.path(),
        "debug,h2=info,hyper=info,hyper_util=info,rustls=info",
        Stdio::from(log.try_clone().unwrap()),
    )
    .await;
    let (base, banner) = (dev.base.clone(), dev.banner.clone());
    let admin = support::dev::printed(&banner, "export SHOAL_TOKEN=");
    let client = reqwest::Client::new();
    let call = |method: reqwest::Method, path: &str| {
        client
            .request(method, format!("{base}{path}"))
            .bearer_auth(&admin)
    };
    let mut secrets: Vec<(&str, String)> = Vec::new();

    // App settings that are secrets: a connection string and an account key.
    let account_key =
        base64::engine::general_purpose::STANDARD.encode(uuid::Uuid::new_v4().as_bytes());
    let connection = format!(
        "DefaultEndpointsProtocol=https;AccountName=leaky;AccountKey={account_key};EndpointSuffix=core.windows.net"
    );
    let put = call(reqwest::Method::PUT, "/v1/tenants/demo/apps/vault")
        .json(&json!({
            "handler": {"url": "http://127.0.0.1:9/api"},
            "identity": {"type": "SystemAssigned"},
            "appSettings": {"Orders__connectionString": connection, "ACCOUNT_KEY": account_key}
        }))
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success(), "{}", put.text().await.unwrap());
    let read = put.text().await.unwrap();
    assert!(!read.contains(&account_key), "masked on read: {read}");
    secrets.push(("connection string", connection.clone()));
    secrets.push(("account key", account_key.clone()));
    // A bad write carrying the secret: the 422 names the field, never the value.
    let bad = call(reqwest::Method::PUT, "/v1/tenants/demo/apps/vault")
        .json(
            &json!({"handler": {"url": "not a url"}, "appSettings": {"ACCOUNT_KEY": account_key}}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 422);
    let bad = bad.text().await.unwrap();
    assert!(!bad.contains(&account_key), "{bad}");
    let listed: Value = call(
        reqwest::Method::POST,
        "/v1/tenants/demo/apps/vault/settings/list",
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(listed["appSettings"]["ACCOUNT_KEY"], account_key.as_str());

    // A service principal's secret, used right and wrong at the token endpoint.
    let sp: Value = call(
        reqwest::Method::PUT,
        "/v1/tenants/demo/servicePrincipals/deployer",
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let client_id = sp["clientId"].as_str().unwrap().to_string();
    let client_secret = sp["clientSecret"].as_str().unwrap().to_string();
    secrets.push(("client secret", client_secret.clone()));
    let token = |secret: String| {
        client.post(format!("{base}/oauth2/token")).form(&[
            ("grant_type", "client_credentials".to_string()),
            ("client_id", client_id.clone()),
            ("client_secret", secret),
            ("scope", "api://shoal/.default".to_string()),
        ])
    };
    let issued: Value = token(client_secret.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let sp_token = issued["access_token"]
        .as_str()
        .expect("a token")
        .to_string();
    secrets.push(("service principal token", sp_token));
    let wrong = format!("{client_secret}x");
    let refused = token(wrong.clone()).send().await.unwrap();
    assert_eq!(refused.status(), 401);
    let refused = refused.text().await.unwrap();
    assert!(!refused.contains(&wrong), "{refused}");
    secrets.push(("a wrong client secret", wrong));

    // The webhook signing secret and the managed-identity header, and an MI token.
    let signing: Value = call(
        reqwest::Method::POST,
        "/v1/tenants/demo/apps/vault/signingSecret/list",
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    secrets.push((
        "signing secret",
        signing["secret"].as_str().unwrap().to_string(),
    ));
    let endpoint: Value = call(
        reqwest::Method::POST,
        "/v1/tenants/demo/apps/vault/identityEndpoint/list",
    )
    .send()
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let header = endpoint["IDENTITY_HEADER"].as_str().unwrap().to_string();
    let mi: Value = client
        .get(endpoint["IDENTITY_ENDPOINT"].as_str().unwrap())
        .query(&[("resource", "api://shoal"), ("api-version", "2019-08-01")])
        .header("X-IDENTITY-HEADER", &header)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    secrets.push((
        "managed identity token",
        mi["access_token"]
            .as_str()
            .expect("an MI token")
            .to_string(),
    ));
    secrets.push(("identity header", header));
    secrets.push(("admin token", admin.clone()));
    // The webhook ingress with the printed invoker token and with the app's MI token (which
    // holds no role: refused), and a bearer token with a secret-looking payload in the body.
    let invoker = support::dev::printed(&banner, "export SHOAL_INVOKE_TOKEN=");
    let invoked = client
        .post(format!("{base}/webhooks/demo/hello/welcome?name=logs"))
        .bearer_auth(&invoker)
        .body(format!("{{\"password\": \"{account_key}\"}}"))
        .send()
        .await
        .unwrap();
    assert_eq!(invoked.status(), 200);
    let refused = client
        .post(format!("{base}/webhooks/demo/hello/welcome"))
        .bearer_auth(mi["access_token"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 404, "no role in the tenant: invisible");
    secrets.push(("invoker token", invoker));

    // A key rotation through the API, so both keys are in play.
    let rotated = call(reqwest::Method::POST, "/v1/signingKeys/rotate")
        .send()
        .await
        .unwrap();
    assert!(rotated.status().is_success(), "{}", rotated.status());
    let secret_key = std::fs::read_to_string(dir.path().join("secret-key")).unwrap();
    secrets.push(("master key", secret_key.trim().to_string()));
    let pool = connect_lazy(database.url(), &PoolConfig::default()).unwrap();
    let cipher = Cipher::new(&SecretKey::from_base64(secret_key.trim()).unwrap());
    let mut tx = shoal_store::begin_platform(&pool).await.unwrap();
    let keys = shoal_store::signing_keys::active(&mut tx, &cipher)
        .await
        .unwrap();
    drop(tx);
    pool.close().await;
    assert!(
        keys.len() >= 2,
        "the rotated-out key is still active during its grace"
    );
    for key in &keys {
        let der = &key.private_pkcs8;
        for engine in [
            base64::engine::general_purpose::STANDARD,
            base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            secrets.push(("signing key (PKCS#8)", engine.encode(der)));
        }
        // The raw private scalar sits at the end of the P-256 PKCS#8 document's key octets.
        let hex: String = der.iter().map(|b| format!("{b:02x}")).collect();
        secrets.push(("signing key (hex)", hex));
    }

    drop(dev);
    let logs = std::fs::read_to_string(&log_path).unwrap();
    // The capture is real and verbose: requests to the endpoints that handled secrets are in it.
    assert!(logs.contains("DEBUG"), "debug logging was on");
    for path in [
        "/webhooks/demo/hello/welcome",
        "/oauth2/token",
        "/settings/list",
        "/identityEndpoint/list",
        "/signingKeys/rotate",
    ] {
        assert!(logs.contains(path), "the log shows requests to {path}");
    }
    for (what, secret) in &secrets {
        assert!(secret.len() >= 16, "{what} is a real secret");
        assert!(
            !logs.contains(secret.as_str()),
            "the {what} appears in the logs"
        );
        // The banner prints the operator's tokens on purpose, and nothing else secret.
        if !what.ends_with("token")
            || *what == "managed identity token"
            || *what == "service principal token"
        {
            assert!(
                !banner.contains(secret.as_str()),
                "the {what} appears in the banner"
            );
        }
    }
}
