//! Calling a function's handler for one message or event, whatever its trigger: the signed
//! custom-handler request, the handler's log lines, and the output bindings written after a
//! success. The trigger builds the request body and settles the message by the [`Outcome`].
//!
//! A call that says something about the handler rather than the message is not an attempt
//! (see `shoal_invoker::pressure`): when the handler takes no connections the message waits
//! in hand until it answers again (`breaker::handler`); when it answers 429 or 503 the
//! message is deferred by its `Retry-After` (`breaker::throttle`). Neither counts towards the
//! retry policy, `RetryContext`, the breaker or the message's own attempts. Each trigger says
//! how long it can hold its message meanwhile ([`Hold`]).
//!
//! A retry whose wait is long (`shoal_domain::durable_retry`) is not waited for here when the
//! trigger can park its message at the source: the attempts end with [`Outcome::Parked`], and
//! the trigger parks the message and resumes its retries from the parked [`RetryState`] when it
//! comes back. The handler may set the wait before the next try itself (`retryAfter`).

mod outcome;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use shoal_domain::durable_retry::{self, RetryState};
use shoal_domain::host_config::RetryPolicy;
use shoal_domain::invocation::{HandlerResponse, RetryContext};
use shoal_domain::invocation_log;
use shoal_domain::trace_context::{self, TraceContext};
use shoal_domain::webhooks::WebhookSecret;
use shoal_invoker::pressure::HandlerSignal;
use shoal_invoker::{Invocation, Invoker};
use shoal_store::invocation_log::TraceIds;
use url::Url;
use uuid::Uuid;

use crate::attempt_failure::{self, AttemptFailure};
use crate::breaker::held::HeldMessages;
use crate::breaker::{FunctionBreaker, Turn};
use crate::concurrency::{CallSlots, SlotPermit};
use crate::outputs::{self, Output};
use crate::spans;
use crate::stats::ListenerStats;
use crate::watcher::WriteWatcher;
use shoal_store::invocation_recorder::Delivery;

pub use outcome::{Accepted, Failure, Hold, Outcome, Parked, Retries, Unsettled};

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
    /// The instance's slots of the function's `maxConcurrency`; None without a cap.
    pub slots: Option<Arc<CallSlots>>,
    /// Every retry's wait is divided by this (1; tests shorten long waits with
    /// `SHOAL_TEST_RETRY_DELAY_DIVISOR`). Whether a retry is parked is decided on the undivided
    /// wait.
    pub retry_divisor: u32,
}

impl FunctionHost {
    /// Calls the handler with the request `payload` builds, as often as the retry policy
    /// allows, and writes the function's outputs after a success. A failure is final when the
    /// policy allows no further retry; the trigger's own path (poison, dead-letter) starts
    /// there. The message is held while the handler is unreachable or throttling (see the
    /// module's doc), up to `hold`.
    ///
    /// For a trigger that parks far-off retries at the source: the retries start from `from`
    /// (a parked message's state; the default for a new one), and a retry whose wait reaches
    /// `durable_retry::PARK_FROM` ends the call with [`Outcome::Parked`].
    pub async fn invoke_parking(
        &self,
        turn: &mut Turn,
        webhook_id: &str,
        invocation_id: Uuid,
        payload: impl Fn() -> Result<Value, String>,
        hold: Hold,
        from: RetryState,
    ) -> Outcome {
        let retries = Retries { from, park: true };
        let result = self
            .invoke_holding_with(
                turn,
                webhook_id,
                invocation_id,
                payload,
                |_| Ok(()),
                hold,
                retries,
            )
            .await;
        match result {
            Ok(()) => Outcome::Succeeded,
            Err(Unsettled::Failed(failure)) => Outcome::Failed(failure),
            Err(Unsettled::Parked(parked)) => Outcome::Parked(parked),
            Err(Unsettled::HoldEnded(reason)) => {
                tracing::warn!(
                    reason,
                    "the message could be held no longer; giving it back"
                );
                Outcome::Abandoned
            }
        }
    }

