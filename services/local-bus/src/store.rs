//! The stand-in's state: entities (queues, topics, subscriptions) and their messages. Pure and
//! synchronous — every operation takes `now` — so the rules (locks, delivery counts, expiry,
//! dead-lettering, sessions, scheduling) are tested without a network; the AMQP and ATOM layers
//! hold it behind one mutex.

pub mod entity;
pub mod message;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use fe2o3_amqp::types::messaging::{Body, Message};
use fe2o3_amqp::types::primitives::Value;

use crate::config::{EntitySettings, LocalBusConfig};
use crate::sas::normalize_path;
pub use entity::{Entity, EntityKind, SettleError, SubQueue};
pub use message::StoredMessage;

/// The dead-letter sub-queue's path suffix (`queue/$DeadLetterQueue`).
pub const DEAD_LETTER_SUFFIX: &str = "/$deadletterqueue";

/// A topic: what it fans out to.
#[derive(Debug)]
pub struct Topic {
    pub name: String,
    pub settings: EntitySettings,
    /// Normalized paths of its subscriptions.
    pub subscriptions: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub accessed_at: DateTime<Utc>,
}

/// What an address names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A queue or subscription (normalized path) and which of its sub-queues.
    Entity(String, SubQueue),
    /// A topic (normalized path).
    Topic(String),
}

#[derive(Debug, Default)]
pub struct Store {
    /// Queues and subscriptions by normalized path (`q`, `t/subscriptions/s`).
    pub entities: BTreeMap<String, Entity>,
    pub topics: BTreeMap<String, Topic>,
}

impl Store {
    pub fn new(config: &LocalBusConfig, now: DateTime<Utc>) -> Store {
        let mut store = Store::default();
        for queue in &config.queues {
            store.entities.insert(
                normalize_path(&queue.name),
                Entity::new(
                    queue.name.clone(),
                    EntityKind::Queue,
                    queue.settings.clone(),
                    now,
                ),
            );
        }
        for topic in &config.topics {
            let topic_path = normalize_path(&topic.name);
            let mut subscriptions = Vec::new();
            for sub in &topic.subscriptions {
                let name = format!("{}/Subscriptions/{}", topic.name, sub.name);
                let path = normalize_path(&name);
                store.entities.insert(
                    path.clone(),
                    Entity::new(
                        name,
                        EntityKind::Subscription {
                            topic: topic_path.clone(),
                        },
                        sub.settings.clone(),
                        now,
                    ),
                );
                subscriptions.push(path);
            }
            store.topics.insert(
                topic_path,
                Topic {
                    name: topic.name.clone(),
                    settings: topic.settings.clone(),
                    subscriptions,
                    created_at: now,
                    updated_at: now,
                    accessed_at: now,
                },
            );
        }
        store
    }

    /// Resolves an AMQP address (`q`, `q/$DeadLetterQueue`, `t`, `t/Subscriptions/s`, with or
    /// without an `amqp://host/` prefix).
    pub fn resolve(&self, address: &str) -> Option<Target> {
        let path = crate::sas::audience_path(&if address.contains("://") {
            address.to_owned()
        } else {
            format!("x:///{address}")
        });
        let (path, sub_queue) = match path.strip_suffix(DEAD_LETTER_SUFFIX) {
            Some(base) => (base.to_owned(), SubQueue::DeadLetter),
            None => (path, SubQueue::Main),
        };
        if self.entities.contains_key(&path) {
            return Some(Target::Entity(path, sub_queue));
        }
        if sub_queue == SubQueue::Main && self.topics.contains_key(&path) {
            return Some(Target::Topic(path));
        }
        None
    }

    /// Sends a message to a queue or topic; returns the sequence numbers given (one per copy).
    pub fn send(
        &mut self,
        target: &Target,
        message: Message<Body<Value>>,
        scheduled_for: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Vec<i64> {
        match target {
            Target::Entity(path, SubQueue::Main) => self
                .entities
                .get_mut(path)
                .map(|e| vec![e.enqueue(message, scheduled_for, now)])
                .unwrap_or_default(),
            Target::Entity(_, SubQueue::DeadLetter) => Vec::new(),
            Target::Topic(path) => {
                let Some(topic) = self.topics.get_mut(path) else {
                    return Vec::new();
                };
                topic.accessed_at = now;
                let subscriptions = topic.subscriptions.clone();
                let mut given = Vec::new();
                for sub in &subscriptions {
                    if let Some(entity) = self.entities.get_mut(sub) {
                        given.push(entity.enqueue(message.clone(), scheduled_for, now));
                    }
                }
                given
            }
        }
    }

    /// Applies everything time does (schedules, lock expiry, message expiry, auto-delete on
    /// idle) up to `now`.
    pub fn maintain(&mut self, now: DateTime<Utc>) {
        for entity in self.entities.values_mut() {
            entity.maintain(now);
        }
        self.delete_idle(now);
    }

    /// Deletes entities idle for longer than their `autoDeleteOnIdle` (reference document 001:
    /// a queue with scheduled messages is not idle; a topic is idle only while its
    /// subscriptions are).
    fn delete_idle(&mut self, now: DateTime<Utc>) {
        use shoal_domain::service_bus_entity::expiry::auto_delete_due;
        let idle_entities: Vec<String> = self
            .entities
            .iter()
            .filter(|(_, e)| {
                !e.has_scheduled()
                    && auto_delete_due(e.last_activity(), e.settings.auto_delete_on_idle, now)
            })
            .map(|(path, _)| path.clone())
            .collect();
        for path in idle_entities {
            self.entities.remove(&path);
            for topic in self.topics.values_mut() {
                topic.subscriptions.retain(|s| *s != path);
            }
        }
        let idle_topics: Vec<String> = self
            .topics
            .iter()
            .filter(|(_, t)| {
                let last = t
                    .subscriptions
                    .iter()
                    .filter_map(|s| self.entities.get(s))
                    .map(|e| e.last_activity())
                    .chain([t.accessed_at, t.updated_at])
                    .max()
                    .unwrap_or(t.accessed_at);
                auto_delete_due(last, t.settings.auto_delete_on_idle, now)
            })
            .map(|(path, _)| path.clone())
            .collect();
        for path in idle_topics {
            if let Some(topic) = self.topics.remove(&path) {
                for sub in topic.subscriptions {
                    self.entities.remove(&sub);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
