//! The built-in roles, as the first migration stores them.
//!
//! Owner, Contributor and Reader keep Azure's ids so scripts written against Azure's role ids
//! work unchanged; Function Invoker is Shoal's own. The API falls back to these definitions
//! when it needs a built-in role, and the tests evaluate against them.

use uuid::Uuid;

use super::actions;
use super::definition::{BUILT_IN_NAMES, Permissions, RoleDefinition};
use super::scope::Scope;

pub const OWNER_ID: Uuid = Uuid::from_u128(0x8e3af657_a8ff_443c_a75c_2fe8c4bcb635);
pub const CONTRIBUTOR_ID: Uuid = Uuid::from_u128(0xb24988ac_6180_42a0_ab88_20f7382dd24c);
pub const READER_ID: Uuid = Uuid::from_u128(0xacdd72a7_3385_48ef_bd42_f606fba81ae7);
pub const FUNCTION_INVOKER_ID: Uuid = Uuid::from_u128(0x6d2a8f1c_2b0e_4f55_9f7e_3c1d6b1e9a01);

/// Owner, Contributor, Reader and Function Invoker, each assignable anywhere (`/`).
///
/// Contributor manages everything but cannot hand out access (role assignments and
/// definitions) or read the secrets that would let it act as the app (signing secret,
/// identity endpoint, platform signing keys). Reader's `*/read` leaves out every
/// `…/list/action`, which is where secrets are read.
pub fn built_in_roles() -> Vec<RoleDefinition> {
    let role = |id, name: &str, permissions| RoleDefinition {
        id,
        name: name.to_owned(),
        permissions,
        assignable_scopes: vec![Scope::root()],
        built_in: true,
    };
    let list = |ops: &[&str]| ops.iter().map(|op| (*op).to_owned()).collect::<Vec<_>>();
    vec![
        role(
            OWNER_ID,
            BUILT_IN_NAMES[0],
            Permissions {
                actions: list(&["*"]),
                data_actions: list(&["*"]),
                ..Permissions::default()
            },
        ),
        role(
            CONTRIBUTOR_ID,
            BUILT_IN_NAMES[1],
            Permissions {
                actions: list(&["*"]),
                not_actions: list(&[
                    actions::ROLE_ASSIGNMENTS_WRITE,
                    actions::ROLE_ASSIGNMENTS_DELETE,
                    actions::ROLE_DEFINITIONS_WRITE,
                    actions::ROLE_DEFINITIONS_DELETE,
                    "Shoal/apps/signingSecret/*",
                    "Shoal/apps/identityEndpoint/*",
                    "Shoal/signingKeys/*",
                ]),
                ..Permissions::default()
            },
        ),
        role(
            READER_ID,
            BUILT_IN_NAMES[2],
            Permissions {
                actions: list(&["*/read"]),
                ..Permissions::default()
            },
        ),
        role(
            FUNCTION_INVOKER_ID,
            BUILT_IN_NAMES[3],
            Permissions {
                data_actions: list(&[actions::FUNCTIONS_INVOKE]),
                ..Permissions::default()
            },
        ),
    ]
}
