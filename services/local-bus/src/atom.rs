//! The ATOM/XML management API, as Service Bus serves it and `ServiceBusAdministrationClient`
//! and Azure's scale controller read it: `GET /{queue}`, `GET /{topic}`,
//! `GET /{topic}/subscriptions/{subscription}` (any `api-version`) answer an Atom `entry` whose
//! content is the entity description with `CountDetails` (`azure-sdk-for-python`
//! `servicebus/management/_generated/models/_models.py` `QueueDescription`, `TopicDescription`,
//! `SubscriptionDescription`); `PUT` creates an entity or, with `If-Match: *`, updates one
//! ([`update`]). Every request needs a SAS token with the Manage right in `Authorization`; a
//! Listen-only token gets 401, as in Azure.

mod update;

use std::sync::Arc;

use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::bus::Bus;
use crate::config::{EntitySettings, Rights};
use crate::duration;
use crate::sas;
use crate::store::entity::Counts;
use crate::store::{Store, Target};

const SB_NS: &str = "http://schemas.microsoft.com/netservices/2010/10/servicebus/connect";
const COUNTS_NS: &str = "http://schemas.microsoft.com/netservices/2011/06/servicebus";

/// Serves HTTP/1.1 on one connection.
pub async fn serve<Io>(io: Io, bus: Arc<Bus>) -> Result<(), String>
where
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |request| {
        let bus = bus.clone();
        async move { Ok::<_, std::convert::Infallible>(handle(request, &bus).await) }
    });
    hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(io), service)
        .await
        .map_err(|e| e.to_string())
}

async fn handle(request: Request<Incoming>, bus: &Bus) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let body = match body.collect().await {
        Ok(collected) => String::from_utf8_lossy(&collected.to_bytes()).into_owned(),
        Err(_) => {
            return error(
                StatusCode::BAD_REQUEST,
                "The request body could not be read.",
            );
        }
    };
    let host = parts
        .headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1")
        .to_owned();
    let token = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    let now = Utc::now();
    let path = percent_encoding::percent_decode_str(parts.uri.path())
        .decode_utf8_lossy()
        .into_owned();
    let entity_path = sas::normalize_path(&path);
    let authorized = sas::verify(token, &bus.config.policies, now)
        .and_then(|grant| grant.allows(&entity_path, Rights::MANAGE, now));
    if let Err(e) = authorized {
        return error(
            StatusCode::UNAUTHORIZED,
            &format!("Manage,EntityRead claims required for this operation. {e}"),
        );
    }
    let mut store = bus.store();
    store.maintain(now);
    let mut status = StatusCode::OK;
    if parts.method == Method::PUT {
        let if_match = parts.headers.contains_key(http::header::IF_MATCH);
        match update::put(
            &mut store,
            &path,
            &body,
            if_match,
            bus.config.basic_tier,
            now,
        ) {
            Ok(update::Upsert::Created) => status = StatusCode::CREATED,
            Ok(update::Upsert::Updated) => {}
            Err((code, detail)) => {
                return error(
                    StatusCode::from_u16(code).unwrap_or(StatusCode::BAD_REQUEST),
                    &detail,
                );
            }
        }
    } else if parts.method != Method::GET {
        return error(
            StatusCode::METHOD_NOT_ALLOWED,
            "The local stand-in's management API serves GET and PUT.",
        );
    }
    let Some(target) = store.resolve(&entity_path) else {
        return error(
            StatusCode::NOT_FOUND,
            &format!("The messaging entity '{path}' could not be found."),
        );
    };
    let base = format!("https://{host}");
    let xml = entry(&mut store, &target, &base, &bus.config.namespace, now);
    match xml {
        Some(xml) => Response::builder()
            .status(status)
            .header(
                http::header::CONTENT_TYPE,
                "application/atom+xml;type=entry;charset=utf-8",
            )
            .body(Full::new(Bytes::from(xml)))
            .unwrap_or_else(|_| Response::new(Full::new(Bytes::new()))),
        None => error(
            StatusCode::NOT_FOUND,
            &format!("The messaging entity '{path}' could not be found."),
        ),
    }
}

