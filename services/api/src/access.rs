//! What a caller may do: the caller's role assignments ([`Grants`]) evaluated by the pure RBAC
//! function for one operation at one scope, with every denial written to the audit log.
//!
//! Registered principals' assignments come from Postgres and are cached per principal. The
//! cache is emptied by a `shoal_rbac` notification on any change to principals, role
//! definitions or assignments (from any process; received by `notifications`) and trusted only
//! while that channel is connected; a generation counter keeps a read that raced a change from being
//! cached.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use shoal_domain::names::{AppName, FunctionName, TenantName};
use shoal_domain::rbac::{self, Decision, Grant, Operation, RoleDefinition, Scope, actions};
use shoal_store::audit::{self, AuditEntry};
use shoal_store::{TenantId, begin_platform, begin_tenant, roles};
use sqlx::PgPool;

use crate::error::ApiError;
use crate::expiring::ExpiringCache;
use crate::identity::Principal;

/// The authenticated caller of a request and the role assignments it holds.
#[derive(Clone)]
pub struct Caller {
    pub principal: Principal,
    pub grants: Arc<Grants>,
    /// The request's `X-Request-Id`, for the audit log.
    pub request_id: Option<String>,
}

impl std::fmt::Debug for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("principal", &self.principal)
            .finish()
    }
}

/// One role assignment as evaluated: the role's definition and where it is assigned.
#[derive(Debug, Clone)]
pub struct Assigned {
    pub role: Arc<RoleDefinition>,
    pub scope: Scope,
}

/// Everything a caller holds.
#[derive(Debug, Clone, Default)]
pub struct Grants(pub Vec<Assigned>);

impl Grants {
    pub fn evaluate(&self, operation: Operation<'_>, at: &Scope) -> Decision {
        let grants: Vec<Grant<'_>> = self
            .0
            .iter()
            .map(|a| Grant {
                role: &a.role,
                scope: &a.scope,
            })
            .collect();
        rbac::evaluate(&grants, operation, at)
    }

    /// A built-in role's definition assigned at `scope`.
    fn built_in(name: &str, scope: Scope) -> Option<Assigned> {
        BUILT_IN
            .iter()
            .find(|r| r.name == name)
            .map(|role| Assigned {
                role: role.clone(),
                scope,
            })
    }
}

/// Built once: operator and platform tokens are evaluated against these on every request.
static BUILT_IN: std::sync::LazyLock<Vec<Arc<RoleDefinition>>> =
    std::sync::LazyLock::new(|| rbac::built_in_roles().into_iter().map(Arc::new).collect());

pub struct AccessCache {
    entries: ExpiringCache<uuid::Uuid, Arc<Grants>, Instant>,
    generation: AtomicU64,
    /// Whether the notification channel is connected: without it, nothing is cached.
    listening: AtomicBool,
}

const CACHE_CAPACITY: usize = 50_000;
/// A backstop for the one window notifications cannot close: a change committed just as the
/// listening connection dies, before the process notices. No entry is trusted for longer.
const MAX_AGE: Duration = Duration::from_secs(30);

impl Default for AccessCache {
    fn default() -> Self {
        AccessCache {
            entries: ExpiringCache::new(CACHE_CAPACITY),
            generation: AtomicU64::default(),
            listening: AtomicBool::default(),
        }
    }
}

impl AccessCache {
    /// The role assignments `principal` holds. A registered principal that no longer exists
    /// (a deleted identity or service principal) is refused, whatever its token says.
    pub async fn grants_of(
        &self,
        pool: &PgPool,
        principal: &Principal,
    ) -> Result<Arc<Grants>, ApiError> {
        match principal {
            Principal::PlatformAdmin { .. } => Ok(Arc::new(Grants(
                Grants::built_in("Owner", Scope::root())
                    .into_iter()
                    .collect(),
            ))),
            Principal::Operator { tenant, roles, .. } => Ok(Arc::new(Grants(
                roles
                    .iter()
                    .filter_map(|r| Grants::built_in(r.as_str(), Scope::tenant(tenant)))
                    .collect(),
            ))),
            Principal::Registered { id, tenant } => {
                if let Some(grants) = self.cached(id) {
                    return Ok(grants);
                }
                let generation = self.generation.load(Ordering::Acquire);
                let grants = Arc::new(load(pool, tenant, *id).await?);
                if self.listening.load(Ordering::Acquire)
                    && self.generation.load(Ordering::Acquire) == generation
                {
                    let now = Instant::now();
                    self.entries.insert(*id, grants.clone(), now + MAX_AGE, now);
                }
                Ok(grants)
            }
        }
    }

