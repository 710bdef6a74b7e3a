//! The management API's ATOM entries: just enough XML to read an entity description and write
//! it back with some settings changed.
//!
//! A `GET https://<namespace>/<entity>?api-version=2021-05` answers an `<entry>` whose
//! `<content>` holds a `QueueDescription` or `SubscriptionDescription` (for a missing entity
//! Service Bus answers 200 with an empty `<feed>`; `QueuePropertiesExtensions.ParseResponseAsync`
//! in `Azure.Messaging.ServiceBus/src/Administration` treats that as not found, and so does
//! [`parse_entry`]). The runtime counts sit in `CountDetails`, whose children carry a prefix
//! (`d2p1:ActiveMessageCount`), so names are compared without prefixes.
//!
//! An update is a `PUT` of the whole description (`QueuePropertiesExtensions.Serialize`,
//! `SubscriptionPropertiesExtensions.Serialize`): [`updated_entry`] keeps every element the
//! service sent, in its order, drops the read-only ones the SDK drops, and replaces or inserts
//! the settings Shoal manages at the position the SDK writes them. The elements are written in
//! the service's data-contract order because the service reads them in that order.

use std::time::Duration;

use shoal_domain::service_bus_entity::settings::{
    LiveEntitySettings, TIMESPAN_MAX, parse_iso8601, to_iso8601,
};

const ATOM_NS: &str = "http://www.w3.org/2005/Atom";
const SERVICE_BUS_NS: &str = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect";
const XSI_NS: &str = "http://www.w3.org/2001/XMLSchema-instance";

/// One element of a fragment: its local name, the whole element and its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Element<'a> {
    name: &'a str,
    raw: &'a str,
    inner: &'a str,
}

/// The top-level elements of `xml`, skipping text, comments, processing instructions and
/// declarations. `Err` for text that is not well-formed enough to walk.
fn children(xml: &str) -> Result<Vec<Element<'_>>, String> {
    let malformed = || "the management API answered malformed XML".to_owned();
    let mut out = Vec::new();
    // Names of the open elements, innermost last; end tags must match them.
    let mut stack: Vec<&str> = Vec::new();
    let mut open: Option<(usize, usize, &str)> = None; // (element start, content start, name)
    let mut at = 0;
    while let Some(found) = xml[at..].find('<') {
        let start = at + found;
        let rest = &xml[start..];
        let skip_to = |end: &str| rest.find(end).map(|i| start + i + end.len());
        if rest.starts_with("<?") {
            at = skip_to("?>").ok_or_else(malformed)?;
        } else if rest.starts_with("<!--") {
            at = skip_to("-->").ok_or_else(malformed)?;
        } else if rest.starts_with("<![CDATA[") {
            at = skip_to("]]>").ok_or_else(malformed)?;
        } else if rest.starts_with("<!") {
            at = skip_to(">").ok_or_else(malformed)?;
        } else if rest.starts_with("</") {
            let end = skip_to(">").ok_or_else(malformed)?;
            let closing = xml[start + 2..end - 1].trim();
            if stack.pop() != Some(closing) {
                return Err(malformed());
            }
            if stack.is_empty() {
                let (el_start, content_start, name) = open.take().ok_or_else(malformed)?;
                out.push(Element {
                    name,
                    raw: &xml[el_start..end],
                    inner: &xml[content_start..start],
                });
            }
            at = end;
        } else {
            // A start tag; '>' inside a quoted attribute value does not end it.
            let mut quote = None;
            let mut end = None;
            for (i, c) in rest.char_indices().skip(1) {
                match (quote, c) {
                    (Some(q), c) if c == q => quote = None,
                    (Some(_), _) => {}
                    (None, '"' | '\'') => quote = Some(c),
                    (None, '>') => {
                        end = Some(i);
                        break;
                    }
                    _ => {}
                }
            }
            let end = end.ok_or_else(malformed)?;
            let tag = &rest[1..end];
            let self_closing = tag.ends_with('/');
            let qualified = tag
                .split(|c: char| c.is_whitespace() || c == '/')
                .next()
                .filter(|n| !n.is_empty())
                .ok_or_else(malformed)?;
            let name = qualified.rsplit(':').next().unwrap_or(qualified);
            let after = start + end + 1;
            if stack.is_empty() {
                if self_closing {
                    out.push(Element {
                        name,
                        raw: &xml[start..after],
                        inner: "",
                    });
                } else {
                    open = Some((start, after, name));
                }
            }
            if !self_closing {
                stack.push(qualified);
            }
            at = after;
        }
    }
    if !stack.is_empty() {
        return Err(malformed());
    }
    Ok(out)
}

