//! Calling a function's handler for one message or event, whatever its trigger: the signed
//! custom-handler request, the handler's log lines, and the output bindings written after a
//! success. The trigger builds the request body and settles the message by the [`Outcome`].

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use shoal_domain::host_config::RetryPolicy;
use shoal_domain::invocation::{HandlerResponse, RetryContext};
use shoal_domain::webhooks::WebhookSecret;
use shoal_invoker::{Invocation, Invoker};
use url::Url;
use uuid::Uuid;

use crate::breaker::FunctionBreaker;
use crate::breaker::held::HeldMessages;
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
    /// The trigger binding's name: `Data.<trigger>` is the value outputs' binding expressions
    /// may read JSON properties from.
    pub trigger: String,
    pub outputs: Vec<Output>,
    pub output_names: Vec<String>,
    pub handler: Url,
    /// `min(handler.timeoutSeconds, functionTimeout)`.
    pub timeout: Duration,
    /// The function's retry policy: its own `retry`, else the app's `host.json` one.
    pub retry: Option<RetryPolicy>,
    pub secret: WebhookSecret,
    pub invoker: Invoker,
    /// The listener's statistics line.
    pub stats: Arc<ListenerStats>,
    pub watcher: Arc<WriteWatcher>,
    /// The function's circuit breaker: listeners ask it before receiving, invocations tell it
    /// how they ended.
    pub breaker: Arc<FunctionBreaker>,
    /// The queue messages the breaker gave back, by every worker (see `breaker::held`).
    pub held: HeldMessages,
}

/// What a trigger made of a handler's successful answer.
#[derive(Debug, PartialEq, Eq)]
pub enum Accepted<T> {
    /// Everything the invocation carried is done.
    Done(T),
    /// Part of it failed, for this reason (a batch's `batchItemFailures`): the answer's
    /// outputs are written and the rest is retried.
    Partly(String),
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
    /// Calls the handler with the request `payload` builds, as often as the retry policy
    /// allows, and writes the function's outputs after a success. A failure is final when the
    /// policy allows no further retry; the trigger's own path (poison, dead-letter) starts
    /// there.
    pub async fn invoke(
        &self,
        webhook_id: &str,
        invocation_id: Uuid,
        payload: impl Fn() -> Result<Value, String>,
    ) -> Outcome {
        match self
            .invoke_with(webhook_id, invocation_id, payload, |_| Ok(()))
            .await
        {
            Ok(()) => Outcome::Succeeded,
            Err(reason) => Outcome::Failed(reason),
        }
    }

    /// Like [`FunctionHost::invoke`], for a trigger that reads more of a successful response
    /// than the outputs (a Service Bus handler's `Settlement`): `accept` checks each response
    /// before any output is written, and a response it refuses fails that attempt with its
    /// reason. `Err` is why the last attempt failed.
    ///
    /// Every attempt keeps `webhook_id` (the handler's idempotency key) and carries
    /// `Metadata.RetryContext` when a policy applies; each is an invocation of its own
    /// (`invocation_id` for the first, a fresh one for every retry). The caller keeps the
    /// message locked or invisible meanwhile, and cancels this future to give up at once.
    ///
    /// The outcome is told to the function's circuit breaker. No retry starts while the
    /// breaker is open: the message goes back to its source instead (see `holds_back`).
    pub async fn invoke_with<T>(
        &self,
        webhook_id: &str,
        invocation_id: Uuid,
        payload: impl Fn() -> Result<Value, String>,
        accept: impl Fn(&HandlerResponse) -> Result<T, String>,
    ) -> Result<T, String> {
        let request =
            || -> Result<(String, Value), String> { Ok((webhook_id.to_owned(), payload()?)) };
        let accept = |response: &HandlerResponse| accept(response).map(Accepted::Done);
        let result = self.attempts(invocation_id, request, accept, || {}).await;
        self.breaker
            .finished(result.as_ref().err().map(String::as_str));
        result
    }