fn error(status: StatusCode, detail: &str) -> Response<Full<Bytes>> {
    let body = format!(
        "<Error><Code>{}</Code><Detail>{}</Detail></Error>",
        status.as_u16(),
        escape(detail)
    );
    Response::builder()
        .status(status)
        .header(http::header::CONTENT_TYPE, "application/xml; charset=utf-8")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn time(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn counts_xml(counts: Counts) -> String {
    format!(
        "<CountDetails xmlns:d2p1=\"{COUNTS_NS}\"><d2p1:ActiveMessageCount>{}</d2p1:ActiveMessageCount>\
         <d2p1:DeadLetterMessageCount>{}</d2p1:DeadLetterMessageCount>\
         <d2p1:ScheduledMessageCount>{}</d2p1:ScheduledMessageCount>\
         <d2p1:TransferMessageCount>0</d2p1:TransferMessageCount>\
         <d2p1:TransferDeadLetterMessageCount>0</d2p1:TransferDeadLetterMessageCount></CountDetails>",
        counts.active, counts.dead_letter, counts.scheduled
    )
}

fn entry(
    store: &mut Store,
    target: &Target,
    base: &str,
    namespace: &str,
    now: DateTime<Utc>,
) -> Option<String> {
    let (title, description) = match target {
        Target::Entity(path, _) => {
            let entity = store.entities.get_mut(path)?;
            let counts = entity.counts(now);
            let (created, updated, accessed) =
                (entity.created_at, entity.updated_at, entity.accessed_at);
            let settings = entity.settings.clone();
            let name = entity.name.clone();
            let xml = match &entity.kind {
                crate::store::EntityKind::Queue => {
                    queue_xml(&settings, counts, created, updated, accessed)
                }
                crate::store::EntityKind::Subscription { .. } => {
                    subscription_xml(&settings, counts, created, updated, accessed)
                }
            };
            let title = name.rsplit('/').next().unwrap_or(&name).to_owned();
            (title, xml)
        }
        Target::Topic(path) => {
            let topic = store.topics.get(path)?;
            let subscriptions = topic.subscriptions.clone();
            let (name, settings, created, updated, accessed) = (
                topic.name.clone(),
                topic.settings.clone(),
                topic.created_at,
                topic.updated_at,
                topic.accessed_at,
            );
            // A topic's scheduled count is what waits in its subscriptions.
            let mut counts = Counts::default();
            for sub in &subscriptions {
                if let Some(entity) = store.entities.get_mut(sub) {
                    counts.scheduled += entity.counts(now).scheduled;
                }
            }
            (
                name,
                topic_xml(
                    &settings,
                    counts,
                    subscriptions.len(),
                    created,
                    updated,
                    accessed,
                ),
            )
        }
    };
    let id = format!("{base}/{}?api-version=2021-05", sas::normalize_path(&title));
    Some(format!(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?><entry xmlns=\"http://www.w3.org/2005/Atom\"><id>{id}</id>\
         <title type=\"text\">{title}</title><published>{published}</published><updated>{updated}</updated>\
         <author><name>{namespace}</name></author><link rel=\"self\" href=\"{id}\"/>\
         <content type=\"application/xml\">{description}</content></entry>",
        id = escape(&id),
        title = escape(&title),
        published = time(now),
        updated = time(now),
        namespace = escape(namespace),
    ))
}

fn common_tail(created: DateTime<Utc>, updated: DateTime<Utc>, accessed: DateTime<Utc>) -> String {
    format!(
        "<Status>Active</Status><CreatedAt>{}</CreatedAt><UpdatedAt>{}</UpdatedAt><AccessedAt>{}</AccessedAt>",
        time(created),
        time(updated),
        time(accessed)
    )
}

fn queue_xml(
    s: &EntitySettings,
    counts: Counts,
    created: DateTime<Utc>,
    updated: DateTime<Utc>,
    accessed: DateTime<Utc>,
) -> String {
    format!(
        "<QueueDescription xmlns=\"{SB_NS}\" xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">\
         <LockDuration>{lock}</LockDuration><MaxSizeInMegabytes>1024</MaxSizeInMegabytes>\
         <RequiresDuplicateDetection>false</RequiresDuplicateDetection><RequiresSession>{session}</RequiresSession>\
         <DefaultMessageTimeToLive>{ttl}</DefaultMessageTimeToLive>\
         <DeadLetteringOnMessageExpiration>{dlq}</DeadLetteringOnMessageExpiration>\
         <DuplicateDetectionHistoryTimeWindow>{window}</DuplicateDetectionHistoryTimeWindow>\
         <MaxDeliveryCount>{max}</MaxDeliveryCount><EnableBatchedOperations>true</EnableBatchedOperations>\
         <SizeInBytes>0</SizeInBytes><MessageCount>{total}</MessageCount><IsAnonymousAccessible>false</IsAnonymousAccessible>\
         <AuthorizationRules/>{tail}<SupportOrdering>true</SupportOrdering>{counts}\
         <AutoDeleteOnIdle>{idle}</AutoDeleteOnIdle><EnablePartitioning>false</EnablePartitioning>\
         <EntityAvailabilityStatus>Available</EntityAvailabilityStatus><EnableExpress>false</EnableExpress></QueueDescription>",
        lock = duration::format(Some(s.lock_duration)),
        session = s.requires_session,
        ttl = duration::format(s.default_ttl),
        dlq = s.dead_lettering_on_expiration,
        window = duration::format(Some(s.duplicate_detection_window)),
        max = s.max_delivery_count,
        total = counts.total(),
        tail = common_tail(created, updated, accessed),
        counts = counts_xml(counts),
        idle = duration::format(s.auto_delete_on_idle),
    )
}

fn subscription_xml(
    s: &EntitySettings,
    counts: Counts,
    created: DateTime<Utc>,
    updated: DateTime<Utc>,
    accessed: DateTime<Utc>,
) -> String {
    format!(
        "<SubscriptionDescription xmlns=\"{SB_NS}\" xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">\
         <LockDuration>{lock}</LockDuration><RequiresSession>{session}</RequiresSession>\
         <DefaultMessageTimeToLive>{ttl}</DefaultMessageTimeToLive>\
         <DeadLetteringOnMessageExpiration>{dlq}</DeadLetteringOnMessageExpiration>\
         <DeadLetteringOnFilterEvaluationExceptions>true</DeadLetteringOnFilterEvaluationExceptions>\
         <MessageCount>{total}</MessageCount><MaxDeliveryCount>{max}</MaxDeliveryCount>\
         <EnableBatchedOperations>true</EnableBatchedOperations>{tail}{counts}\
         <AutoDeleteOnIdle>{idle}</AutoDeleteOnIdle><EntityAvailabilityStatus>Available</EntityAvailabilityStatus></SubscriptionDescription>",
        lock = duration::format(Some(s.lock_duration)),
        session = s.requires_session,
        ttl = duration::format(s.default_ttl),
        dlq = s.dead_lettering_on_expiration,
        total = counts.total(),
        max = s.max_delivery_count,
        tail = common_tail(created, updated, accessed),
        counts = counts_xml(counts),
        idle = duration::format(s.auto_delete_on_idle),
    )
}

fn topic_xml(
    s: &EntitySettings,
    counts: Counts,
    subscriptions: usize,
    created: DateTime<Utc>,
    updated: DateTime<Utc>,
    accessed: DateTime<Utc>,
) -> String {
    format!(
        "<TopicDescription xmlns=\"{SB_NS}\" xmlns:i=\"http://www.w3.org/2001/XMLSchema-instance\">\
         <DefaultMessageTimeToLive>{ttl}</DefaultMessageTimeToLive><MaxSizeInMegabytes>1024</MaxSizeInMegabytes>\
         <RequiresDuplicateDetection>false</RequiresDuplicateDetection>\
         <DuplicateDetectionHistoryTimeWindow>{window}</DuplicateDetectionHistoryTimeWindow>\
         <EnableBatchedOperations>true</EnableBatchedOperations><SizeInBytes>0</SizeInBytes>\
         <IsAnonymousAccessible>false</IsAnonymousAccessible><AuthorizationRules/>{tail}\
         <SupportOrdering>true</SupportOrdering>{counts}<SubscriptionCount>{subscriptions}</SubscriptionCount>\
         <AutoDeleteOnIdle>{idle}</AutoDeleteOnIdle><EnablePartitioning>false</EnablePartitioning>\
         <EntityAvailabilityStatus>Available</EntityAvailabilityStatus><EnableExpress>false</EnableExpress></TopicDescription>",
        ttl = duration::format(s.default_ttl),
        window = duration::format(Some(s.duplicate_detection_window)),
        tail = common_tail(created, updated, accessed),
        counts = counts_xml(counts),
        idle = duration::format(s.auto_delete_on_idle),
    )
}
