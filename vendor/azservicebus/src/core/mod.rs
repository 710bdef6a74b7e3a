//! Core trait abstractions and a basic retry policy implementation.

mod basic_retry_policy;
mod recoverable_transport;
mod transport_client;
mod transport_connection_scope;
mod transport_message_batch;
mod transport_receiver;
mod transport_rule_manager;
mod transport_sender;

pub(crate) use recoverable_transport::*;
pub(crate) use transport_client::*;
pub(crate) use transport_connection_scope::*;
pub(crate) use transport_message_batch::*;
pub(crate) use transport_receiver::*;
pub(crate) use transport_rule_manager::*;
pub(crate) use transport_sender::*;

pub use basic_retry_policy::*;
