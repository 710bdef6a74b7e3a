//! Which names each trigger's binding data has, so that an output name using one the trigger
//! can never supply is refused on write, with the names it does supply.
//!
//! The names are those Azure's extensions put in the binding data contract, which Shoal passes
//! to the handler in `Metadata`:
//!
//! * each trigger kind's own, from its descriptor in `crate::binding_kinds`, which cites its
//!   extension (`queueTrigger`, `serviceBusTrigger`, `eventHubTrigger`, `kafkaTrigger` — plus
//!   `Value`, which the script host takes from the `KafkaEventData` JSON a string-bound function
//!   receives —, `rabbitMQTrigger`);
//! * `timerTrigger`: azure-webjobs-sdk-extensions,
//!   `src/WebJobs.Extensions/Extensions/Timers/Bindings/TimerTriggerBinding.cs`
//!   (`CreateBindingDataContract`: `TimerTrigger` only, the invocation's local time as text);
//!   its value, the `TimerInfo`, has no properties to bind;
//! * every trigger: `sys` (`MethodName`, `UtcNow`, `RandGuid`; azure-webjobs-sdk
//!   `Bindings/SystemBindingData.cs`) and the built-ins `{rand-guid}` and `{DateTime}`.
//!
//! A single message's trigger value that is text may be a JSON object, whose top-level
//! properties are binding data too (see `binding_expressions::BindingData`); any other name is taken to be one and
//! checked per invocation. A batched trigger's value is an array: its binding data are arrays
//! (`…Array`), which cannot be part of a name, and it has no JSON properties.

use super::Binding;
use crate::binding_expressions::format::{self, ValueKind};
use crate::binding_expressions::{Expression, Template};

pub use crate::binding_kinds::DataShape;
use crate::binding_kinds::{self, timer};
use DataShape as Shape;

type Names = &'static [(&'static str, Shape)];

const SYS: Names = &[
    ("MethodName", Shape::Text),
    ("UtcNow", Shape::DateTime),
    ("RandGuid", Shape::Text),
];

/// Every trigger with binding data and its names, in the table's order.
fn all_kinds() -> impl Iterator<Item = (&'static str, Names)> {
    binding_kinds::all()
        .filter(|k| k.is_trigger() && !k.binding_data().is_empty())
        .map(|k| (k.type_name(), k.binding_data()))
}

/// What the function's trigger supplies.
struct TriggerData {
    kind: &'static str,
    names: Names,
    batched: bool,
    /// Whether the trigger value can be a JSON object with properties of its own.
    json_body: bool,
}

fn trigger_data(trigger: &Binding) -> Option<TriggerData> {
    let kind = trigger.kind();
    // A kind with no binding data (`httpTrigger`) supplies nothing to resolve from.
    if !kind.is_trigger() || kind.binding_data().is_empty() {
        return None;
    }
    let batched = kind.batched(trigger.properties());
    Some(TriggerData {
        kind: kind.type_name(),
        names: kind.binding_data(),
        batched,
        json_body: kind.json_body(trigger.properties()) && !batched,
    })
}

/// Checks every expression of `template` against what `trigger` supplies; the error names the
/// first expression refused and why. A template without expressions always passes.
pub fn check_for_trigger(template: &Template, trigger: &Binding) -> Result<(), String> {
    let mut expressions = template.expressions().peekable();
    if expressions.peek().is_none() {
        return Ok(());
    }
    let Some(data) = trigger_data(trigger) else {
        return Err(format!(
            "binding expressions are resolved from a trigger's binding data; a {} function's output names must be written out (expressions work with queueTrigger, serviceBusTrigger, kafkaTrigger, eventHubTrigger and timerTrigger)",
            trigger.type_name()
        ));
    };
    for expression in expressions {
        check_expression(expression, &data)?;
    }
    Ok(())
}

fn find(names: Names, name: &str) -> Option<(&'static str, Shape)> {
    names
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .copied()
}

