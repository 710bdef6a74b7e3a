//! The local Service Bus stand-in (`LocalBus`): an AMQP 1.0 endpoint plus the ATOM management
//! API that behaves as Azure Service Bus does for what Shoal and its users need, so the Service
//! Bus trigger, its scaler and users' apps can be developed and tested on a machine where Service
//! Bus itself cannot run. It is not Service Bus; its fidelity is checked by driving it with
//! Microsoft's `azure-servicebus` Python SDK (`tests/`), and `docs/local-bus.md` lists what it
//! implements and what it leaves out.
//!
//! * [`config`]: the entities and SAS policies, in the shape of the Service Bus emulator's
//!   `Config.json`;
//! * [`sas`]: shared access signatures, checked as Service Bus checks them;
//! * [`store`]: entities and their messages (locks, delivery counts, expiry, dead-lettering);
//! * [`amqp`]: the AMQP 1.0 connection (SASL, CBS, links, the `$management` node);
//! * [`atom`]: the ATOM/XML management API (entity descriptions and runtime counts);
//! * [`server`]: [`LocalBus`], one port for AMQP and HTTP.

pub mod amqp;
pub mod atom;
pub mod bus;
pub mod config;
pub mod duration;
pub mod error;
pub mod sas;
pub mod server;
pub mod store;

pub use config::LocalBusConfig;
pub use error::LocalBusError;
pub use server::LocalBus;