    /// Like [`FunctionHost::invoke`], for a batch whose handler may answer that part of it
    /// failed: `accept` says so with [`Accepted::Partly`], the answer's outputs are written,
    /// then `partly_done` is called (the caller now counts the events that succeeded as done),
    /// and the rest is retried under the policy like a failed attempt. `request` makes each
    /// attempt's idempotency key and body, so a retry carries only what is left (the caller
    /// keeps that state). If the outputs cannot be written, `partly_done` is not called and
    /// the attempt failed as a whole.
    pub async fn invoke_partly(
        &self,
        invocation_id: Uuid,
        request: impl Fn() -> Result<(String, Value), String>,
        accept: impl Fn(&HandlerResponse) -> Result<Accepted<()>, String>,
        partly_done: impl Fn(),
    ) -> Outcome {
        let result = self
            .attempts(invocation_id, request, accept, partly_done)
            .await;
        self.breaker
            .finished(result.as_ref().err().map(String::as_str));
        match result {
            Ok(()) => Outcome::Succeeded,
            Err(reason) => Outcome::Failed(reason),
        }
    }

    async fn attempts<T>(
        &self,
        invocation_id: Uuid,
        request: impl Fn() -> Result<(String, Value), String>,
        accept: impl Fn(&HandlerResponse) -> Result<Accepted<T>, String>,
        partly_done: impl Fn(),
    ) -> Result<T, String> {
        let mut retries = 0u32;
        let mut previous_failure = None;
        let mut invocation_id = invocation_id;
        let mut delay = Duration::ZERO;
        loop {
            let (webhook_id, mut body) = request()?;
            if let Some(policy) = &self.retry {
                RetryContext {
                    retry_count: retries,
                    max_retry_count: policy.max_retry_count,
                    previous_failure: previous_failure.take(),
                }
                .insert_into(&mut body);
            }
            let encoded =
                serde_json::to_vec(&body).map_err(|e| format!("cannot encode the request: {e}"))?;
            // A partly failed attempt is a failed one for telemetry and the retry policy.
            let attempt = async {
                match self
                    .attempt(&webhook_id, invocation_id, &body, encoded, &accept)
                    .await
                {
                    Ok(Accepted::Done(accepted)) => Ok(accepted),
                    Ok(Accepted::Partly(reason)) => {
                        partly_done();
                        Err(reason)
                    }
                    Err(reason) => Err(reason),
                }
            };
            let reason = match self.stats.observe(invocation_id, attempt).await {
                Ok(accepted) => return Ok(accepted),
                Err(reason) => reason,
            };
            let Some(policy) = self.retry.as_ref().filter(|p| p.retries_after(retries)) else {
                return Err(reason);
            };
            if self.breaker.holds_back() {
                tracing::warn!(
                    reason,
                    "invocation failed; no retry while the function's circuit breaker is open"
                );
                return Err(reason);
            }
            retries += 1;
            // Azure's back-off never shrinks once it has grown (see the domain's schedule).
            delay = delay.max(policy.delay_before(retries, rand::random::<f64>()));
            self.stats.retried();
            tracing::warn!(reason, retry = retries, max_retry_count = policy.max_retry_count,
                retry_in = ?delay, "invocation failed; retrying on this instance under the function's retry policy");
            tokio::time::sleep(delay).await;
            previous_failure = Some(reason);
            invocation_id = Uuid::now_v7();
        }
    }

    /// One call of the handler with `body` (`request`, encoded) and, when it succeeds and
    /// `accept` takes the answer (wholly or in part), the outputs, resolved from `request`.
    async fn attempt<T>(
        &self,
        webhook_id: &str,
        invocation_id: Uuid,
        request: &Value,
        body: Vec<u8>,
        accept: &impl Fn(&HandlerResponse) -> Result<Accepted<T>, String>,
    ) -> Result<Accepted<T>, String> {
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
                self.stats.handler_logs(invocation_id, &response.logs);
                self.note_undeclared_outputs(&response);
                let accepted = accept(&response)?;
                let invocation = outputs::Invocation {
                    request,
                    trigger: &self.trigger,
                };
                match outputs::write(&self.outputs, &response, &self.watcher, &invocation).await {
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