    fn cached(&self, id: &uuid::Uuid) -> Option<Arc<Grants>> {
        if !self.listening.load(Ordering::Acquire) {
            return None;
        }
        self.entries.get(id, Instant::now())
    }

    /// Forgets every cached decision (after a local write, or on a notification).
    pub fn invalidate(&self) {
        self.generation.fetch_add(1, Ordering::AcqRel);
        self.entries.clear();
    }

    /// Whether the change notifications are being received (`notifications` says so).
    pub(crate) fn set_listening(&self, on: bool) {
        self.listening.store(on, Ordering::Release);
        self.invalidate();
    }
}

async fn load(pool: &PgPool, tenant: &TenantName, id: uuid::Uuid) -> Result<Grants, ApiError> {
    let tenant_id = TenantId::new(tenant.clone());
    let mut tx = begin_tenant(pool, &tenant_id).await?;
    let held = roles::held_by(&mut tx, &tenant_id, id).await?;
    shoal_store::commit(tx).await?;
    let Some(held) = held else {
        return Err(ApiError::Unauthorized(
            "the token's principal no longer exists".into(),
        ));
    };
    let mut grants = Vec::with_capacity(held.len());
    for (definition, scope) in held {
        // A stored scope or definition that no longer parses grants nothing, and neither does a
        // scope outside the principal's tenant (the API writes none): a registration's
        // assignments reach its own tenant only, even for a user other tenants register too.
        match (definition.to_domain(), Scope::parse(&scope)) {
            (Ok(role), Ok(scope)) if scope.tenant_name() == Some(tenant) => grants.push(Assigned {
                role: Arc::new(role),
                scope,
            }),
            _ => {
                tracing::warn!(scope, role = %definition.name, %tenant, "ignoring a role assignment that does not parse or lies outside its tenant")
            }
        }
    }
    Ok(Grants(grants))
}

/// Allows the operation or answers 403 (the caller has some access in this tenant) or 404
/// (none: the tenant's resources stay invisible). Denials are audited.
pub async fn authorize(
    pool: &PgPool,
    caller: &Caller,
    operation: Operation<'_>,
    at: &Scope,
) -> Result<(), ApiError> {
    match caller.grants.evaluate(operation, at) {
        Decision::Allowed { .. } => Ok(()),
        decision => {
            let name = match operation {
                Operation::Action(a) | Operation::DataAction(a) => a,
            };
            record_denial(pool, caller, name, at).await;
            Err(match decision {
                // Nothing to hide at the platform scope.
                Decision::Hidden if at.tenant_name().is_some() => ApiError::NotFound,
                _ => ApiError::Forbidden(format!(
                    "the caller's role assignments do not allow {name} at {at}"
                )),
            })
        }
    }
}

/// Whether the caller's grants allow `action` at `at`, without refusing or auditing: for a
/// response that shows more to callers allowed more (a poison message's body only to those
/// who may read the app's settings).
pub fn permits(caller: &Caller, action: &str, at: &Scope) -> bool {
    matches!(
        caller.grants.evaluate(Operation::Action(action), at),
        Decision::Allowed { .. }
    )
}

/// [`authorize`] for a management action.
pub async fn allow(
    pool: &PgPool,
    caller: &Caller,
    action: &str,
    at: &Scope,
) -> Result<(), ApiError> {
    authorize(pool, caller, Operation::Action(action), at).await
}

/// May the caller invoke `function` through the webhook ingress?
pub async fn authorize_invoke(
    pool: &PgPool,
    caller: &Caller,
    tenant: &TenantName,
    app: &AppName,
    function: &FunctionName,
) -> Result<(), ApiError> {
    authorize(
        pool,
        caller,
        Operation::DataAction(actions::FUNCTIONS_INVOKE),
        &Scope::function(tenant, app, function),
    )
    .await
}

/// Writes a denied request to the audit log of the tenant it targeted (the platform's for
/// `/`). A failure to write is logged, never turned into a different answer.
async fn record_denial(pool: &PgPool, caller: &Caller, action: &str, at: &Scope) {
    let result = async {
        let mut tx = match at.tenant_name() {
            Some(tenant) => begin_tenant(pool, &TenantId::new(tenant.clone())).await?,
            None => begin_platform(pool).await?,
        };
        audit::record(
            &mut tx,
            &AuditEntry {
                principal: &caller.principal.subject(),
                action,
                resource: at.as_str(),
                outcome: "denied",
                request_id: caller.request_id.as_deref(),
            },
        )
        .await?;
        shoal_store::commit(tx).await
    }
    .await;
    if let Err(err) = result {
        tracing::warn!(error = %err, action, "could not audit a denied request");
    }
}
