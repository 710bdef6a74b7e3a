//! Every database operation the store offers, labelled and timed (after neon's storage
//! controller): one histogram, `shoal_store_operation_seconds{operation, outcome}`, so a slow
//! or failing query shows by name in whichever process ran it. The histogram is process-wide,
//! since the store's functions are free functions; each process's registry includes it through
//! [`register`].

use std::sync::LazyLock;
use std::time::Instant;

use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind, Status};
use shoal_trace_export::span;

use crate::StoreError;

/// The instrumentation scope of the store's spans.
const SCOPE: &str = "shoal-store";

/// One public query function of the store, named `module_function` in the label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    // apps
    AppsGet,
    AppsCount,
    AppsRead,
    AppsExists,
    AppsList,
    AppsAllOfTenant,
    AppsVersionsOfTenant,
    AppsPut,
    AppsDelete,
    // assignments
    AssignmentsAll,
    AssignmentsOfWorker,
    AssignmentsOfWorkers,
    AssignmentsApply,
    AssignmentsConfirmAll,
    AssignmentsClaim,
    AssignmentsRelease,
    AssignmentsReleaseAll,
    // audit
    AuditRecord,
    AuditList,
    // breakers
    BreakersRecordFailures,
    BreakersOpenOfTenant,
    BreakersGet,
    BreakersTransitions,
    BreakersClaimProbe,
    BreakersProbeResult,
    BreakersSet,
    // concurrency slots
    ConcurrencySlotsRenew,
    ConcurrencySlotsRelease,
    // held queue messages
    HeldMessagesHold,
    HeldMessagesHolds,
    // parked retries
    ParkedRetriesPark,
    ParkedRetriesGet,
    ParkedRetriesUnpark,
    // timer schedules
    TimerSchedulesGet,
    TimerSchedulesAdvance,
    // functions
    FunctionsGet,
    FunctionsCountOfApp,
    FunctionsLockApp,
    FunctionsList,
    FunctionsAllOfApp,
    FunctionsVersionsOfTenant,
    FunctionsAllOfTenant,
    FunctionsAllOfApps,
    FunctionsPut,
    FunctionsDelete,
    // leadership
    LeadershipAcquireOrRenew,
    LeadershipRelease,
    LeadershipCurrent,
    LeadershipFence,
    // principals
    PrincipalsEnsure,
    PrincipalsSetExternal,
    PrincipalsGet,
    PrincipalsById,
    PrincipalsList,
    PrincipalsDelete,
    PrincipalsOfApp,
    PrincipalsAppIdentities,
    PrincipalsSetSecret,
    PrincipalsAuthenticateClient,
    PrincipalsFindExternal,
    // roles
    RolesDefinitions,
    RolesDefinitionNamed,
    RolesPutDefinition,
    RolesDeleteDefinition,
    RolesAssignments,
    RolesAssignmentById,
    RolesCreateAssignment,
    RolesDeleteAssignment,
    RolesHeldBy,
    // scale
    ScaleAllDesired,
    ScaleRecord,
    ScalePruneDecisions,
    ScaleStatus,
    ScaleInstancesOfApps,
    ScaleSetWaiting,
    // invocation_telemetry
    InvocationsRecord,
    InvocationsPrune,
    InvocationsMinutes,
    InvocationsFailures,
    InvocationLogRecord,
    InvocationLogSearch,
    // scale_samples
    ScaleSamplesRecord,
    ScaleSamplesPrune,
    ScaleSamplesOfApp,
    // signing_keys
    SigningKeysActive,
    SigningKeysInsert,
    SigningKeysRotate,
    SigningKeysLockForCreation,
    // signing_secrets
    SigningSecretsGetOrCreate,
    SigningSecretsRegenerate,
    // tenants
    TenantsGet,
    TenantsLimits,
    TenantsExists,
    TenantsList,
    TenantsAllNames,
    TenantsAllQuotas,
    TenantsEgressAllow,
    TenantsPut,
    TenantsDelete,
    // webhook_invocations
    WebhookInvocationsEnqueue,
    WebhookInvocationsGet,
    WebhookInvocationsClaim,
    WebhookInvocationsExtend,
    WebhookInvocationsSucceed,
    WebhookInvocationsRetry,
    WebhookInvocationsFail,
    WebhookInvocationsPrune,
    // workers
    WorkersHeartbeat,
    WorkersList,
    WorkersLive,
    WorkersLiveListeners,
    WorkersLiveListenersOfApp,
    WorkersPrune,
    WorkersNow,
}

