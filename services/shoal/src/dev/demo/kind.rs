//! The seam between the demo app and a kind of function in it, as the worker's
//! `triggers::kind` is for listeners: a kind contributes one function to `demo/hello` and
//! owns everything about it — its `function.json`, the app settings its connections name,
//! what the demo handler answers it and how the banner tells the user to try it. The demo
//! itself (tenant, app, handler, banner) asks the kinds in `KINDS` and knows none of them.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

/// A kind of function the demo app has.
pub trait DemoKind: Send + Sync {
    /// The function's name in the demo app (`greet`), which is also the handler path the
    /// worker calls (`{handler.url}/greet`).
    fn function(&self) -> &'static str;

    /// Whether this run started the local service the function needs. A kind that says no
    /// is left out of the demo: no function, no settings, no banner lines.
    fn runs_here(&self, _services: &LocalServices) -> bool {
        true
    }

    /// Its `function.json`, as Azure Functions would have it.
    fn function_json(&self) -> Value;

    /// The app settings its bindings' `connection`s name, pointing at this run's services.
    fn app_settings(&self, _services: &LocalServices) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Creates what its printed commands need before they are printed (Azurite, for one,
    /// starts with no queues).
    fn prepare<'a>(&'a self, _services: &'a LocalServices) -> Preparing<'a> {
        Box::pin(async { Ok(()) })
    }

    /// The demo handler's answer (the response body) to one invocation request of the
    /// function, signature already checked.
    fn answer(&self, request: &Value) -> Value;

    /// The banner's lines on trying the function, ending in a newline; the banner puts a
    /// blank line between kinds.
    fn hints(&self, services: &LocalServices, api: &ApiAccess) -> String;
}

/// A kind's [`DemoKind::prepare`] under way.
pub type Preparing<'a> = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send + 'a>>;

/// The local services this `shoal dev` run started, as the demo's functions and the printed
/// commands reach them.
pub struct LocalServices {
    /// Azurite's connection string (the app's `AzureWebJobsStorage`).
    pub storage_connection: String,
    /// Azurite's queue endpoint, which the printed `curl` commands call.
    pub queue_endpoint: String,
    /// An account SAS for those commands: Azurite's queue API wants one, and a token in a
    /// query string is what `curl` can send.
    pub queue_sas: String,
    /// The local Service Bus stand-in's connection string, when this run started it.
    pub service_bus_connection: Option<String>,
}

/// How the printed commands reach Shoal's API.
pub struct ApiAccess<'a> {
    /// `http://host:port`, without `/v1`.
    pub base: &'a str,
    /// A token holding only the Function Invoker role in the demo tenant, so trying the
    /// webhook ingress shows what an invoker can do and nothing more.
    pub invoker_token: &'a str,
}
