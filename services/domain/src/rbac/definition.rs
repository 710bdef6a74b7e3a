//! Role definitions: what a role permits and where it may be assigned, and the parser for a
//! tenant's custom roles.
//!
//! A custom role body is checked field by field so one 422 lists every mistake with its path
//! (`permissions.actions[2]`), like the app and function parsers. Read-only fields a client
//! may echo back from a GET (`id`, `builtIn`, `tenant`, timestamps) are accepted and ignored.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::actions::{DATA, Operation, control_actions};
use super::pattern::matches;
use super::scope::Scope;
use crate::names::TenantName;
use crate::validation::{Problems, ValidationError, body_from_json, from_json, join_path};

/// Longest role name, in characters.
pub const MAX_ROLE_NAME_CHARS: usize = 128;
/// Longest role description, in characters.
pub const MAX_ROLE_DESCRIPTION_CHARS: usize = 1024;
/// Longest operation pattern, in characters; the longest real operation is well under half.
pub const MAX_OPERATION_CHARS: usize = 256;

/// What a role permits, in Azure's four lists of operation patterns.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Permissions {
    /// Control-plane operations granted, e.g. `*`, `*/read`, `Shoal/apps/*`.
    #[serde(default)]
    pub actions: Vec<String>,
    /// Taken away from this role's `actions` only; another role can still grant them.
    #[serde(default)]
    pub not_actions: Vec<String>,
    /// Data operations granted, e.g. `Shoal/apps/functions/invoke/action`.
    #[serde(default)]
    pub data_actions: Vec<String>,
    /// Taken away from this role's `dataActions` only.
    #[serde(default)]
    pub not_data_actions: Vec<String>,
}

impl Permissions {
    /// Azure's rule for one role: some grant pattern matches and no exclusion of the same kind
    /// does. `actions` never grant a data action, so `*` in `actions` cannot invoke.
    pub fn allows(&self, operation: Operation<'_>) -> bool {
        let (granted, excluded, op) = match operation {
            Operation::Action(op) => (&self.actions, &self.not_actions, op),
            Operation::DataAction(op) => (&self.data_actions, &self.not_data_actions, op),
        };
        granted.iter().any(|p| matches(p, op)) && !excluded.iter().any(|p| matches(p, op))
    }
}

/// A role as stored: built-in (no tenant, assignable at `/`) or a tenant's custom role.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleDefinition {
    pub id: uuid::Uuid,
    pub name: String,
    pub permissions: Permissions,
    pub assignable_scopes: Vec<Scope>,
    pub built_in: bool,
}

impl RoleDefinition {
    /// Whether the role may be assigned at `scope`: some assignable scope covers it.
    pub fn assignable_at(&self, scope: &Scope) -> bool {
        self.assignable_scopes.iter().any(|s| s.covers(scope))
    }
}

/// A validated custom role as written by a tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomRole {
    pub name: String,
    /// Empty when the body has none (the column is `not null default ''`).
    pub description: String,
    pub permissions: Permissions,
    pub assignable_scopes: Vec<Scope>,
}