impl Operation {
    pub fn label(self) -> &'static str {
        match self {
            Operation::AppsGet => "apps_get",
            Operation::AppsCount => "apps_count",
            Operation::AppsRead => "apps_read",
            Operation::AppsExists => "apps_exists",
            Operation::AppsList => "apps_list",
            Operation::AppsAllOfTenant => "apps_all_of_tenant",
            Operation::AppsVersionsOfTenant => "apps_versions_of_tenant",
            Operation::AppsPut => "apps_put",
            Operation::AppsDelete => "apps_delete",
            Operation::AssignmentsAll => "assignments_all",
            Operation::AssignmentsOfWorker => "assignments_of_worker",
            Operation::AssignmentsOfWorkers => "assignments_of_workers",
            Operation::AssignmentsApply => "assignments_apply",
            Operation::AssignmentsConfirmAll => "assignments_confirm_all",
            Operation::AssignmentsClaim => "assignments_claim",
            Operation::AssignmentsRelease => "assignments_release",
            Operation::AssignmentsReleaseAll => "assignments_release_all",
            Operation::AuditRecord => "audit_record",
            Operation::AuditList => "audit_list",
            Operation::BreakersRecordFailures => "breakers_record_failures",
            Operation::BreakersOpenOfTenant => "breakers_open_of_tenant",
            Operation::BreakersGet => "breakers_get",
            Operation::BreakersTransitions => "breakers_transitions",
            Operation::BreakersClaimProbe => "breakers_claim_probe",
            Operation::BreakersProbeResult => "breakers_probe_result",
            Operation::BreakersSet => "breakers_set",
            Operation::ConcurrencySlotsRenew => "concurrency_slots_renew",
            Operation::ConcurrencySlotsRelease => "concurrency_slots_release",
            Operation::HeldMessagesHold => "held_messages_hold",
            Operation::HeldMessagesHolds => "held_messages_holds",
            Operation::ParkedRetriesPark => "parked_retries_park",
            Operation::ParkedRetriesGet => "parked_retries_get",
            Operation::ParkedRetriesUnpark => "parked_retries_unpark",
            Operation::TimerSchedulesGet => "timer_schedules_get",
            Operation::TimerSchedulesAdvance => "timer_schedules_advance",
            Operation::FunctionsGet => "functions_get",
            Operation::FunctionsCountOfApp => "functions_count_of_app",
            Operation::FunctionsLockApp => "functions_lock_app",
            Operation::FunctionsList => "functions_list",
            Operation::FunctionsAllOfApp => "functions_all_of_app",
            Operation::FunctionsVersionsOfTenant => "functions_versions_of_tenant",
            Operation::FunctionsAllOfTenant => "functions_all_of_tenant",
            Operation::FunctionsAllOfApps => "functions_all_of_apps",
            Operation::FunctionsPut => "functions_put",
            Operation::FunctionsDelete => "functions_delete",
            Operation::LeadershipAcquireOrRenew => "leadership_acquire_or_renew",
            Operation::LeadershipRelease => "leadership_release",
            Operation::LeadershipCurrent => "leadership_current",
            Operation::LeadershipFence => "leadership_fence",
            Operation::PrincipalsEnsure => "principals_ensure",
            Operation::PrincipalsSetExternal => "principals_set_external",
            Operation::PrincipalsGet => "principals_get",
            Operation::PrincipalsById => "principals_by_id",
            Operation::PrincipalsList => "principals_list",
            Operation::PrincipalsDelete => "principals_delete",
            Operation::PrincipalsOfApp => "principals_of_app",
            Operation::PrincipalsAppIdentities => "principals_app_identities",
            Operation::PrincipalsSetSecret => "principals_set_secret",
            Operation::PrincipalsAuthenticateClient => "principals_authenticate_client",
            Operation::PrincipalsFindExternal => "principals_find_external",
            Operation::RolesDefinitions => "roles_definitions",
            Operation::RolesDefinitionNamed => "roles_definition_named",
            Operation::RolesPutDefinition => "roles_put_definition",
            Operation::RolesDeleteDefinition => "roles_delete_definition",
            Operation::RolesAssignments => "roles_assignments",
            Operation::RolesAssignmentById => "roles_assignment_by_id",
            Operation::RolesCreateAssignment => "roles_create_assignment",
            Operation::RolesDeleteAssignment => "roles_delete_assignment",
            Operation::RolesHeldBy => "roles_held_by",
            Operation::ScaleAllDesired => "scale_all_desired",
            Operation::ScaleRecord => "scale_record",
            Operation::ScalePruneDecisions => "scale_prune_decisions",
            Operation::ScaleStatus => "scale_status",
            Operation::ScaleInstancesOfApps => "scale_instances_of_apps",
            Operation::ScaleSetWaiting => "scale_set_waiting",
            Operation::ScaleSamplesRecord => "scale_samples_record",
            Operation::InvocationsRecord => "invocation_telemetry_record",
            Operation::InvocationsPrune => "invocation_telemetry_prune",
            Operation::InvocationsMinutes => "invocation_telemetry_minutes",
            Operation::InvocationsFailures => "invocation_telemetry_failures",
            Operation::InvocationLogRecord => "invocation_log_record",
            Operation::InvocationLogSearch => "invocation_log_search",
            Operation::ScaleSamplesPrune => "scale_samples_prune",
            Operation::ScaleSamplesOfApp => "scale_samples_of_app",
            Operation::SigningKeysActive => "signing_keys_active",
            Operation::SigningKeysInsert => "signing_keys_insert",
            Operation::SigningKeysRotate => "signing_keys_rotate",
            Operation::SigningKeysLockForCreation => "signing_keys_lock_for_creation",
            Operation::SigningSecretsGetOrCreate => "signing_secrets_get_or_create",
            Operation::SigningSecretsRegenerate => "signing_secrets_regenerate",
            Operation::TenantsGet => "tenants_get",
            Operation::TenantsLimits => "tenants_limits",
            Operation::TenantsExists => "tenants_exists",
            Operation::TenantsList => "tenants_list",
            Operation::TenantsAllNames => "tenants_all_names",
            Operation::TenantsAllQuotas => "tenants_all_quotas",
            Operation::TenantsEgressAllow => "tenants_egress_allow",
            Operation::TenantsPut => "tenants_put",
            Operation::TenantsDelete => "tenants_delete",
            Operation::WebhookInvocationsEnqueue => "webhook_invocations_enqueue",
            Operation::WebhookInvocationsGet => "webhook_invocations_get",
            Operation::WebhookInvocationsClaim => "webhook_invocations_claim",
            Operation::WebhookInvocationsExtend => "webhook_invocations_extend",
            Operation::WebhookInvocationsSucceed => "webhook_invocations_succeed",
            Operation::WebhookInvocationsRetry => "webhook_invocations_retry",
            Operation::WebhookInvocationsFail => "webhook_invocations_fail",
            Operation::WebhookInvocationsPrune => "webhook_invocations_prune",
            Operation::WorkersHeartbeat => "workers_heartbeat",
            Operation::WorkersList => "workers_list",
            Operation::WorkersLive => "workers_live",
            Operation::WorkersLiveListeners => "workers_live_listeners",
            Operation::WorkersLiveListenersOfApp => "workers_live_listeners_of_app",
            Operation::WorkersPrune => "workers_prune",
            Operation::WorkersNow => "workers_now",
        }
    }
}

