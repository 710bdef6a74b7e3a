//! Calling a function's handler for one message or event, whatever its trigger: the signed
//! custom-handler request, the handler's log lines, and the output bindings written after a
//! success. The trigger builds the request body and settles the message by the [`Outcome`].

use std::sync::Arc;
use std::time::Duration;

use shoal_domain::invocation::HandlerResponse;
use shoal_domain::webhooks::WebhookSecret;
use shoal_invoker::{Invocation, Invoker};
use url::Url;
use uuid::Uuid;

use crate::outputs::{self, Output};
use crate::stats::ListenerStats;
use crate::watcher::WriteWatcher;

/// One listening function of a hosted app instance, as every trigger kind sees it.
pub struct FunctionHost {
    pub tenant: String,
    pub app: String,
    /// The app instance's index and the worker hosting it (named in every handler call).
    pub instance: u32,
    pub worker: String,
    pub function: String,
    pub outputs: Vec<Output>,
    pub output_names: Vec<String>,
    pub handler: Url,
    /// `min(handler.timeoutSeconds, functionTimeout)`.
    pub timeout: Duration,
    pub secret: WebhookSecret,
    pub invoker: Invoker,
    /// The listener's statistics line.
    pub stats: Arc<ListenerStats>,
    pub watcher: Arc<WriteWatcher>,
}

/// How a delivery ended, for the trigger to settle by.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed(String),
    /// The drain deadline passed, or the lease lapsed, before the invocation finished.
    Abandoned,
}

impl FunctionHost {
    /// Calls the handler with `body` and, when it succeeds, writes the function's outputs.
    pub async fn invoke(&self, webhook_id: &str, invocation_id: Uuid, body: Vec<u8>) -> Outcome {
        match self
            .invoke_with(webhook_id, invocation_id, body, |_| Ok(()))
            .await
        {
            Ok(()) => Outcome::Succeeded,
            Err(reason) => Outcome::Failed(reason),
        }
    }

    /// Like [`FunctionHost::invoke`], for a trigger that reads more of a successful response
    /// than the outputs (a Service Bus handler's `Settlement`): `accept` checks the response
    /// before any output is written, and a response it refuses fails the invocation with its
    /// reason. `Err` is why the invocation failed.
    pub async fn invoke_with<T>(
        &self,
        webhook_id: &str,
        invocation_id: Uuid,
        body: Vec<u8>,
        accept: impl FnOnce(&HandlerResponse) -> Result<T, String>,
    ) -> Result<T, String> {
        let outputs: Vec<&str> = self.output_names.iter().map(String::as_str).collect();
        let response = self
            .invoker
            .invoke(Invocation {
                handler: &self.handler,
                function: &self.function,
                secret: &self.secret,
                webhook_id,
                invocation_id,
                worker: &self.worker,
                instance: self.instance,
                body,
                timeout: self.timeout,
                outputs: &outputs,
            })
            .await;
        match response {
            Ok(response) => {
                log_handler_lines(&response);
                self.note_undeclared_outputs(&response);
                let accepted = accept(&response)?;
                match outputs::write(&self.outputs, &response, &self.watcher).await {
                    Ok(_) => Ok(accepted),
                    Err(e) => Err(format!("writing output bindings failed: {e}")),
                }
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// Values for outputs the function does not declare were dropped (as Azure's host drops
    /// them); they are counted for diagnostics and logged once per name for this listener.
    fn note_undeclared_outputs(&self, response: &HandlerResponse) {
        if response.undeclared_outputs.is_empty() {
            return;
        }
        let new = self.stats.undeclared_outputs(&response.undeclared_outputs);
        if !new.is_empty() {
            tracing::warn!(outputs = ?new, declared = ?self.output_names,
                "the handler's response sets outputs that are no output binding of the function; they are ignored, as Azure Functions ignores them (see the app's diagnostics)");
        }
    }
}

fn log_handler_lines(response: &HandlerResponse) {
    for line in &response.logs {
        tracing::info!(target: "shoal::handler", "{line}");
    }
}