    /// Like [`FunctionHost::invoke_parking`], for a trigger that reads more of a successful
    /// response than the outputs (a Service Bus handler's `Settlement`): `accept` checks each
    /// response before any output is written, and a response it refuses fails that attempt
    /// with its reason. `Err` is why the last attempt failed, or that the hold ended.
    ///
    /// Every attempt keeps `webhook_id` (the handler's idempotency key) and carries
    /// `Metadata.RetryContext` when a policy applies; each is an invocation of its own
    /// (`invocation_id` for the first, a fresh one for every retry). The caller keeps the
    /// message locked or invisible meanwhile, and cancels this future to give up at once.
    ///
    /// The outcome is told to the function's circuit breaker through the delivery's `turn`.
    /// No retry starts while the breaker is open: the message goes back to its source instead
    /// (see `holds_back`). `retries` says where they start and whether a far-off one is parked
    /// (see [`Retries`]).
    #[allow(clippy::too_many_arguments)]
    pub async fn invoke_holding_with<T>(
        &self,
        turn: &mut Turn,
        webhook_id: &str,
        invocation_id: Uuid,
        payload: impl Fn() -> Result<Value, String>,
        accept: impl Fn(&HandlerResponse) -> Result<T, String>,
        hold: Hold,
        retries: Retries,
    ) -> Result<T, Unsettled> {
        let request =
            || -> Result<(String, Value), String> { Ok((webhook_id.to_owned(), payload()?)) };
        let accept = |response: &HandlerResponse| accept(response).map(Accepted::Done);
        let result = self
            .attempts(invocation_id, request, accept, || {}, hold, retries)
            .await;
        tell_breaker(turn, &result);
        result
    }

    /// Like [`FunctionHost::invoke_parking`] (a stream's events are held up to `hold`, the
    /// batch's own bound, then [`Outcome::Abandoned`]; `retries` says where the retries start and
    /// whether a far-off one ends the call with [`Outcome::Parked`], for a stream's retry topic),
    /// for a batch whose handler may answer that part of it failed: `accept` says so with [`Accepted::Partly`], the answer's outputs are written,
    /// then `partly_done` is called (the caller now counts the events that succeeded as done),
    /// and the rest is retried under the policy like a failed attempt. `request` makes each
    /// attempt's idempotency key and body, so a retry carries only what is left (the caller
    /// keeps that state). If the outputs cannot be written, `partly_done` is not called and
    /// the attempt failed as a whole.
    #[allow(clippy::too_many_arguments)]
    pub async fn invoke_partly(
        &self,
        turn: &mut Turn,
        invocation_id: Uuid,
        request: impl Fn() -> Result<(String, Value), String>,
        accept: impl Fn(&HandlerResponse) -> Result<Accepted<()>, String>,
        partly_done: impl Fn(),
        hold: Hold,
        retries: Retries,
    ) -> Outcome {
        let result = self
            .attempts(invocation_id, request, accept, partly_done, hold, retries)
            .await;
        tell_breaker(turn, &result);
        match result {
            Ok(()) => Outcome::Succeeded,
            Err(Unsettled::Failed(failure)) => Outcome::Failed(failure),
            Err(Unsettled::HoldEnded(reason)) => {
                tracing::warn!(reason, "the events could be held no longer");
                Outcome::Abandoned
            }
            Err(Unsettled::Parked(parked)) => Outcome::Parked(parked),
        }
    }

    /// [`FunctionHost::delivery_attempts`] under the delivery's span, which says how they
    /// ended (and ends after the settlement, within `spans::delivering`).
    async fn attempts<T>(
        &self,
        invocation_id: Uuid,
        request: impl Fn() -> Result<(String, Value), String>,
        accept: impl Fn(&HandlerResponse) -> Result<Accepted<T>, String>,
        partly_done: impl Fn(),
        hold: Hold,
        retries: Retries,
    ) -> Result<T, Unsettled> {
        let mut delivery = None;
        // Boxed: the calls' state (the request, its retries, the handler call, the outputs) is
        // about 14 KB, and every future awaiting it inline grows by as much. A RabbitMQ
        // listener's task per message in hand measured 62 KB with it inline, 6 KB boxed.
        let result = Box::pin(self.delivery_attempts(
            &mut delivery,
            invocation_id,
            request,
            accept,
            partly_done,
            hold,
            retries,
        ))
        .await;
        if let Some((trace, span)) = delivery {
            let (outcome, failed) = match &result {
                Ok(_) => ("succeeded", false),
                Err(Unsettled::Failed(_)) => ("failed", true),
                Err(Unsettled::Parked(_)) => ("parked", false),
                Err(Unsettled::HoldEnded(_)) => ("abandoned", true),
            };
            spans::calls_ended(trace, span, outcome, failed);
        }
        result
    }

