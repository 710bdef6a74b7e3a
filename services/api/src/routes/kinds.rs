//! The API's part of each trigger kind in `shoal_domain::binding_kinds`: sending a test
//! message to its source, reading and replaying its failed messages, and looking at its
//! source live for diagnostics. The send, poison and diagnostics routes find a kind here by
//! its trigger's `type`; a kind with no entry answers 409 (diagnostics: checks nothing live).
//! Adding a kind's routes is a module here and a line in [`KINDS`].
//!
//! A kind answers in plain shapes ([`Sent`], [`FailedMessages`], [`Replayed`]) that the routes
//! turn into their documents, so this module depends on none of them.

mod rabbitmq;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use shoal_domain::binding_kinds::{BrokerSource, KindBinding};
use shoal_domain::diagnostics::Check;
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

    /// What `function`'s trigger source looks like on the broker, as diagnostics checks
    /// (bounded in time: a broker that does not answer is reported, never waited on).
    fn probe<'a>(&'a self, function: &'a str, target: Target<'a>) -> BoxFuture<'a, Vec<Check>>;
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

/// The failed messages a replay was asked for (`messageIds`), each marked once found; without
/// ids, every message is wanted. Every kind's replay, built-in or of the table, selects with it.
pub(crate) struct Wanted<'a>(Option<BTreeMap<&'a str, bool>>);

impl<'a> Wanted<'a> {
    pub fn new(ids: Option<&'a [String]>) -> Wanted<'a> {
        Wanted(ids.map(|ids| ids.iter().map(|id| (id.as_str(), false)).collect()))
    }

    /// Whether the message `id` is wanted (marking it found).
    pub fn take(&mut self, id: &str) -> bool {
        match &mut self.0 {
            None => true,
            Some(ids) => ids.get_mut(id).map(|found| *found = true).is_some(),
        }
    }

    /// Whether every id asked for has been found: nothing more to look for (never so when no
    /// ids were named).
    pub fn all_found(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|ids| ids.values().all(|found| *found))
    }

    /// The ids asked for and not found, in order.
    pub fn not_found(self) -> Vec<String> {
        self.0
            .map(|ids| {
                ids.into_iter()
                    .filter(|(_, found)| !found)
                    .map(|(id, _)| id.to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::Wanted;

    #[test]
    fn named_ids_are_taken_once_found_and_the_rest_reported() {
        let ids = ["b".to_owned(), "a".to_owned()];
        let mut wanted = Wanted::new(Some(&ids));
        assert!(!wanted.take("c"));
        assert!(wanted.take("a"));
        assert!(!wanted.all_found());
        assert_eq!(wanted.not_found(), ["b"]);

        let mut wanted = Wanted::new(Some(&ids));
        assert!(wanted.take("a") && wanted.take("b"));
        assert!(wanted.all_found());

        let mut everything = Wanted::new(None);
        assert!(everything.take("anything"));
        assert!(!everything.all_found());
        assert!(everything.not_found().is_empty());
    }
}
