//! What every binding says the same way: its direction, its `dataType` and a trigger's
//! `cardinality` (each kind's own properties are its module's in `crate::binding_kinds`).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Data flow of a binding, as `function.json` spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    In,
    Out,
    InOut,
}

pub use crate::binding_kinds::{Cardinality, DataType};
