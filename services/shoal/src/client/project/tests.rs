//! The mapping, the plan and the export's documents, table by table, without an API.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::export;
use super::files::Project;
use super::mapping::{Outcome, map};
use super::plan::{Current, Line, Write, plan};

fn queue(name: &str) -> Value {
    json!({"type": "queueTrigger", "direction": "in", "name": "msg", "queueName": name,
        "connection": "AzureWebJobsStorage"})
}

fn project(functions: &[(&str, Value)], values: Value) -> Project {
    Project {
        host: json!({"version": "2.0"}),
        functions: functions
            .iter()
            .map(|(n, f)| ((*n).to_owned(), f.clone()))
            .collect(),
        local_settings: Some(json!({"IsEncrypted": false, "Values": values})),
    }
}

#[test]
fn what_does_not_map_is_listed_with_its_outcome() {
    let cases: Vec<(&str, Project, Outcome, &str)> = vec![
        (
            "an unknown trigger leaves its function out",
            project(
                &[(
                    "copy",
                    json!({"bindings": [{"type": "blobTrigger", "direction": "in", "name": "b", "path": "in/{name}"}]}),
                )],
                json!({}),
            ),
            Outcome::NotImported,
            "copy/function.json",
        ),
        (
            "an unknown output leaves only the binding out",
            project(
                &[(
                    "orders",
                    json!({"bindings": [queue("orders"), {"type": "blob", "direction": "out", "name": "b", "path": "x"}]}),
                )],
                json!({}),
            ),
            Outcome::NotImported,
            "orders/function.json bindings[1]",
        ),
        (
            "a trigger Shoal stores but does not run",
            project(
                &[(
                    "feed",
                    json!({"bindings": [{"type": "cosmosDBTrigger", "direction": "in", "name": "docs",
                    "connection": "Cosmos", "databaseName": "d", "containerName": "c"}]}),
                )],
                json!({"Cosmos": "AccountEndpoint=https://x.documents.azure.com:443/"}),
            ),
            Outcome::NoEffect,
            "feed/function.json bindings[0]",
        ),
        (
            "scriptFile is stored without effect",
            project(
                &[(
                    "orders",
                    json!({"bindings": [queue("orders")], "scriptFile": "handler.exe"}),
                )],
                json!({}),
            ),
            Outcome::NoEffect,
            "orders/function.json scriptFile",
        ),
        (
            "a %Setting% local.settings.json does not define",
            project(
                &[("orders", json!({"bindings": [queue("%OrdersQueue%")]}))],
                json!({}),
            ),
            Outcome::Unresolved,
            "orders/function.json bindings[0].queueName",
        ),
        (
            "a setting only Azure's runtime reads is kept",
            project(&[], json!({"FUNCTIONS_WORKER_RUNTIME": "custom"})),
            Outcome::Kept,
            "FUNCTIONS_WORKER_RUNTIME",
        ),
        (
            "customHandler.description has no effect",
            Project {
                host: json!({"customHandler": {"description": {"defaultExecutablePath": "handler"}}}),
                ..project(&[], json!({}))
            },
            Outcome::NoEffect,
            "host.json customHandler.description.defaultExecutablePath",
        ),
        (
            "local.settings.json's Host section",
            Project {
                local_settings: Some(json!({"Values": {}, "Host": {"LocalHttpPort": 7071}})),
                ..project(&[], json!({}))
            },
            Outcome::NotImported,
            "local.settings.json Host",
        ),
    ];
    for (case, project, outcome, at) in cases {
        let mapped = map(&project).unwrap_or_else(|e| panic!("{case}: {e:?}"));
        assert!(
            mapped
                .notes
                .iter()
                .any(|n| n.outcome == outcome && n.at == at),
            "{case}: no {outcome:?} note at {at}: {:#?}",
            mapped.notes
        );
    }
}

