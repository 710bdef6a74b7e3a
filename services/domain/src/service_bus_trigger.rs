//! What the Service Bus trigger hands a handler and reads back from it, without I/O:
//!
//! * [`entity`]: which queue or topic subscription a trigger listens to (`%setting%` names
//!   resolved) and which queue or topic an output binding sends to;
//! * [`metadata`]: the request body — the message (or, batched, the messages) in `Data` and
//!   the binding data Azure Functions passes in `Metadata` (`DeliveryCount`, `LockToken`, …,
//!   and the `…Array` forms when batched);
//! * [`settlement`]: what the handler may ask to be done with a message instead of the
//!   automatic complete (`deadLetter` with reason and description, `abandon`, `defer`,
//!   `complete`), per message for batches — the custom-handler counterpart of Azure's
//!   `ServiceBusMessageActions` — and what the trigger does after an invocation;
//! * [`output`]: the messages a `serviceBus` output binding's value stands for, with their
//!   properties;
//! * [`parked`]: a message re-sent as a scheduled copy for a far-off retry, and read back.

pub mod metadata;
pub mod output;
pub mod parked;
pub mod settlement;

/// Which entity a trigger listens to and an output sends to: the Service Bus kinds' own (see
/// `crate::binding_kinds::service_bus`).
pub mod entity {
    pub use crate::binding_kinds::service_bus::entity::*;
}

pub use entity::{EntityPath, check_output_entity, output_entity, trigger_entity};
pub use metadata::{InvocationContext, ReceivedMessage, batch_payload, single_payload};
pub use output::{OutgoingMessage, OutputError, service_bus_output_messages};
pub use settlement::{
    AfterInvocation, Settlement, SettlementError, after_invocation, lock_renewal_delay,
    requested_settlements,
};
