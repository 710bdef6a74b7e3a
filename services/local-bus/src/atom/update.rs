//! `PUT` on the ATOM API: create an entity, or update one with `If-Match: *`, from the entity
//! description `ServiceBusAdministrationClient` sends (`create_queue`, `update_queue`, ... in
//! `azure-sdk-for-python` `servicebus/management/_management_client.py`). Settings are
//! validated as the configuration file's are (`crate::config::settings_from_description`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};

use crate::config::{self, EntitySettings};
use crate::sas::normalize_path;
use crate::store::{Entity, EntityKind, Store, Topic};

/// What a PUT did.
#[derive(Debug, PartialEq, Eq)]
pub enum Upsert {
    Created,
    Updated,
}

/// Why a PUT was refused: (HTTP status, detail).
pub type Refusal = (u16, String);

/// Applies a PUT of `body` to `path` (`queue`, `topic`, `topic/subscriptions/sub`).
pub fn put(
    store: &mut Store,
    path: &str,
    body: &str,
    if_match: bool,
    basic_tier: bool,
    now: DateTime<Utc>,
) -> Result<Upsert, Refusal> {
    let kind = [
        "QueueDescription",
        "TopicDescription",
        "SubscriptionDescription",
    ]
    .into_iter()
    .find(|k| body.contains(k))
    .ok_or((
        400,
        "The body carries no QueueDescription, TopicDescription or SubscriptionDescription."
            .to_owned(),
    ))?;
    let fields = leaf_elements(body);
    let settings = config::settings_from_description(kind, &fields, basic_tier)
        .map_err(|e| (400, e.to_string()))?;
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    match (kind, segments.as_slice()) {
        ("QueueDescription", [name]) => {
            upsert_entity(store, name, EntityKind::Queue, settings, if_match, now)
        }
        ("TopicDescription", [name]) => {
            if basic_tier {
                return Err((400, "The Basic tier has no topics.".to_owned()));
            }
            upsert_topic(store, name, settings, if_match, now)
        }
        ("SubscriptionDescription", [topic, subscriptions, name])
            if subscriptions.eq_ignore_ascii_case("subscriptions") =>
        {
            let topic_path = normalize_path(topic);
            let Some(topic_state) = store.topics.get(&topic_path) else {
                return Err((404, format!("The topic '{topic}' does not exist.")));
            };
            let mut settings = settings;
            settings.default_ttl = shoal_domain::service_bus_entity::expiry::effective_ttl(
                settings.default_ttl,
                topic_state.settings.default_ttl,
            );
            let full = format!("{}/Subscriptions/{name}", topic_state.name);
            let created = upsert_entity(
                store,
                &full,
                EntityKind::Subscription {
                    topic: topic_path.clone(),
                },
                settings,
                if_match,
                now,
            )?;
            let sub_path = normalize_path(&full);
            if let Some(topic_state) = store.topics.get_mut(&topic_path)
                && !topic_state.subscriptions.contains(&sub_path)
            {
                topic_state.subscriptions.push(sub_path);
            }
            Ok(created)
        }
        _ => Err((400, format!("A {kind} cannot be put at '{path}'."))),
    }
}

fn check_name(name: &str) -> Result<(), Refusal> {
    let ok = !name.is_empty()
        && name.len() <= 260
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'));
    if ok {
        Ok(())
    } else {
        Err((
            400,
            format!("The entity name '{name}' must be 1–260 letters, digits, '.', '-' or '_'."),
        ))
    }
}

fn upsert_entity(
    store: &mut Store,
    name: &str,
    kind: EntityKind,
    settings: EntitySettings,
    if_match: bool,
    now: DateTime<Utc>,
) -> Result<Upsert, Refusal> {
    let path = normalize_path(name);
    if kind == EntityKind::Queue && store.topics.contains_key(&path) {
        return Err((409, format!("A topic named '{name}' already exists.")));
    }
    match store.entities.get_mut(&path) {
        Some(entity) if if_match => {
            if entity.settings.requires_session != settings.requires_session {
                return Err((
                    400,
                    "RequiresSession cannot be changed on an existing entity.".to_owned(),
                ));
            }
            entity.settings = settings;
            entity.updated_at = now;
            Ok(Upsert::Updated)
        }
        Some(_) => Err((
            409,
            format!("The messaging entity '{name}' already exists."),
        )),
        None if if_match => Err((
            404,
            format!("The messaging entity '{name}' could not be found."),
        )),
        None => {
            if let EntityKind::Queue = kind {
                check_name(name)?;
            } else {
                check_name(name.rsplit('/').next().unwrap_or(name))?;
            }
            store
                .entities
                .insert(path, Entity::new(name.to_owned(), kind, settings, now));
            Ok(Upsert::Created)
        }
    }
}

