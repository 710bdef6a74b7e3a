//! The API client `configure` builds, shared with every resource and data source: its own
//! module, so that the provider (which lists them) and they (which use it) do not import each
//! other.

use std::sync::{Arc, RwLock};

use shoal_client::ApiClient;
use tf_provider::Diagnostics;

/// The client `configure` builds, shared with every resource (Terraform configures the
/// provider after it has asked for the resources).
pub type SharedClient = Arc<RwLock<Option<Arc<ApiClient>>>>;

/// The configured client, or an error diagnostic saying the provider is not configured.
pub fn configured(shared: &SharedClient, diags: &mut Diagnostics) -> Option<Arc<ApiClient>> {
    let client = shared.read().ok().and_then(|c| c.clone());
    if client.is_none() {
        diags.root_error(
            "The Shoal provider is not configured",
            "Terraform called a resource before configuring the provider; this is a bug in \
             the provider or an unknown provider configuration value.",
        );
    }
    client
}
