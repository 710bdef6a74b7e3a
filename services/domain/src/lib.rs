//! Shoal's domain: pure types and rules with no I/O.
//!
//! Apps, functions and their `function.json` bindings, `host.json` settings with their
//! documented ranges and defaults, connection resolution from app settings, validation errors
//! that carry the field path, and JSON merge patch. Everything here is deterministic and is
//! tested with plain unit tests (tables of cases, property tests where a property exists).

pub mod apps;
pub mod async_invocation;
pub mod binding_expressions;
pub mod binding_kinds;
pub mod bindings;
pub mod circuit_breaker;
pub mod concurrency;
pub mod connection;
pub mod diagnostics;
pub mod durable_retry;
pub mod egress;
pub mod functions;
pub mod host_config;
pub mod invocation;
pub mod invocation_log;
pub mod invocation_stats;
pub mod merge_patch;
pub mod names;
pub mod placement;
pub mod queue_trigger;
pub mod quotas;
pub mod rate_limit;
pub mod rbac;
pub mod scale;
pub mod secret_routes;
pub mod send_message;
pub mod service_bus_entity;
pub mod service_bus_trigger;
pub mod settings;
pub mod stream_trigger;
pub mod tenants;
pub mod timer_trigger;
pub mod timespan;
pub mod trace_context;
pub mod trigger_source;
pub mod validation;
pub mod webhook_limits;
pub mod webhooks;
pub mod workers;
