//! `shoal app import` / `export` against a real `shoal serve`: the sample project in
//! `sample_project/` (after Azure's public custom-handler samples, see its README).

use std::path::{Path, PathBuf};

use reqwest::Method;
use serde_json::Value;

use super::harness::{Run, Server, TENANT, User};

const HANDLER: &str = "http://127.0.0.1:9/api";

/// A copy of the sample project the test may edit.
pub fn sample_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/client_cli/sample_project");
    copy_dir(&source, dir.path());
    let path = dir.path().to_owned();
    (dir, path)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The app `shop`'s document at `below` (`""`, `/functions`, …), as an administrator reads it.
async fn read(server: &Server, below: &str) -> Value {
    let path = format!("/v1/tenants/{TENANT}/apps/shop{below}");
    server.request(Method::GET, &path, None).await.1
}

pub fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[tokio::test]
async fn import_maps_the_sample_runs_twice_without_change_and_round_trips() {
    let server = Server::start().await;
    let user = User::owner_of(&server);
    let (_keep, project) = sample_copy();

    let first = user
        .run(&[
            "app",
            "import",
            path(&project),
            "--app",
            "shop",
            "--handler-url",
            HANDLER,
        ])
        .ok();
    for expected in [
        "app (new)",
        "function QueueTrigger (new)",
        "function TimerTrigger (new)",
    ] {
        assert!(
            first.stdout.contains(expected),
            "{expected}: {}",
            first.stdout
        );
    }
    // Listed, not dropped: the blob function, the host's executable, the runtime setting.
    for (outcome, at) in [
        ("not imported", "BlobTrigger/function.json"),
        ("stored, no effect", "host.json customHandler.description"),
        ("kept as a setting", "FUNCTIONS_WORKER_RUNTIME"),
        ("not imported", "local.settings.json Host"),
    ] {
        assert!(
            first
                .stdout
                .lines()
                .any(|l| l.contains(outcome) && l.contains(at)),
            "{outcome} {at}: {}",
            first.stdout
        );
    }
    assert!(
        !first.stdout.contains("SAS_KEY_VALUE"),
        "secrets are not printed: {}",
        first.stdout
    );
    let functions = read(&server, "/functions").await;
    let names: Vec<&str> = functions["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "HttpTrigger",
            "QueueTrigger",
            "ServiceBusTrigger",
            "TimerTrigger"
        ]
    );
    let app = read(&server, "").await;
    assert_eq!(
        app["appSettings"]["ServiceBusConnection"], "********",
        "{app}"
    );
    assert_eq!(
        app["hostConfig"]["extensions"]["queues"]["maxDequeueCount"], 3,
        "{app}"
    );

    // A second run writes nothing.
    let etag = app["etag"].clone();
    let again = user
        .run(&["app", "import", path(&project), "--app", "shop"])
        .ok();
    assert!(again.stdout.contains("No changes"), "{}", again.stdout);
    let app = read(&server, "").await;
    assert_eq!(app["etag"], etag, "the app was not written again");

    // One edited function.json is exactly the diff, and a dry run writes nothing.
    let file = project.join("QueueTrigger/function.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("test-input-custom", "orders-v2")).unwrap();
    let dry = user
        .run(&[
            "app",
            "import",
            path(&project),
            "--app",
            "shop",
            "--dry-run",
            "-o",
            "json",
        ])
        .ok();
    let changes = &dry.json()["changes"];
    assert_eq!(
        changes,
        &serde_json::json!([{"resource": "function QueueTrigger",
            "changes": ["~ bindings[0].queueName: \"test-input-custom\" -> \"orders-v2\""]}]),
        "{}",
        dry.stdout
    );
    let queue_function = read(&server, "/functions/QueueTrigger").await;
    assert_eq!(
        queue_function["bindings"][0]["queueName"],
        "test-input-custom"
    );
    user.run(&["app", "import", path(&project), "--app", "shop"])
        .ok();

    // Export, then import of the export, is no change; the owner's export has the raw secret.
    let out = tempfile::tempdir().unwrap();
    let exported = out.path().join("shop");
    user.run(&["app", "export", path(&exported), "--app", "shop"])
        .ok();
    let settings: Value = serde_json::from_str(
        &std::fs::read_to_string(exported.join("local.settings.json")).unwrap(),
    )
    .unwrap();
    assert!(
        settings["Values"]["ServiceBusConnection"]
            .as_str()
            .unwrap()
            .contains("SAS_KEY_VALUE")
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(exported.join("local.settings.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "it holds secrets");
    assert!(exported.join("QueueTrigger/function.json").is_file());
    let round = user
        .run(&["app", "import", path(&exported), "--app", "shop"])
        .ok();
    assert!(round.stdout.contains("No changes"), "{}", round.stdout);
}

/// The command failed with `code`, and its message says each of `says`.
fn refused(run: Run, code: i32, says: &[&str]) {
    assert_eq!(run.code, code, "{run:#?}");
    for text in says {
        assert!(run.stderr.contains(text), "{text}: {}", run.stderr);
    }
}

#[tokio::test]
async fn bad_project_input_names_the_file_and_exits_with_its_code() {
    let server = Server::start().await;
    let user = User::owner_of(&server);
    let import = |folder: &str, url: bool| {
        let mut args = vec!["app", "import", folder, "--app", "shop"];
        if url {
            args.extend(["--handler-url", HANDLER]);
        }
        user.run(&args)
    };
    refused(
        import("/nonexistent/project", true),
        2,
        &["/nonexistent/project: no such folder"],
    );

    let (_keep, project) = sample_copy();
    refused(import(path(&project), false), 2, &["--handler-url"]);

    let file = project.join("QueueTrigger/function.json");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("\"queueName\": \"test-input-custom\",", ""),
    )
    .unwrap();
    refused(
        import(path(&project), true),
        1,
        &[
            "QueueTrigger/function.json: bindings[0].queueName:",
            "nothing was written",
        ],
    );
    std::fs::write(&file, "{ not json").unwrap();
    refused(
        import(path(&project), true),
        2,
        &["QueueTrigger/function.json: not JSON"],
    );
    let (status, _) = server
        .request(
            Method::GET,
            &format!("/v1/tenants/{TENANT}/apps/shop"),
            None,
        )
        .await;
    assert_eq!(status, 404, "a refused import writes nothing");

    let out = tempfile::tempdir().unwrap();
    let export =
        |folder: &Path, app: &str| user.run(&["app", "export", path(folder), "--app", app]);
    refused(
        export(&out.path().join("x"), "nope"),
        4,
        &["app nope not found"],
    );
    user.run(&["app", "create", "shop", "--handler-url", HANDLER])
        .ok();
    refused(export(&project, "shop"), 2, &["is not empty"]);

    let anonymous = User::new().run(&["app", "import", path(&project), "--app", "shop"]);
    refused(anonymous, 3, &["not logged in"]);
}
