//! Role-based access control the way Azure does it, as pure functions.
//!
//! * `scope`: where an assignment applies — `/`, a tenant, an app or a function — and which
//!   scopes cover which (strictly by segment, never by string prefix).
//! * `pattern`: Azure's operation-string matching (`*`, `*/read`, `Shoal/apps/*`).
//! * `actions`: the catalog of operations the API checks.
//! * `definition`: role definitions, the built-in roles, and parsing a tenant's custom role.
//! * `evaluate`: the decision for one operation at one scope from a principal's assignments:
//!   allowed (and by which assignment), denied (403) or hidden (404, so a tenant the caller
//!   has no access to cannot be discovered).
//!
//! Nothing here reads the database: the API loads a principal's assignments and their role
//! definitions, and the decision is a function of them alone, so it is tested exhaustively
//! here with tables and properties.

pub mod actions;
pub mod built_in;
pub mod definition;
pub mod evaluate;
pub mod pattern;
pub mod scope;

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;

pub use actions::Operation;
pub use built_in::{CONTRIBUTOR_ID, FUNCTION_INVOKER_ID, OWNER_ID, READER_ID, built_in_roles};
pub use definition::{
    CustomRole, Permissions, RoleDefinition, is_built_in_name, parse_custom_role,
};
pub use evaluate::{Decision, Grant, evaluate};
pub use pattern::matches;
pub use scope::{Scope, ScopeError};
