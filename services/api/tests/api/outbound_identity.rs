//! Outbound identity, end to end: an app whose settings hold no secret at all receives queue
//! messages from Azurite (`--oauth basic`, HTTPS) signed in as its own Shoal identity. The
//! worker signs a client assertion for the identity; the local token endpoint stands in for
//! Entra ID and checks it as Entra does (issuer, subject, audience against a federated
//! credential the test configures from the app's diagnostics, signature against the JWK set it
//! finds through Shoal's federation discovery document, lifetime) before handing out a storage
//! token.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_connectors::{ConnectorOptions, StorageQueues};
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_testkit::azurite::{Azurite, FederatedCredential};
use shoal_testkit::handler::{Behaviour, RecordingHandler};
use shoal_worker::{Hosting, Worker, WorkerConfig};
use tokio_util::sync::CancellationToken;

use crate::helpers::TestApp;

/// The Entra application the app's system-assigned identity is exchanged for.
const ENTRA_APP: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";
/// The Entra user-assigned managed identity the app's user-assigned identity is exchanged for.
const ENTRA_UAMI: &str = "6ba7b810-9dad-11d1-80b4-00c04fd430c8";

struct Stack {
    api: TestApp,
    azurite: Azurite,
    handler: RecordingHandler,
    queues: StorageQueues,
    worker_stop: CancellationToken,
    worker: Option<shoal_worker::WorkerHandle>,
}

impl Stack {
    async fn start() -> Stack {
        let api = TestApp::spawn().await;
        let azurite = Azurite::start_oauth().await.unwrap();
        let handler = RecordingHandler::start(Behaviour::Respond(json!({})))
            .await
            .unwrap();
        let queues = StorageQueues::from_connection_string(
            &azurite.connection_string(),
            &trusting(&azurite),
        )
        .unwrap();
        Stack {
            api,
            azurite,
            handler,
            queues,
            worker_stop: CancellationToken::new(),
            worker: None,
        }
    }

    /// A worker hosting every app, told where the API (the federation issuer) is.
    fn start_worker(&mut self) {
        let mut config = WorkerConfig::new("w1");
        config.egress = crate::helpers::loopback_egress();
        config.hosting = Hosting::AllApps;
        config.refresh_interval = Duration::from_millis(200);
        config.connector = trusting(&self.azurite);
        config.public_url = Some(url::Url::parse(&self.api.base).unwrap());
        let pool = connect_lazy(&self.api.database_url, &PoolConfig::default()).unwrap();
        let worker = Worker::new(config, pool, Cipher::new(&self.api.secret_key));
        self.worker = Some(worker.start(self.worker_stop.clone()).unwrap());
    }

    async fn stop_worker(&mut self) {
        self.worker_stop.cancel();
        if let Some(worker) = self.worker.take() {
            tokio::time::timeout(Duration::from_secs(30), worker.stopped())
                .await
                .expect("the worker stops")
                .unwrap();
        }
    }

    /// An app with no secret in its settings: identity-based connections only.
    async fn put_app(&self, tenant: &str, app: &str, settings: Value, identity: Value) {
        let response = self
            .api
            .put_app(
                tenant,
                app,
                &json!({
                    "handler": {"url": self.handler.url().as_str(), "timeoutSeconds": 5},
                    "appSettings": settings,
                    "identity": identity,
                }),
            )
            .await;
        assert!(
            response.status().is_success(),
            "{}",
            response.text().await.unwrap()
        );
    }

