//! `terraform test` on deploy/terraform/examples/function-app, against a fresh Shoal.

mod support;

use std::path::Path;

use support::{Shoal, Workspace};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn terraform_test_passes_on_the_example() {
    let shoal = Shoal::start().await;
    let ws = Workspace::new(&shoal);
    // A copy, so Terraform's working files never land in the repository.
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/function-app"),
        ws.path(),
    );
    let run = ws.run(&["test", "-no-color"]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("2 passed, 0 failed"), "{}", run.stdout);
    // `terraform test` destroys what it applied.
    assert_eq!(shoal.get("/v1/tenants/contoso").await.0, 404);
}
