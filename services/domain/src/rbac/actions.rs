//! The operations Shoal checks, named the way Azure names resource-provider operations:
//! `Shoal/{resource}/{verb}`, with `…/action` for anything that is not read, write or delete.
//!
//! Reading secret material is an `…/list/action` or `…/action` rather than `…/read` on
//! purpose: Azure's Reader role is `*/read`, and this keeps app settings, signing secrets and
//! the identity endpoint out of its reach. Data actions (invoking a function) are checked
//! against `dataActions` only, so control-plane roles do not carry them by accident.

pub const TENANTS_READ: &str = "Shoal/tenants/read";
pub const TENANTS_WRITE: &str = "Shoal/tenants/write";
pub const TENANTS_DELETE: &str = "Shoal/tenants/delete";

pub const APPS_READ: &str = "Shoal/apps/read";
pub const APPS_WRITE: &str = "Shoal/apps/write";
pub const APPS_DELETE: &str = "Shoal/apps/delete";
/// Read app settings with their secret values.
pub const APP_SETTINGS_LIST: &str = "Shoal/apps/settings/list/action";
/// Read the app's webhook signing secret.
pub const APP_SIGNING_SECRET_READ: &str = "Shoal/apps/signingSecret/list/action";
pub const APP_SIGNING_SECRET_REGENERATE: &str = "Shoal/apps/signingSecret/regenerate/action";
/// Read the managed-identity endpoint and header secret the app's handler uses for tokens.
pub const APP_IDENTITY_ENDPOINT_LIST: &str = "Shoal/apps/identityEndpoint/list/action";
pub const APP_SCALE_READ: &str = "Shoal/apps/scale/read";
pub const APP_DIAGNOSTICS_READ: &str = "Shoal/apps/diagnostics/read";

pub const FUNCTIONS_READ: &str = "Shoal/apps/functions/read";
pub const FUNCTIONS_WRITE: &str = "Shoal/apps/functions/write";
pub const FUNCTIONS_DELETE: &str = "Shoal/apps/functions/delete";
/// Open a function's circuit breaker by hand (its listeners pause) and close it again.
pub const FUNCTIONS_PAUSE: &str = "Shoal/apps/functions/pause/action";
pub const FUNCTIONS_RESUME: &str = "Shoal/apps/functions/resume/action";
/// The depth and oldest messages of a function's poison queue (bodies only with
/// [`APP_SETTINGS_LIST`]), and moving them back to the trigger queue.
pub const FUNCTIONS_POISON_READ: &str = "Shoal/apps/functions/poison/read";
pub const FUNCTIONS_POISON_REPLAY: &str = "Shoal/apps/functions/poison/replay/action";
/// Put a test message on a function's trigger queue or topic (`POST …/functions/{f}/send`).
/// A control-plane action, not a data action like [`FUNCTIONS_INVOKE`]: it is how the people
/// who build the app try it (Contributor's `*` has it, Reader's `*/read` does not), and it
/// writes to the tenant's own broker as the app rather than calling the handler.
pub const FUNCTIONS_SEND: &str = "Shoal/apps/functions/send/action";

pub const IDENTITIES_READ: &str = "Shoal/identities/read";
pub const IDENTITIES_WRITE: &str = "Shoal/identities/write";
pub const IDENTITIES_DELETE: &str = "Shoal/identities/delete";

pub const SERVICE_PRINCIPALS_READ: &str = "Shoal/servicePrincipals/read";
pub const SERVICE_PRINCIPALS_WRITE: &str = "Shoal/servicePrincipals/write";
pub const SERVICE_PRINCIPALS_DELETE: &str = "Shoal/servicePrincipals/delete";
/// Create or reset a service principal's client secret.
pub const SERVICE_PRINCIPAL_SECRETS_ACTION: &str = "Shoal/servicePrincipals/secrets/action";

pub const USERS_READ: &str = "Shoal/users/read";
pub const USERS_WRITE: &str = "Shoal/users/write";
pub const USERS_DELETE: &str = "Shoal/users/delete";

pub const ROLE_DEFINITIONS_READ: &str = "Shoal/roleDefinitions/read";
pub const ROLE_DEFINITIONS_WRITE: &str = "Shoal/roleDefinitions/write";
pub const ROLE_DEFINITIONS_DELETE: &str = "Shoal/roleDefinitions/delete";

pub const ROLE_ASSIGNMENTS_READ: &str = "Shoal/roleAssignments/read";
pub const ROLE_ASSIGNMENTS_WRITE: &str = "Shoal/roleAssignments/write";
pub const ROLE_ASSIGNMENTS_DELETE: &str = "Shoal/roleAssignments/delete";

pub const AUDIT_LOG_READ: &str = "Shoal/auditLog/read";
pub const WORKERS_READ: &str = "Shoal/workers/read";
pub const SIGNING_KEYS_ROTATE: &str = "Shoal/signingKeys/rotate/action";

/// Data action: invoke a function through the webhook ingress.
pub const FUNCTIONS_INVOKE: &str = "Shoal/apps/functions/invoke/action";

/// Every operation in the catalog, control-plane actions and data actions alike.
pub const ALL: &[&str] = &[
    TENANTS_READ,
    TENANTS_WRITE,
    TENANTS_DELETE,
    APPS_READ,
    APPS_WRITE,
    APPS_DELETE,
    APP_SETTINGS_LIST,
    APP_SIGNING_SECRET_READ,
    APP_SIGNING_SECRET_REGENERATE,
    APP_IDENTITY_ENDPOINT_LIST,
    APP_SCALE_READ,
    APP_DIAGNOSTICS_READ,
    FUNCTIONS_READ,
    FUNCTIONS_WRITE,
    FUNCTIONS_DELETE,
    FUNCTIONS_PAUSE,
    FUNCTIONS_RESUME,
    FUNCTIONS_POISON_READ,
    FUNCTIONS_POISON_REPLAY,
    FUNCTIONS_SEND,
    IDENTITIES_READ,
    IDENTITIES_WRITE,
    IDENTITIES_DELETE,
    SERVICE_PRINCIPALS_READ,
    SERVICE_PRINCIPALS_WRITE,
    SERVICE_PRINCIPALS_DELETE,
    SERVICE_PRINCIPAL_SECRETS_ACTION,
    USERS_READ,
    USERS_WRITE,
    USERS_DELETE,
    ROLE_DEFINITIONS_READ,
    ROLE_DEFINITIONS_WRITE,
    ROLE_DEFINITIONS_DELETE,
    ROLE_ASSIGNMENTS_READ,
    ROLE_ASSIGNMENTS_WRITE,
    ROLE_ASSIGNMENTS_DELETE,
    AUDIT_LOG_READ,
    WORKERS_READ,
    SIGNING_KEYS_ROTATE,
    FUNCTIONS_INVOKE,
];

/// The data actions: granted only through `dataActions`.
pub const DATA: &[&str] = &[FUNCTIONS_INVOKE];

/// Whether `operation` is one of the catalog's data actions (compared case-insensitively,
/// like every operation string).
pub fn is_data_action(operation: &str) -> bool {
    DATA.iter().any(|d| d.eq_ignore_ascii_case(operation))
}

/// The catalog's control-plane actions: [`ALL`] without [`DATA`].
pub fn control_actions() -> impl Iterator<Item = &'static str> {
    ALL.iter().copied().filter(|op| !is_data_action(op))
}

/// What is being attempted. Data actions are checked against `dataActions` only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation<'a> {
    Action(&'a str),
    DataAction(&'a str),
}