#[test]
fn unmapped_parts_are_not_written_and_the_rest_is() {
    let project = project(
        &[
            (
                "copy",
                json!({"bindings": [{"type": "blobTrigger", "direction": "in", "name": "b", "path": "p"}]}),
            ),
            (
                "orders",
                json!({"bindings": [queue("orders"), {"type": "blob", "direction": "out", "name": "b", "path": "x"}]}),
            ),
        ],
        json!({"A": "1"}),
    );
    let mapped = map(&project).unwrap();
    assert_eq!(mapped.functions.keys().collect::<Vec<_>>(), ["orders"]);
    assert_eq!(
        mapped.functions["orders"]["bindings"],
        json!([queue("orders")])
    );
    assert_eq!(mapped.settings["A"], "1");
}

#[test]
fn invalid_documents_are_reported_with_file_and_field_path() {
    let cases: Vec<(Project, &str)> = vec![
        (
            project(
                &[(
                    "orders",
                    json!({"bindings": [{"type": "queueTrigger", "direction": "in", "name": "m"}]}),
                )],
                json!({}),
            ),
            "orders/function.json: bindings[0].queueName:",
        ),
        (
            Project {
                host: json!({"extensions": {"queues": {"batchSize": 99}}}),
                ..project(&[], json!({}))
            },
            "host.json: extensions.queues.batchSize:",
        ),
        (
            project(&[], json!({"NESTED": {"a": 1}})),
            "local.settings.json: Values.NESTED: expected a string",
        ),
        (
            Project {
                local_settings: Some(json!({"IsEncrypted": true, "Values": {}})),
                ..project(&[], json!({}))
            },
            "local.settings.json: IsEncrypted:",
        ),
        (
            project(
                &[("bad name!", json!({"bindings": [queue("orders")]}))],
                json!({}),
            ),
            "bad name!/function.json: the folder name is not a function name",
        ),
    ];
    for (project, expected) in cases {
        let problems = map(&project).expect_err(expected);
        assert!(
            problems.iter().any(|p| p.starts_with(expected)),
            "{expected}: {problems:#?}"
        );
    }
}

#[test]
fn connection_strings_become_settings_and_values_win_a_clash() {
    let project = Project {
        local_settings: Some(json!({
            "Values": {"Shared": "from-values"},
            "ConnectionStrings": {"Sql": "Server=db;Password=pw", "Shared": "from-connection-strings"},
        })),
        ..project(&[], json!({}))
    };
    let mapped = map(&project).unwrap();
    assert_eq!(mapped.settings["Sql"], "Server=db;Password=pw");
    assert_eq!(mapped.settings["Shared"], "from-values");
    assert!(
        mapped
            .notes
            .iter()
            .any(|n| n.at == "local.settings.json ConnectionStrings.Shared")
    );
}

/// The app as the API would return it after the mapped project was written.
fn current_after(mapped: &super::mapping::Mapped) -> Current {
    let functions = mapped
        .functions
        .iter()
        .map(|(name, body)| {
            let mut doc = super::plan::comparable(name, body).unwrap();
            doc["name"] = json!(name);
            doc["etag"] = json!("\"1\"");
            (name.clone(), doc)
        })
        .collect();
    Current {
        app: Some(json!({
            "handler": {"url": "http://h/api"},
            "hostConfig": super::plan::normalized_host(&mapped.host_config).unwrap(),
        })),
        settings: mapped.settings.clone(),
        functions,
    }
}

#[test]
fn the_same_project_again_plans_nothing_and_one_edit_plans_exactly_it() {
    let original = project(
        &[("orders", json!({"bindings": [queue("orders-in")]}))],
        json!({"A": "1"}),
    );
    let mapped = map(&original).unwrap();
    let current = current_after(&mapped);
    assert!(
        plan(&mapped, &current, Some("http://h/api"))
            .unwrap()
            .is_empty()
    );

    let edited = project(
        &[("orders", json!({"bindings": [queue("orders-in-v2")]}))],
        json!({"A": "1"}),
    );
    let planned = plan(&map(&edited).unwrap(), &current, None).unwrap();
    assert_eq!(
        planned.diff,
        vec![(
            "function orders".to_owned(),
            vec![Line::Changed(
                "bindings[0].queueName".into(),
                "\"orders-in\"".into(),
                "\"orders-in-v2\"".into()
            )]
        )]
    );
    assert!(matches!(&planned.writes[..], [Write::ReplaceFunction(name, _)] if name == "orders"));
}

