//! The API's part of each trigger kind in `shoal_domain::binding_kinds`: sending a test
//! message to its source, and reading and replaying its failed messages. The send and poison
//! routes find a kind here by its trigger's `type`; a kind with no entry answers 409. Adding a
//! kind's routes is a module here and a line in [`KINDS`].
//!
//! A kind answers in plain shapes ([`Sent`], [`FailedMessages`], [`Replayed`]) that the routes
//! turn into their documents, so this module depends on none of them.

mod rabbitmq;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use shoal_domain::binding_kinds::{BrokerSource, KindBinding};
use shoal_domain::send_message::SendRequest;

use crate::error::ApiError;
use crate::routes::trigger_source::FunctionContext;

/// Every kind with routes, one line each.
static KINDS: &[&dyn KindRoutes] = &[&rabbitmq::RABBITMQ];

/// The routes of the kind whose trigger `type` is `type_name`.
pub(crate) fn find(type_name: &str) -> Option<&'static dyn KindRoutes> {
    KINDS.iter().copied().find(|k| k.type_name() == type_name)
}

/// A trigger of a kind, reached as its app: the function's context, its binding and where it
/// reads.
pub(crate) struct Target<'a> {
    pub context: &'a FunctionContext,
    pub binding: &'a KindBinding,
    pub source: &'a BrokerSource,
}

pub(crate) trait KindRoutes: Sync {
    /// The trigger's `type`.
    fn type_name(&self) -> &'static str;

    /// Puts `request` on the trigger's source (checked against what it carries: a 422 names
    /// the field).
    fn send<'a>(
        &'a self,
        target: Target<'a>,
        request: SendRequest,
    ) -> BoxFuture<'a, Result<Sent, ApiError>>;

    /// The failed messages' depth and the oldest `top`, with their bodies when `with_bodies`;
    /// nothing is taken from where they are.
    fn failed<'a>(
        &'a self,
        target: Target<'a>,
        top: u8,
        with_bodies: bool,
    ) -> BoxFuture<'a, Result<FailedMessages, ApiError>>;

    /// Moves up to `limit` failed messages (only those in `ids`, when given) back to the
    /// trigger's source, each as a new message with its body intact.
    fn replay<'a>(
        &'a self,
        target: Target<'a>,
        ids: Option<&'a [String]>,
        limit: u32,
    ) -> BoxFuture<'a, Result<Replayed, ApiError>>;
}

/// What a send put where.
pub(crate) struct Sent {
    pub destination: String,
    pub message_id: Option<String>,
    pub size: u64,
}

/// Where a kind's failed messages are, and the oldest of them.
pub(crate) struct FailedMessages {
    pub source: String,
    pub failed: String,
    pub count: u64,
    pub messages: Vec<FailedMessage>,
}

pub(crate) struct FailedMessage {
    pub message_id: String,
    pub failed_at: DateTime<Utc>,
    pub failures: u32,
    pub reason: Option<String>,
    pub body: Option<String>,
}

/// What a replay moved, and which named messages it did not find.
pub(crate) struct Replayed {
    pub moved: Vec<String>,
    pub not_found: Vec<String>,
}
