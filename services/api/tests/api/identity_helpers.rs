//! Helpers for tests of Shoal as a token issuer: principals written straight to the store (so
//! these tests do not depend on the identities API), role assignments, the signing keys as a
//! forger holding them would use them, and managed-identity tokens obtained with the stock
//! Azure SDK credential (`TestApp::managed_identity_token`, for any test that needs an app's
//! token).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use shoal_domain::rbac::Scope;
use shoal_store::crypto::Cipher;
use shoal_store::pool::{PoolConfig, connect_lazy};
use shoal_store::principals::{self, NewPrincipal, PrincipalKind, PrincipalRecord};
use shoal_store::{TenantId, Tx, begin_platform, begin_tenant, roles, signing_keys};
use uuid::Uuid;

use crate::helpers::{Fetch, TestApp};

pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Which identity a managed-identity token is for.
#[derive(Debug, Clone)]
pub enum Identity {
    SystemAssigned,
    ClientId(Uuid),
}

impl TestApp {
    /// Runs `write` in a transaction scoped to `tenant` and commits it.
    pub async fn in_tenant<T>(
        &self,
        tenant: &str,
        write: impl AsyncFnOnce(&mut Tx, &TenantId) -> T,
    ) -> T {
        let pool = connect_lazy(&self.database_url, &PoolConfig::default()).unwrap();
        let tenant = TenantId::new(shoal_domain::names::TenantName::parse(tenant).unwrap());
        let mut tx = begin_tenant(&pool, &tenant).await.unwrap();
        let result = write(&mut tx, &tenant).await;
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
        result
    }

    async fn principal(&self, tenant: &str, kind: PrincipalKind, name: &str) -> PrincipalRecord {
        let app_name = (kind == PrincipalKind::SystemAssignedIdentity).then_some(name);
        self.in_tenant(tenant, async |tx, id| {
            let new = NewPrincipal {
                app_name,
                ..NewPrincipal::named(kind, name)
            };
            principals::ensure(tx, id, &new).await.unwrap().0
        })
        .await
    }

    /// A service principal with a fresh secret: (principal, client secret).
    pub async fn service_principal(&self, tenant: &str, name: &str) -> (PrincipalRecord, String) {
        let record = self
            .principal(tenant, PrincipalKind::ServicePrincipal, name)
            .await;
        let secret = format!("sp_{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());
        let record = self
            .in_tenant(tenant, async |tx, id| {
                principals::set_secret(tx, id, record.id, &secret)
                    .await
                    .unwrap()
            })
            .await;
        (record, secret)
    }

    pub async fn user_assigned_identity(&self, tenant: &str, name: &str) -> PrincipalRecord {
        self.principal(tenant, PrincipalKind::UserAssignedIdentity, name)
            .await
    }

    /// The app's system-assigned identity (created if the app write has not created it).
    pub async fn system_identity(&self, tenant: &str, app: &str) -> PrincipalRecord {
        self.principal(tenant, PrincipalKind::SystemAssignedIdentity, app)
            .await
    }

    /// Assigns a built-in role to a principal at `scope`.
    pub async fn assign(&self, tenant: &str, principal: Uuid, role: &str, scope: &Scope) {
        self.in_tenant(tenant, async |tx, id| {
            let definition = roles::definition_named(tx, id, role)
                .await
                .unwrap()
                .expect("a built-in role");
            roles::create_assignment(tx, id, Uuid::new_v4(), principal, definition.id, scope)
                .await
                .unwrap();
        })
        .await
    }

    /// The app's `IDENTITY_ENDPOINT` and `IDENTITY_HEADER`, read as the platform admin.
    pub async fn identity_endpoint(&self, tenant: &str, app: &str) -> (String, String) {
        let response = self
            .admin(
                Method::POST,
                &format!("/v1/tenants/{tenant}/apps/{app}/identityEndpoint/list"),
            )
            .fetch()
            .await;
        assert_eq!(response.status(), StatusCode::OK);
        let body: Value = response.json().await.unwrap();
        (
            body["IDENTITY_ENDPOINT"].as_str().unwrap().to_string(),
            body["IDENTITY_HEADER"].as_str().unwrap().to_string(),
        )
    }

    /// A token for one of the app's managed identities, obtained as an app's code would: the
    /// stock `azure_identity::ManagedIdentityCredential` with `IDENTITY_ENDPOINT` and
    /// `IDENTITY_HEADER` from `identityEndpoint/list`.
    pub async fn managed_identity_token(
        &self,
        tenant: &str,
        app: &str,
        identity: Identity,
    ) -> String {
        let (endpoint, header) = self.identity_endpoint(tenant, app).await;
        crate::managed_identity::sdk_token(&endpoint, &header, &identity)
            .await
            .unwrap_or_else(|e| panic!("the Azure SDK got no token: {e}"))
    }

    /// The current signing key's id and private key, read from Postgres as the server reads it.
    pub async fn signing_key(&self) -> (String, EncodingKey) {
        let pool = connect_lazy(&self.database_url, &PoolConfig::default()).unwrap();
        let mut tx = begin_platform(&pool).await.unwrap();
        let keys = signing_keys::active(&mut tx, &Cipher::new(&self.secret_key))
            .await
            .unwrap();
        shoal_store::commit(tx).await.unwrap();
        pool.close().await;
        let key = keys
            .into_iter()
            .find(|k| k.verify_until.is_none())
            .expect("a signing key");
        (key.kid, EncodingKey::from_ec_der(&key.private_pkcs8))
    }

    /// Signs `claims` with the server's own key: what only a holder of the key could do, so a
    /// rejection of such a token is the claims' doing.
    pub async fn forge(&self, claims: &Value) -> String {
        let (kid, key) = self.signing_key().await;
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid);
        jsonwebtoken::encode(&header, claims, &key).unwrap()
    }
}

/// Valid claims of an operator token with `role` in `tenant`, expiring in 10 minutes.
pub fn operator_claims(tenant: &str, role: &str) -> Value {
    let now = unix_now();
    json!({
        "iss": shoal_api::tokens::DEFAULT_ISSUER,
        "aud": shoal_api::tokens::DEFAULT_AUDIENCE,
        "sub": format!("{tenant}-forged"),
        "iat": now,
        "nbf": now,
        "exp": now + 600,
        "tid": tenant,
        "roles": [role],
    })
}

/// Waits until `check` holds, failing after `deadline`.
pub async fn eventually<F: AsyncFnMut() -> bool>(what: &str, deadline: Duration, mut check: F) {
    let until = std::time::Instant::now() + deadline;
    loop {
        if check().await {
            return;
        }
        assert!(
            std::time::Instant::now() < until,
            "{what} did not happen within {deadline:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
