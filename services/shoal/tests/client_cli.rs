//! The client commands against a real `shoal serve` and Postgres, as a user runs them: one
//! test per command group, each with its bad input (an unknown app, a 422 with its field path,
//! a missing login) and the exit code scripts see (docs/cli.md).

use std::os::unix::fs::PermissionsExt;

use reqwest::Method;
use serde_json::json;

mod client_cli {
    pub mod functions;
    pub mod harness;
    pub mod operations;
    pub mod project;
    pub mod project_runs;
}

use client_cli::harness::{Server, TENANT, User};

const HANDLER: &str = "http://127.0.0.1:9/api";

#[test]
fn without_a_login_commands_exit_3_and_say_how_to_log_in() {
    let user = User::new();
    let run = user.run(&["app", "list"]);
    assert_eq!(run.code, 3, "{run:#?}");
    assert!(
        run.stderr.contains("not logged in")
            && run.stderr.contains("shoal login --url URL --token TOKEN")
            && run.stderr.contains("SHOAL_URL and SHOAL_TOKEN"),
        "{}",
        run.stderr
    );
    // A usage error is clap's 2, naming the flag.
    let run = user.run(&["app", "create", "orders"]);
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(run.stderr.contains("--handler-url"), "{}", run.stderr);
}

#[tokio::test]
async fn login_saves_a_0600_profile_that_later_commands_use_and_logout_forgets_it() {
    let server = Server::start().await;
    let user = User::new();
    let run = user
        .run_with_stdin(
            &["login", "--url", &server.base, "--token", "-"],
            &server.owner,
        )
        .ok();
    assert!(run.stdout.contains("in tenant contoso"), "{}", run.stdout);
    let file = user.profiles();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600, "the profile holds a token");
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains(&server.owner) && saved.contains("\"tenant\": \"contoso\""));

    // Later commands use the profile; a second profile is another entry.
    user.run(&["app", "create", "orders", "--handler-url", HANDLER])
        .ok();
    let reader = server.token("bob", "Reader");
    user.run(&[
        "login",
        "--url",
        &server.base,
        "--token",
        &reader,
        "--profile",
        "ro",
    ])
    .ok();
    let listed = user
        .run(&["app", "list", "--profile", "ro", "-o", "json"])
        .ok();
    assert_eq!(listed.json()[0]["name"], "orders");
    let refused = user.run(&["app", "delete", "orders", "--profile", "ro"]);
    assert_eq!(refused.code, 3, "a Reader may not delete: {refused:#?}");
    assert!(refused.stderr.contains("403"), "{}", refused.stderr);

    // A bad token is refused at login, and nothing is saved for it.
    let bad = user.run(&[
        "login",
        "--url",
        &server.base,
        "--token",
        "nope",
        "--profile",
        "bad",
    ]);
    assert_eq!(bad.code, 3, "{bad:#?}");
    assert!(!std::fs::read_to_string(&file).unwrap().contains("\"bad\""));

    user.run(&["logout"]).ok();
    let after = user.run(&["app", "list"]);
    assert_eq!(after.code, 3, "{after:#?}");
    assert!(
        after.stderr.contains("no profile \"default\""),
        "{}",
        after.stderr
    );
    user.run(&["app", "list", "--profile", "ro"]).ok();
    assert_eq!(mode(&file), 0o600, "rewritten with the same mode");
}

