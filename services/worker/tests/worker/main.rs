//! Worker behaviour against real Postgres and a real Azurite: one test binary, a fresh
//! database, Azurite and handler per test.

mod assignments;
mod breakers;
mod delivery;
mod egress;
mod failures;
mod identity;
mod kafka;
mod kafka_batches;
mod kafka_handler_pressure;
mod observability;
mod parked_retries;
mod payloads;
mod polling;
mod rabbitmq;
mod retries;
mod service_bus;
mod service_bus_live;
mod service_bus_sessions;
mod service_bus_support;
mod support;
mod timer;
mod trace_chain;
mod trace_export;
mod trace_producers;
mod visibility;