fn child<'a>(elements: &[Element<'a>], name: &str) -> Option<Element<'a>> {
    elements.iter().find(|e| e.name == name).copied()
}

fn unescape(text: &str) -> String {
    text.trim()
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Which description an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DescriptionKind {
    Queue,
    Subscription,
}

impl DescriptionKind {
    fn element(self) -> &'static str {
        match self {
            DescriptionKind::Queue => "QueueDescription",
            DescriptionKind::Subscription => "SubscriptionDescription",
        }
    }

    /// The order the SDK serializes settable elements in (and the service reads them in).
    fn order(self) -> &'static [&'static str] {
        match self {
            DescriptionKind::Queue => &[
                "LockDuration",
                "MaxSizeInMegabytes",
                "RequiresDuplicateDetection",
                "RequiresSession",
                "DefaultMessageTimeToLive",
                "DeadLetteringOnMessageExpiration",
                "DuplicateDetectionHistoryTimeWindow",
                "MaxDeliveryCount",
                "EnableBatchedOperations",
                "IsAnonymousAccessible",
                "AuthorizationRules",
                "Status",
                "ForwardTo",
                "UserMetadata",
                "SupportOrdering",
                "AutoDeleteOnIdle",
                "EnablePartitioning",
                "ForwardDeadLetteredMessagesTo",
                "EnableExpress",
                "MaxMessageSizeInKilobytes",
            ],
            DescriptionKind::Subscription => &[
                "LockDuration",
                "RequiresSession",
                "DefaultMessageTimeToLive",
                "DeadLetteringOnMessageExpiration",
                "DeadLetteringOnFilterEvaluationExceptions",
                "DefaultRuleDescription",
                "MaxDeliveryCount",
                "EnableBatchedOperations",
                "Status",
                "ForwardTo",
                "UserMetadata",
                "ForwardDeadLetteredMessagesTo",
                "AutoDeleteOnIdle",
            ],
        }
    }
}

/// Elements the service reports but the SDK never sends back.
const READ_ONLY: &[&str] = &[
    "AccessedAt",
    "CreatedAt",
    "MessageCount",
    "SizeInBytes",
    "UpdatedAt",
    "CountDetails",
    "EntityAvailabilityStatus",
    "SkippedUpdate",
];

/// The message counts of `CountDetails` (`QueueRuntimePropertiesExtensions`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageCounts {
    pub active: u64,
    pub dead_letter: u64,
    pub scheduled: u64,
    pub transfer: u64,
    pub transfer_dead_letter: u64,
}

/// An entity as one `GET` described it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntityDescription {
    pub counts: MessageCounts,
    /// `MessageCount`: every message, active or not.
    pub message_count: u64,
    pub requires_session: bool,
    /// `Active`, `Disabled`, `ReceiveDisabled`, `SendDisabled`.
    pub status: String,
    pub settings: LiveEntitySettings,
    pub(crate) kind: DescriptionKind,
    /// The description's children as received, for an update.
    pub(crate) elements: Vec<(String, String)>,
}

