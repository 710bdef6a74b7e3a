//! Tokens for `azservicebus`, which is built on `azure_core` 0.25, from Shoal's credentials,
//! which are `azure_core` 1.x: the adapter asks the 1.x credential (the app's identity, the
//! host's, or a client secret, as decided for the connection) and hands the token over.

use std::sync::Arc;

use azure_core::credentials::TokenCredential;
use azure_core_025::credentials::{
    AccessToken, TokenCredential as TokenCredential025, TokenRequestOptions,
};

#[derive(Debug)]
struct Adapter(Arc<dyn TokenCredential>);

pub(super) fn adapter(credential: Arc<dyn TokenCredential>) -> Arc<dyn TokenCredential025> {
    Arc::new(Adapter(credential))
}

#[async_trait::async_trait]
impl TokenCredential025 for Adapter {
    async fn get_token(
        &self,
        scopes: &[&str],
        _: Option<TokenRequestOptions>,
    ) -> azure_core_025::Result<AccessToken> {
        // azservicebus asks for `https://servicebus.azure.net/.default`
        // (`super::SERVICE_BUS_SCOPE`); the scopes are passed on as asked.
        let token = self.0.get_token(scopes, None).await.map_err(|e| {
            let message = e.to_string();
            azure_core_025::Error::with_message(
                azure_core_025::error::ErrorKind::Credential,
                || message,
            )
        })?;
        Ok(AccessToken::new(
            token.token.secret().to_owned(),
            token.expires_on,
        ))
    }
}
