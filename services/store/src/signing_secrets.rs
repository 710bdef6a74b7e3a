//! Each app's secret for signing deliveries to its handler (tenant scope). Stored sealed on the
//! app's row, bound to the app's identity; created on first use, replaced on regeneration.

use shoal_domain::webhooks::{SECRET_BYTES, WebhookSecret};

use crate::crypto::{Cipher, random_bytes};
use crate::metrics::{Operation, measured};
use crate::{StoreError, TenantId, Tx};

fn aad(tenant: &TenantId, app: &str) -> String {
    format!("app-webhook-secret/{tenant}/{app}")
}

/// The app's secret, created if it has none yet. Reading takes no lock (workers read every
/// hosted app's secret on each refresh); a first creation racing another keeps whichever was
/// stored first, so every reader agrees on one secret.
pub async fn get_or_create(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    app: &str,
) -> Result<WebhookSecret, StoreError> {
    measured(Operation::SigningSecretsGetOrCreate, async move {
        if let Some(secret) = stored(tx, tenant, cipher, app).await? {
            return Ok(secret);
        }
        let bytes = random_bytes(SECRET_BYTES)?;
        sqlx::query(
            "update apps set webhook_secret = $3
             where tenant_id = $1 and name = $2 and webhook_secret is null",
        )
        .bind(tenant.as_str())
        .bind(app)
        .bind(cipher.encrypt(&bytes, &aad(tenant, app))?)
        .execute(&mut **tx)
        .await?;
        stored(tx, tenant, cipher, app)
            .await?
            .ok_or(StoreError::NotFound)
    })
    .await
}

/// The stored secret: `None` if the app has none yet; `NotFound` if there is no such app.
async fn stored(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    app: &str,
) -> Result<Option<WebhookSecret>, StoreError> {
    let sealed: Option<Option<Vec<u8>>> =
        sqlx::query_scalar("select webhook_secret from apps where tenant_id = $1 and name = $2")
            .bind(tenant.as_str())
            .bind(app)
            .fetch_optional(&mut **tx)
            .await?;
    match sealed.ok_or(StoreError::NotFound)? {
        Some(sealed) => open(&cipher.decrypt(&sealed, &aad(tenant, app))?).map(Some),
        None => Ok(None),
    }
}

/// Replaces the app's secret with a new random one and returns it.
pub async fn regenerate(
    tx: &mut Tx,
    tenant: &TenantId,
    cipher: &Cipher,
    app: &str,
) -> Result<WebhookSecret, StoreError> {
    measured(Operation::SigningSecretsRegenerate, async move {
        let bytes = random_bytes(SECRET_BYTES)?;
        let updated =
            sqlx::query("update apps set webhook_secret = $3 where tenant_id = $1 and name = $2")
                .bind(tenant.as_str())
                .bind(app)
                .bind(cipher.encrypt(&bytes, &aad(tenant, app))?)
                .execute(&mut **tx)
                .await?;
        if updated.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        open(&bytes)
    })
    .await
}

fn open(bytes: &[u8]) -> Result<WebhookSecret, StoreError> {
    WebhookSecret::from_bytes(bytes.to_vec())
        .map_err(|e| StoreError::Crypto(format!("stored webhook secret: {e}")))
}
