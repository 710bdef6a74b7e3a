//! Black-box tests of the management API: a real server on port 0 against a fresh Postgres
//! database per test (`DATABASE_URL` names an admin connection; see deploy/local/postgres.sh).

mod app_status;
mod apps;
mod bad_input;
mod breakers;
mod conditional;
mod dashboard;
mod egress;
mod external_issuer;
mod functions;
mod helpers;
mod identity_helpers;
mod invocations;
mod isolation;
mod managed_identity;
mod oauth2;
mod oidc_issuer;
mod openapi;
mod outage;
mod outbound_identity;
mod pasted_config;
mod poison;
mod rbac;
mod scale;
mod scale_history;
mod service_bus_entity;
mod service_bus_scaling;
mod setting_values;
mod signing_keys;
mod stream_scaling;
mod tenants;
mod token_attacks;
mod webhook_forwarding;
mod webhook_identity;
mod webhooks;
mod workers;