impl CustomRole {
    /// The definition to store and evaluate under `id`.
    pub fn into_definition(self, id: uuid::Uuid) -> RoleDefinition {
        RoleDefinition {
            id,
            name: self.name,
            permissions: self.permissions,
            assignable_scopes: self.assignable_scopes,
            built_in: false,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Body {
    name: Option<Value>,
    description: Option<Value>,
    permissions: Option<Value>,
    assignable_scopes: Option<Value>,
    // Read-only fields tolerated so a client can PUT back what it read.
    #[allow(dead_code)]
    id: Option<Value>,
    #[allow(dead_code)]
    built_in: Option<Value>,
    #[allow(dead_code)]
    tenant: Option<Value>,
    #[allow(dead_code)]
    created_at: Option<Value>,
    #[allow(dead_code)]
    updated_at: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PermissionsBody {
    actions: Option<Value>,
    not_actions: Option<Value>,
    data_actions: Option<Value>,
    not_data_actions: Option<Value>,
}

/// The built-in roles' names (`built_in` defines the roles), reserved here so that a custom
/// role cannot take one.
pub(super) const BUILT_IN_NAMES: [&str; 4] = ["Owner", "Contributor", "Reader", "Function Invoker"];

/// Whether `name` is a built-in role's name, ignoring case, so a custom role cannot pass for
/// one in a listing or an assignment by name.
pub fn is_built_in_name(name: &str) -> bool {
    BUILT_IN_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
}

/// Validates a custom role's written body for `tenant`, reporting every problem with its
/// field path. The role may only be assignable inside `tenant`: never at `/`, which would let
/// a tenant's administrator define what applies to other tenants.
pub fn parse_custom_role(body: &Value, tenant: &TenantName) -> Result<CustomRole, ValidationError> {
    let body: Body = body_from_json(body)?;
    let mut problems = Problems::new();

    let name = match body.name.as_ref().filter(|v| !v.is_null()) {
        None => {
            problems.push("name", "is required");
            String::new()
        }
        Some(Value::String(name)) => {
            if let Err(message) = check_role_name(name) {
                problems.push("name", message);
            }
            name.clone()
        }
        Some(_) => {
            problems.push("name", "expected a string");
            String::new()
        }
    };

    let description = match body.description.as_ref().filter(|v| !v.is_null()) {
        None => String::new(),
        Some(Value::String(text)) => {
            if let Err(message) = check_description(text) {
                problems.push("description", message);
            }
            text.clone()
        }
        Some(_) => {
            problems.push("description", "expected a string");
            String::new()
        }
    };

    let permissions = parse_permissions(body.permissions.as_ref(), &mut problems);
    let assignable_scopes =
        parse_assignable_scopes(body.assignable_scopes.as_ref(), tenant, &mut problems);

    problems.finish()?;
    Ok(CustomRole {
        name,
        description,
        permissions,
        assignable_scopes,
    })
}

fn check_role_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("must not be empty".to_owned());
    }
    if name.trim() != name {
        return Err("must not start or end with whitespace".to_owned());
    }
    if name.chars().count() > MAX_ROLE_NAME_CHARS {
        return Err(format!(
            "must be at most {MAX_ROLE_NAME_CHARS} characters long"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err("must not contain control characters".to_owned());
    }
    if is_built_in_name(name) {
        return Err(format!("{name:?} is the name of a built-in role"));
    }
    Ok(())
}

fn check_description(text: &str) -> Result<(), String> {
    if text.chars().count() > MAX_ROLE_DESCRIPTION_CHARS {
        return Err(format!(
            "must be at most {MAX_ROLE_DESCRIPTION_CHARS} characters long"
        ));
    }
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err("must not contain control characters other than line breaks and tabs".into());
    }
    Ok(())
}

fn parse_permissions(value: Option<&Value>, problems: &mut Problems) -> Permissions {
    let body: PermissionsBody = match value {
        None | Some(Value::Null) => {
            problems.push("permissions", "is required");
            return Permissions::default();
        }
        Some(value) if !value.is_object() => {
            problems.push("permissions", "expected an object");
            return Permissions::default();
        }
        Some(value) => match from_json(value.clone(), "permissions") {
            Ok(body) => body,
            Err(e) => {
                problems.absorb(e);
                return Permissions::default();
            }
        },
    };
    let permissions = Permissions {
        actions: operations(body.actions.as_ref(), "actions", false, problems),
        not_actions: operations(body.not_actions.as_ref(), "notActions", false, problems),
        data_actions: operations(body.data_actions.as_ref(), "dataActions", true, problems),
        not_data_actions: operations(
            body.not_data_actions.as_ref(),
            "notDataActions",
            true,
            problems,
        ),
    };
    // Judged on what was written, so a list whose only entry was refused is not reported twice.
    if unwritten(body.actions.as_ref()) && unwritten(body.data_actions.as_ref()) {
        problems.push(
            "permissions",
            "must grant something: list at least one operation in actions or dataActions",
        );
    }
    permissions
}

fn unwritten(list: Option<&Value>) -> bool {
    match list {
        None | Some(Value::Null) => true,
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    }
}

/// One of the four lists; entries with problems are reported and left out.
fn operations(
    value: Option<&Value>,
    field: &str,
    data: bool,
    problems: &mut Problems,
) -> Vec<String> {
    let path = join_path("permissions", field);
    let items = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.push(path, "expected an array of operation strings");
            return Vec::new();
        }
    };
    let mut kept = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = join_path(&path, &format!("[{i}]"));
        match item {
            Value::String(op) => match check_operation(op, data) {
                Ok(()) => kept.push(op.clone()),
                Err(message) => problems.push(at, message),
            },
            _ => problems.push(at, "expected a string"),
        }
    }
    kept
}