fn listed(names: Names, kind: &str) -> String {
    let mut listed: Vec<String> = names
        .iter()
        .filter(|(_, shape)| *shape != Shape::Array)
        .map(|(n, _)| format!("{{{n}}}"))
        .collect();
    if kind == "kafkaTrigger" {
        listed.push("{Value}".into());
    }
    listed.join(", ")
}

fn check_expression(e: &Expression, data: &TriggerData) -> Result<(), String> {
    if e.builtin().is_some() {
        return Ok(());
    }
    let name = e.name();
    let path = e.path();
    if name.eq_ignore_ascii_case("sys") {
        let member = match path {
            [_, member] => find(SYS, member),
            _ => None,
        };
        let Some((member, shape)) = member else {
            return Err(format!(
                "{e}: sys has {}",
                SYS.iter()
                    .map(|(n, _)| format!("{{sys.{n}}}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        return match (e.format(), member, shape) {
            (None, _, _) => Ok(()),
            (Some(f), "RandGuid", _) => {
                format::check(ValueKind::Guid, f).map_err(|m| format!("{e}: {m}"))
            }
            (Some(f), _, Shape::DateTime) => {
                format::check(ValueKind::DateTime, f).map_err(|m| format!("{e}: {m}"))
            }
            (Some(_), _, _) => Err(format!(
                "{e}: a format applies only to date-times and GUIDs"
            )),
        };
    }
    if data.batched {
        let what = match find(data.names, name.strip_suffix("Array").unwrap_or(name)) {
            Some((known, _)) => format!(
                "{known} is an array ({known}Array) for a batched {}",
                data.kind
            ),
            None => format!(
                "a batched {}'s value is an array, so it has no properties",
                data.kind
            ),
        };
        return Err(format!(
            "{e}: {what}; a batched function's output names may use {{rand-guid}}, {{DateTime}} and {{sys.…}} only"
        ));
    }
    if let Some((known, shape)) = find(data.names, name) {
        return match shape {
            Shape::Array => Err(format!(
                "{e}: {known} is an array, which cannot be part of a name"
            )),
            Shape::Text | Shape::DateTime if path.len() > 1 => Err(format!(
                "{e}: {known} is a value, not an object with properties"
            )),
            Shape::Object if path.len() == 1 => Err(format!(
                "{e}: {known} is an object; name one of its properties ({{{known}.name}})"
            )),
            Shape::DateTime => match e.format() {
                Some(f) => format::check(ValueKind::DateTime, f).map_err(|m| format!("{e}: {m}")),
                None => Ok(()),
            },
            Shape::Text | Shape::Object => match e.format() {
                Some(_) => Err(format!(
                    "{e}: a format applies only to date-times and GUIDs"
                )),
                None => Ok(()),
            },
        };
    }
    if data.kind == "kafkaTrigger" && name.eq_ignore_ascii_case("Value") && path.len() == 1 {
        return Ok(());
    }
    if !data.json_body {
        // No JSON body to look the name up in: say where the name comes from, if anywhere.
        if let Some((other, _)) =
            all_kinds().find(|(kind, names)| *kind != data.kind && find(names, name).is_some())
        {
            return Err(format!(
                "{e}: {name} is binding data of {other}, not of {}, which has {}",
                data.kind,
                listed(data.names, data.kind)
            ));
        }
        let why = if data.kind == "kafkaTrigger" {
            "a kafkaTrigger's binding data is its metadata and the event's Value, not the event's own JSON".to_owned()
        } else if data.kind == timer::TRIGGER_TYPE {
            "a timerTrigger has no message, so no JSON properties".to_owned()
        } else {
            format!(
                "with dataType binary a {}'s value has no JSON properties",
                data.kind
            )
        };
        return Err(format!(
            "{e}: {why}; it has {}",
            listed(data.names, data.kind)
        ));
    }
    if e.format().is_some() {
        return Err(format!(
            "{e}: a format applies only to date-times and GUIDs, and a JSON property is text"
        ));
    }
    // A property of the message's JSON body, looked up per invocation.
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::bindings::parse_binding;

    fn binding(value: Value) -> Binding {
        parse_binding(&value, "b").unwrap()
    }

    fn check(written: &str, trigger: Value) -> Result<(), String> {
        check_for_trigger(&Template::parse(written).unwrap(), &binding(trigger))
    }

    #[test]
    fn each_trigger_accepts_its_own_binding_data() {
        let queue =
            json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"});
        let service_bus = json!({"type": "serviceBusTrigger", "direction": "in", "name": "m", "queueName": "orders"});
        let kafka = json!({"type": "kafkaTrigger", "direction": "in", "name": "m", "brokerList": "b:9092", "topic": "t"});
        let event_hub =
            json!({"type": "eventHubTrigger", "direction": "in", "name": "m", "eventHubName": "h"});
        let accepted = [
            (
                &queue,
                "out-{Id}-{queueTrigger}-{DequeueCount}-{InsertionTime:yyyy}",
            ),
            (&queue, "{customerId}-{order.region}"),
            (
                &service_bus,
                "{MessageId}-{SessionId}-{ApplicationProperties.region}-{Label}",
            ),
            (&service_bus, "{EnqueuedTimeUtc:yyyyMMdd}-{customer}"),
            (&kafka, "{Topic}-{Partition}-{Key}-{Value}-{Timestamp:yyyy}"),
            (
                &event_hub,
                "{PartitionKey}-{Properties.kind}-{PartitionContext.PartitionId}-{body}",
            ),
            (
                &queue,
                "{rand-guid}-{DateTime}-{sys.MethodName}-{sys.UtcNow:yyyy}-{sys.RandGuid:N}",
            ),
        ];
        for (trigger, written) in accepted {
            assert_eq!(
                check(written, trigger.clone()),
                Ok(()),
                "{written} for {trigger}"
            );
        }
    }

    #[test]
    fn names_a_trigger_can_never_supply_are_refused_with_the_reason() {
        let queue =
            json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders"});
        let binary_queue = json!({"type": "queueTrigger", "direction": "in", "name": "m", "queueName": "orders", "dataType": "binary"});
        let batched = json!({"type": "serviceBusTrigger", "direction": "in", "name": "m", "queueName": "orders", "isBatched": true});
        let kafka = json!({"type": "kafkaTrigger", "direction": "in", "name": "m", "brokerList": "b:9092", "topic": "t"});
        let http = json!({"type": "httpTrigger", "direction": "in", "name": "req"});
        let refused = [
            (&queue, "{Id.x}", "Id is a value, not an object"),
            (&queue, "{Id:N}", "a format applies only"),
            (&queue, "{region:yyyy}", "a JSON property is text"),
            (&queue, "{sys.Nope}", "sys has {sys.MethodName}"),
            (&queue, "{InsertionTime:q}", "standard format"),
            (&binary_queue, "{region}", "with dataType binary"),
            (
                &binary_queue,
                "{MessageId}",
                "MessageId is binding data of serviceBusTrigger, not of queueTrigger",
            ),
            (
                &batched,
                "{MessageId}",
                "MessageId is an array (MessageIdArray)",
            ),
            (&batched, "{region}", "has no properties"),
            (&kafka, "{region}", "not the event's own JSON"),
            (&kafka, "{Headers}", "is an array"),
            (
                &kafka,
                "{QueueTrigger}",
                "QueueTrigger is binding data of queueTrigger",
            ),
            (
                &http,
                "{Id}",
                "a httpTrigger function's output names must be written out",
            ),
        ];
        for (trigger, written, want) in refused {
            let err = check(written, trigger.clone()).unwrap_err();
            assert!(err.contains(want), "{written} for {trigger}: {err}");
        }
        // Without expressions, nothing to check.
        assert_eq!(check("orders", http.clone()), Ok(()));
    }
}