/// Reads an entity's entry; `Ok(None)` when the answer names no entity (Service Bus's empty
/// feed for a missing one).
pub(crate) fn parse_entry(xml: &str) -> Result<Option<EntityDescription>, String> {
    let top = children(xml)?;
    let Some(entry) = child(&top, "entry") else {
        return Ok(None);
    };
    let Some(content) = child(&children(entry.inner)?, "content") else {
        return Ok(None);
    };
    let content = children(content.inner)?;
    let (kind, description) = match (
        child(&content, "QueueDescription"),
        child(&content, "SubscriptionDescription"),
    ) {
        (Some(d), _) => (DescriptionKind::Queue, d),
        (None, Some(d)) => (DescriptionKind::Subscription, d),
        // A topic or another kind of entry: not an entity Shoal receives from.
        (None, None) => return Ok(None),
    };
    let elements = children(description.inner)?;
    let text = |name: &str| child(&elements, name).map(|e| unescape(e.inner));
    let duration = |name: &str, default: Duration| -> Result<Duration, String> {
        match text(name) {
            Some(value) => parse_iso8601(&value).map_err(|e| format!("{name} {value:?}: {e}")),
            None => Ok(default),
        }
    };
    let number = |name: &str, within: &[Element]| -> Result<u64, String> {
        match child(within, name).map(|e| unescape(e.inner)) {
            Some(value) => value
                .parse()
                .map_err(|_| format!("{name} {value:?} is not a count")),
            None => Ok(0),
        }
    };
    let flag = |name: &str| text(name).is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let count_details = match child(&elements, "CountDetails") {
        Some(details) => children(details.inner)?,
        None => Vec::new(),
    };
    let counts = MessageCounts {
        active: number("ActiveMessageCount", &count_details)?,
        dead_letter: number("DeadLetterMessageCount", &count_details)?,
        scheduled: number("ScheduledMessageCount", &count_details)?,
        transfer: number("TransferMessageCount", &count_details)?,
        transfer_dead_letter: number("TransferDeadLetterMessageCount", &count_details)?,
    };
    let max_delivery_count = match text("MaxDeliveryCount") {
        Some(v) => v
            .parse()
            .map_err(|_| format!("MaxDeliveryCount {v:?} is not a count"))?,
        None => 10,
    };
    Ok(Some(EntityDescription {
        counts,
        message_count: number("MessageCount", &elements)?,
        requires_session: flag("RequiresSession"),
        status: text("Status").unwrap_or_else(|| "Active".into()),
        settings: LiveEntitySettings {
            default_message_time_to_live: duration("DefaultMessageTimeToLive", TIMESPAN_MAX)?,
            dead_lettering_on_message_expiration: flag("DeadLetteringOnMessageExpiration"),
            auto_delete_on_idle: duration("AutoDeleteOnIdle", TIMESPAN_MAX)?,
            max_delivery_count,
            lock_duration: duration("LockDuration", Duration::from_secs(60))?,
        },
        kind,
        elements: elements
            .iter()
            .map(|e| (e.name.to_owned(), e.raw.to_owned()))
            .collect(),
    }))
}

/// The `PUT` body that gives `description`'s entity `settings` and keeps everything else.
pub(crate) fn updated_entry(
    description: &EntityDescription,
    settings: &LiveEntitySettings,
) -> String {
    let managed: [(&str, Option<String>); 5] = [
        ("LockDuration", Some(to_iso8601(settings.lock_duration))),
        (
            "DefaultMessageTimeToLive",
            // The SDK leaves an unlimited TTL out rather than writing TimeSpan.MaxValue.
            (settings.default_message_time_to_live < TIMESPAN_MAX)
                .then(|| to_iso8601(settings.default_message_time_to_live)),
        ),
        (
            "DeadLetteringOnMessageExpiration",
            Some(settings.dead_lettering_on_message_expiration.to_string()),
        ),
        (
            "MaxDeliveryCount",
            Some(settings.max_delivery_count.to_string()),
        ),
        (
            "AutoDeleteOnIdle",
            (settings.auto_delete_on_idle < TIMESPAN_MAX)
                .then(|| to_iso8601(settings.auto_delete_on_idle)),
        ),
    ];
    let order = description.kind.order();
    let rank = |name: &str| order.iter().position(|n| *n == name);
    let mut kept: Vec<(String, String)> = description
        .elements
        .iter()
        .filter(|(name, _)| !READ_ONLY.contains(&name.as_str()))
        .filter(|(name, _)| !managed.iter().any(|(m, _)| m == name))
        .cloned()
        .collect();
    for (name, value) in managed {
        let Some(value) = value else { continue };
        let element = (name.to_owned(), format!("<{name}>{value}</{name}>"));
        // Before the first kept element the SDK writes later; unknown ones stay at the end.
        let position = kept
            .iter()
            .position(|(other, _)| match (rank(other), rank(name)) {
                (Some(other), Some(mine)) => other > mine,
                (None, _) => true,
                _ => false,
            })
            .unwrap_or(kept.len());
        kept.insert(position, element);
    }
    let kind = description.kind.element();
    let body: String = kept.into_iter().map(|(_, raw)| raw).collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><entry xmlns=\"{ATOM_NS}\"><content type=\"application/xml\"><{kind} xmlns=\"{SERVICE_BUS_NS}\" xmlns:i=\"{XSI_NS}\">{body}</{kind}></content></entry>"
    )
}

/// The `Detail` of the service's `<Error>` answer, for error messages.
pub(crate) fn error_detail(xml: &str) -> Option<String> {
    let top = children(xml).ok()?;
    let error = child(&top, "Error")?;
    let detail = child(&children(error.inner).ok()?, "Detail")?;
    Some(unescape(detail.inner)).filter(|d| !d.is_empty())
}

#[cfg(test)]
mod tests;