#[test]
fn secret_values_are_never_shown_and_the_placeholder_keeps_the_apps_value() {
    let mapped = map(&project(
        &[],
        json!({"DbPassword": "new", "Kept": shoal_domain::settings::MASK}),
    ))
    .unwrap();
    let mut current = current_after(&map(&project(&[], json!({}))).unwrap());
    current.settings = BTreeMap::from([
        ("DbPassword".to_owned(), "old".to_owned()),
        ("Kept".to_owned(), "raw".to_owned()),
    ]);
    let planned = plan(&mapped, &current, None).unwrap();
    let text = format!("{:?}", planned.diff);
    assert!(
        !text.contains("old") && !text.contains("new") && text.contains("********"),
        "{text}"
    );
    let [Write::PatchApp(patch)] = &planned.writes[..] else {
        panic!("{:?}", planned.writes);
    };
    assert_eq!(patch["appSettings"], json!({"DbPassword": "new"}));
}

#[test]
fn a_new_app_needs_a_handler_url() {
    let mapped = map(&project(&[], json!({}))).unwrap();
    let error = plan(&mapped, &Current::default(), None).unwrap_err();
    assert!(error.contains("--handler-url"), "{error}");
    let planned = plan(&mapped, &Current::default(), Some("http://h/api")).unwrap();
    assert!(
        matches!(&planned.writes[..], [Write::CreateApp(body)] if body["handler"]["url"] == "http://h/api")
    );
}

#[test]
fn host_config_changes_patch_back_to_defaults_what_the_project_dropped() {
    let was =
        super::plan::normalized_host(&json!({"extensions": {"queues": {"batchSize": 8}}})).unwrap();
    let patch = super::plan::merge_diff(&was, &json!({"functionTimeout": "00:01:00"}));
    assert_eq!(patch["extensions"], Value::Null, "{patch}");
    assert_eq!(patch["functionTimeout"], "00:01:00");
    let mut merged = was.clone();
    shoal_domain::merge_patch::merge_patch(&mut merged, &patch);
    assert_eq!(
        super::plan::normalized_host(&merged).unwrap(),
        super::plan::normalized_host(&json!({"functionTimeout": "00:01:00"})).unwrap()
    );
}

#[test]
fn exported_documents_import_as_no_change() {
    let written = json!({"version": "2.0", "extensions": {"queues": {"batchSize": 32, "maxDequeueCount": 3}}});
    let normalized = super::plan::normalized_host(&written).unwrap();
    let minimal = export::minimal_host(&normalized).unwrap();
    assert_eq!(super::plan::normalized_host(&minimal).unwrap(), normalized);
    assert!(
        minimal.get("functionTimeout").is_none(),
        "defaults are pruned: {minimal}"
    );
    assert_eq!(minimal["extensions"]["queues"]["batchSize"], 32);

    let mapped = map(&project(
        &[(
            "orders",
            json!({"bindings": [queue("orders")], "disabled": true}),
        )],
        json!({}),
    ))
    .unwrap();
    let current = current_after(&mapped);
    let api_document = &current.functions["orders"];
    let file = export::function_json(api_document);
    assert!(
        file.get("circuitBreaker").is_none() && file.get("etag").is_none(),
        "{file}"
    );
    assert_eq!(file["disabled"], true);
    assert_eq!(
        super::plan::comparable("orders", &file).unwrap(),
        super::plan::comparable("orders", api_document).unwrap()
    );
}