    /// The function this host's spans work for.
    fn span_function(&self) -> spans::Function<'_> {
        spans::Function {
            tenant: &self.tenant,
            app: &self.app,
            function: &self.function,
        }
    }

    /// The delivery's context and span: under the producer's when the message carries its
    /// context, a new trace's root otherwise (whose sampled flag is the sampler's decision, so
    /// the handler is told whether its spans are kept).
    fn start_delivery(&self, body: &Value) -> (TraceContext, spans::WorkerSpan) {
        let producer = trace_context::of_request(body);
        let trace = match &producer {
            Some(producer) => producer.child(rand::random()),
            None => TraceContext::root(rand::random(), rand::random()),
        };
        let span = spans::delivery(&self.span_function(), producer.as_ref(), &trace);
        let trace = match span.sampled() {
            Some(sampled) if producer.is_none() => trace.with_sampled(sampled),
            _ => trace,
        };
        (trace, span)
    }

    #[allow(clippy::too_many_arguments)]
    async fn delivery_attempts<T>(
        &self,
        delivery: &mut Option<(TraceContext, spans::WorkerSpan)>,
        invocation_id: Uuid,
        request: impl Fn() -> Result<(String, Value), String>,
        accept: impl Fn(&HandlerResponse) -> Result<Accepted<T>, String>,
        partly_done: impl Fn(),
        hold: Hold,
        retries: Retries,
    ) -> Result<T, Unsettled> {
        let parks = retries.park;
        let mut state = retries.from;
        let mut invocation_id = invocation_id;
        let health = &self.breaker.health;
        // Every call of the handler is a span of its own under the delivery's.
        let mut calls: u32 = 0;
        loop {
            if health.unreachable_since().is_some() {
                // Known down already (unreachable, or failing its health checks): wait until it is
                // back rather than call.
                let seen = health.reach().answers;
                if !health.wait_for_answer(seen, hold.until).await {
                    return Err(Unsettled::HoldEnded(
                        "the handler stayed unreachable for as long as the message could be held"
                            .into(),
                    ));
                }
            }
            let (webhook_id, mut body) =
                request().map_err(|e| Unsettled::Failed(Failure::new(e)))?;
            if let Some(policy) = &self.retry {
                RetryContext::of(&state, policy.max_retry_count).insert_into(&mut body);
            }
            let encoded = serde_json::to_vec(&body).map_err(|e| {
                Unsettled::Failed(Failure::new(format!("cannot encode the request: {e}")))
            })?;
            let delivery_trace = delivery
                .get_or_insert_with(|| self.start_delivery(&body))
                .0
                .clone();
            let trace = delivery_trace.child(rand::random());
            let slot = self.slot(hold).await?;
            let seen = health.reach().answers;
            calls += 1;
            let mut call_span = spans::attempt(
                &self.span_function(),
                &delivery_trace,
                &trace,
                calls,
                state.retries,
                invocation_id,
            );
            let mut signal = None;
            let mut asked_wait = None;
            let mut status = None;
            // A partly failed attempt is a failed one for telemetry and the retry policy.
            let attempt = async {
                match self
                    .attempt(&webhook_id, invocation_id, &trace, &body, encoded, &accept)
                    .await
                {
                    Ok(Accepted::Done(accepted)) => Ok(accepted),
                    Ok(Accepted::Partly(reason)) => {
                        partly_done();
                        Err(AttemptFailure {
                            kind: attempt_failure::PARTLY,
                            reason,
                        })
                    }
                    Err(failed) => {
                        signal = failed.signal;
                        asked_wait = failed.retry_after;
                        status = failed.status;
                        Err(failed.failure)
                    }
                }
            };
            let logged = || Delivery {
                key: webhook_id.clone(),
                retry_count: state.retries,
                facts: invocation_log::facts_of(&body, &self.trigger),
                // The `traceparent` this attempt sent: the explorer links the attempt to its
                // trace, and finds the invocation from a trace id.
                trace: Some(TraceIds {
                    trace_id: trace.trace_id(),
                    span_id: trace.span_id(),
                }),
            };
            let result = self.stats.observe(invocation_id, logged, attempt).await;
            drop(slot);
            if let Some(status) = status {
                spans::http_status(&mut call_span, status);
            }
            match &result {
                Ok(_) => call_span.end("succeeded", false),
                Err(failed) => call_span.end(failed.kind, true),
            }
            match (&result, signal) {
                (_, Some(HandlerSignal::Unreachable)) => health
                    .connection_failed(result.as_ref().err().map_or("", |f| f.reason.as_str())),
                (Ok(_), _) => {
                    health.answered();
                    self.breaker.answered_ok();
                }
                (Err(_), _) => health.answered(),
            }
            let reason = match result {
                Ok(accepted) => return Ok(accepted),
                Err(failed) => failed.reason,
            };
            invocation_id = Uuid::now_v7();
            match signal {
                Some(HandlerSignal::Unreachable) => {
                    tracing::info!(
                        reason,
                        "the handler could not be reached; the message is held (not counted as an attempt) until it answers"
                    );
                    if !health.wait_for_answer(seen, hold.until).await {
                        return Err(Unsettled::HoldEnded(reason));
                    }
                    continue;
                }
                Some(HandlerSignal::Throttled { retry_after }) => {
                    let wait = self.breaker.throttled(retry_after, &reason);
                    self.stats.deferred();
                    if hold
                        .until
                        .is_some_and(|until| Instant::now() + wait >= until)
                    {
                        return Err(Unsettled::HoldEnded(reason));
                    }
                    tracing::info!(reason, defer = ?wait, "the handler asked to slow down; the message is deferred (not counted as an attempt)");
                    tokio::time::sleep(wait).await;
                    continue;
                }
                None => {}
            }
            let failure = Failure {
                reason,
                retry_after: asked_wait,
            };
            let Some(policy) = self
                .retry
                .as_ref()
                .filter(|p| p.retries_after(state.retries))
            else {
                return Err(Unsettled::Failed(failure));
            };
            if self.breaker.holds_back() {
                tracing::warn!(
                    failure.reason,
                    "invocation failed; no retry while the function's circuit breaker is open"
                );
                if let Some((_, span)) = delivery.as_mut() {
                    spans::breaker_decision(span, "no_retry_while_open");
                }
                return Err(Unsettled::Failed(failure));
            }
            // Azure's back-off never shrinks once it has grown (see the domain's schedule); a
            // wait the handler asked for replaces it for this retry only.
            let backoff = state
                .backoff
                .max(policy.delay_before(state.retries + 1, rand::random::<f64>()));
            let wait = asked_wait.unwrap_or(backoff);
            state = state.failed(&failure.reason, backoff);
            self.stats.retried();
            let divided = wait / self.retry_divisor.max(1);
            if parks && durable_retry::parks(wait) {
                tracing::warn!(reason = failure.reason, retry = state.retries, max_retry_count = policy.max_retry_count,
                    retry_in = ?wait, "invocation failed; the message is parked at its source until its retry is due");
                return Err(Unsettled::Parked(Parked {
                    state,
                    wait: divided,
                }));
            }
            tracing::warn!(reason = failure.reason, retry = state.retries, max_retry_count = policy.max_retry_count,
                retry_in = ?wait, "invocation failed; retrying on this instance under the function's retry policy");
            if let Some((_, span)) = delivery.as_mut() {
                spans::retry_scheduled(span, state.retries, wait);
            }
            tokio::time::sleep(divided).await;
        }
    }

    /// A slot of the function's `maxConcurrency` for one call (None without a cap), waited for
    /// no longer than the message can be held. The wait is not an attempt.
    async fn slot(&self, hold: Hold) -> Result<Option<SlotPermit>, Unsettled> {
        let Some(slots) = &self.slots else {
            return Ok(None);
        };
        match hold.until {
            None => Ok(Some(slots.acquire().await)),
            Some(until) => tokio::time::timeout_at(until.into(), slots.acquire())
                .await
                .map(Some)
                .map_err(|_| {
                    Unsettled::HoldEnded(
                        "no slot of the function's maxConcurrency came free for as long as the message could be held".into(),
                    )
                }),
        }
    }

    /// One call of the handler with `body` (`request`, encoded) and, when it succeeds and
    /// `accept` takes the answer (wholly or in part), the outputs, resolved from `request`.
    async fn attempt<T>(
        &self,
        webhook_id: &str,
        invocation_id: Uuid,
        trace: &TraceContext,
        request: &Value,
        body: Vec<u8>,
        accept: &impl Fn(&HandlerResponse) -> Result<Accepted<T>, String>,
    ) -> Result<Accepted<T>, AttemptFailed> {
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
                trace: Some(trace),
            })
            .await;
        match response {
            Ok(response) => {
                log_handler_lines(&response);
                self.stats.handler_logs(invocation_id, &response.logs);
                self.note_undeclared_outputs(&response);
                if let Some(wait) = response.retry_after {
                    // The handler did not do the work: nothing of its answer is written.
                    return Err(AttemptFailed {
                        failure: AttemptFailure {
                            kind: attempt_failure::RETRY_ASKED,
                            reason: format!(
                                "the handler asked for the message to be tried again after {}",
                                shoal_domain::timespan::TimeSpan::from(wait)
                            ),
                        },
                        signal: None,
                        retry_after: Some(wait),
                        status: None,
                    });
                }
                let accepted = accept(&response)
                    .map_err(|reason| AttemptFailed::message(attempt_failure::REFUSED, reason))?;
                let invocation = outputs::Invocation {
                    request,
                    trigger: &self.trigger,
                    trace,
                };
                match outputs::write(&self.outputs, &response, &self.watcher, &invocation).await {
                    Ok(_) => Ok(accepted),
                    Err(e) => Err(AttemptFailed::message(
                        attempt_failure::OUTPUT,
                        format!("writing output bindings failed: {e}"),
                    )),
                }
            }
            Err(e) => {
                let now = std::time::SystemTime::now();
                Err(AttemptFailed {
                    failure: AttemptFailure {
                        kind: e.label(),
                        reason: e.to_string(),
                    },
                    signal: e.handler_signal(now),
                    retry_after: e.asks_retry_after(now),
                    status: e.status(),
                })
            }
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

/// Why one call did not succeed, and what it said beyond the message's failure.
struct AttemptFailed {
    failure: AttemptFailure,
    /// About the handler itself: not an attempt (see the module's doc).
    signal: Option<HandlerSignal>,
    /// The wait before the next try the handler asked for.
    retry_after: Option<Duration>,
    /// The handler's HTTP status, when it answered one that failed the call.
    status: Option<u16>,
}

impl AttemptFailed {
    fn message(kind: &'static str, reason: String) -> AttemptFailed {
        AttemptFailed {
            failure: AttemptFailure { kind, reason },
            signal: None,
            retry_after: None,
            status: None,
        }
    }
}

fn log_handler_lines(response: &HandlerResponse) {
    for line in &response.logs {
        tracing::info!(target: "shoal::handler", "{line}");
    }
}

/// How a held invocation ended, told to the function's circuit breaker through the delivery's
/// turn. A parked message's attempts so far failed, but its outcome is still to come: like a
/// message the hold gave back, it is no final failure (a probe is handed back).
fn tell_breaker<T>(turn: &mut Turn, result: &Result<T, Unsettled>) {
    match result {
        Err(Unsettled::HoldEnded(_) | Unsettled::Parked(_)) => turn.hand_back(),
        other => turn.finished(other.as_ref().err().and_then(Unsettled::breaker_reason)),
    }
}
