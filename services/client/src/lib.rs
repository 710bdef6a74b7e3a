//! The management API's client transport, shared by the `shoal` command line and the Terraform
//! provider: requests with preconditions (`If-Match`, `If-None-Match: *`), answers with their
//! JSON body and `ETag`, problem documents kept whole so each caller can show them its own way
//! (exit codes and messages for the CLI, diagnostics at an attribute for Terraform), and bearer
//! tokens, given or traded for a service principal's client credentials.
//!
//! [`routes`] is the table of the operations they call, held against `openapi/openapi.json` by
//! a test; what each caller makes of an answer stays with that caller.

mod credentials;
mod precondition;
mod problem;
pub mod routes;
mod transport;

pub use credentials::{Credentials, SCOPE, TokenError};
pub use precondition::{Precondition, entity_tag};
pub use problem::{ApiError, FieldError, Problem, Refusal, body_text};
pub use reqwest::Method;
pub use transport::{Answer, ApiClient, Request, encoded_path, http_client};
