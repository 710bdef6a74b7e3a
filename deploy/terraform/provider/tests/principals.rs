//! `shoal_user_assigned_identity`, `shoal_service_principal` and `shoal_role_assignment` with
//! the real `terraform` against a real Shoal.

mod support;

use support::{Shoal, Workspace, assert_no_changes};

const CONFIG: &str = r#"
resource "shoal_user_assigned_identity" "uploader" {
  tenant = "contoso"
  name   = "uploader"
}

resource "shoal_service_principal" "pipeline" {
  tenant = "contoso"
  name   = "pipeline"
}

resource "shoal_function_app" "orders" {
  tenant  = "contoso"
  name    = "orders"
  handler = { url = "http://127.0.0.1:7071/api" }
  identity = {
    type                     = "SystemAssigned, UserAssigned"
    user_assigned_identities = [shoal_user_assigned_identity.uploader.name]
  }
}

resource "shoal_role_assignment" "pipeline_reads" {
  tenant          = "contoso"
  principal_id    = shoal_service_principal.pipeline.principal_id
  role_definition = "Reader"
  scope           = shoal_function_app.orders.id
}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn principals_and_assignments_create_import_recreate_and_destroy() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);
    ws.config(CONFIG);
    ws.apply().ok();
    assert_no_changes(&ws);

    let show = ws.run(&["show", "-json"]).ok();
    let state: serde_json::Value = serde_json::from_str(&show.stdout).unwrap();
    let resources = state["values"]["root_module"]["resources"]
        .as_array()
        .unwrap();
    let find = |address: &str| {
        resources
            .iter()
            .find(|r| r["address"] == address)
            .unwrap_or_else(|| panic!("{address} in state"))["values"]
            .clone()
    };
    let pipeline = find("shoal_service_principal.pipeline");
    assert!(
        pipeline["client_secret"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "the secret is kept from the create"
    );
    let assignment = find("shoal_role_assignment.pipeline_reads");
    assert_eq!(assignment["role_definition_name"], "Reader");
    let app = find("shoal_function_app.orders");
    assert!(app["identity"]["principal_id"].is_string(), "{app}");
    let (status, body) = shoal
        .get(&format!("/v1{}", assignment["id"].as_str().unwrap()))
        .await;
    assert_eq!(status, 200, "{body}");

    // Every resource imports into a fresh state with nothing left to change (the service
    // principal's secret, which the API never returns again, is null after an import).
    let fresh = Workspace::new(&shoal);
    fresh.config(CONFIG);
    for (address, id) in [
        (
            "shoal_user_assigned_identity.uploader",
            "/tenants/contoso/identities/uploader",
        ),
        (
            "shoal_service_principal.pipeline",
            "/tenants/contoso/servicePrincipals/pipeline",
        ),
        ("shoal_function_app.orders", "/tenants/contoso/apps/orders"),
        (
            "shoal_role_assignment.pipeline_reads",
            assignment["id"].as_str().unwrap(),
        ),
    ] {
        fresh.run(&["import", "-no-color", address, id]).ok();
    }
    assert_no_changes(&fresh);

    // A principal deleted outside Terraform is planned for creation again (its assignment with
    // it: the new principal has a new object id).
    assert_eq!(
        shoal
            .delete("/v1/tenants/contoso/servicePrincipals/pipeline")
            .await,
        204
    );
    let plan = ws.plan();
    assert_eq!(plan.code, 2, "{}\n{}", plan.stdout, plan.stderr);
    assert!(
        plan.stdout
            .contains("shoal_service_principal.pipeline will be created"),
        "{}",
        plan.stdout
    );
    ws.apply().ok();
    assert_no_changes(&ws);

    ws.destroy().ok();
    assert_eq!(
        shoal.get("/v1/tenants/contoso/identities/uploader").await.0,
        404
    );
    assert_eq!(shoal.get("/v1/tenants/contoso/apps/orders").await.0, 404);
}

