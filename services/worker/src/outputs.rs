//! Output bindings: after a successful invocation, the handler's `Outputs.<name>` (and
//! `ReturnValue` for a binding named `$return`) are written to each output's target. Each kind
//! of output (a Storage Queue, a Service Bus queue or topic, a Kafka topic or an event hub
//! through its Kafka endpoint, a RabbitMQ queue) is a module of [`kinds`]; this one keeps what
//! holds for all of them.
//!
//! A target name with binding expressions (`out-{Id}`) is resolved for each invocation from the
//! request the handler was sent (see `shoal_domain::binding_expressions`), every such name
//! before anything is written, so a name that does not resolve to a valid one fails the
//! invocation — and the message takes the trigger's retry, poison or dead-letter path — without
//! half its outputs written. Names without expressions are resolved once, when bound. Every
//! output's messages are made and checked before any is written, for the same reason.

use std::collections::BTreeMap;

use serde_json::Value;
use shoal_domain::binding_expressions::{BindingData, BoundTemplate, Template};
use shoal_domain::invocation::HandlerResponse;
use shoal_domain::trace_context::TraceContext;

use crate::config::WorkerConfig;
use crate::error::OutputWriteError;
use crate::hosted_apps::{HostedApp, HostedFunction};
use crate::spans;
use crate::watcher::WriteWatcher;

mod kinds;

pub const RETURN_BINDING: &str = "$return";

/// One output binding of a function, bound to its target.
pub struct Output {
    pub binding: String,
    /// Its binding type, as `function.json` names it.
    kind: &'static str,
    target: Box<dyn kinds::KindTarget>,
    /// The target's name when it has binding expressions, resolved for each invocation.
    name: Option<NameTemplate>,
}

/// A target name with binding expressions, its `%Setting%` references already resolved.
struct NameTemplate {
    written: String,
    bound: BoundTemplate,
}

impl NameTemplate {
    /// `None` for a name without expressions (bound once, the way it always was).
    fn of(
        written: &str,
        settings: &BTreeMap<String, String>,
    ) -> Result<Option<NameTemplate>, String> {
        let template = Template::parse(written)?;
        if !template.has_expressions() {
            return Ok(None);
        }
        Ok(Some(NameTemplate {
            written: written.to_owned(),
            bound: template.bind_settings(settings)?,
        }))
    }

    /// The name for this invocation, checked as `target`'s names are.
    fn resolve(
        &self,
        data: &BindingData<'_>,
        target: &dyn kinds::KindTarget,
    ) -> Result<String, String> {
        let resolved = self.bound.resolve(data)?;
        target.check_name(&self.written, resolved)
    }
}

/// Connects every output binding of `function` (most on first use), or says why one cannot
/// be (never naming a secret value).
pub fn bind(
    app: &HostedApp,
    function: &HostedFunction,
    config: &WorkerConfig,
) -> Result<Vec<Output>, String> {
    let mut outputs = Vec::new();
    for out in function.spec.bindings.iter().filter(|b| !b.is_trigger()) {
        let Some(kind) = kinds::kind_of(out) else {
            return Err(format!(
                "{} output bindings are not available yet (binding {})",
                out.kind().type_name(),
                out.name()
            ));
        };
        let in_output = |e: String| format!("output {}: {e}", out.name());
        let bound = kind.bind(out, app, config).map_err(in_output)?;
        let name = match &bound.name {
            Some(written) => NameTemplate::of(written, &app.settings).map_err(in_output)?,
            None => None,
        };
        outputs.push(Output {
            binding: out.name().as_str().to_owned(),
            kind: kind.binding_type(),
            name,
            target: bound.target,
        });
    }
    Ok(outputs)
}

/// What an invocation's outputs are resolved from: the request its handler was sent and the
/// name of its trigger binding (`Data.<trigger>`).
pub struct Invocation<'a> {
    pub request: &'a Value,
    pub trigger: &'a str,
    /// The attempt's trace context: every message written carries it (Service Bus
    /// application properties, Kafka and RabbitMQ headers; a Storage queue message has no
    /// place for it), unless the handler gave the message one of its own.
    pub trace: &'a TraceContext,
}

/// Writes every output value of `response`. Returns how many messages were written. Listeners
/// of the written Storage Queues on this worker are woken (see [`WriteWatcher`]). Every
/// output's messages and every name with binding expressions are made and checked before
/// anything is written, so a malformed one fails the invocation without half its outputs sent.
pub async fn write(
    outputs: &[Output],
    response: &HandlerResponse,
    watcher: &WriteWatcher,
    invocation: &Invocation<'_>,
) -> Result<usize, OutputWriteError> {
    let value_of = |output: &Output| -> Option<&Value> {
        if output.binding == RETURN_BINDING {
            response.return_value.as_ref()
        } else {
            response.outputs.get(&output.binding)
        }
    };
    let mut prepared = Vec::with_capacity(outputs.len());
    for output in outputs {
        if let Some(value) = value_of(output) {
            prepared.push((output, output.target.prepare(value, invocation.trace)?));
        }
    }
    // Read only when some output that writes something names its target with expressions.
    let mut data = None;
    let mut names = Vec::with_capacity(prepared.len());
    for (output, _) in &prepared {
        let name = match (&output.name, value_of(output)) {
            (Some(name), Some(value)) if writes_something(value) => {
                let data = data.get_or_insert_with(|| {
                    BindingData::from_request(
                        invocation.request,
                        invocation.trigger,
                        chrono::Utc::now(),
                    )
                });
                Some(
                    name.resolve(data, output.target.as_ref())
                        .map_err(|e| format!("output {}: {e}", output.binding))?,
                )
            }
            _ => None,
        };
        names.push(name);
    }
    let mut written = 0;
    for ((output, ready), name) in prepared.into_iter().zip(names) {
        let mut span = spans::output(invocation.trace, &output.binding, output.kind);
        match ready(name, watcher).await {
            Ok(count) => {
                spans::messages_written(&mut span, count);
                span.end("written", false);
                written += count;
            }
            Err(e) => {
                span.end("failed", true);
                return Err(e);
            }
        }
    }
    Ok(written)
}

/// `null`, and an array of nothing but `null`s, write nothing to any target.
fn writes_something(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Array(items) => items.iter().any(|v| !v.is_null()),
        _ => true,
    }
}