/// An operation pattern is `Shoal/…` or a wildcard form (`*`, `*/read`), ASCII, without
/// whitespace; data patterns must name a data operation and control patterns must not name
/// only data operations, since Azure would silently never apply them.
fn check_operation(op: &str, data: bool) -> Result<(), String> {
    if op.is_empty() {
        return Err("must not be empty".to_owned());
    }
    if !op.is_ascii() {
        return Err("may contain only ASCII characters".to_owned());
    }
    if op
        .chars()
        .any(|c| c.is_ascii_whitespace() || c.is_ascii_control())
    {
        return Err("must not contain whitespace".to_owned());
    }
    if op.len() > MAX_OPERATION_CHARS {
        return Err(format!(
            "must be at most {MAX_OPERATION_CHARS} characters long"
        ));
    }
    let provider = op
        .get(..6)
        .is_some_and(|p| p.eq_ignore_ascii_case("Shoal/"));
    if !(op == "*" || op.starts_with("*/") || provider) {
        return Err(
            "must start with \"Shoal/\" or be a wildcard such as \"*\" or \"*/read\"".to_owned(),
        );
    }
    if op.ends_with('/') || op.contains("//") {
        return Err("must not contain an empty segment".to_owned());
    }
    let names_data = DATA.iter().any(|d| matches(op, d));
    if data && !names_data {
        return Err(format!(
            "is not a data action; dataActions may only name {} or a wildcard that covers it",
            DATA.join(", ")
        ));
    }
    if !data && names_data && !control_actions().any(|c| matches(op, c)) {
        return Err("is a data action; list it in dataActions".to_owned());
    }
    Ok(())
}

fn parse_assignable_scopes(
    value: Option<&Value>,
    tenant: &TenantName,
    problems: &mut Problems,
) -> Vec<Scope> {
    let items = match value {
        None | Some(Value::Null) => {
            problems.push("assignableScopes", "is required");
            return Vec::new();
        }
        Some(Value::Array(items)) => items,
        Some(_) => {
            problems.push("assignableScopes", "expected an array of scopes");
            return Vec::new();
        }
    };
    if items.is_empty() {
        problems.push(
            "assignableScopes",
            format!("must list at least one scope, e.g. \"/tenants/{tenant}\""),
        );
    }
    let mut scopes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("assignableScopes[{i}]");
        let Value::String(text) = item else {
            problems.push(at, "expected a string");
            continue;
        };
        match Scope::parse(text) {
            Err(e) => problems.push(at, e.message()),
            Ok(scope) if scope.is_root() => problems.push(
                at,
                format!("a custom role cannot be assignable at \"/\"; use \"/tenants/{tenant}\" or a scope below it"),
            ),
            Ok(scope) if scope.tenant_name() != Some(tenant) => problems.push(
                at,
                format!("must lie within this tenant (\"/tenants/{tenant}\" or a scope below it)"),
            ),
            Ok(scope) => scopes.push(scope),
        }
    }
    scopes
}
