//! `POST /v1/signingKeys/rotate`: replace the key Shoal signs tokens with (platform
//! administrators; audited). Tokens signed with the old key keep verifying until the grace
//! period ends; other API processes pick the new key up within their reload interval.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use shoal_domain::rbac::{Scope, actions};
use shoal_store::audit::AuditEntry;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::TAG_OPERATIONS;
use crate::access::Caller;
use crate::access::allow;
use crate::error::{ApiError, Problem};
use crate::extract::Query;
use crate::state::AppState;
use crate::tokens::rotation::{DEFAULT_GRACE, MAX_GRACE};

#[derive(Debug, Deserialize, IntoParams)]
#[serde(rename_all = "camelCase")]
#[into_params(parameter_in = Query)]
pub struct RotateQuery {
    /// How long the current keys keep verifying the tokens they signed, in seconds (0 to
    /// 604800; default: the longest token lifetime plus a margin: 86,730 s). Read as text so a
    /// bad value gets a 422.
    #[param(value_type = Option<u64>, minimum = 0, maximum = 604800)]
    pub grace_seconds: Option<String>,
}

impl RotateQuery {
    fn grace(&self) -> Result<Duration, ApiError> {
        match self.grace_seconds.as_deref() {
            None => Ok(DEFAULT_GRACE),
            Some(text) => match text.parse::<u64>() {
                Ok(seconds) if seconds <= MAX_GRACE.as_secs() => Ok(Duration::from_secs(seconds)),
                _ => Err(ApiError::validation(
                    "graceSeconds",
                    format!("must be an integer between 0 and {}", MAX_GRACE.as_secs()),
                )),
            },
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyRotation {
    /// The key that signs from now on.
    pub kid: String,
    /// The keys rotated out, newest first: each verifies until `verifyUntil`.
    pub retiring_keys: Vec<RetiringKey>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetiringKey {
    pub kid: String,
    pub verify_until: DateTime<Utc>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(rotate_signing_key))
}

/// Rotate the token signing key (platform administrators; audited).
#[utoipa::path(post, path = "/v1/signingKeys/rotate", tag = TAG_OPERATIONS, params(RotateQuery),
    responses((status = 200, body = KeyRotation), (status = 403, body = Problem)))]
pub async fn rotate_signing_key(
    State(state): State<AppState>,
    caller: Caller,
    Query(query): Query<RotateQuery>,
) -> Result<Json<KeyRotation>, ApiError> {
    allow(
        &state.pool,
        &caller,
        actions::SIGNING_KEYS_ROTATE,
        &Scope::root(),
    )
    .await?;
    let grace = query.grace()?;
    let subject = caller.principal.subject();
    let audit = AuditEntry {
        principal: &subject,
        action: actions::SIGNING_KEYS_ROTATE,
        resource: "/v1/signingKeys",
        outcome: "succeeded",
        request_id: caller.request_id.as_deref(),
    };
    let rotation = state
        .tokens
        .rotate(&state.pool, &state.cipher, grace, &audit)
        .await?;
    Ok(Json(KeyRotation {
        kid: rotation.kid,
        retiring_keys: rotation
            .retiring
            .into_iter()
            .map(|k| RetiringKey {
                kid: k.kid,
                verify_until: k.verify_until,
            })
            .collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grace_bounds() {
        let grace = |text: Option<&str>| {
            RotateQuery {
                grace_seconds: text.map(str::to_string),
            }
            .grace()
        };
        assert_eq!(grace(None).unwrap(), DEFAULT_GRACE);
        assert_eq!(grace(Some("0")).unwrap(), Duration::ZERO);
        assert_eq!(grace(Some("604800")).unwrap(), MAX_GRACE);
        for bad in ["604801", "-1", "1h", ""] {
            assert!(grace(Some(bad)).is_err(), "{bad}");
        }
    }
}