impl EncodeLabelValue for Operation {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        std::fmt::Write::write_str(encoder, self.label())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct Labels {
    operation: Operation,
    /// `ok`, or the error's [`StoreError::metric_label`].
    outcome: &'static str,
}

type Operations = Family<Labels, Histogram, fn() -> Histogram>;

static OPERATIONS: LazyLock<Operations> = LazyLock::new(|| {
    // 0.5 ms to about 8 s.
    Operations::new_with_constructor(|| Histogram::new(exponential_buckets(0.0005, 2.0, 15)))
});

/// Adds the store's histogram to a process's registry (named `store_operation_seconds` under
/// the registry's prefix).
pub fn register(registry: &mut Registry) {
    registry.register(
        "store_operation_seconds",
        "Duration of each database operation by name and outcome",
        OPERATIONS.clone(),
    );
}

/// Runs `work` and records how long it took, under `operation` and its outcome; and, under an
/// API request's or a scheduler tick's span, as a span of its own (`db <operation>`, with the
/// same outcome: never the query's parameters, which hold tenants' data).
pub(crate) async fn measured<T>(
    operation: Operation,
    work: impl Future<Output = Result<T, StoreError>>,
) -> Result<T, StoreError> {
    let mut span = span::child_of_current(
        SCOPE,
        format!("db {}", operation.label()),
        SpanKind::Client,
        vec![
            KeyValue::new("db.system.name", "postgresql"),
            KeyValue::new("db.operation.name", operation.label()),
        ],
    );
    let started = Instant::now();
    let result = work.await;
    let outcome = match &result {
        Ok(_) => "ok",
        Err(e) => e.metric_label(),
    };
    OPERATIONS
        .get_or_create(&Labels { operation, outcome })
        .observe(started.elapsed().as_secs_f64());
    if let Some(span) = span.as_mut() {
        span.set_attribute(KeyValue::new("shoal.outcome", outcome));
        if result.as_ref().is_err_and(StoreError::is_fault) {
            span.set_attribute(KeyValue::new("error.type", outcome));
            span.set_status(Status::error(outcome));
        }
        span.end();
    }
    result
}
