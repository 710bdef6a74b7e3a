//! The stand-in's one error type.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum LocalBusError {
    /// The configuration is not valid; the message names the JSON path.
    #[error("invalid local bus configuration at {path}: {message}")]
    Config { path: String, message: String },
    #[error("cannot read the local bus configuration {path}: {source}")]
    ConfigFile { path: String, source: io::Error },
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: std::net::SocketAddr,
        source: io::Error,
    },
    #[error("cannot create the TLS certificate for the management API: {0}")]
    Tls(String),
}

impl LocalBusError {
    pub(crate) fn config(path: impl Into<String>, message: impl Into<String>) -> Self {
        LocalBusError::Config {
            path: path.into(),
            message: message.into(),
        }
    }
}