fn upsert_topic(
    store: &mut Store,
    name: &str,
    settings: EntitySettings,
    if_match: bool,
    now: DateTime<Utc>,
) -> Result<Upsert, Refusal> {
    let path = normalize_path(name);
    if store.entities.contains_key(&path) {
        return Err((409, format!("A queue named '{name}' already exists.")));
    }
    match store.topics.get_mut(&path) {
        Some(topic) if if_match => {
            topic.settings = settings;
            topic.updated_at = now;
            Ok(Upsert::Updated)
        }
        Some(_) => Err((
            409,
            format!("The messaging entity '{name}' already exists."),
        )),
        None if if_match => Err((
            404,
            format!("The messaging entity '{name}' could not be found."),
        )),
        None => {
            check_name(name)?;
            store.topics.insert(
                path,
                Topic {
                    name: name.to_owned(),
                    settings,
                    subscriptions: Vec::new(),
                    created_at: now,
                    updated_at: now,
                    accessed_at: now,
                },
            );
            Ok(Upsert::Created)
        }
    }
}

/// Every element that holds only text, by local name (namespace prefixes dropped): the
/// descriptions are flat, which is all this needs.
pub fn leaf_elements(xml: &str) -> HashMap<String, String> {
    let mut fields = HashMap::new();
    let mut rest = xml;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        if rest.starts_with(['/', '?', '!']) {
            continue;
        }
        let Some(end) = rest.find('>') else { break };
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if tag.ends_with('/') {
            continue;
        }
        let Some(name) = tag.split_whitespace().next() else {
            continue;
        };
        let Some(close) = rest.find('<') else { break };
        if rest[close..].starts_with(&format!("</{name}>")) {
            let local = name.rsplit(':').next().unwrap_or(name);
            fields.insert(local.to_owned(), unescape(rest[..close].trim()));
        }
    }
    fields
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_elements_read_prefixed_and_plain_descriptions() {
        let xml = r#"<?xml version='1.0'?><entry xmlns="http://www.w3.org/2005/Atom"><content type="application/xml"><ns0:QueueDescription xmlns:ns0="x"><ns0:LockDuration>PT30S</ns0:LockDuration><ns0:MaxDeliveryCount>3</ns0:MaxDeliveryCount><ns0:AuthorizationRules /><ns0:UserMetadata>a &amp; b</ns0:UserMetadata></ns0:QueueDescription></content></entry>"#;
        let fields = leaf_elements(xml);
        assert_eq!(
            fields.get("LockDuration").map(String::as_str),
            Some("PT30S")
        );
        assert_eq!(
            fields.get("MaxDeliveryCount").map(String::as_str),
            Some("3")
        );
        assert_eq!(
            fields.get("UserMetadata").map(String::as_str),
            Some("a & b")
        );
        assert!(!fields.contains_key("AuthorizationRules"));
    }

    #[test]
    fn put_creates_updates_and_refuses() {
        let now = Utc::now();
        let mut store = Store::default();
        let queue = |body: &str| {
            format!("<entry><content><QueueDescription>{body}</QueueDescription></content></entry>")
        };
        assert_eq!(
            put(
                &mut store,
                "/jobs",
                &queue("<LockDuration>PT30S</LockDuration>"),
                false,
                false,
                now
            ),
            Ok(Upsert::Created)
        );
        assert_eq!(
            store.entities["jobs"].settings.lock_duration,
            std::time::Duration::from_secs(30)
        );
        assert_eq!(
            put(&mut store, "/jobs", &queue(""), false, false, now).map_err(|e| e.0),
            Err(409)
        );
        assert_eq!(
            put(
                &mut store,
                "/jobs",
                &queue("<MaxDeliveryCount>4</MaxDeliveryCount>"),
                true,
                false,
                now
            ),
            Ok(Upsert::Updated)
        );
        assert_eq!(store.entities["jobs"].settings.max_delivery_count, 4);
        assert_eq!(
            put(&mut store, "/other", &queue(""), true, false, now).map_err(|e| e.0),
            Err(404)
        );
        let refused = put(
            &mut store,
            "/jobs",
            &queue("<AutoDeleteOnIdle>PT1M</AutoDeleteOnIdle>"),
            true,
            false,
            now,
        );
        assert!(
            matches!(&refused, Err((400, detail)) if detail.contains("AutoDeleteOnIdle")),
            "{refused:?}"
        );
        let topic = "<entry><content><TopicDescription><DefaultMessageTimeToLive>PT10M</DefaultMessageTimeToLive></TopicDescription></content></entry>";
        assert_eq!(
            put(&mut store, "/news", topic, false, false, now),
            Ok(Upsert::Created)
        );
        assert_eq!(
            put(&mut store, "/news", topic, false, true, now).map_err(|e| e.0),
            Err(400),
            "no topics on Basic"
        );
        let sub = "<entry><content><SubscriptionDescription><DefaultMessageTimeToLive>PT1H</DefaultMessageTimeToLive></SubscriptionDescription></content></entry>";
        assert_eq!(
            put(&mut store, "/news/subscriptions/s1", sub, false, false, now),
            Ok(Upsert::Created)
        );
        assert_eq!(
            store.entities["news/subscriptions/s1"].settings.default_ttl,
            Some(std::time::Duration::from_secs(600))
        );
        assert_eq!(
            store.topics["news"].subscriptions,
            ["news/subscriptions/s1"]
        );
    }
}
