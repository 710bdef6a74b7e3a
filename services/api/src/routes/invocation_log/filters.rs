//! The explorer's query string, read as text so every bad value gets a 422 naming its field.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use shoal_store::invocation_log::{Cursor, Search, Status};
use shoal_store::page::{DEFAULT_LIMIT, MAX_LIMIT};
use utoipa::IntoParams;
use uuid::Uuid;

use shoal_domain::trace_context::is_trace_id;
use shoal_domain::validation::FieldError;

use crate::error::ApiError;
use crate::extract::query_integer;

/// The longest message id searched for (Service Bus allows 128 characters; room to spare).
const MAX_MESSAGE_ID: usize = 1024;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct InvocationLogQuery {
    /// The invocation's latest attempt's status. Read as text so a bad value gets our 422.
    #[param(value_type = Option<super::AttemptStatus>, example = "failed")]
    pub status: Option<String>,
    /// The source's message id (queue `Id`, Service Bus `MessageId`), or the delivery's
    /// `webhook-id` for triggers without one.
    pub message_id: Option<String>,
    /// Any attempt's invocation id (`X-Shoal-Invocation-Id`).
    #[param(value_type = Option<uuid::Uuid>)]
    pub invocation_id: Option<String>,
    /// Any attempt's W3C trace id: 32 lowercase hex digits, as trace viewers show it.
    #[param(
        pattern = "^[0-9a-f]{32}$",
        example = "4bf92f3577b34da6a3ce929d0e0e4736"
    )]
    pub trace_id: Option<String>,
    /// Started at or after this time (RFC 3339).
    #[param(value_type = Option<DateTime<Utc>>)]
    pub from: Option<String>,
    /// Started before this time (RFC 3339).
    #[param(value_type = Option<DateTime<Utc>>)]
    pub to: Option<String>,
    /// Invocations per page, 1–1000 (default 100).
    #[param(value_type = Option<u32>, minimum = 1, maximum = 1000)]
    pub limit: Option<String>,
    /// Token from the previous page's `continuationToken`.
    pub continuation_token: Option<String>,
}

fn time(field: &str, text: Option<&str>) -> Result<Option<DateTime<Utc>>, FieldError> {
    text.map(|t| {
        DateTime::parse_from_rfc3339(t)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| FieldError {
                path: field.into(),
                message: "must be an RFC 3339 time, e.g. 2026-11-24T10:00:00Z".into(),
            })
    })
    .transpose()
}

impl InvocationLogQuery {
    /// The store's search, or every bad field at once.
    pub fn search(&self) -> Result<Search, ApiError> {
        let mut errors = Vec::new();
        let mut note = |path: &str, message: &str| {
            errors.push(FieldError {
                path: path.into(),
                message: message.into(),
            })
        };
        let status = match self.status.as_deref() {
            None => None,
            Some(text) => {
                let parsed = Status::parse(text);
                if parsed.is_none() {
                    note("status", "must be `succeeded` or `failed`");
                }
                parsed
            }
        };
        let message_id = self.message_id.clone();
        if message_id
            .as_deref()
            .is_some_and(|m| m.is_empty() || m.len() > MAX_MESSAGE_ID)
        {
            note("messageId", "must be 1 to 1024 characters");
        }
        let invocation_id = match self.invocation_id.as_deref() {
            None => None,
            Some(text) => {
                let parsed = Uuid::parse_str(text).ok();
                if parsed.is_none() {
                    note("invocationId", "must be a UUID");
                }
                parsed
            }
        };
        let trace_id = self.trace_id.clone();
        if trace_id.as_deref().is_some_and(|t| !is_trace_id(t)) {
            note(
                "traceId",
                "must be a W3C trace id: 32 lowercase hex digits, not all zero",
            );
        }
        let after = match self.continuation_token.as_deref() {
            None => None,
            Some(token) => {
                let parsed = Cursor::decode(token);
                if parsed.is_none() {
                    note("continuationToken", "is not a token this API issued");
                }
                parsed
            }
        };
        let limit = query_integer(
            "limit",
            self.limit.as_deref(),
            u64::from(DEFAULT_LIMIT),
            (1, u64::from(MAX_LIMIT)),
        );
        let from = time("from", self.from.as_deref());
        let to = time("to", self.to.as_deref());
        for bad in [from.as_ref().err(), to.as_ref().err()]
            .into_iter()
            .flatten()
        {
            errors.push(bad.clone());
        }
        if let (Ok(Some(from)), Ok(Some(to))) = (&from, &to)
            && from > to
        {
            errors.push(FieldError {
                path: "to".into(),
                message: "must not be before `from`".into(),
            });
        }
        let limit = match limit {
            Ok(n) => u32::try_from(n).unwrap_or(DEFAULT_LIMIT),
            Err(ApiError::Validation(mut e)) => {
                errors.append(&mut e);
                DEFAULT_LIMIT
            }
            Err(other) => return Err(other),
        };
        if !errors.is_empty() {
            return Err(ApiError::Validation(errors));
        }
        Ok(Search {
            status,
            message_id,
            invocation_id,
            trace_id,
            from: from.ok().flatten(),
            to: to.ok().flatten(),
            after,
            limit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(query: InvocationLogQuery) -> Vec<String> {
        match query.search() {
            Err(ApiError::Validation(errors)) => errors.into_iter().map(|e| e.path).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn filters_are_read_with_defaults() {
        let search = InvocationLogQuery::default().search().unwrap();
        assert_eq!(search.limit, DEFAULT_LIMIT);
        assert!(search.status.is_none() && search.after.is_none());
        let id = Uuid::now_v7();
        let cursor = Cursor {
            started_at: "2026-11-24T10:00:00Z".parse().unwrap(),
            id: 7,
        };
        let search = InvocationLogQuery {
            status: Some("failed".into()),
            message_id: Some("m-1".into()),
            invocation_id: Some(id.to_string()),
            trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736".into()),
            from: Some("2026-11-24T10:00:00+01:00".into()),
            to: Some("2026-11-24T10:00:00Z".into()),
            limit: Some("5".into()),
            continuation_token: Some(cursor.encode()),
        }
        .search()
        .unwrap();
        assert_eq!(search.status, Some(Status::Failed));
        assert_eq!(search.message_id.as_deref(), Some("m-1"));
        assert_eq!(search.invocation_id, Some(id));
        assert_eq!(
            search.trace_id.as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        assert_eq!(search.from, Some("2026-11-24T09:00:00Z".parse().unwrap()));
        assert_eq!(search.limit, 5);
        assert_eq!(search.after, Some(cursor));
    }

    #[test]
    fn every_bad_filter_is_named_by_its_field() {
        let bad = InvocationLogQuery {
            status: Some("running".into()),
            message_id: Some(String::new()),
            invocation_id: Some("nope".into()),
            trace_id: Some("4BF92F3577B34DA6A3CE929D0E0E4736".into()),
            from: Some("yesterday".into()),
            to: Some("2026-13-01".into()),
            limit: Some("1001".into()),
            continuation_token: Some("!!".into()),
        };
        assert_eq!(
            paths(bad),
            [
                "status",
                "messageId",
                "invocationId",
                "traceId",
                "continuationToken",
                "from",
                "to",
                "limit"
            ]
        );
        let backwards = InvocationLogQuery {
            from: Some("2026-11-24T10:00:00Z".into()),
            to: Some("2026-11-24T09:00:00Z".into()),
            ..InvocationLogQuery::default()
        };
        assert_eq!(paths(backwards), ["to"]);
    }
}
