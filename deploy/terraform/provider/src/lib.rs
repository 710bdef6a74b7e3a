//! The Terraform provider for Shoal: resources for function apps and their functions, managed
//! through Shoal's management API (`openapi/openapi.json`) with the semantics Terraform users
//! expect from azurerm and the plugin framework: import by id, names that force replacement,
//! server defaults as Optional+Computed attributes, the `ETag` kept in private state and sent
//! as `If-Match`, and API validation errors shown against the attribute they concern.

pub mod data_sources;
pub mod ids;
pub mod json_doc;
pub mod names;
pub mod problem;
pub mod provider;
pub mod resources;
pub mod shared_client;
pub mod spelling;

pub use provider::ShoalProvider;