#[tokio::test]
async fn login_with_a_service_principals_client_credentials() {
    let server = Server::start().await;
    let (status, principal) = server
        .request(
            Method::PUT,
            &format!("/v1/tenants/{TENANT}/servicePrincipals/deployer"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, 201, "{principal}");
    let (status, _) = server
        .request(
            Method::PUT,
            &format!(
                "/v1/tenants/{TENANT}/roleAssignments/{}",
                uuid::Uuid::new_v4()
            ),
            Some(
                json!({"principalId": principal["principalId"], "roleDefinitionId": "Contributor",
                "scope": format!("/tenants/{TENANT}")}),
            ),
        )
        .await;
    assert_eq!(status, 201);
    let (status, credential) = server
        .request(
            Method::POST,
            &format!("/v1/tenants/{TENANT}/servicePrincipals/deployer/secrets"),
            None,
        )
        .await;
    assert!(status == 200 || status == 201, "{credential}");
    let client_id = credential["clientId"].as_str().unwrap();
    let secret = credential["clientSecret"].as_str().unwrap();

    let user = User::new();
    let wrong = user.run_with_stdin(
        &[
            "login",
            "--url",
            &server.base,
            "--client-id",
            client_id,
            "--client-secret",
            "-",
        ],
        "not-the-secret",
    );
    assert_eq!(wrong.code, 3, "{wrong:#?}");
    assert!(wrong.stderr.contains("invalid_client"), "{}", wrong.stderr);
    user.run_with_stdin(
        &[
            "login",
            "--url",
            &server.base,
            "--client-id",
            client_id,
            "--client-secret",
            "-",
        ],
        secret,
    )
    .ok();
    // Every command trades the saved client credentials for a token.
    user.run(&["app", "create", "orders", "--handler-url", HANDLER])
        .ok();
    let shown = user.run(&["app", "show", "orders", "-o", "json"]).ok();
    assert_eq!(shown.json()["tenant"], TENANT);
}

#[tokio::test]
async fn app_create_list_show_delete_with_unknown_apps_and_field_errors() {
    let server = Server::start().await;
    let user = User::owner_of(&server);
    let created = user
        .run(&[
            "app",
            "create",
            "orders",
            "--handler-url",
            HANDLER,
            "--setting",
            "MODE=fast",
        ])
        .ok();
    assert!(
        created.stdout.contains("handler") && created.stdout.contains(HANDLER),
        "{}",
        created.stdout
    );
    let again = user.run(&["app", "create", "orders", "--handler-url", HANDLER]);
    assert_eq!(again.code, 5, "{again:#?}");
    assert!(
        again.stderr.contains("app orders already exists"),
        "{}",
        again.stderr
    );

    let invalid = user.run(&[
        "app",
        "create",
        "billing",
        "--handler-url",
        "ftp://x",
        "--timeout-seconds",
        "0",
    ]);
    assert_eq!(invalid.code, 1, "{invalid:#?}");
    assert!(
        invalid.stderr.contains("answered 422")
            && invalid.stderr.contains("\n  handler.url: ")
            && invalid.stderr.contains("\n  handler.timeoutSeconds: "),
        "{}",
        invalid.stderr
    );

    let table = user.run(&["app", "list"]).ok();
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("HANDLER"),
        "{}",
        table.stdout
    );
    assert!(
        lines[1].starts_with("orders ") && lines[1].contains(HANDLER),
        "{}",
        table.stdout
    );
    let json = user.run(&["app", "list", "--output", "json"]).ok().json();
    assert_eq!(json.as_array().unwrap().len(), 1);
    let shown = user.run(&["app", "show", "orders"]).ok();
    assert!(
        shown.stdout.contains("settings") && shown.stdout.contains("MODE"),
        "{}",
        shown.stdout
    );

    let unknown = user.run(&["app", "show", "nosuch"]);
    assert_eq!(unknown.code, 4, "{unknown:#?}");
    assert!(
        unknown
            .stderr
            .contains("/v1/tenants/contoso/apps/nosuch answered 404"),
        "{}",
        unknown.stderr
    );

    let etag = user
        .run(&["app", "show", "orders", "-o", "json"])
        .ok()
        .json()["etag"]
        .as_str()
        .unwrap()
        .to_owned();
    user.run(&["app", "settings", "set", "--app", "orders", "MODE=slow"])
        .ok();
    let stale = user.run(&[
        "app",
        "delete",
        "orders",
        "--if-match",
        &format!("\"{etag}\""),
    ]);
    assert_eq!(stale.code, 5, "changed since that etag: {stale:#?}");
    assert!(stale.stderr.contains("412"), "{}", stale.stderr);
    user.run(&["app", "delete", "orders"]).ok();
    assert_eq!(user.run(&["app", "show", "orders"]).code, 4);
    assert_eq!(user.run(&["app", "delete", "orders"]).code, 4);
}

#[tokio::test]
async fn app_settings_set_list_unset_and_secrets_stay_off_the_command_line() {
    let server = Server::start().await;
    let user = User::owner_of(&server);
    user.run(&["app", "create", "orders", "--handler-url", HANDLER])
        .ok();
    let set = user
        .run(&[
            "app",
            "settings",
            "set",
            "--app",
            "orders",
            "MODE=fast",
            "REGION=west",
        ])
        .ok();
    assert!(
        set.stdout.contains("Set MODE on app orders."),
        "{}",
        set.stdout
    );
    let secret = user
        .run_with_stdin(
            &[
                "app",
                "settings",
                "set",
                "--app",
                "orders",
                "--secret",
                "DB_PASSWORD",
            ],
            "hunter2\n",
        )
        .ok();
    assert!(
        secret.stdout.contains("DB_PASSWORD on app orders (secret"),
        "{}",
        secret.stdout
    );
    let refused = user.run_with_stdin(
        &[
            "app", "settings", "set", "--app", "orders", "--secret", "COLOR",
        ],
        "red",
    );
    assert_eq!(refused.code, 2, "{refused:#?}");
    assert!(
        refused.stderr.contains("COLOR would be shown in the clear"),
        "{}",
        refused.stderr
    );

    let listed = user
        .run(&["app", "settings", "list", "--app", "orders"])
        .ok();
    assert!(
        listed.stdout.contains("DB_PASSWORD  ********")
            && listed.stdout.contains("MODE         fast"),
        "{}",
        listed.stdout
    );
    let revealed = user
        .run(&[
            "app", "settings", "list", "--app", "orders", "--reveal", "-o", "json",
        ])
        .ok()
        .json();
    assert_eq!(
        revealed,
        json!({"DB_PASSWORD": "hunter2", "MODE": "fast", "REGION": "west"})
    );

    user.run(&["app", "settings", "unset", "--app", "orders", "REGION"])
        .ok();
    let after = user
        .run(&[
            "app", "settings", "list", "--app", "orders", "--reveal", "-o", "json",
        ])
        .ok()
        .json();
    assert_eq!(
        after,
        json!({"DB_PASSWORD": "hunter2", "MODE": "fast"}),
        "the secret was kept"
    );
    let missing = user.run(&["app", "settings", "unset", "--app", "orders", "REGION"]);
    assert_eq!(missing.code, 4, "{missing:#?}");
    assert!(
        missing.stderr.contains("app orders has no setting REGION"),
        "{}",
        missing.stderr
    );
    let unknown = user.run(&["app", "settings", "set", "--app", "nosuch", "A=b"]);
    assert_eq!(unknown.code, 4, "{unknown:#?}");
    let bad_name = user.run(&["app", "settings", "set", "--app", "orders", "BAD NAME=x"]);
    assert_eq!(bad_name.code, 1, "{bad_name:#?}");
    assert!(
        bad_name.stderr.contains("appSettings.BAD NAME: "),
        "{}",
        bad_name.stderr
    );
}
