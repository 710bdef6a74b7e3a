//! Checks drawn from what the live listeners report, rather than from configuration alone.

use crate::bindings::Binding;
use crate::functions::FunctionSpec;
use crate::workers::ListenerReport;

use super::{Check, CheckStatus};

/// One warning per output name that `function`'s handler sets in `Outputs` although the
/// function declares no such output binding, as the live listeners of the app (`reports`, any
/// function) saw it. Shoal ignores such values, as Azure's host does, so a handler that expects
/// them written loses them silently; this is where the tenant learns of it. Names the function
/// declares by now (the tenant fixed `function.json` since) are not reported.
pub fn check_undeclared_outputs(
    function: &str,
    spec: &FunctionSpec,
    reports: &[ListenerReport],
) -> Vec<Check> {
    let declared = |name: &str| {
        spec.bindings
            .iter()
            .filter(|b| !b.is_trigger())
            .any(|b: &Binding| b.name().as_str().eq_ignore_ascii_case(name))
    };
    let mine: Vec<&ListenerReport> = reports
        .iter()
        .filter(|r| r.function.eq_ignore_ascii_case(function))
        .collect();
    let invocations: u64 = mine.iter().map(|r| r.undeclared_outputs).sum();
    let mut names: Vec<&str> = mine
        .iter()
        .flat_map(|r| r.undeclared_output_names.iter().map(String::as_str))
        .filter(|name| !declared(name))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .into_iter()
        .map(|name| Check {
            function: Some(function.to_owned()),
            binding: Some(name.to_owned()),
            key: None,
            subject: "outputs".to_owned(),
            status: CheckStatus::Warning,
            detail: format!(
                "the handler's responses set Outputs.{name}, but the function has no output \
                 binding named {name}: the value is ignored, as Azure Functions ignores it \
                 ({invocations} invocations on live instances set undeclared outputs)"
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(bindings: serde_json::Value) -> FunctionSpec {
        FunctionSpec::parse("f", &json!({ "bindings": bindings }))
            .unwrap()
            .spec
    }

    fn report(function: &str, count: u64, names: &[&str]) -> ListenerReport {
        ListenerReport {
            tenant: "t".into(),
            app: "a".into(),
            instance: 0,
            function: function.into(),
            trigger: "queueTrigger".into(),
            source: "q".into(),
            status: "listening".into(),
            received: count,
            succeeded: count,
            failed: 0,
            retried: 0,
            deferred: 0,
            parked: 0,
            handler_unreachable_since: None,
            poisoned: 0,
            in_flight: 0,
            last_poll: None,
            current_backoff_ms: 0,
            last_token_error: None,
            undeclared_outputs: count,
            undeclared_output_names: names.iter().map(|n| (*n).to_owned()).collect(),
            concurrency: None,
        }
    }

    #[test]
    fn undeclared_outputs_warn_per_name_across_instances() {
        let with_output = spec(json!([
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"},
            {"type": "queue", "direction": "out", "name": "done", "queueName": "shipped"}
        ]));
        let trigger_only = spec(json!([
            {"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": "orders"}
        ]));
        // (case, function's spec, reports of the app's live listeners, names warned of, count)
        type Case<'a> = (
            &'a str,
            &'a FunctionSpec,
            Vec<ListenerReport>,
            Vec<&'a str>,
            u64,
        );
        let cases: Vec<Case> = vec![
            ("no listener reports", &with_output, vec![], vec![], 0),
            (
                "reports without undeclared outputs",
                &with_output,
                vec![report("f", 0, &[])],
                vec![],
                0,
            ),
            (
                "one instance",
                &trigger_only,
                vec![report("f", 3, &["done"])],
                vec!["done"],
                3,
            ),
            (
                "names from every instance, once each, counts summed",
                &trigger_only,
                vec![report("f", 2, &["b", "a"]), report("f", 5, &["a"])],
                vec!["a", "b"],
                7,
            ),
            (
                "other functions' reports do not count",
                &trigger_only,
                vec![report("g", 4, &["x"]), report("F", 1, &["y"])],
                vec!["y"],
                1,
            ),
            (
                "a name declared since (any case) is not reported",
                &with_output,
                vec![report("f", 2, &["DONE", "extra"])],
                vec!["extra"],
                2,
            ),
            (
                "the trigger's name is no output binding",
                &trigger_only,
                vec![report("f", 1, &["msg"])],
                vec!["msg"],
                1,
            ),
        ];
        for (case, spec, reports, names, count) in cases {
            let checks = check_undeclared_outputs("f", spec, &reports);
            let got: Vec<&str> = checks.iter().filter_map(|c| c.binding.as_deref()).collect();
            assert_eq!(got, names, "{case}");
            for check in &checks {
                assert_eq!(check.status, CheckStatus::Warning, "{case}");
                assert_eq!(check.subject, "outputs", "{case}");
                assert_eq!(check.function.as_deref(), Some("f"), "{case}");
                assert!(
                    check.detail.contains(&format!("({count} invocations")),
                    "{case}: {}",
                    check.detail
                );
            }
        }
    }
}