fn custom_role(actions: &str) -> String {
    format!(
        r#"
resource "shoal_role_definition" "orders_reader" {{
  tenant            = "contoso"
  name              = "Orders Reader"
  description       = "Reads apps and their functions"
  actions           = [{actions}]
  assignable_scopes = ["/tenants/contoso"]
}}

resource "shoal_user_assigned_identity" "auditor" {{
  tenant = "contoso"
  name   = "auditor"
}}

resource "shoal_role_assignment" "auditor_reads" {{
  tenant          = "contoso"
  principal_id    = shoal_user_assigned_identity.auditor.principal_id
  role_definition = shoal_role_definition.orders_reader.name
  scope           = "/tenants/contoso"
}}
"#
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_custom_role_is_created_updated_assigned_imported_and_destroyed() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    let ws = Workspace::new(&shoal);
    ws.config(&custom_role(r#""Shoal/apps/read""#));
    ws.apply().ok();
    assert_no_changes(&ws);
    let role_path = "/v1/tenants/contoso/roleDefinitions/Orders%20Reader";
    let (status, role) = shoal.get(role_path).await;
    assert_eq!(status, 200, "{role}");
    assert_eq!(role["permissions"]["actions"][0], "Shoal/apps/read");

    ws.config(&custom_role(
        r#""Shoal/apps/read", "Shoal/apps/functions/read""#,
    ));
    let plan = ws.plan();
    assert!(
        plan.stdout.contains("0 to add, 1 to change, 0 to destroy"),
        "{}",
        plan.stdout
    );
    ws.apply().ok();
    assert_eq!(
        shoal.get(role_path).await.1["permissions"]["actions"][1],
        "Shoal/apps/functions/read"
    );
    assert_no_changes(&ws);

    ws.run(&["state", "rm", "shoal_role_definition.orders_reader"])
        .ok();
    // Creating it again is refused: it exists and must be imported.
    let run = ws.apply();
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("already exists"), "{}", run.stderr);
    ws.run(&[
        "import",
        "-no-color",
        "shoal_role_definition.orders_reader",
        "/tenants/contoso/roleDefinitions/Orders Reader",
    ])
    .ok();
    assert_no_changes(&ws);

    ws.destroy().ok();
    assert_eq!(shoal.get(role_path).await.0, 404);
}

/// The API answers a PUT of an existing identity or service principal with it (200) and takes
/// no `If-None-Match`, so the provider reads first: a configuration naming ones made outside
/// Terraform is refused with the import hint rather than adopting them (and losing the
/// principal's secret, which only its create returns).
#[tokio::test(flavor = "multi_thread")]
async fn creating_principals_that_exist_is_refused_not_adopted() {
    let shoal = Shoal::start().await;
    shoal.tenant("contoso").await;
    shoal
        .create(
            "/v1/tenants/contoso/identities/uploader",
            serde_json::json!({}),
        )
        .await;
    shoal
        .create(
            "/v1/tenants/contoso/servicePrincipals/pipeline",
            serde_json::json!({}),
        )
        .await;
    let ws = Workspace::new(&shoal);
    ws.config(
        r#"
resource "shoal_user_assigned_identity" "uploader" {
  tenant = "contoso"
  name   = "uploader"
}

resource "shoal_service_principal" "pipeline" {
  tenant = "contoso"
  name   = "pipeline"
}
"#,
    );
    let run = ws.apply();
    assert_ne!(run.code, 0, "{}", run.stdout);
    for what in [
        "/tenants/contoso/identities/uploader",
        "/tenants/contoso/servicePrincipals/pipeline",
    ] {
        assert!(
            run.stderr.contains(&format!("{what} already exists")),
            "{what}: {}",
            run.stderr
        );
    }
    assert!(run.stderr.contains("terraform import"), "{}", run.stderr);
    let state = ws.run(&["state", "list"]);
    assert!(
        state.stdout.trim().is_empty(),
        "nothing adopted: {}",
        state.stdout
    );
}