    async fn put_function(&self, tenant: &str, app: &str, function: &str, bindings: Value) {
        let response = self
            .api
            .admin(
                Method::PUT,
                &format!("/v1/tenants/{tenant}/apps/{app}/functions/{function}"),
            )
            .json(&json!({"bindings": bindings}))
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "{}",
            response.text().await.unwrap()
        );
    }

    /// Tenant `tenant` with the app `orders`, whose `AzureWebJobsStorage` connection names
    /// `ENTRA_APP` and nothing secret, with this `identity`, and a function `ship` triggered by
    /// `queue`.
    async fn orders_app(&self, tenant: &str, identity: Value, queue: &str) {
        assert_eq!(
            self.api.put_tenant(tenant).await.status(),
            StatusCode::CREATED
        );
        self.put_app(
            tenant,
            "orders",
            federated_settings(&self.azurite, "AzureWebJobsStorage", ENTRA_APP, &[]),
            identity,
        )
        .await;
        self.put_function(
            tenant,
            "orders",
            "ship",
            json!([{"type": "queueTrigger", "direction": "in", "name": "order", "queueName": queue}]),
        )
        .await;
    }

    async fn diagnostics(&self, tenant: &str, app: &str) -> Value {
        let response = self
            .api
            .get(&format!("/v1/tenants/{tenant}/apps/{app}/diagnostics"))
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    }

    /// What Entra would be told with `az identity federated-credential create`: the issuer,
    /// subject and audience the app's diagnostics print for `connection`.
    async fn trust(&self, tenant: &str, app: &str, connection: &str, entra_client: &str) {
        let diagnostics = self.diagnostics(tenant, app).await;
        let sign_in = sign_in_of(&diagnostics, connection);
        let credential = &sign_in["federatedCredential"];
        self.azurite
            .trust_federated_credential(FederatedCredential {
                client_id: entra_client.into(),
                issuer: credential["issuer"].as_str().unwrap().into(),
                subject: credential["subject"].as_str().unwrap().into(),
                audience: credential["audience"].as_str().unwrap().into(),
            });
    }

    async fn enqueue(&self, queue: &str, text: &str) {
        let queue = self.queues.queue(queue).unwrap();
        queue.create_if_missing().await.unwrap();
        queue.enqueue(&base64(text)).await.unwrap();
    }
}

fn trusting(azurite: &Azurite) -> ConnectorOptions {
    ConnectorOptions {
        extra_root_ca_pem: Some(azurite.ca_pem().as_bytes().to_vec()),
        ..ConnectorOptions::default()
    }
}

fn base64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// `<prefix>__…` settings of an identity-based queue connection to this Azurite with no secret:
/// the service, the Entra tenant and client, and the local Entra stand-in as authority.
fn federated_settings(
    azurite: &Azurite,
    prefix: &str,
    entra_client: &str,
    extra: &[(&str, &str)],
) -> Value {
    let mut settings = serde_json::Map::new();
    for (property, value) in [
        ("queueServiceUri", azurite.https_queue_endpoint()),
        ("tenantId", shoal_testkit::azurite::TENANT_ID.to_owned()),
        ("clientId", entra_client.to_owned()),
        ("authorityHost", azurite.authority_host()),
    ]
    .into_iter()
    .chain(extra.iter().map(|(k, v)| (*k, v.to_string())))
    {
        settings.insert(format!("{prefix}__{property}"), Value::String(value));
    }
    Value::Object(settings)
}

fn sign_in_of<'a>(diagnostics: &'a Value, connection: &str) -> &'a Value {
    diagnostics["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["connection"] == connection)
        .unwrap_or_else(|| panic!("no sign-in for {connection}: {diagnostics}"))
}

fn merge(a: Value, b: Value) -> Value {
    let (Value::Object(mut a), Value::Object(b)) = (a, b) else {
        panic!("objects expected");
    };
    a.extend(b);
    Value::Object(a)
}

#[tokio::test]
async fn an_app_without_secrets_receives_through_its_system_and_user_assigned_identities() {
    let mut stack = Stack::start().await;
    assert_eq!(
        stack.api.put_tenant("contoso").await.status(),
        StatusCode::CREATED
    );
    let created = stack
        .api
        .admin(Method::PUT, "/v1/tenants/contoso/identities/billing")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::CREATED);
    let settings = merge(
        federated_settings(&stack.azurite, "AzureWebJobsStorage", ENTRA_APP, &[]),
        federated_settings(
            &stack.azurite,
            "Billing",
            ENTRA_UAMI,
            &[
                ("credential", "managedidentity"),
                ("shoalIdentity", "billing"),
            ],
        ),
    );
    assert!(
        !settings
            .to_string()
            .contains(shoal_testkit::azurite::CLIENT_SECRET),
        "no secret in the settings"
    );
    stack
        .put_app(
            "contoso",
            "orders",
            settings,
            json!({"type": "SystemAssigned, UserAssigned", "userAssignedIdentities": ["billing"]}),
        )
        .await;
    stack
        .put_function(
            "contoso",
            "orders",
            "ship",
            json!([{"type": "queueTrigger", "direction": "in", "name": "order", "queueName": "orders"}]),
        )
        .await;
    stack
        .put_function(
            "contoso",
            "orders",
            "bill",
            json!([{"type": "queueTrigger", "direction": "in", "name": "invoice", "queueName": "invoices", "connection": "Billing"}]),
        )
        .await;

    let diagnostics = stack.diagnostics("contoso", "orders").await;
    let system = sign_in_of(&diagnostics, "AzureWebJobsStorage");
    assert_eq!(system["signsInAs"], "appIdentity", "{diagnostics}");
    assert_eq!(system["shoalIdentity"]["kind"], "systemAssigned");
    assert_eq!(system["entraClientId"], ENTRA_APP);
    assert_eq!(
        system["federatedCredential"]["issuer"],
        format!("{}/federation", stack.api.base)
    );
    assert_eq!(
        system["federatedCredential"]["subject"],
        system["shoalIdentity"]["principalId"]
    );
    assert_eq!(
        system["federatedCredential"]["audience"],
        "api://AzureADTokenExchange"
    );
    let user = sign_in_of(&diagnostics, "Billing");
    assert_eq!(user["shoalIdentity"]["kind"], "userAssigned");
    assert_eq!(user["shoalIdentity"]["name"], "billing");
    assert_eq!(user["entraClientId"], ENTRA_UAMI);
    stack
        .trust("contoso", "orders", "AzureWebJobsStorage", ENTRA_APP)
        .await;
    stack
        .trust("contoso", "orders", "Billing", ENTRA_UAMI)
        .await;

    stack.enqueue("orders", "order 1").await;
    stack.enqueue("invoices", "invoice 1").await;
    stack.start_worker();
    let requests = stack
        .handler
        .wait_for(2, Duration::from_secs(30))
        .await
        .unwrap();
    let mut bodies: Vec<String> = requests
        .iter()
        .map(|r| {
            r.body["Data"]["order"]
                .as_str()
                .or(r.body["Data"]["invoice"].as_str())
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    bodies.sort();
    assert_eq!(bodies, vec!["invoice 1", "order 1"]);
    let exchanged = stack.azurite.exchanged_assertions();
    let subject = |sign_in: &Value| {
        sign_in["shoalIdentity"]["principalId"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        exchanged.contains(&(ENTRA_APP.to_owned(), subject(system))),
        "{exchanged:?}"
    );
    assert!(
        exchanged.contains(&(ENTRA_UAMI.to_owned(), subject(user))),
        "{exchanged:?}"
    );
    stack.stop_worker().await;
}

#[tokio::test]
async fn another_tenant_naming_the_same_entra_client_gets_no_token() {
    let mut stack = Stack::start().await;
    for tenant in ["contoso", "fabrikam"] {
        let queue = format!("{tenant}-orders");
        stack
            .orders_app(tenant, json!({"type": "SystemAssigned"}), &queue)
            .await;
    }
    // Entra trusts contoso's app only.
    stack
        .trust("contoso", "orders", "AzureWebJobsStorage", ENTRA_APP)
        .await;
    stack.enqueue("contoso-orders", "for contoso").await;
    stack.enqueue("fabrikam-orders", "for fabrikam").await;
    stack.start_worker();

    let requests = stack
        .handler
        .wait_for(1, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(requests[0].body["Data"]["order"], "for contoso");
    // fabrikam's listener asks, is refused for its subject, and reports it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let diagnostics = loop {
        let diagnostics = stack.diagnostics("fabrikam", "orders").await;
        if sign_in_of(&diagnostics, "AzureWebJobsStorage")["lastTokenError"].is_string() {
            break diagnostics;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no token error reported: {diagnostics}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let error = sign_in_of(&diagnostics, "AzureWebJobsStorage")["lastTokenError"]
        .as_str()
        .unwrap();
    assert!(error.contains("AADSTS70021"), "{error}");
    assert_eq!(diagnostics["healthy"], false);
    assert!(
        diagnostics["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["subject"] == "identity"
                && c["detail"].as_str().unwrap().contains("AADSTS70021")),
        "{diagnostics}"
    );
    assert_eq!(stack.handler.count(), 1, "nothing delivered for fabrikam");
    let fabrikam_queue = stack.queues.queue("fabrikam-orders").unwrap();
    assert_eq!(
        fabrikam_queue.approximate_length().await.unwrap(),
        1,
        "its message stays put"
    );
    let refused_subject =
        sign_in_of(&diagnostics, "AzureWebJobsStorage")["shoalIdentity"]["principalId"]
            .as_str()
            .unwrap()
            .to_owned();
    assert!(
        !stack
            .azurite
            .exchanged_assertions()
            .iter()
            .any(|(_, subject)| *subject == refused_subject),
        "fabrikam's identity was never exchanged"
    );
    stack.stop_worker().await;
}

#[tokio::test]
async fn without_an_identity_or_entra_client_the_listener_does_not_start_and_says_why() {
    let mut stack = Stack::start().await;
    // No identity at all: the worker host's is never borrowed.
    stack
        .orders_app("contoso", json!({"type": "None"}), "orders")
        .await;
    let diagnostics = stack.diagnostics("contoso", "orders").await;
    let sign_in = sign_in_of(&diagnostics, "AzureWebJobsStorage");
    assert_eq!(sign_in["signsInAs"], "none");
    assert!(
        sign_in["error"].as_str().unwrap().contains("identity.type"),
        "{sign_in}"
    );
    assert_eq!(diagnostics["healthy"], false);

    stack.enqueue("orders", "waits").await;
    stack.start_worker();
    // The listener line says why it is stopped; nothing asks the identity platform.
    let workers = wait_for_listener_status(&stack.api, "stopped").await;
    assert!(workers.contains("identity.type"), "{workers}");
    assert_eq!(stack.azurite.token_requests(), 0);
    assert_eq!(stack.handler.count(), 0);
    stack.stop_worker().await;
}

/// The workers' listing once a listener's status starts with `status`.
async fn wait_for_listener_status(api: &TestApp, status: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let workers: Value = api.get("/v1/workers").await.json().await.unwrap();
        let found = workers["items"].as_array().into_iter().flatten().any(|w| {
            w["listeners"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|l| l["status"].as_str().is_some_and(|s| s.starts_with(status)))
        });
        if found {
            return workers.to_string();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no listener {status}: {workers}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The scheduler reads the queue length of an identity-based connection signed in as the
/// app's identity too (no worker runs here, so every exchanged assertion is the scheduler's).
#[tokio::test]
async fn the_scheduler_reads_queue_lengths_as_the_app_identity() {
    let stack = Stack::start().await;
    stack
        .orders_app("contoso", json!({"type": "SystemAssigned"}), "orders")
        .await;
    stack
        .trust("contoso", "orders", "AzureWebJobsStorage", ENTRA_APP)
        .await;
    for i in 0..3 {
        stack.enqueue("orders", &format!("order {i}")).await;
    }
    let mut config = shoal_scheduler::SchedulerConfig::new("s1");
    config.tick = Duration::from_millis(200);
    config.lease_ttl = Duration::from_secs(2);
    config.connector = trusting(&stack.azurite);
    config.egress = crate::helpers::loopback_egress();
    config.public_url = Some(url::Url::parse(&stack.api.base).unwrap());
    let pool = connect_lazy(&stack.api.database_url, &PoolConfig::default()).unwrap();
    let stop = CancellationToken::new();
    let scheduler =
        shoal_scheduler::Scheduler::new(config, pool, Cipher::new(&stack.api.secret_key))
            .start(stop.clone());

    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let decision = loop {
        let scale: Value = stack
            .api
            .get("/v1/tenants/contoso/apps/orders/scale")
            .await
            .json()
            .await
            .unwrap();
        if let Some(decision) = scale["decisions"].as_array().and_then(|d| d.first()) {
            break decision.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no decision: {scale}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        decision["metrics"][0]["metric"], 3,
        "the queue length was read: {decision}"
    );
    let diagnostics = stack.diagnostics("contoso", "orders").await;
    let subject = sign_in_of(&diagnostics, "AzureWebJobsStorage")["shoalIdentity"]["principalId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        stack
            .azurite
            .exchanged_assertions()
            .contains(&(ENTRA_APP.to_owned(), subject)),
        "the scheduler signed in as the app's identity"
    );
    stop.cancel();
    scheduler.stopped().await.unwrap();
}
